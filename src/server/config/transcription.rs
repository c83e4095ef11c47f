//! Configuration of the simulated speech-to-text model behind the vLLM realtime
//! transcription protocol (`[transcription]`): where it listens, how fast it answers,
//! and fault switches.

use serde::{Deserialize, Serialize};

use super::{MAX_MILLIS, ServerError};

/// Behaviour of the transcription endpoint. The model "hears" the `tonecode` words of
/// `rtload dataset synth --kind transcription` exactly (one word per
/// `1 / words_per_second` s of audio); other sound becomes the word `speech`, silence
/// nothing.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TranscriptionServerConfig {
    /// Route. On `/v1/realtime` (the default) it serves every client that does not ask
    /// for the OmniInteract duplex mode (`duplex=1` in the query).
    #[serde(default = "default_path")]
    pub path: String,
    /// Sample rate the server assumes for the PCM16 mono audio, Hz. Range [4000, 192000].
    #[serde(default = "default_sample_rate_hz")]
    pub sample_rate_hz: u32,
    /// Speaking rate the model decodes at: one word per `1 / words_per_second` s of audio.
    /// Range (0, 100].
    #[serde(default = "default_words_per_second")]
    pub words_per_second: f64,
    /// Time from the audio of a word having arrived to its `transcription.delta`, ms.
    /// Range [0, 1e9].
    #[serde(default = "default_latency_ms")]
    pub latency_ms: f64,
    /// Time from the final commit to `transcription.done` (the last words go out just
    /// before it), ms. Range [0, 1e9].
    #[serde(default = "default_final_delay_ms")]
    pub final_delay_ms: f64,
    /// When set, `session.update` must name this model (else `model_not_found`, as vLLM).
    #[serde(default)]
    pub model: Option<String>,
    /// Fault switches; all off by default.
    #[serde(default)]
    pub faults: TranscriptionFaults,
}

/// Fault injection for the transcription endpoint. "After N deltas" means once N
/// `transcription.delta` events were sent (when the transcript has fewer words the
/// fault takes the place of `transcription.done`).
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TranscriptionFaults {
    /// Send `{"type":"error","error":<error_message>,"code":"processing_error"}` after N
    /// deltas and stop transcribing (the socket stays open).
    #[serde(default)]
    pub error_after_deltas: Option<u32>,
    /// Message of the injected error (default `injected fault`).
    #[serde(default)]
    pub error_message: Option<String>,
    /// Never send `transcription.done`.
    #[serde(default)]
    pub no_done: bool,
    /// Close the socket (normal close frame) after N deltas.
    #[serde(default)]
    pub close_after_deltas: Option<u32>,
    /// Send a text frame that is not JSON after N deltas, then stop transcribing.
    #[serde(default)]
    pub garbage_after_deltas: Option<u32>,
    /// Apply the faults only to these sessions (0-based, in the order this server
    /// accepted their connections); empty = every session.
    #[serde(default)]
    pub only_sessions: Vec<u64>,
}

impl TranscriptionFaults {
    /// The faults for the session with this ordinal: these, or none.
    pub fn for_session(&self, ordinal: u64) -> TranscriptionFaults {
        if self.only_sessions.is_empty() || self.only_sessions.contains(&ordinal) {
            self.clone()
        } else {
            TranscriptionFaults::default()
        }
    }
}

impl Default for TranscriptionServerConfig {
    fn default() -> Self {
        TranscriptionServerConfig {
            path: default_path(),
            sample_rate_hz: default_sample_rate_hz(),
            words_per_second: default_words_per_second(),
            latency_ms: default_latency_ms(),
            final_delay_ms: default_final_delay_ms(),
            model: None,
            faults: TranscriptionFaults::default(),
        }
    }
}

impl TranscriptionServerConfig {
    /// Every value out of its range (keys are `transcription.`-prefixed).
    pub fn problems(&self) -> Vec<ServerError> {
        let mut out = Vec::new();
        let mut check = |ok: bool, key: &str, msg: String| {
            if !ok {
                out.push(ServerError::Invalid {
                    key: key.to_string(),
                    msg,
                });
            }
        };
        check(
            self.path.starts_with('/') && !self.path.contains(['?', '#', '{', '}']),
            "transcription.path",
            format!(
                "transcription.path must be a plain path starting with '/', got {:?}",
                self.path
            ),
        );
        check(
            (4_000..=192_000).contains(&self.sample_rate_hz),
            "transcription.sample_rate_hz",
            format!(
                "transcription.sample_rate_hz must be between 4000 and 192000, got {}",
                self.sample_rate_hz
            ),
        );
        check(
            self.words_per_second > 0.0 && self.words_per_second <= 100.0,
            "transcription.words_per_second",
            format!(
                "transcription.words_per_second must be in (0, 100], got {}",
                self.words_per_second
            ),
        );
        for (name, value) in [
            ("transcription.latency_ms", self.latency_ms),
            ("transcription.final_delay_ms", self.final_delay_ms),
        ] {
            check(
                (0.0..=MAX_MILLIS).contains(&value),
                name,
                format!("{name} must be a number in [0, 1e9], got {value}"),
            );
        }
        out
    }
}

fn default_path() -> String {
    "/v1/realtime".into()
}

fn default_sample_rate_hz() -> u32 {
    16_000
}

fn default_words_per_second() -> f64 {
    crate::util::tonecode::DEFAULT_WORDS_PER_SECOND
}

fn default_latency_ms() -> f64 {
    150.0
}

fn default_final_delay_ms() -> f64 {
    100.0
}
