//! `rtload dataset synth DIR`: write a small, deterministic OmniInteract dataset made of
//! frames cases, so rtload can be run and tested offline and without ffmpeg.
//!
//! # What is written
//! ```text
//! DIR/ref_audio.wav                          2 s reference voice (16 kHz mono PCM16)
//! DIR/data/1q1a/video_json_map.json          {"entries":[{"video":"videos/case_000.frames",
//!                                              "annotation":"annotations/case_000.json",
//!                                              "scene_type":"multi_turn"}, …]}
//! DIR/data/1q1a/videos/case_000.frames/      a frames case (below)
//! DIR/data/1q1a/annotations/case_000.json
//! DIR/data/1q1a_math/…                       same as 1q1a
//! DIR/data/1qna/videos_bench/synth/case_000.frames/
//! DIR/data/1qna/annotations/synth/case_000.json
//! DIR/data.tar.gz                            only with `tar`: the `data/` tree, members
//!                                            named `data/…` (like the official archive)
//! ```
//!
//! # Frames case
//! A frames case is a directory that stands in for a video file:
//! * `audio.wav`: 16 kHz mono PCM16, `duration_ms` long: syllable-like tone bursts with a
//!   little noise, so voice-activity detectors see speech-like energy.
//! * `frame_0000.jpg` … `frame_{n-1}.jpg` with `n = ceil(duration_ms / 1000)`: frame `k`
//!   is the picture at `k + 0.5` s (the reference's 1 fps mid-second sampling), a
//!   160×120 greyscale baseline JPEG (a moving bright square over a gradient). Each JPEG
//!   carries a COM segment `rtload synth <subset>/<case> frame <k>`.
//!
//! With `mp4`, each case is instead a real `<name>.mp4` made from that frames case with
//! ffmpeg (frame `k` shown during second `k`, the same audio), for use by other tools.
//!
//! Output depends only on the options (same seed → identical bytes, archive included;
//! MP4 bytes are as deterministic as the installed ffmpeg makes them).

use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use serde_json::json;

use super::layout::{FRAMES_AUDIO, MAPPING_FILE, frame_file_name};
use super::{DatasetError, Subset};

/// Sample rate of every WAV that `synth` writes.
pub const SAMPLE_RATE: u32 = 16_000;
/// Frame size of every JPEG that `synth` writes (multiples of 8).
pub const FRAME_SIZE: (u16, u16) = (160, 120);
const REF_AUDIO_MS: u32 = 2_000;

/// Options of [`synth`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SynthOptions {
    /// Seed of all generated content (default 0).
    pub seed: u64,
    /// Cases written per subset (default 1, must be ≥ 1).
    pub cases_per_subset: usize,
    /// Audio length of each case in milliseconds (default 3000, must be ≥ 1).
    pub duration_ms: u32,
    /// Also write `DIR/data.tar.gz` holding the `data/` tree (default false).
    pub tar: bool,
    /// Write each case as a real MP4 (`<name>.mp4`, made with ffmpeg) instead of a
    /// frames case (default false).
    pub mp4: bool,
}

impl Default for SynthOptions {
    fn default() -> Self {
        SynthOptions {
            seed: 0,
            cases_per_subset: 1,
            duration_ms: 3_000,
            tar: false,
            mp4: false,
        }
    }
}

/// What [`synth`] wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SynthReport {
    /// The data directory (`DIR/data`), usable as a `--dataset-path`.
    pub data_dir: PathBuf,
    /// The reference audio (`DIR/ref_audio.wav`), usable as the ref-audio option.
    pub ref_audio: PathBuf,
    /// `DIR/data.tar.gz` when [`SynthOptions::tar`] was set.
    pub archive: Option<PathBuf>,
    /// Number of cases written across all subsets.
    pub cases: usize,
    /// Frames per case (`ceil(duration_ms / 1000)`).
    pub frames_per_case: usize,
}

/// The most cases per subset `synth` writes.
pub const MAX_CASES_PER_SUBSET: usize = 10_000;
/// The longest synthetic case, seconds.
pub const MAX_CASE_S: u64 = 3600;

/// Write a synthetic dataset into `dir` (created if needed; see the module docs). Refuses
/// to overwrite an existing `data/`, `ref_audio.wav` or (with `tar`) `data.tar.gz`.
pub fn synth(dir: &Path, opts: &SynthOptions) -> Result<SynthReport, DatasetError> {
    check_size(opts)?;
    let data = dir.join("data");
    let ref_audio = dir.join("ref_audio.wav");
    let archive = opts.tar.then(|| dir.join("data.tar.gz"));
    for path in [Some(&data), Some(&ref_audio), archive.as_ref()]
        .into_iter()
        .flatten()
    {
        if fs::symlink_metadata(path).is_ok() {
            return Err(DatasetError::SynthExists(path.clone()));
        }
    }
    fs::create_dir_all(dir).map_err(DatasetError::io(dir))?;
    let frames = opts.duration_ms.div_ceil(1000) as usize;
    write_wav(
        &ref_audio,
        &tone_track(opts.seed ^ 0x5EED_A0D1, REF_AUDIO_MS),
    )?;
    for (subset_idx, subset) in Subset::ALL.into_iter().enumerate() {
        let root = data.join(subset.name());
        let mut entries = Vec::new();
        for case in 0..opts.cases_per_subset {
            let name = format!("case_{case:03}");
            let ext = if opts.mp4 { "mp4" } else { "frames" };
            let (video_rel, annotation_rel) = match subset {
                Subset::Qna => (
                    format!("videos_bench/synth/{name}.{ext}"),
                    format!("annotations/synth/{name}.json"),
                ),
                _ => (
                    format!("videos/{name}.{ext}"),
                    format!("annotations/{name}.json"),
                ),
            };
            let case_seed = mix(opts.seed, (subset_idx as u64) << 32 | case as u64);
            let label = format!("{subset}/{name}");
            let video = root.join(&video_rel);
            if opts.mp4 {
                let staging = video.with_extension("frames.tmp");
                write_frames_case(&staging, case_seed, opts.duration_ms, &label)?;
                let made = mp4::encode(&staging, &video);
                let _ = fs::remove_dir_all(&staging);
                made?;
            } else {
                write_frames_case(&video, case_seed, opts.duration_ms, &label)?;
            }
            let annotation = json!({
                "synthetic": true, "generator": "rtload dataset synth", "subset": subset.name(),
                "case": name, "seed": opts.seed, "duration_ms": opts.duration_ms,
                "frames": frames,
            });
            write_file(&root.join(&annotation_rel), pretty(&annotation).as_bytes())?;
            entries.push(json!({
                "video": video_rel, "annotation": annotation_rel, "scene_type": "multi_turn",
            }));
        }
        if subset != Subset::Qna {
            let mapping = pretty(&json!({ "entries": entries }));
            write_file(&root.join(MAPPING_FILE), mapping.as_bytes())?;
        }
    }
    if let Some(archive) = &archive {
        write_archive(dir, archive)?;
    }
    Ok(SynthReport {
        data_dir: data,
        ref_audio,
        archive,
        cases: opts.cases_per_subset * Subset::ALL.len(),
        frames_per_case: frames,
    })
}

/// Refuses a size of zero or one beyond the stated bounds ([`MAX_CASES_PER_SUBSET`] cases of
/// at most [`MAX_CASE_S`] s): what one command writes stays bounded.
fn check_size(opts: &SynthOptions) -> Result<(), DatasetError> {
    if opts.cases_per_subset == 0 || opts.duration_ms == 0 {
        return Err(DatasetError::SynthOptions(
            "cases per subset and duration must both be at least 1".to_owned(),
        ));
    }
    // A bound on what one command writes: ~100 KB per case-second of frames and audio.
    let case_s = u64::from(opts.duration_ms).div_ceil(1000);
    if opts.cases_per_subset > MAX_CASES_PER_SUBSET || case_s > MAX_CASE_S {
        return Err(DatasetError::SynthOptions(format!(
            "at most {MAX_CASES_PER_SUBSET} cases per subset of at most {MAX_CASE_S} s each \
             (got {} cases of {} ms): a synthetic set is for trying rtload, not for a \
             benchmark of that size",
            opts.cases_per_subset, opts.duration_ms
        )));
    }
    Ok(())
}

fn pretty(value: &serde_json::Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default() + "\n"
}

fn write_frames_case(
    dir: &Path,
    seed: u64,
    duration_ms: u32,
    label: &str,
) -> Result<(), DatasetError> {
    fs::create_dir_all(dir).map_err(DatasetError::io(dir))?;
    write_wav(&dir.join(FRAMES_AUDIO), &tone_track(seed, duration_ms))?;
    let (w, h) = FRAME_SIZE;
    for k in 0..duration_ms.div_ceil(1000) as usize {
        let levels = frame_levels(seed, k, w / 8, h / 8);
        let comment = format!("rtload synth {label} frame {k}");
        write_file(
            &dir.join(frame_file_name(k)),
            &encode_jpeg(w, h, &levels, &comment),
        )?;
    }
    Ok(())
}

fn write_file(path: &Path, bytes: &[u8]) -> Result<(), DatasetError> {
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).map_err(DatasetError::io(parent))?;
    }
    fs::write(path, bytes).map_err(DatasetError::io(path))
}

fn write_wav(path: &Path, samples: &[i16]) -> Result<(), DatasetError> {
    let spec = hound::WavSpec {
        channels: 1,
        sample_rate: SAMPLE_RATE,
        bits_per_sample: 16,
        sample_format: hound::SampleFormat::Int,
    };
    let wav_err = |e: hound::Error| DatasetError::Wav {
        path: path.to_path_buf(),
        message: e.to_string(),
    };
    let mut writer = hound::WavWriter::create(path, spec).map_err(wav_err)?;
    for &s in samples {
        writer.write_sample(s).map_err(wav_err)?;
    }
    writer.finalize().map_err(wav_err)
}

/// splitmix64 step: the only randomness source, so output is stable across platforms
/// and crate versions.
fn mix(seed: u64, n: u64) -> u64 {
    let mut z = seed.wrapping_add(n.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Speech-like audio: 250 ms "syllables", ~70% voiced (a 110–330 Hz tone with two
/// harmonics under a raised-cosine envelope), over faint noise.
fn tone_track(seed: u64, duration_ms: u32) -> Vec<i16> {
    const SYLLABLE: usize = SAMPLE_RATE as usize / 4;
    let n = duration_ms as usize * SAMPLE_RATE as usize / 1000;
    let mut phase = 0.0f64;
    (0..n)
        .map(|i| {
            let (syl, pos) = (i / SYLLABLE, i % SYLLABLE);
            let r = mix(seed, syl as u64);
            let voiced = r % 10 < 7;
            let freq = 110.0 + (r >> 8) as f64 % 220.0;
            phase += std::f64::consts::TAU * freq / f64::from(SAMPLE_RATE);
            let env = 0.5 - 0.5 * (std::f64::consts::TAU * pos as f64 / SYLLABLE as f64).cos();
            let tone = phase.sin() + 0.5 * (2.0 * phase).sin() + 0.25 * (3.0 * phase).sin();
            let noise = (mix(seed ^ 0xA5A5, i as u64) >> 53) as f64 / 2048.0 - 0.5;
            let voice = if voiced { 9000.0 * env * tone } else { 0.0 };
            (voice + 400.0 * noise).round().clamp(-32768.0, 32767.0) as i16
        })
        .collect()
}

/// Grey level of each 8×8 block of frame `k`: a diagonal gradient with a bright 3×3-block
/// square that moves one block per frame.
fn frame_levels(seed: u64, k: usize, bw: u16, bh: u16) -> Vec<u8> {
    let (bw, bh) = (usize::from(bw), usize::from(bh));
    let (x0, y0) = (
        (seed as usize % bw + k) % (bw - 2),
        (seed as usize / 7 + k) % (bh - 2),
    );
    let mut levels = Vec::with_capacity(bw * bh);
    for by in 0..bh {
        for bx in 0..bw {
            let square = (x0..x0 + 3).contains(&bx) && (y0..y0 + 3).contains(&by);
            levels.push(if square {
                235
            } else {
                (16 + (bx + by) * 150 / (bw + bh)) as u8
            });
        }
    }
    levels
}

/// Encode a greyscale baseline JPEG whose 8×8 blocks are flat (`levels`, row-major, one
/// per block). Only DC coefficients are coded: unit quantisation, a 12-symbol DC table
/// with 4-bit codes (code = category) and an AC table holding only end-of-block (`0`).
pub(crate) fn encode_jpeg(width: u16, height: u16, levels: &[u8], comment: &str) -> Vec<u8> {
    let mut out = vec![0xFF, 0xD8];
    let mut segment = |marker: u8, body: &[u8]| {
        out.extend_from_slice(&[0xFF, marker]);
        out.extend_from_slice(&((body.len() + 2) as u16).to_be_bytes());
        out.extend_from_slice(body);
    };
    segment(0xE0, b"JFIF\0\x01\x01\0\0\x01\0\x01\0\0");
    segment(0xFE, comment.as_bytes());
    segment(0xDB, &[[0u8].as_slice(), &[1u8; 64]].concat());
    let [hh, hl] = height.to_be_bytes();
    let [wh, wl] = width.to_be_bytes();
    segment(0xC0, &[8, hh, hl, wh, wl, 1, 1, 0x11, 0]);
    let mut dc = vec![0x00, 0, 0, 0, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    dc.extend(0u8..12);
    segment(0xC4, &dc);
    segment(
        0xC4,
        &[0x10, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
    );
    segment(0xDA, &[1, 1, 0x00, 0, 63, 0]);
    let mut bits = BitWriter::default();
    let mut prev = 0i32;
    for &level in levels {
        let coef = 8 * (i32::from(level) - 128);
        let diff = coef - prev;
        prev = coef;
        let size = 32 - diff.unsigned_abs().leading_zeros();
        bits.put(size, 4);
        let extra = if diff < 0 {
            diff + (1 << size) - 1
        } else {
            diff
        };
        bits.put(extra as u32, size);
        bits.put(0, 1); // end of block
    }
    out.extend(bits.finish());
    out.extend_from_slice(&[0xFF, 0xD9]);
    out
}

#[derive(Default)]
struct BitWriter {
    bytes: Vec<u8>,
    acc: u32,
    n: u32,
}

impl BitWriter {
    fn put(&mut self, value: u32, count: u32) {
        for i in (0..count).rev() {
            self.acc = (self.acc << 1) | ((value >> i) & 1);
            self.n += 1;
            if self.n == 8 {
                let byte = self.acc as u8;
                self.bytes.push(byte);
                if byte == 0xFF {
                    self.bytes.push(0x00); // byte stuffing
                }
                (self.acc, self.n) = (0, 0);
            }
        }
    }

    fn finish(mut self) -> Vec<u8> {
        if self.n > 0 {
            self.put(0x7F, 8 - self.n); // pad with one-bits
        }
        self.bytes
    }
}

/// Write `dir/data` as a deterministic gzip'd tar at `archive` (sorted members, fixed
/// metadata, gzip header without a timestamp).
fn write_archive(dir: &Path, archive: &Path) -> Result<(), DatasetError> {
    let file = File::create(archive).map_err(DatasetError::io(archive))?;
    let gz = flate2::write::GzEncoder::new(BufWriter::new(file), flate2::Compression::default());
    let mut builder = tar::Builder::new(gz);
    builder.mode(tar::HeaderMode::Deterministic);
    append_sorted(&mut builder, &dir.join("data"), Path::new("data"))
        .map_err(DatasetError::io(archive))?;
    let gz = builder.into_inner().map_err(DatasetError::io(archive))?;
    let mut inner = gz.finish().map_err(DatasetError::io(archive))?;
    inner.flush().map_err(DatasetError::io(archive))
}

fn append_sorted<W: Write>(
    b: &mut tar::Builder<W>,
    path: &Path,
    name: &Path,
) -> std::io::Result<()> {
    if path.is_dir() {
        b.append_dir(name, path)?;
        let mut children: Vec<_> = fs::read_dir(path)?.collect::<Result<_, _>>()?;
        children.sort_by_key(|e| e.file_name());
        for child in children {
            append_sorted(b, &child.path(), &name.join(child.file_name()))?;
        }
        Ok(())
    } else {
        b.append_path_with_name(path, name)
    }
}

mod mp4;

#[cfg(test)]
#[path = "synth_tests.rs"]
mod tests;
