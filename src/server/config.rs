//! Configuration of the embedded reference server: the TOML-facing types, their
//! defaults, loading from a file (errors name path, line and column) and validation.
//! `[video]` configures `/v1/realtime/video`, `[duplex]` configures `/v1/realtime`, `[transcription]` the vLLM speech-to-text endpoint.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::util::textpos::{line_col, suggest_unknown_field, value_span};

mod capacity;
mod duplex;
mod scripted;
mod transcription;

pub use capacity::{LoadConfig, RefuseWith};
pub use duplex::{DuplexFaults, DuplexServerConfig, FinalDecision, TurnMode, VadConfig};
pub use scripted::{ScriptedServerConfig, ServerAction};
#[cfg(test)]
pub use transcription::TranscriptionFaults;
pub use transcription::TranscriptionServerConfig;

/// Errors of the server seam: loading or validating a [`ServerConfig`].
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// The config file could not be read.
    #[error("cannot read server config {path}: {source}")]
    Read {
        /// File that was being read.
        path: PathBuf,
        /// Underlying IO error.
        source: std::io::Error,
    },
    /// The config file is not valid TOML or does not match the schema.
    #[error("{path}:{line}:{col}: {message}")]
    Parse {
        /// File that was being parsed.
        path: PathBuf,
        /// 1-based line of the offending span (1 when the parser gave no span).
        line: usize,
        /// 1-based column (in characters) of the offending span.
        col: usize,
        /// Parser message.
        message: String,
    },
    /// A value is out of its allowed range.
    #[error("invalid server config: {msg}")]
    Invalid {
        /// Dotted key path from the config's top, e.g. `video.chunk_bytes`.
        key: String,
        /// What is wrong: the key, the bad value and the allowed range.
        msg: String,
    },
}

/// Whole embedded-server configuration (`[server]`-style TOML table).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ServerConfig {
    /// Behaviour of the realtime video endpoint `/v1/realtime/video`.
    #[serde(default)]
    pub video: VideoServerConfig,
    /// Behaviour of the duplex speech endpoint `/v1/realtime`.
    #[serde(default)]
    pub duplex: DuplexServerConfig,
    /// Behaviour of the vLLM realtime transcription endpoint (`/v1/realtime` without
    /// `duplex=1`, or its own `path`).
    #[serde(default)]
    pub transcription: TranscriptionServerConfig,
    /// Rules of the scripted endpoint (the mirror image of the scripted workload kind).
    #[serde(default)]
    pub scripted: ScriptedServerConfig,
    /// A connection with no client message for this long while the server is not
    /// streaming to it (before `session.start`, or after a stall fault) is closed.
    /// Duplex sessions use the `session.idle_timeout_s` of their `session.update`
    /// instead when it gives one, and expire with `session.expired`. Range (0, 1e9].
    #[serde(default = "default_idle_timeout_s")]
    pub idle_timeout_s: f64,
    /// Number of actix worker threads (each with its own event loop). Range [1, 512].
    #[serde(default = "default_workers")]
    pub workers: usize,
    /// On stop, open connections get this many seconds to finish before they are dropped.
    /// Range [0, 86400].
    #[serde(default = "default_shutdown_timeout_s")]
    pub shutdown_timeout_s: u64,
    /// Largest inbound WebSocket frame or reassembled message a client may send, in bytes,
    /// on every endpoint, checked from the frame header before the payload is buffered (a
    /// larger one is refused: close code 1009 naming the limit). Range [1, 4294967296];
    /// default 67108864 (64 MiB).
    #[serde(default = "default_max_frame_bytes")]
    pub max_frame_bytes: u64,
    /// Most WebSocket sessions open at once, over every endpoint; the next one is refused
    /// as `refuse_with` says, and admitted again once a session ends. Unset: no limit.
    /// Range [1, 4294967295].
    #[serde(default)]
    pub max_sessions: Option<u32>,
    /// How a session beyond `max_sessions` is refused: `"http_429"`, `"http_503"`
    /// (refused upgrades, with `Retry-After`), `"close_1013"` or `"error_event"`
    /// (vLLM-Omni's duplex `resource_exhausted` error, then close 1013). Unset:
    /// `error_event` on the duplex endpoint, `http_503` on the others.
    #[serde(default)]
    pub refuse_with: Option<RefuseWith>,
    /// `Retry-After` seconds of a refused upgrade. Range [0, 3600].
    #[serde(default = "default_retry_after_s")]
    pub retry_after_s: u32,
    /// The load-dependent generation model (delays grow with the sessions open).
    #[serde(default)]
    pub load: LoadConfig,
}

/// Behaviour of the realtime video endpoint: pacing, payload sizes, limits and faults.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VideoServerConfig {
    /// Time from receipt of `session.start` to the first media chunk, in ms. Range [0, 1e9].
    #[serde(default = "default_first_chunk_ms")]
    pub first_chunk_ms: f64,
    /// Steady-state gap between consecutive media chunks, in ms. Range [0, 1e9].
    #[serde(default = "default_chunk_interval_ms")]
    pub chunk_interval_ms: f64,
    /// Each chunk's send time is moved by a uniform offset in `[-jitter_ms, +jitter_ms]`
    /// around its nominal (absolute) time, never before the previous chunk. Range [0, 1e9].
    #[serde(default)]
    pub jitter_ms: f64,
    /// Chunks `1..ramp_chunks` follow a gap of `chunk_interval_ms * ramp_factor`
    /// (attention-window warm-up); later chunks the plain interval.
    #[serde(default = "default_ramp_chunks")]
    pub ramp_chunks: u32,
    /// Gap multiplier during the ramp. Range [0, 1e9].
    #[serde(default = "default_ramp_factor")]
    pub ramp_factor: f64,
    /// Seed of the jitter stream (mixed with the session's ordinal on this server).
    #[serde(default)]
    pub seed: u64,
    /// Payload size of each media chunk's binary frame, in bytes. Range [1, 67108864]
    /// (64 MiB, the client's frame limit).
    #[serde(default = "default_chunk_bytes")]
    pub chunk_bytes: usize,
    /// Send a `kind:"trailer"` metadata + binary pair after the last media chunk.
    #[serde(default = "default_true")]
    pub trailer: bool,
    /// Largest accepted `num_frames` (default `12*64-3` = 64 chunks). Range [9, 11999997].
    #[serde(default = "default_max_frames")]
    pub max_frames: u64,
    /// Answer every `session.interaction` with
    /// `{"type":"session.interaction.ack","event_id":...}` (off: record silently).
    #[serde(default)]
    pub ack_interactions: bool,
    /// Saturation model: while more than this many sessions stream at once, every
    /// session's next chunk interval (and a new session's time to first chunk) stretches
    /// by `active / N`, like a GPU shared by more rollouts than it serves in real time.
    /// Unset: no saturation. Range [1, 4294967295].
    #[serde(default)]
    pub saturate_above_sessions: Option<u32>,
    /// Fault switches; all off by default.
    #[serde(default)]
    pub faults: VideoFaults,
}

/// Fault injection for the video endpoint. "After N chunks" means once exactly N media
/// chunks have been sent (N may equal the session's chunk count: then the fault replaces
/// the trailer and `session.done`). When several trigger at the same N, the order is
/// error, close, stall.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VideoFaults {
    /// Answer `session.start` with `{"type":"error","message":<this>}` and close.
    #[serde(default)]
    pub error_on_start: Option<String>,
    /// Stop sending after N media chunks; keep the socket open (pings still answered).
    #[serde(default)]
    pub stall_after_chunks: Option<u32>,
    /// Close the socket (normal close frame) after N media chunks, without `session.done`.
    #[serde(default)]
    pub close_after_chunks: Option<u32>,
    /// Swap the `generation_chunk_index` of the chunks sent second and third (1 <-> 2).
    #[serde(default)]
    pub out_of_order: bool,
    /// The third chunk sent repeats index 1 (applied after `out_of_order`).
    #[serde(default)]
    pub duplicate_index: bool,
    /// The first binary frame is sent without its preceding `video.chunk_metadata`.
    #[serde(default)]
    pub binary_without_metadata: bool,
    /// `session.done` says `stopped: true`.
    #[serde(default)]
    pub stopped: bool,
    /// Send this many fewer media chunks than `num_frames` asks for.
    #[serde(default)]
    pub fewer_chunks: Option<u32>,
    /// Send an `error` event after N media chunks, then close without `session.done`.
    #[serde(default)]
    pub error_after_chunks: Option<u32>,
    /// Apply the faults only to these sessions (0-based, in the order this server
    /// received their `session.start`); empty = every session.
    #[serde(default)]
    pub only_sessions: Vec<u64>,
}

impl VideoFaults {
    /// The faults for the session with this ordinal: these, or none.
    pub fn for_session(&self, ordinal: u64) -> VideoFaults {
        if self.only_sessions.is_empty() || self.only_sessions.contains(&ordinal) {
            self.clone()
        } else {
            VideoFaults::default()
        }
    }
}

/// Upper bound of `idle_timeout_s` (keeps deadlines far from `Instant` overflow).
const MAX_SECONDS: f64 = 1e9;
/// Upper bound of every millisecond setting and of `ramp_factor`.
const MAX_MILLIS: f64 = 1e9;
/// Upper bound of `video.max_frames` (one million chunks).
const MAX_FRAMES: u64 = 12 * 1_000_000 - 3;
/// Upper bound of `video.chunk_bytes`: the client's 64 MiB frame limit.
const MAX_CHUNK_BYTES: usize = 64 << 20;
/// Upper bound of `shutdown_timeout_s` (one day).
const MAX_SHUTDOWN_S: u64 = 86_400;

fn default_idle_timeout_s() -> f64 {
    300.0
}
fn default_max_frame_bytes() -> u64 {
    64 * 1024 * 1024
}

fn default_retry_after_s() -> u32 {
    1
}

fn default_workers() -> usize {
    1
}
fn default_shutdown_timeout_s() -> u64 {
    5
}
fn default_first_chunk_ms() -> f64 {
    300.0
}
fn default_chunk_interval_ms() -> f64 {
    40.0
}
fn default_ramp_chunks() -> u32 {
    6
}
fn default_ramp_factor() -> f64 {
    1.5
}
fn default_chunk_bytes() -> usize {
    4096
}
fn default_true() -> bool {
    true
}
fn default_max_frames() -> u64 {
    12 * 64 - 3
}
impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            video: VideoServerConfig::default(),
            duplex: DuplexServerConfig::default(),
            transcription: TranscriptionServerConfig::default(),
            scripted: ScriptedServerConfig::default(),
            idle_timeout_s: default_idle_timeout_s(),
            workers: default_workers(),
            shutdown_timeout_s: default_shutdown_timeout_s(),
            max_frame_bytes: default_max_frame_bytes(),
            max_sessions: None,
            refuse_with: None,
            retry_after_s: default_retry_after_s(),
            load: LoadConfig::default(),
        }
    }
}

impl Default for VideoServerConfig {
    fn default() -> Self {
        VideoServerConfig {
            first_chunk_ms: default_first_chunk_ms(),
            chunk_interval_ms: default_chunk_interval_ms(),
            jitter_ms: 0.0,
            ramp_chunks: default_ramp_chunks(),
            ramp_factor: default_ramp_factor(),
            seed: 0,
            chunk_bytes: default_chunk_bytes(),
            trailer: true,
            max_frames: default_max_frames(),
            ack_interactions: false,
            saturate_above_sessions: None,
            faults: VideoFaults::default(),
        }
    }
}

impl ServerConfig {
    /// [`Self::max_frame_bytes`] as a buffer size.
    pub fn max_inbound_bytes(&self) -> usize {
        usize::try_from(self.max_frame_bytes).unwrap_or(usize::MAX)
    }

    /// Reads and validates a TOML server config. Errors name the path and the 1-based
    /// `line:col` of the offending key or value.
    pub fn from_toml_file(path: impl AsRef<Path>) -> Result<ServerConfig, ServerError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| ServerError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Self::from_toml_str(&text).map_err(|err| match err {
            ServerError::Parse {
                line, col, message, ..
            } => ServerError::Parse {
                path: path.to_path_buf(),
                line,
                col,
                message,
            },
            other => other,
        })
    }

    /// Parses and validates TOML text; errors carry an empty path, and range errors are
    /// positioned at the bad value. The text is a server config, or a scenario whose
    /// `[server]` table is served (the rest of the scenario is not read here), so
    /// `rtload serve --config` takes the file `rtload run` takes.
    pub fn from_toml_str(text: &str) -> Result<ServerConfig, ServerError> {
        /// A scenario file: only its `[server]` table is the server's.
        #[derive(Deserialize)]
        struct InScenario {
            server: ServerConfig,
            #[serde(flatten)]
            _rest: toml::Table,
        }
        let is_scenario = text
            .parse::<toml::Table>()
            .is_ok_and(|t| t.get("server").is_some_and(toml::Value::is_table));
        let at = |span: Option<std::ops::Range<usize>>, message: String| {
            let (line, col) = span.map_or((1, 1), |s| line_col(text, s.start));
            ServerError::Parse {
                path: PathBuf::new(),
                line,
                col,
                message,
            }
        };
        let parsed = if is_scenario {
            toml::from_str::<InScenario>(text).map(|s| s.server)
        } else {
            toml::from_str::<ServerConfig>(text)
        };
        let cfg = parsed
            .map_err(|err| at(err.span(), suggest_unknown_field(err.message().trim_end())))?;
        if let Some(ServerError::Invalid { key, msg }) = cfg.problems().into_iter().next() {
            let path: Vec<&str> = std::iter::once("server")
                .filter(|_| is_scenario)
                .chain(key.split('.'))
                .collect();
            return Err(at(value_span(text, &path), msg));
        }
        Ok(cfg)
    }

    /// Checks value ranges that serde cannot express; the first problem.
    pub fn validate(&self) -> Result<(), ServerError> {
        self.problems().into_iter().next().map_or(Ok(()), Err)
    }

    /// Every value out of its documented range, as [`ServerError::Invalid`] naming the
    /// dotted key, the value and the range.
    pub fn problems(&self) -> Vec<ServerError> {
        let mut out = Vec::new();
        let v = &self.video;
        let mut check = |ok: bool, key: &str, msg: String| {
            if !ok {
                out.push(ServerError::Invalid {
                    key: key.to_string(),
                    msg,
                });
            }
        };
        check(
            self.idle_timeout_s > 0.0 && self.idle_timeout_s <= MAX_SECONDS,
            "idle_timeout_s",
            format!(
                "idle_timeout_s must be a number of seconds in (0, 1e9], got {}",
                self.idle_timeout_s
            ),
        );
        check(
            (1..=512).contains(&self.workers),
            "workers",
            format!("workers must be between 1 and 512, got {}", self.workers),
        );
        check(
            (1..=1 << 32).contains(&self.max_frame_bytes),
            "max_frame_bytes",
            format!(
                "max_frame_bytes must be between 1 and 4294967296, got {}",
                self.max_frame_bytes
            ),
        );
        check(
            self.shutdown_timeout_s <= MAX_SHUTDOWN_S,
            "shutdown_timeout_s",
            format!(
                "shutdown_timeout_s must be between 0 and {MAX_SHUTDOWN_S} seconds, got {}",
                self.shutdown_timeout_s
            ),
        );
        for (name, value) in [
            ("video.first_chunk_ms", v.first_chunk_ms),
            ("video.chunk_interval_ms", v.chunk_interval_ms),
            ("video.jitter_ms", v.jitter_ms),
            ("video.ramp_factor", v.ramp_factor),
        ] {
            check(
                (0.0..=MAX_MILLIS).contains(&value),
                name,
                format!("{name} must be a number in [0, 1e9], got {value}"),
            );
        }
        check(
            (1..=MAX_CHUNK_BYTES).contains(&v.chunk_bytes),
            "video.chunk_bytes",
            format!(
                "video.chunk_bytes must be between 1 and {MAX_CHUNK_BYTES} (64 MiB, the client's frame limit), got {}",
                v.chunk_bytes
            ),
        );
        check(
            (9..=MAX_FRAMES).contains(&v.max_frames),
            "video.max_frames",
            format!(
                "video.max_frames must be between 9 (one chunk) and {MAX_FRAMES}, got {}",
                v.max_frames
            ),
        );
        check(
            v.saturate_above_sessions != Some(0),
            "video.saturate_above_sessions",
            "video.saturate_above_sessions must be at least 1 (omit it for no saturation), got 0"
                .into(),
        );
        out.extend(capacity::problems(self));
        out.extend(self.duplex.problems());
        out.extend(self.transcription.problems());
        out.extend(self.scripted.problems());
        out
    }
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
