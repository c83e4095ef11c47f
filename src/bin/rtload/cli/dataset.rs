//! `rtload dataset`: its subcommands and the flags of `dataset synth` (the test data of
//! the kinds that declare one in the registry; this file names none).

use std::path::PathBuf;

use clap::{Args, Subcommand};

/// `rtload dataset ...`.
#[derive(Debug, Subcommand)]
pub enum DatasetCommand {
    /// Write a small test dataset from generated audio (and frames), so a workload's
    /// scenarios run offline against the embedded server. The default `--kind` writes
    /// the OmniInteract layout (1q1a, 1q1a_math, 1qna) and a reference voice;
    /// `--kind transcription` WAV files with reference transcripts the embedded server
    /// transcribes exactly.
    Synth(SynthArgs),
}

/// The datasets `--kind` may name (every registered kind's), the first by default.
fn dataset_kinds() -> clap::builder::PossibleValuesParser {
    rtload::dataset::datasets()
        .iter()
        .map(|d| d.name)
        .collect::<Vec<_>>()
        .into()
}

fn default_kind() -> &'static str {
    rtload::dataset::datasets().first().map_or("", |d| d.name)
}

/// `rtload dataset synth`.
#[derive(Debug, Args)]
pub struct SynthArgs {
    /// Directory to write (the default kind: `DIR/data/...`, `DIR/ref_audio.wav`;
    /// transcription: `DIR/utt_NNN.wav` + `DIR/utt_NNN.txt`).
    pub dir: PathBuf,
    /// Which dataset to write.
    #[arg(long, value_parser = dataset_kinds(), default_value = default_kind())]
    pub kind: String,
    /// Transcription: files to write.
    #[arg(long, default_value_t = 3)]
    pub files: usize,
    /// Transcription: words per file.
    #[arg(long, default_value_t = 6)]
    pub words: usize,
    /// Transcription: speaking rate (the embedded server decodes at its
    /// `[server.transcription] words_per_second`, default 2.5).
    #[arg(long, default_value_t = 2.5)]
    pub words_per_second: f64,
    /// Transcription: sample rate of the WAV files, Hz.
    #[arg(long, default_value_t = 16000)]
    pub sample_rate: u32,
    /// Also write `DIR/data.tar.gz` of the `data/` tree.
    #[arg(long)]
    pub tar: bool,
    /// Write real MP4 cases (made with ffmpeg) instead of frames cases, so other tools
    /// can use the same set; frames cases are an rtload extension.
    #[arg(long)]
    pub mp4: bool,
    /// Cases per subset.
    #[arg(long, default_value_t = 1)]
    pub cases_per_subset: usize,
    /// Audio length of each case, milliseconds.
    #[arg(long, default_value_t = 3000)]
    pub duration_ms: u32,
    /// Seed of the generated content.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
}
