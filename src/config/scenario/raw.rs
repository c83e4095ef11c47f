//! The scenario file's shape as written: the top-level keys and the small `[target]`
//! and `[output]` tables (the other sections are their owners' types). `rtload schema`
//! describes the format from these types.

use std::path::PathBuf;

use serde::Deserialize;

/// A scenario file as written. Sections owned by other modules are parsed from their
/// subtrees with positions; here they only exist so unknown top-level keys are errors, and so
/// `rtload schema` can describe them with the owners' types.
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "rtload scenario")]
pub(crate) struct RawScenario {
    /// Scenario name (default: the file stem).
    pub(super) name: Option<String>,
    /// Free text.
    #[serde(rename = "description")]
    _description: Option<String>,
    /// The target; omit to run against the embedded reference server.
    pub(super) target: Option<RawTarget>,
    /// The workload: `kind` picks the registered workload, the other keys are its own.
    #[serde(rename = "workload")]
    #[schemars(with = "crate::config::schema::WorkloadSchema")]
    _workload: Option<toml::Value>,
    /// Samples, warm-ups, arrivals, concurrency.
    #[serde(rename = "load")]
    #[schemars(with = "Option<crate::workload::load::RawLoad>")]
    _load: Option<toml::Value>,
    /// Result files.
    pub(super) output: Option<RawOutput>,
    /// The embedded reference server (used only without a target).
    #[serde(rename = "server")]
    #[schemars(with = "Option<crate::server::ServerConfig>")]
    _server: Option<toml::Table>,
    /// Pass/fail conditions: `"metric.stat" = "<op> <number>"`.
    #[serde(rename = "thresholds")]
    #[schemars(with = "Option<crate::config::schema::ThresholdsSchema>")]
    _thresholds: Option<toml::Table>,
    /// Per-session SLO: `"stall_count" = "== 0"`; a completed session whose own value
    /// breaks one is degraded (names: stall_count, stall_ms, playback_start_ms,
    /// session_ms, queue_wait_ms, send_lateness_max_ms).
    #[serde(rename = "slo")]
    #[schemars(with = "Option<crate::config::schema::ThresholdsSchema>")]
    _slo: Option<toml::Table>,
    /// Run the scenario at several points of one parameter.
    #[serde(rename = "sweep")]
    #[schemars(with = "Option<crate::config::schema::SweepSchema>")]
    _sweep: Option<toml::Table>,
}

/// `[target]`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct RawTarget {
    /// ws://, wss://, http:// or https://; without a path the workload's default path is
    /// appended.
    pub(super) url: Option<String>,
    /// Extra upgrade headers (values are never printed or saved).
    #[serde(default)]
    pub(super) headers: std::collections::BTreeMap<String, String>,
    /// WebSocket handshake bound, seconds (default 10). Range (0, 1e6].
    pub(super) connect_timeout_s: Option<f64>,
    /// The target's own Prometheus endpoint (plain `http://…/metrics`), scraped each
    /// second during the run; chosen series go into the JSON result.
    pub(super) metrics_url: Option<String>,
    /// Series names to keep from `metrics_url` (default: vLLM's running/waiting requests
    /// and active WebSocket connections, and the embedded server's).
    pub(super) metrics_series: Option<Vec<String>>,
    /// PEM file of extra CA certificates trusted for wss:// (relative to the scenario),
    /// on top of the system roots.
    pub(super) ca_cert: Option<PathBuf>,
    /// Accept any server certificate (testing only; warned about loudly).
    #[serde(default)]
    pub(super) insecure_skip_verify: bool,
    /// Largest inbound frame or message in bytes, checked from the frame header before
    /// the payload is buffered (default 67108864 = 64 MiB; 1..=4294967296).
    pub(super) max_frame_bytes: Option<u64>,
    /// `"deflate"` (default: offer permessage-deflate as Python websockets and browsers
    /// do; used only if the server accepts) or `"none"` (offer no extension).
    pub(super) compression: Option<crate::engine::transport::Compression>,
    /// Try an upgrade the server refuses with 429 or 503 again, up to this many times,
    /// after its `Retry-After` (1 s doubling when it sends none; a wait over 60 s is not
    /// made). Default 0: a refusal fails the session at once. Range [0, 10].
    pub(super) retry_rejected: Option<u32>,
}

/// `[output]`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct RawOutput {
    /// The workload's JSON result, written atomically (relative to the scenario).
    pub(super) json: Option<PathBuf>,
}
