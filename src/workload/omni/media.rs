//! Duplex media preparation (spec §1.4 items 1–5), done before benchmark timing: a case's
//! video becomes 16 kHz mono PCM16 plus one base64 JPEG per second, all held in memory.
//!
//! This is an IO edge: it reads files and runs `ffprobe`/`ffmpeg` as subprocesses. Two
//! kinds of video are accepted:
//! * a **frames case** (see [`crate::workload::omni::dataset`]): a directory with `audio.wav` (16 kHz mono
//!   16-bit) and `frame_0000.jpg`, `frame_0001.jpg`, …, read natively, no ffmpeg;
//! * a **container** (mp4 etc.): `ffprobe` for the duration, one `ffmpeg` run for the audio
//!   and one `ffmpeg` run for all frames (a `select` filter keeps the first frame at or
//!   after each mid-second, `setpts` stamps it with its second, the image2 muxer names the
//!   file after that stamp). Needs ffmpeg 5.1 or newer (`-fps_mode`).
//!
//! Every command runs under its own timeout (killed on expiry), with bounded stdout and
//! stderr capture.

use crate::util::pyfmt::py_float;
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use base64::Engine as _;
use bytes::Bytes;

use crate::util::command::{CommandError, argv, run_command};
use crate::workload::omni::dataset::{FRAMES_AUDIO, frame_file_name, is_frames_case};

/// Sample rate of prepared audio, Hz.
pub const SAMPLE_RATE: u32 = 16_000;
/// Bytes of prepared PCM16 mono audio per second.
pub const BYTES_PER_SECOND: usize = 32_000;
/// Frames are scaled to fit inside this many pixels on each side, up or down, keeping
/// the aspect ratio (the reference's `scale=640:640:force_original_aspect_ratio=decrease`).
pub const MAX_FRAME_SIDE: u32 = 640;
/// Audio bytes read beyond the target before the rest of ffmpeg's output is discarded.
const AUDIO_SLACK_BYTES: usize = 64 * 1024;
/// Bytes kept of a command's stdout when no output is expected to matter.
const SMALL_STDOUT_BYTES: usize = 64 * 1024;

/// Options of [`prepare`] (the reference's `--omniinteract-*` media settings).
#[derive(Clone, Debug, PartialEq)]
pub struct MediaOptions {
    /// Timeout of each external media command, seconds (default 600).
    pub media_timeout_s: f64,
    /// Longest accepted video, seconds (default 3600).
    pub max_duration_s: f64,
    /// The `ffprobe` program (default `"ffprobe"`, looked up on `PATH`).
    pub ffprobe: String,
    /// The `ffmpeg` program (default `"ffmpeg"`, looked up on `PATH`).
    pub ffmpeg: String,
}

impl Default for MediaOptions {
    fn default() -> Self {
        MediaOptions {
            media_timeout_s: 600.0,
            max_duration_s: 3600.0,
            ffprobe: "ffprobe".to_owned(),
            ffmpeg: "ffmpeg".to_owned(),
        }
    }
}

/// One case's decoded media, ready to stream.
#[derive(Clone, Debug)]
pub struct PreparedMedia {
    /// 16 kHz mono PCM16, exactly `ceil(duration_s) * 32000` bytes (zero-padded).
    pub pcm: Bytes,
    /// One base64 JPEG per second (`ceil(duration_s)` slots); frame `k` shows time
    /// `k + 0.5` s; `None` where no frame exists. Slots may share one `Arc`.
    pub frames: Arc<[Option<Arc<str>>]>,
    /// The probed (container) or WAV (frames case) duration, seconds.
    pub duration_s: f64,
}

impl PreparedMedia {
    /// Heap bytes this media holds: the PCM, the frame slot array, and each distinct
    /// frame string with its `Arc` counters. What keeping one case prepared costs.
    pub fn memory_bytes(&self) -> usize {
        let slots = std::mem::size_of_val::<[Option<Arc<str>>]>(&self.frames);
        let mut strings = 0;
        let mut prev: Option<&Arc<str>> = None;
        for frame in self.frames.iter().flatten() {
            if !prev.is_some_and(|p| Arc::ptr_eq(p, frame)) {
                strings += frame.len() + 2 * std::mem::size_of::<usize>();
            }
            prev = Some(frame);
        }
        self.pcm.len() + slots + strings
    }
}

/// Everything that can go wrong preparing media. Spec messages are reproduced exactly.
#[derive(Debug, thiserror::Error)]
pub enum MediaError {
    /// Duration not finite, ≤ 0, above the maximum, or unreadable (`shown` is Python-style).
    #[error("Invalid video duration for {}: {shown}", .path.display())]
    InvalidDuration {
        /// The video.
        path: PathBuf,
        /// The duration as the reference would print it (or the unparsable probe output).
        shown: String,
    },
    /// Not one frame was found.
    #[error("No video frames were decoded from {}", .0.display())]
    NoFrames(PathBuf),
    /// An ffprobe/ffmpeg run failed (timed out, unavailable, exited unsuccessfully, or
    /// could not be started): the shared runner's error, with its messages.
    #[error(transparent)]
    Command(#[from] CommandError),
    /// A frames case's `audio.wav` is not 16 kHz mono 16-bit integer PCM.
    #[error("unsupported WAV format in {}: found {found}; need 16000 Hz mono 16-bit PCM", .path.display())]
    WavFormat {
        /// The WAV file.
        path: PathBuf,
        /// What the file holds.
        found: String,
    },
    /// A frames case's `audio.wav` could not be read.
    #[error("cannot read WAV {}: {source}", .path.display())]
    Wav {
        /// The WAV file.
        path: PathBuf,
        /// The decoder's error.
        source: hound::Error,
    },
    /// The reference audio file does not exist.
    #[error("OmniInteract ref_audio file does not exist: {}", .0.display())]
    RefAudioMissing(PathBuf),
    /// Other file-system trouble (`what` says what was being done).
    #[error("cannot {what} {}: {source}", .path.display())]
    Io {
        /// The operation, e.g. `read`.
        what: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The OS error.
        source: io::Error,
    },
    /// ffmpeg wrote a frame file whose name is not a second index of this video.
    #[error("unexpected frame file {name} from {cmd} (ffmpeg 5.1 or newer is needed)")]
    UnexpectedFrame {
        /// The program.
        cmd: String,
        /// The file name.
        name: String,
    },
    /// `media_timeout_s` is not a positive number of seconds.
    #[error("media timeout must be a positive number of seconds, got {0}")]
    BadTimeout(f64),
}

/// Decode `video` (a frames-case directory or a container file) into [`PreparedMedia`].
pub fn prepare(video: &Path, opts: &MediaOptions) -> Result<PreparedMedia, MediaError> {
    if is_frames_case(video) {
        prepare_frames_case(video, opts)
    } else {
        prepare_container(video, opts)
    }
}

/// Read the reference audio (spec §1.5 item 5) into `data:audio/wav;base64,…`; the bytes
/// are not validated.
pub fn ref_audio_data_url(path: &Path) -> Result<Arc<str>, MediaError> {
    if !path.is_file() {
        return Err(MediaError::RefAudioMissing(path.to_path_buf()));
    }
    let bytes = fs::read(path).map_err(io_err("read", path))?;
    let b64 = crate::util::b64::standard().encode(bytes);
    Ok(format!("data:audio/wav;base64,{b64}").into())
}

/// Reject a duration that is not finite, ≤ 0 or above the maximum (spec §1.4 item 1).
fn check_duration(path: &Path, d: f64, opts: &MediaOptions) -> Result<(), MediaError> {
    if d.is_finite() && d > 0.0 && d <= opts.max_duration_s {
        Ok(())
    } else {
        Err(MediaError::InvalidDuration {
            path: path.to_path_buf(),
            shown: py_float(d),
        })
    }
}

/// Whole seconds covered by a duration: the frame count and the PCM length in seconds.
fn whole_seconds(d: f64) -> usize {
    d.ceil() as usize
}

fn prepare_frames_case(dir: &Path, opts: &MediaOptions) -> Result<PreparedMedia, MediaError> {
    let wav_path = dir.join(FRAMES_AUDIO);
    let wav_err = |source| MediaError::Wav {
        path: wav_path.clone(),
        source,
    };
    let reader = hound::WavReader::open(&wav_path).map_err(wav_err)?;
    let spec = reader.spec();
    if spec.sample_rate != SAMPLE_RATE
        || spec.channels != 1
        || spec.bits_per_sample != 16
        || spec.sample_format != hound::SampleFormat::Int
    {
        let kind = match spec.sample_format {
            hound::SampleFormat::Int => "PCM",
            hound::SampleFormat::Float => "float",
        };
        let found = format!(
            "{} Hz, {} channel(s), {}-bit {kind}",
            spec.sample_rate, spec.channels, spec.bits_per_sample
        );
        return Err(MediaError::WavFormat {
            path: wav_path,
            found,
        });
    }
    let duration_s = f64::from(reader.duration()) / f64::from(SAMPLE_RATE);
    check_duration(dir, duration_s, opts)?;
    let seconds = whole_seconds(duration_s);
    let mut pcm = Vec::with_capacity(seconds * BYTES_PER_SECOND);
    // 16-bit mono PCM is stored little-endian, as it is sent: the data chunk is read
    // whole (one sample at a time through hound was most of the preparation's CPU).
    let want = u64::from(reader.len()) * 2;
    let mut data = io::Read::take(reader.into_inner(), want);
    io::Read::read_to_end(&mut data, &mut pcm).map_err(|e| wav_err(hound::Error::IoError(e)))?;
    if (pcm.len() as u64) < want {
        let eof = io::Error::from(io::ErrorKind::UnexpectedEof);
        return Err(wav_err(hound::Error::IoError(eof)));
    }
    pcm.resize(seconds * BYTES_PER_SECOND, 0);
    let mut frames = Vec::with_capacity(seconds);
    for k in 0..seconds {
        let file = dir.join(frame_file_name(k));
        frames.push(match fs::read(&file) {
            Ok(bytes) => Some(b64(&bytes)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => return Err(io_err("read", &file)(e)),
        });
    }
    finish(dir, pcm, frames, duration_s)
}

fn prepare_container(video: &Path, opts: &MediaOptions) -> Result<PreparedMedia, MediaError> {
    let timeout = match Duration::try_from_secs_f64(opts.media_timeout_s) {
        Ok(t) if !t.is_zero() => t,
        _ => return Err(MediaError::BadTimeout(opts.media_timeout_s)),
    };
    let run = |program: &str, args: Vec<OsString>, keep: usize| {
        run_command(program, &args, timeout, opts.media_timeout_s, keep).map_err(MediaError::from)
    };
    let probe = "-v error -show_entries format=duration -of default=noprint_wrappers=1:nokey=1";
    let out = run(&opts.ffprobe, argv(probe, &[video.as_os_str()]), 4096)?;
    let text = String::from_utf8_lossy(&out);
    let text = text.lines().map(str::trim).find(|l| !l.is_empty());
    let text = text.unwrap_or("");
    let Ok(duration_s) = text.parse::<f64>() else {
        return Err(MediaError::InvalidDuration {
            path: video.to_path_buf(),
            shown: format!("'{text}'"),
        });
    };
    check_duration(video, duration_s, opts)?;
    let seconds = whole_seconds(duration_s);
    let target_bytes = seconds * BYTES_PER_SECOND;

    let input = "-nostdin -hide_banner -loglevel error -i";
    let audio = format!(
        "-t {duration_s} -vn -sn -dn -ac 1 -ar {SAMPLE_RATE} -c:a pcm_s16le -f s16le \
         -fs {target_bytes} pipe:1"
    );
    let mut args = argv(input, &[video.as_os_str()]);
    args.extend(argv(&audio, &[]));
    let mut pcm = run(&opts.ffmpeg, args, target_bytes + AUDIO_SLACK_BYTES)?;
    pcm.resize(target_bytes, 0);

    // One pass over the video: keep the first frame of each second k at or after k + 0.5 s,
    // stamp it with pts = k in a 1 s time base, and let image2 name the file `<k>.jpg`.
    let dir = TempDir::new()?;
    let frames = format!(
        "-map 0:v:0? -an -sn -dn -vf select='gte(t,0.5)*lt(t,{seconds}.5)*\
         (isnan(prev_selected_t)+gt(floor(t-0.5),floor(prev_selected_t-0.5)))',\
         setpts='floor(T-0.5)/TB',settb=1,scale={MAX_FRAME_SIDE}:{MAX_FRAME_SIDE}:\
         force_original_aspect_ratio=decrease \
         -fps_mode passthrough -enc_time_base 1 -q:v 5 -f image2 -frame_pts 1"
    );
    let pattern = dir.0.join("%d.jpg");
    let mut args = argv(input, &[video.as_os_str()]);
    args.extend(argv(&frames, &[pattern.as_os_str()]));
    match run(&opts.ffmpeg, args, SMALL_STDOUT_BYTES) {
        // No video stream at all: ffmpeg refuses an output without streams.
        Err(MediaError::Command(CommandError::Failed { stderr, .. }))
            if stderr.contains("does not contain any stream") =>
        {
            return Err(MediaError::NoFrames(video.to_path_buf()));
        }
        other => other?,
    };
    let found = read_frame_dir(&dir.0, seconds, &opts.ffmpeg)?;
    finish(video, pcm, fill_frames(&found, seconds), duration_s)
}

fn b64(bytes: &[u8]) -> Arc<str> {
    crate::util::b64::standard().encode(bytes).into()
}

fn finish(
    video: &Path,
    pcm: Vec<u8>,
    frames: Vec<Option<Arc<str>>>,
    duration_s: f64,
) -> Result<PreparedMedia, MediaError> {
    if frames.iter().all(Option::is_none) {
        return Err(MediaError::NoFrames(video.to_path_buf()));
    }
    Ok(PreparedMedia {
        pcm: Bytes::from(pcm),
        frames: frames.into(),
        duration_s,
    })
}

/// Read `<k>.jpg` files written by the frames command, base64-encoded, by second `k`.
fn read_frame_dir(
    dir: &Path,
    seconds: usize,
    cmd: &str,
) -> Result<BTreeMap<usize, Arc<str>>, MediaError> {
    let mut found = BTreeMap::new();
    for entry in fs::read_dir(dir).map_err(io_err("list", dir))? {
        let entry = entry.map_err(io_err("list", dir))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let k = name
            .strip_suffix(".jpg")
            .and_then(|s| s.parse::<usize>().ok());
        let Some(k) = k.filter(|&k| k < seconds) else {
            let cmd = cmd.to_owned();
            return Err(MediaError::UnexpectedFrame { cmd, name });
        };
        let bytes = fs::read(entry.path()).map_err(io_err("read", &entry.path()))?;
        found.insert(k, b64(&bytes));
    }
    Ok(found)
}

/// Frame `k` is the first decoded frame at or after `k + 0.5` s. `found` holds, for each
/// second that has one, the first frame in `[k + 0.5, k + 1.5)`; a second without one takes
/// the next second's frame (shared), and seconds after the last frame stay `None`.
fn fill_frames(found: &BTreeMap<usize, Arc<str>>, seconds: usize) -> Vec<Option<Arc<str>>> {
    (0..seconds)
        .map(|k| found.range(k..).next().map(|(_, f)| Arc::clone(f)))
        .collect()
}

/// A directory under the system temp dir, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> Result<TempDir, MediaError> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let base = std::env::temp_dir();
        loop {
            let n = NEXT.fetch_add(1, Ordering::Relaxed);
            let path = base.join(format!("rtload-media-{}-{n}", std::process::id()));
            match fs::create_dir(&path) {
                Ok(()) => return Ok(TempDir(path)),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(io_err("create", &path)(e)),
            }
        }
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

fn io_err(what: &'static str, path: &Path) -> impl Fn(io::Error) -> MediaError {
    let path = path.to_path_buf();
    move |source| MediaError::Io {
        what,
        path: path.clone(),
        source,
    }
}

#[cfg(test)]
#[path = "media_tests.rs"]
mod tests;
