//! Configuration of `[server.scripted]`: the mirror image of the `scripted` workload.
//! Rules of the form "on an inbound message matching these fields, send these messages
//! after these delays (or stream N messages at this rate)", plus messages sent when a
//! socket opens. Templates and patterns are checked by [`ScriptedServerConfig::validate`].

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::ServerError;

/// `[server.scripted]`. With no `rules` and no `on_connect` the endpoint is not mounted.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScriptedServerConfig {
    /// Route of the scripted endpoint; when rules are configured it takes this path over
    /// from any built-in endpoint (default `/v1/realtime`).
    #[serde(default = "default_path")]
    pub path: String,
    /// Actions run when a socket opens (e.g. send `session.created`).
    #[serde(default)]
    pub on_connect: Vec<ServerAction>,
    /// Rules, checked in order against every inbound JSON text message; every matching
    /// rule runs.
    #[serde(default)]
    pub rules: Vec<ServerRule>,
    /// Actions run for an inbound JSON message no rule matches (e.g. the protocol's
    /// error event naming it: `${event.type}`); none by default.
    #[serde(default)]
    pub on_unmatched: Vec<ServerAction>,
    /// Hear the user: judge the base64 PCM16 in a field of every inbound message that has
    /// it ([`SpeechConfig`]); needed by `on_speech_started` and `on_barge_in`.
    #[serde(default)]
    pub speech: Option<SpeechConfig>,
    /// Actions run when the user starts speaking (e.g. send
    /// `input_audio_buffer.speech_started`); the triggering message is the chunk that
    /// started it.
    #[serde(default)]
    pub on_speech_started: Vec<ServerAction>,
    /// Actions run when the user starts speaking while messages of an earlier firing are
    /// still scheduled — the model is talking: a barge-in. Typically
    /// `{ after_ms = 150, cancel = true }` (stop what is still scheduled) and then the
    /// protocol's clear and cancelled `response.done`.
    #[serde(default)]
    pub on_barge_in: Vec<ServerAction>,
}

/// How `[server.scripted]` hears speech: an inbound message whose `field` holds base64
/// PCM16 (mono, `sample_rate`) at least `threshold_dbfs` loud, after `silence_ms` of
/// quieter such messages (or at the start), starts speech.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SpeechConfig {
    /// The top-level field holding the audio (default `audio`).
    #[serde(default = "default_speech_field")]
    pub field: String,
    /// Sample rate of that audio, Hz (default 24000). Range [8000, 192000].
    #[serde(default = "default_sample_rate")]
    pub sample_rate: u32,
    /// RMS level from which a chunk is speech, dBFS (default -40). Range [-96, 0].
    #[serde(default = "default_threshold_dbfs")]
    pub threshold_dbfs: f64,
    /// Quieter audio that ends speech, ms (default 400). Range [0, 3600000].
    #[serde(default = "default_silence_ms")]
    pub silence_ms: f64,
}

fn default_speech_field() -> String {
    "audio".into()
}
fn default_threshold_dbfs() -> f64 {
    -40.0
}
fn default_silence_ms() -> f64 {
    400.0
}

/// One rule.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ServerRule {
    /// Fields an inbound message must have (nested tables and dotted keys match nested
    /// fields), e.g. `{ type = "input_audio_buffer.commit", final = true }`.
    pub on: Value,
    /// What to do, in order; each action's `after_ms` counts from the previous action's
    /// end (the first from the message's receipt).
    #[serde(rename = "do")]
    pub actions: Vec<ServerAction>,
}

/// One action: exactly one of `send`, `stream` or `close`.
///
/// Template variables: `${session}` (connection ordinal), `${seq}` (messages this
/// connection has been sent), `${msg}` (the ordinal of the inbound message that triggered
/// the rule, the same for everything one firing sends: an id for the response it
/// answers with; 0 in `on_connect`), `${uuid}`, `${event.<path>}` (a field of the message
/// that triggered the rule), and in `stream` `${i}` (0-based), `${n}` (1-based), `${count}`,
/// `${audio_b64}` (`audio_ms` of PCM16 tone at `sample_rate`).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ServerAction {
    /// Delay before this action, ms.
    #[serde(default)]
    pub after_ms: f64,
    /// A message (table) or several sent together (array of tables).
    #[serde(default)]
    pub send: Option<Value>,
    /// A message (or array of messages) sent `count` times, `every_ms` apart.
    #[serde(default)]
    pub stream: Option<Value>,
    /// Repetitions of `stream` (default 1).
    #[serde(default = "default_count")]
    pub count: u32,
    /// Gap between `stream` repetitions, ms (the first goes out at `after_ms`).
    #[serde(default)]
    pub every_ms: f64,
    /// Audio per `${audio_b64}`, ms (default 100).
    #[serde(default = "default_audio_ms")]
    pub audio_ms: u32,
    /// Sample rate of `${audio_b64}`, Hz (default 24000).
    #[serde(default = "default_sample_rate")]
    pub sample_rate: u32,
    /// Close the socket (normal close) instead of sending.
    #[serde(default)]
    pub close: bool,
    /// Drop every message earlier firings scheduled that has not been sent yet (e.g.
    /// the rest of a response the user spoke over), instead of sending.
    #[serde(default)]
    pub cancel: bool,
}

fn default_path() -> String {
    "/v1/realtime".into()
}
fn default_count() -> u32 {
    1
}
fn default_audio_ms() -> u32 {
    100
}
fn default_sample_rate() -> u32 {
    24_000
}

impl Default for ScriptedServerConfig {
    fn default() -> Self {
        Self {
            path: default_path(),
            on_connect: Vec::new(),
            rules: Vec::new(),
            on_unmatched: Vec::new(),
            speech: None,
            on_speech_started: Vec::new(),
            on_barge_in: Vec::new(),
        }
    }
}

impl ScriptedServerConfig {
    /// Whether the endpoint is mounted.
    pub fn enabled(&self) -> bool {
        !self.rules.is_empty() || !self.on_connect.is_empty()
    }

    /// Problems with the path, counts, delays, patterns and templates; each names the
    /// rule and action (`scripted.rules[2].do[1]: ...`).
    pub fn problems(&self) -> Vec<ServerError> {
        let mut out = Vec::new();
        if !self.path.starts_with('/') {
            out.push(ServerError::Invalid {
                key: "scripted.path".into(),
                msg: format!("scripted.path must start with `/` (got {:?})", self.path),
            });
        }
        if let Some(s) = &self.speech {
            let ok = (8_000..=192_000).contains(&s.sample_rate)
                && (-96.0..=0.0).contains(&s.threshold_dbfs)
                && (0.0..=3_600_000.0).contains(&s.silence_ms)
                && !s.field.is_empty();
            if !ok {
                out.push(ServerError::Invalid {
                    key: "scripted.speech".into(),
                    msg: format!(
                        "scripted.speech needs a non-empty `field`, `sample_rate` in [8000, 192000] Hz, `threshold_dbfs` in [-96, 0] and `silence_ms` in [0, 3600000] (got {:?}, {}, {}, {})",
                        s.field, s.sample_rate, s.threshold_dbfs, s.silence_ms
                    ),
                });
            }
        } else if !self.on_speech_started.is_empty() || !self.on_barge_in.is_empty() {
            out.push(ServerError::Invalid {
                key: "scripted.speech".into(),
                msg: "`on_speech_started` / `on_barge_in` need `speech` (how to hear the user), e.g. `speech = { field = \"audio\" }`".into(),
            });
        }
        if let Err(msg) = super::super::scripted_plan::Compiled::new(self) {
            let key = [
                "scripted.on_connect",
                "scripted.on_unmatched",
                "scripted.on_speech_started",
                "scripted.on_barge_in",
            ]
            .into_iter()
            .find(|k| msg.starts_with(k))
            .unwrap_or("scripted.rules");
            out.push(ServerError::Invalid {
                key: key.into(),
                msg,
            });
        }
        out
    }
}
