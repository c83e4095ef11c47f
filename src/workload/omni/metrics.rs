//! Duplex per-response and per-session metrics (spec §5.2): TTFT, TTFP, audio generation
//! time, audio duration and RTF per assistant response, measured from the client receipt
//! of that response's `response.created`; the session summary; and the mapping of one
//! finished session onto a serving-benchmark [`RequestOutcome`]. Beside the seed keys,
//! vLLM-Omni 0.30.0's (`benchmarks/duplex_session_metrics.py`): per row `tpot_ms` and
//! the audio continuity (`continuity.rs`), per session the distributions, the stage-0
//! roll-up and the stream window, and the run's `duplex_stream_*` (`stream.rs`).
//!
//! Pure code: a list of timestamped server events in, serializable rows out. Receipt
//! times must all come from one monotonic clock; nothing here reads a clock.

use std::collections::HashMap;

use base64::Engine as _;
use serde::Serialize;
use serde_json::Value;

use super::tokens::{Stage0Tokens, project_token_timing, round_dp, stage0_metrics, stage0_tokens};
use crate::workload::omni::bench_metrics::RequestOutcome;
use crate::workload::omni::session::events::Timed;

mod continuity;
mod live;
mod stream;
pub use continuity::{CONTINUITY_ORIGIN, Continuity, ContinuityStats};
pub use live::{LiveTtfp, audio_packet};
pub use stream::{
    Distribution, StageSummary, StreamWindow, distribution_summary, duplex_stream_metrics,
};

/// `source` of every client-measured request metric.
pub const SOURCE: &str = "client_monotonic_receive";
/// `measurement_origin.ttft`.
pub const TTFT_ORIGIN: &str = "response.created client receive to first non-empty text delta";
/// `measurement_origin.ttfp`.
pub const TTFP_ORIGIN: &str = "response.created client receive to first audio packet";
/// `measurement_origin.rtf`.
pub const RTF_ORIGIN: &str =
    "response.created client receive to last audio packet divided by emitted audio duration";
/// `measurement_origin.tpot` (vLLM-Omni 0.30.0 names it on every row).
pub const TPOT_ORIGIN: &str = "Stage-0 engine mean time per output token";
/// Output sample rate assumed when no audio delta names one.
pub const DEFAULT_OUTPUT_RATE_HZ: u64 = 24_000;

const AUDIO_DELTAS: [&str; 2] = ["response.audio.delta", "response.output_audio.delta"];
const TEXT_DELTAS: [&str; 4] = [
    "response.audio_transcript.delta",
    "response.output_audio_transcript.delta",
    "response.output_text.delta",
    "response.text.delta",
];

/// What each client metric is measured from and to.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MeasurementOrigin {
    /// See [`TTFT_ORIGIN`].
    pub ttft: &'static str,
    /// See [`TTFP_ORIGIN`].
    pub ttfp: &'static str,
    /// See [`RTF_ORIGIN`].
    pub rtf: &'static str,
    /// See [`TPOT_ORIGIN`].
    pub tpot: &'static str,
    /// See [`CONTINUITY_ORIGIN`] (rtload's: the reference measures no duplex continuity).
    pub continuity: &'static str,
}

/// Client-measured metrics of one response (`request_metrics`; present only when the
/// response's `response.created` and at least one non-empty audio delta were seen).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RequestMetrics {
    /// Always [`SOURCE`].
    pub source: &'static str,
    /// The origin descriptions.
    pub measurement_origin: MeasurementOrigin,
    /// First non-empty text delta − origin, ms, 3 decimals; `None` (null) without text.
    pub ttft_ms: Option<f64>,
    /// First non-empty audio delta − origin, ms, 3 decimals.
    pub ttfp_ms: f64,
    /// `audio_generation / audio_duration`, 6 decimals; `None` (null) for zero duration.
    pub rtf: Option<f64>,
    /// `max(0, last audio delta − origin)`, ms, 3 decimals.
    pub audio_generation_ms: f64,
    /// Emitted audio, ms, 3 decimals: max `metadata.audio_duration_ms` of the response's
    /// audio deltas, else decoded bytes·1000/(rate·2).
    pub audio_duration_ms: f64,
    /// The stage-0 `vllm_tpot_ms` (finite, non-negative, else null), present only when an
    /// event of the response carried stage-0 metrics (vLLM-Omni 0.30.0's `tpot_ms`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tpot_ms: Option<Option<f64>>,
}

/// One row of `duplex_request_metrics`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ResponseRow {
    /// The session id (null when unknown).
    pub session_id: Option<String>,
    /// Position of the response in `response.created` order (0-based, over all created
    /// responses of the session).
    pub request_index: usize,
    /// The response id.
    pub response_id: String,
    /// Client metrics, flattened into the row when present.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub request_metrics: Option<RequestMetrics>,
    /// Engine stage-0 token metrics, when an event of this response carried them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stage0_tokens: Option<Stage0Tokens>,
    /// Audio continuity of the response's counted audio deltas, flattened when it sent
    /// audio ([`ContinuityStats`]).
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub continuity: Option<ContinuityStats>,
    /// The turn it belongs to (0-based; sessions that speak `turns` only): the last turn
    /// whose speech had begun when its `response.created` arrived.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub turn: Option<usize>,
    /// Receipt of its `response.created`, session-clock seconds (not written).
    #[serde(skip)]
    pub created_at_s: Option<f64>,
}

/// Sets each row's [`ResponseRow::turn`] from the turns' speech starts (session-clock
/// seconds, ascending; turn 0's is the session's start).
pub fn assign_turns(rows: &mut [ResponseRow], turn_starts_s: &[f64]) {
    if turn_starts_s.is_empty() {
        return;
    }
    for row in rows {
        let started = |at: f64| turn_starts_s[1..].iter().filter(|s| **s <= at).count();
        row.turn = Some(row.created_at_s.map_or(0, started));
    }
}

/// `duplex_session_metrics`: means over the rows that have a finite value.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionSummary {
    /// The session id (null when unknown).
    pub session_id: Option<String>,
    /// Number of rows.
    pub audio_turn_count: usize,
    /// Mean row TTFT, ms, 3 decimals; null when no row has one.
    pub mean_ttft_ms: Option<f64>,
    /// Mean row TTFP, ms, 3 decimals; null when no row has one.
    pub mean_ttfp_ms: Option<f64>,
    /// Mean row RTF, 6 decimals; null when no row has one.
    pub mean_rtf: Option<f64>,
    /// vLLM-Omni 0.30.0's `ttft_ms`: [`Distribution`] of the rows' TTFT (3 decimals).
    pub ttft_ms: Option<Distribution>,
    /// 0.30.0's `ttfp_ms`: of the rows' TTFP (3 decimals).
    pub ttfp_ms: Option<Distribution>,
    /// 0.30.0's `rtf`: of the rows' RTF (6 decimals).
    pub rtf: Option<Distribution>,
    /// 0.30.0's `tpot_ms`: of the rows' positive `tpot_ms`; absent when none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tpot_ms: Option<Distribution>,
    /// 0.30.0's `stages`: the stage-0 blocks' `ttft_ms` / `tpot_ms` roll-up under `"0"`
    /// (rtload keeps no other stage); absent when no row has a stage-0 block.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stages: Option<std::collections::BTreeMap<&'static str, StageSummary>>,
    /// The stream window, flattened (`stream_ttft_ms`, …); absent when no created
    /// response sent audio after the stream start.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub stream: Option<StreamWindow>,
    /// The stream start on the clock of the events' `_client_received_at_s` (seconds
    /// since the WebSocket opened), so the window can be recomputed from `events.json`;
    /// absent when the stream never started (rtload's, not a 0.30.0 key).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stream_started_at_s: Option<f64>,
}

/// Everything §5.2 derives from one session's events.
#[derive(Debug, Clone, PartialEq)]
pub struct DuplexMetrics {
    /// Per-response rows, in creation order.
    pub rows: Vec<ResponseRow>,
    /// The session summary.
    pub summary: SessionSummary,
    /// Σ of the rows' stage-0 `output_token_count` (the case's `output_tokens`).
    pub output_tokens: u64,
}

/// Compute rows, summary and output token count for one session.
///
/// Only events received at or after `stream_start_s` (the instant right before the first
/// append) count, except for the decoded-byte fallback of `audio_duration_ms`, which, like
/// the reference collector, counts every audio delta of the response.
pub fn duplex_metrics(
    events: impl IntoIterator<Item = impl Timed>,
    stream_start_s: f64,
    session_id: Option<&str>,
) -> DuplexMetrics {
    let mut b = RowsBuilder::default();
    for timed in events {
        let at_s = timed.at_s();
        b.observe(at_s, timed.event(), at_s >= stream_start_s);
    }
    let rows = b.rows(session_id);
    let mut summary = session_summary(&rows, session_id);
    summary.stream = stream::window(&b.order, &b.accs, b.rate_hz, stream_start_s);
    let output_tokens = rows
        .iter()
        .filter_map(|r| r.stage0_tokens.as_ref())
        .map(|s| s.output_token_count)
        .sum();
    DuplexMetrics {
        rows,
        summary,
        output_tokens,
    }
}

/// An event's response id: top-level `response_id` if a string, else `response.id`.
pub fn response_id(event: &Value) -> Option<&str> {
    match event.get("response_id") {
        Some(Value::String(s)) => Some(s),
        _ => event.get("response")?.get("id")?.as_str(),
    }
}

/// What one response's events add up to (see [`RowsBuilder`]).
#[derive(Debug, Clone, Default)]
struct Acc {
    created_at: Option<f64>,
    first_text: Option<f64>,
    first_audio: Option<f64>,
    last_audio: Option<f64>,
    max_duration_ms: Option<f64>,
    /// The largest non-negative `metadata.audio_duration_ms` (the stream window's rule).
    stream_duration_ms: Option<f64>,
    continuity: Continuity,
    /// Kept as the few numbers the row needs, not the metrics object (which held every
    /// field the server sent, for every response of a live session); boxed, so a
    /// response without one costs a pointer in the map a live session keeps.
    stage0: Option<Box<Stage0Tokens>>,
    decoded_bytes: u64,
}

impl Acc {
    /// Note one event of this response received at `at_s` (at or after the stream
    /// start): creation, first text, stage-0 metrics, audio timing and duration.
    /// `audio` is the event's [`audio_len`] and the output rate (Hz) it plays at.
    fn observe(&mut self, ev: &Value, kind: &str, at_s: f64, audio: (Option<(u64, bool)>, u64)) {
        let (audio_len, rate_hz) = audio;
        if kind == "response.created" && self.created_at.is_none() {
            self.created_at = Some(at_s);
        }
        let text_nonempty = ev
            .get("delta")
            .and_then(Value::as_str)
            .is_some_and(|d| !d.is_empty());
        if TEXT_DELTAS.contains(&kind) && text_nonempty && self.first_text.is_none() {
            self.first_text = Some(at_s);
        }
        if let Some(s0) = stage0_metrics(ev) {
            self.stage0 = Some(Box::new(stage0_tokens(s0)));
        }
        if let Some((bytes, true)) = audio_len {
            self.first_audio.get_or_insert(at_s);
            self.last_audio = Some(at_s);
            self.continuity.push(at_s, bytes, rate_hz as f64 * 2.0);
            let dur = ev
                .get("metadata")
                .and_then(|m| m.get("audio_duration_ms"))
                .and_then(Value::as_f64);
            if let Some(d) = dur.filter(|d| d.is_finite()) {
                self.max_duration_ms = Some(self.max_duration_ms.map_or(d.max(0.0), |m| m.max(d)));
                if d >= 0.0 {
                    self.stream_duration_ms = Some(self.stream_duration_ms.unwrap_or(0.0).max(d));
                }
            }
        }
    }
}

/// [`response_rows`] one event at a time: a few numbers per response.
#[derive(Debug, Clone)]
struct RowsBuilder {
    order: Vec<String>,
    accs: HashMap<String, Acc>,
    rate_hz: u64,
}

impl Default for RowsBuilder {
    fn default() -> Self {
        Self {
            order: Vec::new(),
            accs: HashMap::new(),
            rate_hz: DEFAULT_OUTPUT_RATE_HZ,
        }
    }
}

impl RowsBuilder {
    /// Account for `ev`, received at `at_s`; `counted` says it came at or after the
    /// stream start (only the decoded-byte fallback counts the others).
    fn observe(&mut self, at_s: f64, ev: &Value, counted: bool) {
        let kind = ev.get("type").and_then(Value::as_str).unwrap_or("");
        let rid = response_id(ev);
        if kind == "response.created"
            && let Some(r) = rid.filter(|r| !self.order.iter().any(|o| o == r))
        {
            self.order.push(r.to_owned());
        }
        let is_audio = AUDIO_DELTAS.contains(&kind);
        let rate = ev.get("sample_rate_hz").and_then(Value::as_u64);
        if is_audio && let Some(rate) = rate.filter(|r| *r > 0) {
            self.rate_hz = rate;
        }
        let Some(rid) = rid else { return };
        if !self.accs.contains_key(rid) {
            self.accs.insert(rid.to_owned(), Acc::default());
        }
        let Some(acc) = self.accs.get_mut(rid) else {
            return;
        };
        let audio_len = if is_audio { audio_len(ev) } else { None };
        if let Some((n, _)) = audio_len {
            acc.decoded_bytes += n;
        }
        if counted {
            acc.observe(ev, kind, at_s, (audio_len, self.rate_hz));
        }
    }

    /// The rows so far (see [`response_rows`]).
    fn rows(&self, session_id: Option<&str>) -> Vec<ResponseRow> {
        rows_in_order(&self.order, &self.accs, self.rate_hz, session_id)
    }
}

/// The per-response rows of a session (rows exist only with request metrics or stage 0).
#[cfg(test)]
pub fn response_rows(
    events: impl IntoIterator<Item = impl Timed>,
    stream_start_s: f64,
    session_id: Option<&str>,
) -> Vec<ResponseRow> {
    let mut b = RowsBuilder::default();
    for timed in events {
        let at_s = timed.at_s();
        b.observe(at_s, timed.event(), at_s >= stream_start_s);
    }
    b.rows(session_id)
}

/// An audio delta's decoded length and whether it carries audio. A raw delta carries
/// base64; a stored (sanitized, §4.2 item 3) one carries its decoded length as
/// `audio_bytes` instead.
fn audio_len(ev: &Value) -> Option<(u64, bool)> {
    audio_payload(ev)
        .map(|b64| (decoded_len(b64), !b64.is_empty()))
        .or_else(|| {
            ev.get("audio_bytes")
                .and_then(Value::as_u64)
                .map(|n| (n, n > 0))
        })
}

/// One row per created response, in creation order, for those with request metrics or
/// stage-0 tokens (`request_index` counts every created response).
fn rows_in_order(
    order: &[String],
    accs: &HashMap<String, Acc>,
    rate_hz: u64,
    session_id: Option<&str>,
) -> Vec<ResponseRow> {
    let mut rows = Vec::new();
    for (idx, rid) in order.iter().enumerate() {
        let Some(acc) = accs.get(rid) else { continue };
        let request_metrics = request_metrics(acc, rate_hz);
        let stage0_tokens = acc.stage0.as_deref().cloned();
        if request_metrics.is_none() && stage0_tokens.is_none() {
            continue;
        }
        rows.push(ResponseRow {
            session_id: session_id.map(str::to_owned),
            request_index: idx,
            response_id: rid.clone(),
            continuity: request_metrics.as_ref().and(acc.continuity.stats()),
            request_metrics,
            stage0_tokens,
            turn: None,
            created_at_s: acc.created_at,
        });
    }
    rows
}

/// `delta` (or, when that is missing or empty, `audio`) as a string.
fn audio_payload(ev: &Value) -> Option<&str> {
    match ev.get("delta").and_then(Value::as_str) {
        Some(d) if !d.is_empty() => Some(d),
        _ => ev
            .get("audio")
            .and_then(Value::as_str)
            .or_else(|| ev.get("delta").and_then(Value::as_str)),
    }
}

/// Whether an audio delta carries audio, by [`audio_len`]'s rule, without decoding it.
fn carries_audio(ev: &Value) -> bool {
    match audio_payload(ev) {
        Some(b64) => !b64.is_empty(),
        None => ev
            .get("audio_bytes")
            .and_then(Value::as_u64)
            .is_some_and(|n| n > 0),
    }
}

/// Decoded length of a base64 payload; undecodable payloads count as zero bytes.
fn decoded_len(b64: &str) -> u64 {
    base64::engine::general_purpose::STANDARD
        .decode(b64)
        .map_or(0, |b| b.len() as u64)
}

fn request_metrics(acc: &Acc, rate_hz: u64) -> Option<RequestMetrics> {
    let origin = acc.created_at?;
    let (first, last) = (acc.first_audio?, acc.last_audio?);
    let duration_ms = acc
        .max_duration_ms
        .unwrap_or_else(|| acc.decoded_bytes as f64 * 1000.0 / (rate_hz as f64 * 2.0));
    let generation_ms = ((last - origin) * 1000.0).max(0.0);
    Some(RequestMetrics {
        source: SOURCE,
        measurement_origin: MeasurementOrigin {
            ttft: TTFT_ORIGIN,
            ttfp: TTFP_ORIGIN,
            rtf: RTF_ORIGIN,
            tpot: TPOT_ORIGIN,
            continuity: CONTINUITY_ORIGIN,
        },
        ttft_ms: acc.first_text.map(|t| round_dp((t - origin) * 1000.0, 3)),
        ttfp_ms: round_dp((first - origin) * 1000.0, 3),
        rtf: (duration_ms > 0.0).then(|| round_dp(generation_ms / duration_ms, 6)),
        audio_generation_ms: round_dp(generation_ms, 3),
        audio_duration_ms: round_dp(duration_ms, 3),
        tpot_ms: acc.stage0.as_ref().map(|s| s.tpot_ms),
    })
}

/// The session summary of `rows` (seed form: means, not distributions).
pub fn session_summary(rows: &[ResponseRow], session_id: Option<&str>) -> SessionSummary {
    let mean = |pick: fn(&RequestMetrics) -> Option<f64>, dp: usize| {
        let vals: Vec<f64> = rows
            .iter()
            .filter_map(|r| r.request_metrics.as_ref().and_then(pick))
            .filter(|v| v.is_finite())
            .collect();
        (!vals.is_empty()).then(|| round_dp(vals.iter().sum::<f64>() / vals.len() as f64, dp))
    };
    let dist = |pick: fn(&RequestMetrics) -> Option<f64>, dp: usize| {
        let vals: Vec<f64> = rows
            .iter()
            .filter_map(|r| r.request_metrics.as_ref().and_then(pick))
            .collect();
        distribution_summary(&vals, dp)
    };
    SessionSummary {
        session_id: session_id.map(str::to_owned),
        audio_turn_count: rows.len(),
        mean_ttft_ms: mean(|m| m.ttft_ms, 3),
        mean_ttfp_ms: mean(|m| Some(m.ttfp_ms), 3),
        mean_rtf: mean(|m| m.rtf, 6),
        ttft_ms: dist(|m| m.ttft_ms, 3),
        ttfp_ms: dist(|m| Some(m.ttfp_ms), 3),
        rtf: dist(|m| m.rtf, 6),
        tpot_ms: dist(|m| m.tpot_ms.flatten().filter(|t| *t > 0.0), 3),
        stages: stream::stage_summaries(rows),
        stream: None,
        stream_started_at_s: None,
    }
}

/// What the case runner knows about a finished OmniInteract case.
#[derive(Debug, Clone, PartialEq)]
pub struct CaseOutcome<'a> {
    /// Case success (artifact revocation later does not change serving metrics).
    pub success: bool,
    /// Seconds from run start to just before the WebSocket connect.
    pub start_s: f64,
    /// Case `latency_s`: connect to after close.
    pub latency_s: f64,
    /// The case transcript (`generated_text`).
    pub transcript: &'a str,
    /// Bytes of output PCM16 audio collected for the case.
    pub audio_bytes: u64,
    /// Prompt length reported for the request (0 when the dataset has none).
    pub prompt_len: u64,
}

/// Map a finished duplex case onto a serving-benchmark request outcome (spec §5.2
/// "Request-output mapping" + "Token timing projection").
///
/// A null session mean stays missing (`None`) rather than becoming 0; the projection
/// uses `mean_ttft_ms or 0` as its base exactly like the reference, so
/// `text_latency − ttft` is unaffected.
pub fn request_outcome(case: &CaseOutcome<'_>, metrics: &DuplexMetrics) -> RequestOutcome {
    let ttft_s = metrics.summary.mean_ttft_ms.map(|ms| ms / 1000.0);
    let stage0: Vec<Option<&Stage0Tokens>> = metrics
        .rows
        .iter()
        .map(|r| r.stage0_tokens.as_ref())
        .collect();
    let timing = project_token_timing(&stage0, metrics.output_tokens, ttft_s.unwrap_or(0.0));
    RequestOutcome {
        success: case.success,
        start_s: case.start_s,
        latency_s: case.latency_s,
        ttft_s,
        itl_s: timing.itl_s,
        text_latency_s: Some(timing.text_latency_s),
        tpot_measured: timing.tpot_measured,
        output_tokens: metrics.output_tokens,
        has_text: !case.transcript.is_empty(),
        prompt_len: case.prompt_len,
        audio_ttfp_s: metrics.summary.mean_ttfp_ms.map(|ms| ms / 1000.0),
        audio_rtf: metrics.summary.mean_rtf,
        audio_duration_s: case.audio_bytes as f64 / 48_000.0,
        audio_frames: case.audio_bytes / 2,
        has_duplex_session_metrics: true,
        ..RequestOutcome::default()
    }
}

#[cfg(test)]
#[path = "metrics_tests.rs"]
mod tests;
