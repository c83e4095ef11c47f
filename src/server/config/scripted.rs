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
        if let Err(msg) = super::super::scripted_plan::Compiled::new(self) {
            let key = ["scripted.on_connect", "scripted.on_unmatched"]
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
