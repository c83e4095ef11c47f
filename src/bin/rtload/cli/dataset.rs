//! `rtload dataset`: its subcommands and the flags of `dataset synth` (OmniInteract or
//! transcription test data).

use std::path::PathBuf;

use clap::{Args, Subcommand};

/// `rtload dataset ...`.
#[derive(Debug, Subcommand)]
pub enum DatasetCommand {
    /// Write a small OmniInteract dataset in the official layout (1q1a, 1q1a_math, 1qna)
    /// from generated audio and frames, so the duplex benchmark runs offline; with
    /// `--kind transcription`, WAV files and reference transcripts for the
    /// realtime-transcription workload.
    Synth(SynthArgs),
}

/// What `rtload dataset synth` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum SynthKind {
    /// The OmniInteract layout (1q1a, 1q1a_math, 1qna) and a reference voice.
    #[default]
    Omniinteract,
    /// WAV files with reference transcripts for the realtime-transcription workload,
    /// which the embedded server transcribes exactly.
    Transcription,
}

/// `rtload dataset synth`.
#[derive(Debug, Args)]
pub struct SynthArgs {
    /// Directory to write (omniinteract: `DIR/data/...`, `DIR/ref_audio.wav`;
    /// transcription: `DIR/utt_NNN.wav` + `DIR/utt_NNN.txt`).
    pub dir: PathBuf,
    /// Which dataset to write.
    #[arg(long, value_enum, default_value_t = SynthKind::Omniinteract)]
    pub kind: SynthKind,
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
