//! How many sessions the embedded server admits, how it refuses the next one, and how
//! its generation slows with load (`[server] max_sessions`, `refuse_with`,
//! `retry_after_s`, `[server.load]`), so a capacity search against it finds a limit of
//! the server's own and not only the machine's.

use serde::{Deserialize, Serialize};

use super::{ServerConfig, ServerError};

/// How a WebSocket session beyond `max_sessions` is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RefuseWith {
    /// The upgrade is answered `429 Too Many Requests` with `Retry-After` and a JSON
    /// error body (what a rate-limiting gateway in front of vLLM answers).
    #[serde(rename = "http_429")]
    Http429,
    /// The upgrade is answered `503 Service Unavailable` with `Retry-After` and a JSON
    /// error body (the overload answer proposed for vLLM's API server).
    #[serde(rename = "http_503")]
    Http503,
    /// The upgrade succeeds and the server closes at once with code 1013 (try again
    /// later) and a reason naming the limit.
    #[serde(rename = "close_1013")]
    Close1013,
    /// The upgrade succeeds; vLLM-Omni's duplex answer: an `error` event
    /// `{"type":"error","error":{"type":"rate_limit_error","code":"resource_exhausted",
    /// "message":"duplex_session_capacity_exhausted: limit=N"}}` (on the duplex endpoint
    /// in answer to the client's first message, elsewhere at once), then a close with
    /// 1013.
    ErrorEvent,
}

impl RefuseWith {
    /// The refusal when `refuse_with` is not set: vLLM-Omni's error event on the duplex
    /// endpoint, HTTP 503 on the others.
    pub fn default_for(duplex: bool) -> RefuseWith {
        if duplex {
            RefuseWith::ErrorEvent
        } else {
            RefuseWith::Http503
        }
    }
}

/// `[server.load]`: the load-dependent generation model. Every time the server
/// schedules generated output it reads the number of WebSocket sessions it holds now
/// (`active`, every endpoint) and stretches its delays by
/// `load = max(1, active / rtf_one_at_sessions)`: duplex delta gaps (`delta_ms * rtf *
/// load`) and first-response delay, video chunk intervals and time to first chunk,
/// transcription `latency_ms` and `final_delay_ms`. With `duplex.rtf = 1` the stream's
/// real-time factor crosses 1 above `rtf_one_at_sessions` sessions.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LoadConfig {
    /// Sessions the server serves at its base speed; above it, delays grow by `active /
    /// rtf_one_at_sessions`. Unset: delays do not depend on load. Range [1, 4294967295].
    #[serde(default)]
    pub rtf_one_at_sessions: Option<u32>,
}

impl LoadConfig {
    /// The slow-down factor with `active` sessions open: `max(1, active / k)`, or 1
    /// without a model. Monotone in `active`.
    pub fn factor(&self, active: u64) -> f64 {
        match self.rtf_one_at_sessions {
            Some(k) if k > 0 => (active as f64 / f64::from(k)).max(1.0),
            _ => 1.0,
        }
    }
}

/// Largest `retry_after_s` (one hour).
const MAX_RETRY_AFTER_S: u32 = 3600;

/// The range problems of `cfg`'s capacity and load keys.
pub(super) fn problems(cfg: &ServerConfig) -> Vec<ServerError> {
    let (max_sessions, retry_after_s, load) = (cfg.max_sessions, cfg.retry_after_s, &cfg.load);
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
        max_sessions != Some(0),
        "max_sessions",
        "max_sessions must be at least 1 (omit it for no limit), got 0".into(),
    );
    check(
        retry_after_s <= MAX_RETRY_AFTER_S,
        "retry_after_s",
        format!(
            "retry_after_s must be between 0 and {MAX_RETRY_AFTER_S} seconds, got {retry_after_s}"
        ),
    );
    check(
        load.rtf_one_at_sessions != Some(0),
        "load.rtf_one_at_sessions",
        "load.rtf_one_at_sessions must be at least 1 (omit it for no load model), got 0".into(),
    );
    out
}
