//! The transcription dataset: a directory of audio files with optional reference
//! transcripts, or a JSONL manifest. Decoding happens before timing.
//!
//! * A directory: every file with an audio extension ([`AUDIO_EXTENSIONS`]) directly in
//!   it, sorted by name; `<stem>.txt` beside a file is its reference transcript.
//! * A manifest (`DIR/manifest.jsonl`, or a `.jsonl` file given directly): one
//!   `{"audio": "path", "text": "reference"}` object per line (`text` optional; paths
//!   relative to the manifest). Blank lines are skipped; a bad line is an error naming
//!   `file:line`.
//!
//! WAV files are read with hound (any integer or float format, any channel count: mixed
//! down to mono); other formats go through the bounded ffmpeg path of the OmniInteract
//! workload. Audio is resampled to the configured rate (linear interpolation) before any
//! timing, so every session streams ready PCM16 mono.

use std::path::{Path, PathBuf};

use std::time::Duration;

use crate::util::command;

/// How audio that is not a plain WAV is decoded (the bounded ffmpeg path).
#[derive(Debug, Clone, PartialEq)]
pub struct DecodeOptions {
    /// Timeout of each ffmpeg run, seconds.
    pub timeout_s: f64,
    /// Longest accepted audio, seconds.
    pub max_duration_s: f64,
    /// The `ffmpeg` program.
    pub ffmpeg: String,
}

impl Default for DecodeOptions {
    fn default() -> Self {
        Self {
            timeout_s: 600.0,
            max_duration_s: 3600.0,
            ffmpeg: "ffmpeg".into(),
        }
    }
}

/// File extensions treated as audio in a dataset directory (lower case).
pub const AUDIO_EXTENSIONS: [&str; 10] = [
    "wav", "flac", "mp3", "ogg", "opus", "m4a", "aac", "webm", "mp4", "mka",
];
/// The manifest file looked for in a dataset directory.
pub const MANIFEST: &str = "manifest.jsonl";

/// Errors reading a transcription dataset.
#[derive(Debug, thiserror::Error)]
pub enum DataError {
    /// The path is neither a directory nor a `.jsonl` manifest.
    #[error("transcription dataset {} is not a directory or a .jsonl manifest; point `dataset_path` at a directory of audio files (with optional <name>.txt references) or a JSONL manifest, relative to the scenario file, or write a synthetic set with `rtload dataset synth --kind transcription DIR`", .0.display())]
    NotFound(PathBuf),
    /// A directory without audio files.
    #[error("no audio files ({}) in {}; `rtload dataset synth --kind transcription DIR` writes a small set", AUDIO_EXTENSIONS.join(", "), .0.display())]
    Empty(PathBuf),
    /// A manifest line is not a `{"audio": …}` object.
    #[error("{}:{line}: {msg}", .path.display())]
    Manifest {
        /// The manifest.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// What is wrong, and the fix.
        msg: String,
    },
    /// A file could not be read.
    #[error("cannot read {}: {msg}", .path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        msg: String,
    },
}

/// One audio file and its reference transcript.
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    /// Name shown in results (the path relative to the dataset).
    pub name: String,
    /// The audio file.
    pub path: PathBuf,
    /// Reference transcript, when one was given.
    pub reference: Option<String>,
}

/// The items of the dataset at `path` (a directory or a manifest).
pub fn discover(path: &Path) -> Result<Vec<Item>, DataError> {
    if path.is_file() && path.extension().is_some_and(|e| e == "jsonl") {
        return read_manifest(path);
    }
    if !path.is_dir() {
        return Err(DataError::NotFound(path.to_path_buf()));
    }
    let manifest = path.join(MANIFEST);
    if manifest.is_file() {
        return read_manifest(&manifest);
    }
    let read_err = |e: std::io::Error| DataError::Read {
        path: path.to_path_buf(),
        msg: e.to_string(),
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(path)
        .map_err(read_err)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && is_audio(p))
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(DataError::Empty(path.to_path_buf()));
    }
    files
        .into_iter()
        .map(|p| {
            let txt = p.with_extension("txt");
            let reference = match std::fs::read_to_string(&txt) {
                Ok(t) => Some(t.trim().to_owned()),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                Err(e) => {
                    return Err(DataError::Read {
                        path: txt,
                        msg: e.to_string(),
                    });
                }
            };
            let name = p
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned();
            Ok(Item {
                name,
                path: p,
                reference,
            })
        })
        .collect()
}

fn is_audio(p: &Path) -> bool {
    p.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| AUDIO_EXTENSIONS.contains(&e.to_ascii_lowercase().as_str()))
}

fn read_manifest(path: &Path) -> Result<Vec<Item>, DataError> {
    let text = std::fs::read_to_string(path).map_err(|e| DataError::Read {
        path: path.to_path_buf(),
        msg: e.to_string(),
    })?;
    let base = path.parent().unwrap_or(Path::new("."));
    let mut items = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let bad = |msg: String| DataError::Manifest {
            path: path.to_path_buf(),
            line: i + 1,
            msg,
        };
        let v: serde_json::Value = serde_json::from_str(line).map_err(|e| {
            bad(format!(
                "not JSON ({e}); each line is {{\"audio\": \"path\", \"text\": \"reference\"}}"
            ))
        })?;
        let Some(audio) = v.get("audio").and_then(|a| a.as_str()) else {
            return Err(bad(
                "needs a string \"audio\" (the audio file, relative to the manifest)".into(),
            ));
        };
        let reference = match v.get("text") {
            None | Some(serde_json::Value::Null) => None,
            Some(serde_json::Value::String(s)) => Some(s.clone()),
            Some(other) => return Err(bad(format!("\"text\" must be a string, got {other}"))),
        };
        let file = base.join(audio);
        if !file.is_file() {
            return Err(bad(format!(
                "audio file does not exist: {}",
                file.display()
            )));
        }
        items.push(Item {
            name: audio.to_owned(),
            path: file,
            reference,
        });
    }
    if items.is_empty() {
        return Err(bad_empty(path));
    }
    Ok(items)
}

fn bad_empty(path: &Path) -> DataError {
    DataError::Manifest {
        path: path.to_path_buf(),
        line: 1,
        msg: "the manifest lists no audio".into(),
    }
}

/// Decode `path` to PCM16 mono LE at `rate` Hz: WAV natively, anything else (or a WAV
/// hound cannot read) through ffmpeg.
pub fn load_pcm(path: &Path, rate: u32, opts: &DecodeOptions) -> Result<Vec<u8>, DataError> {
    let is_wav = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("wav"));
    if is_wav && let Ok(reader) = hound::WavReader::open(path) {
        return read_wav(reader, rate, opts.max_duration_s).map_err(|msg| DataError::Read {
            path: path.to_path_buf(),
            msg,
        });
    }
    let read_err = |msg: String| DataError::Read {
        path: path.to_path_buf(),
        msg,
    };
    let timeout = Duration::try_from_secs_f64(opts.timeout_s)
        .ok()
        .filter(|t| !t.is_zero())
        .ok_or_else(|| {
            read_err(format!(
                "media timeout must be > 0 s, got {}",
                opts.timeout_s
            ))
        })?;
    let max_bytes = (opts.max_duration_s * f64::from(rate)).ceil() as usize * 2;
    let mut pcm = command::ffmpeg_pcm16(&opts.ffmpeg, path, rate, timeout, max_bytes)
        .map_err(|e| read_err(e.to_string()))?;
    if pcm.len() > max_bytes {
        let max = opts.max_duration_s;
        return Err(read_err(format!(
            "more than max_duration_s = {max} s of audio"
        )));
    }
    if pcm.len() < 2 {
        return Err(read_err("ffmpeg decoded no audio".into()));
    }
    pcm.truncate(pcm.len() & !1);
    Ok(pcm)
}

fn read_wav<R: std::io::Read>(
    mut reader: hound::WavReader<R>,
    rate: u32,
    max_duration_s: f64,
) -> Result<Vec<u8>, String> {
    let spec = reader.spec();
    let seconds = f64::from(reader.duration()) / f64::from(spec.sample_rate.max(1));
    if seconds > max_duration_s {
        return Err(format!(
            "{seconds} s of audio is more than max_duration_s = {max_duration_s}"
        ));
    }
    crate::util::wav::to_pcm16_mono(&mut reader, rate).map_err(|e| e.to_string())
}

#[cfg(test)]
#[path = "dataset_tests.rs"]
mod tests;
