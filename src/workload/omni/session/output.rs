//! The duplex session's inputs and outputs: run-wide settings and the `session.update`
//! they produce (one case's media is the lead's [`PreparedMedia`]), the lifecycle phases,
//! and the per-session record handed to the report and the artifact writer.

use std::sync::Arc;

use serde_json::{Map, Value, json};

pub use crate::workload::omni::media::PreparedMedia;
use crate::workload::omni::pacing::PacingMode;
use crate::workload::omni::playback::Segment;

/// Run-wide settings every duplex session shares (behind an `Arc`).
#[derive(Debug, Clone)]
pub struct DuplexSettings {
    /// `session.model` and the `model` query parameter.
    pub model: String,
    /// `data:audio/wav;base64,…` of the reference voice, encoded once per run.
    pub ref_audio: Arc<str>,
    /// User `extra_body` keys (the three native-duplex keys override same-named ones).
    pub extra_body: Map<String, Value>,
    /// Idle timeout, completion timeout and upload slack, seconds (default 900).
    pub timeout_s: f64,
    /// Quiet time required before completion, seconds (default 2.0).
    pub settle_s: f64,
    /// Fail LISTEN-only sessions.
    pub require_response: bool,
    /// Later-upstream incremental playback acks instead of the seed's completion acks.
    pub incremental_acks: bool,
    /// How appends are placed in time.
    pub pacing: PacingMode,
    /// The most server events one session records (its event log, read back whole for
    /// its artifacts after timing): past it the session fails with a clear message and
    /// the others go on, so one flooding session cannot exhaust memory.
    pub max_events: usize,
    /// The most output audio one session may send, bytes (its measured PCM goes to the
    /// run's spool as it arrives): past it the session fails with a clear message and the
    /// others go on, so one endless stream cannot fill the spool's disk.
    pub max_audio_bytes: u64,
    /// Ask for the server's voice detection (server-VAD turns, barge-in):
    /// `turn_detection: {"type": "server_vad"}` with `overlap_policy:
    /// "barge_in_on_speech"`, as vLLM-Omni requires, instead of the seed's null and
    /// `listen_only`.
    pub server_vad: bool,
}

/// [`DuplexSettings::max_events`] by default: about 3 hours of a session answering with
/// ten events a second; the report holds one case's spilled lines while it publishes it
/// (~80 bytes an event, ~8 MB at this cap).
pub const DEFAULT_MAX_EVENTS: usize = 100_000;

/// [`DuplexSettings::max_audio_bytes`] by default: 1 GiB, about six hours of 24 kHz PCM16.
pub const DEFAULT_MAX_AUDIO_BYTES: u64 = 1 << 30;

impl DuplexSettings {
    /// Settings with the reference defaults.
    pub fn new(model: impl Into<String>, ref_audio: Arc<str>) -> Self {
        Self {
            model: model.into(),
            ref_audio,
            extra_body: Map::new(),
            timeout_s: 900.0,
            settle_s: 2.0,
            require_response: false,
            incremental_acks: false,
            pacing: PacingMode::Realtime,
            max_events: DEFAULT_MAX_EVENTS,
            max_audio_bytes: DEFAULT_MAX_AUDIO_BYTES,
            server_vad: false,
        }
    }
}

impl DuplexSettings {
    /// The `session.update` message for `session_id` (spec §1.2): the three native-duplex
    /// `extra_body` keys override same-named user keys.
    pub fn session_update(&self, session_id: &str) -> String {
        let mut extra = self.extra_body.clone();
        extra.insert("auto_response".into(), Value::Bool(true));
        extra.insert("minicpmo45_native_duplex".into(), Value::Bool(true));
        extra.insert("force_listen_count".into(), json!(0));
        let (turn_detection, overlap) = if self.server_vad {
            (json!({"type": "server_vad"}), "barge_in_on_speech")
        } else {
            (Value::Null, "listen_only")
        };
        json!({"type": "session.update", "session": {
            "model": self.model, "modalities": ["audio", "text"], "input_audio_format": "pcm16",
            "output_audio_format": "pcm16", "turn_detection": turn_detection, "overlap_policy": overlap,
            "playback_commit_policy": "ack_only", "extra_body": extra, "ref_audio": &*self.ref_audio,
            "session_id": session_id, "idle_timeout_s": self.timeout_s}})
        .to_string()
    }
}

/// Where the session is in its lifecycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// `session.update` sent; waiting for `session.created`.
    Configuring,
    /// Sending appends.
    Streaming,
    /// Commit sent; waiting for committed input and stable responses.
    Completing,
    /// Sending the final playback acks (transient).
    Draining,
    /// `session.close` sent; waiting for `session.closed`.
    Closing,
    /// Finished (success or failure).
    Done,
}

/// A created response as the session saw it (the artifacts' record, shared so capture
/// needs no conversion).
pub use crate::workload::omni::artifacts::capture::ResponseRecord;

/// What one duplex session leaves for the report and the artifact writer.
#[derive(Debug, Clone, Default)]
pub struct DuplexOutput {
    /// The session succeeded.
    pub success: bool,
    /// What the barge-in measured, when the scenario asked for one.
    pub barge_in: Option<super::barge::BargeInRecord>,
    /// What each turn measured (empty unless the scenario set `turns`).
    pub turns: Vec<super::turns::TurnRecord>,
    /// A held session's turns while part of them are spilled to the run's spool: the
    /// report reads them back into `turns` ([`super::turns::TurnsLeft`]).
    pub turns_spooled: Option<super::turns::TurnsLeft>,
    /// The failure message.
    pub error: Option<String>,
    /// The session id sent in the URL and `session.update`.
    pub session_id: String,
    /// From `on_open` to success or failure, seconds.
    pub latency_s: f64,
    /// Appends sent.
    pub input_audio_chunks: usize,
    /// Video frames sent.
    pub input_video_frames: usize,
    /// Mean append lag behind its schedule, seconds.
    pub pacing_mean_lag_s: f64,
    /// Largest append lag, seconds.
    pub pacing_max_lag_s: f64,
    /// Seconds since open, right before the first append.
    pub stream_start_s: Option<f64>,
    /// Every JSON-object event with its receipt time (seconds since open); audio deltas
    /// carry `audio_bytes` instead of their payload. Empty while the events are spilled
    /// (`events_spooled`) until the report reads them back.
    pub events: Vec<(f64, Value)>,
    /// Where the spilled event log is in the run's spool (measured sessions of a run).
    pub events_spooled: Option<crate::workload::spool::Span>,
    /// The session's mean audio TTFP, ms, computed live as the report computes it from
    /// the events (the progress line's headline; no events needed).
    pub mean_ttfp_ms: Option<f64>,
    /// The serial playback segments (PCM only when captured). Empty while they are
    /// spilled (`segments_spooled`) until the report reads them back.
    pub segments: Vec<Segment>,
    /// Where the spilled segments are in the run's spool, batch by batch in clock order
    /// (measured sessions of a run: played segments retire while the session runs and
    /// the rest when it ends, so no session keeps a record per audio delta it played).
    /// They come before `segments`.
    pub segments_spooled: Vec<crate::workload::spool::Span>,
    /// Created responses, in creation order; their text is empty until the report
    /// rebuilds it from `events` ([`super::fill_texts`]).
    pub responses: Vec<ResponseRecord>,
    /// All ingested output PCM bytes.
    pub audio_bytes: u64,
    /// Warnings recorded once each.
    pub artifact_warnings: Vec<String>,
    /// Reasons known to this session that make a success ineligible (`cleared_response`).
    pub ineligible_reasons: Vec<String>,
    /// The pacing mode used.
    pub pacing: PacingMode,
}
