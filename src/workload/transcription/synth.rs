//! `rtload dataset synth --kind transcription DIR`: a small, deterministic set of WAV
//! files with reference transcripts that the embedded server transcribes exactly.
//!
//! Each file `utt_NNN.wav` (PCM16 mono) says a few words of the [`crate::util::tonecode`]
//! vocabulary, one tone-burst word per slot at `words_per_second`; `utt_NNN.txt` holds
//! the sentence. The embedded server decodes the same code at its
//! `[server.transcription] words_per_second` (same default), so its transcript matches the
//! reference and WER is 0 against it. Same options → identical bytes.

use std::path::{Path, PathBuf};

use crate::util::tonecode;

/// Options of [`synth`].
#[derive(Debug, Clone, PartialEq)]
pub struct SynthOptions {
    /// Files to write (≥ 1).
    pub files: usize,
    /// Words per file (≥ 1).
    pub words: usize,
    /// Sample rate of the WAV files, Hz.
    pub sample_rate: u32,
    /// Speaking rate, words per second (> 0).
    pub words_per_second: f64,
    /// Seed of the word choice.
    pub seed: u64,
}

impl Default for SynthOptions {
    fn default() -> Self {
        Self {
            files: 3,
            words: 6,
            sample_rate: 16_000,
            words_per_second: tonecode::DEFAULT_WORDS_PER_SECOND,
            seed: 0,
        }
    }
}

/// What [`synth`] wrote.
#[derive(Debug, Clone, PartialEq)]
pub struct SynthReport {
    /// The WAV files, in order.
    pub files: Vec<PathBuf>,
    /// Seconds of audio per file.
    pub seconds_per_file: f64,
}

/// Write the set into `dir` (created if missing; files of the same names are replaced).
pub fn synth(dir: &Path, opts: &SynthOptions) -> Result<SynthReport, String> {
    if opts.files == 0 || opts.words == 0 {
        return Err("--files and --words must be at least 1".into());
    }
    if !(opts.words_per_second.is_finite() && opts.words_per_second > 0.0) {
        return Err(format!(
            "words per second must be > 0 (got {})",
            opts.words_per_second
        ));
    }
    if !(4_000..=192_000).contains(&opts.sample_rate) {
        return Err(format!(
            "sample rate must be 4000..=192000 Hz (got {})",
            opts.sample_rate
        ));
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let mut files = Vec::new();
    for f in 0..opts.files {
        let words = pick_words(opts.seed, f, opts.words);
        let pcm = tonecode::encode(&words, opts.sample_rate, opts.words_per_second);
        let wav = dir.join(format!("utt_{f:03}.wav"));
        write_wav(&wav, opts.sample_rate, &pcm)?;
        let txt = wav.with_extension("txt");
        let sentence = capitalize(&tonecode::sentence(&words)) + ".\n";
        write_file(&txt, sentence.as_bytes())?;
        files.push(wav);
    }
    let slot = tonecode::slot_samples(opts.sample_rate, opts.words_per_second);
    Ok(SynthReport {
        files,
        seconds_per_file: (slot * opts.words) as f64 / f64::from(opts.sample_rate),
    })
}

/// `words` vocabulary indices for file `f` (a small splitmix-style generator).
fn pick_words(seed: u64, f: usize, words: usize) -> Vec<usize> {
    let mut x = (seed.wrapping_mul(0x1000_0001) ^ f as u64).wrapping_mul(0xD1B5_4A32_D192_ED03);
    (0..words)
        .map(|_| {
            x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            ((z ^ (z >> 31)) % tonecode::VOCAB.len() as u64) as usize
        })
        .collect()
}

/// Reference transcripts are written like text (capital letter, full stop) so WER's
/// normalization is exercised.
fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

fn write_wav(path: &Path, rate: u32, pcm: &[i16]) -> Result<(), String> {
    let spec = hound::WavSpec {
        channels: 1,
        sample_rate: rate,
        bits_per_sample: 16,
        sample_format: hound::SampleFormat::Int,
    };
    let mut bytes = std::io::Cursor::new(Vec::new());
    let mut w = hound::WavWriter::new(&mut bytes, spec).map_err(|e| e.to_string())?;
    for s in pcm {
        w.write_sample(*s).map_err(|e| e.to_string())?;
    }
    w.finalize().map_err(|e| e.to_string())?;
    write_file(path, bytes.get_ref())
}

fn write_file(path: &Path, bytes: &[u8]) -> Result<(), String> {
    crate::util::write_atomic(path, bytes)
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

#[cfg(test)]
#[path = "synth_tests.rs"]
mod tests;
