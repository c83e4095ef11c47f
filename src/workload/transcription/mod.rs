//! The vLLM realtime speech-to-text workload (`kind = "realtime-transcription"`): one
//! `/v1/realtime` session per audio file, audio streamed as paced
//! `input_audio_buffer.append` events while the server streams `transcription.delta`s
//! and ends with `transcription.done`.
//!
//! [`protocol`] is the sans-IO session state machine, [`session`] its adapter to the
//! engine, [`workload`] the configured workload; [`metrics`] and [`wer`] the formulas,
//! [`report`] the text/JSON result; [`dataset`] reads and decodes the audio before timing; [`synth`] writes a
//! synthetic set the embedded server transcribes exactly.

pub mod dataset;
pub mod metrics;
pub mod protocol;
pub mod report;
pub mod session;
pub mod synth;
pub mod wer;
pub mod workload;

pub use workload::build;

/// The registered kind name.
pub const KIND: &str = "realtime-transcription";
