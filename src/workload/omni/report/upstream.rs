//! vLLM-Omni 0.30.0's duplex metric outputs (`benchmarks/duplex_session_metrics.py`),
//! from the per-case metrics the rest of the report uses: each successful session's
//! stream window and each response's audio continuity recorded for the catalogue (so
//! thresholds, compare, sweep, merge, HTML and Prometheus read them), the run-level
//! `duplex_stream_*` summaries, and the `duplex_metrics.json` document.

use serde_json::{Map, Value};

use super::CaseRun;
use crate::workload::omni::metrics::duplex_stream_metrics;
use crate::workload::results::{Recorded, Stamp};

/// Per session: stream start → first text (0.30.0 `stream_ttft_ms`).
pub const STREAM_TTFT_MS: &str = "stream_ttft_ms";
/// Per session: stream start → first audio (0.30.0 `stream_ttfp_ms`).
pub const STREAM_TTFP_MS: &str = "stream_ttfp_ms";
/// Per session: 0.30.0 `stream_rtf`.
pub const STREAM_RTF: &str = "stream_rtf";
/// Per response: `ttfp_ms`, created → first audio.
pub const RESPONSE_TTFP_MS: &str = "response_ttfp_ms";
/// Per response: `rtf`.
pub const RESPONSE_RTF: &str = "response_rtf";
/// Per response: the continuity `audio_underrun_s` (the family `audio_underrun_s` is
/// `vllm bench serve`'s, which the duplex client does not measure).
pub const UNDERRUN_S: &str = "response_audio_underrun_s";
/// Per response: `audio_underrun_event_count`.
pub const UNDERRUN_EVENTS: &str = "response_audio_underrun_event_count";
/// Per response: `audio_continuity_ok` as 1 or 0.
pub const CONTINUITY_OK: &str = "response_audio_continuity_ok";

/// The successful cases (those whose session the reference summarizes).
fn ok<'r, 'a>(runs: &'r [CaseRun<'a>]) -> impl Iterator<Item = &'r CaseRun<'a>> {
    runs.iter().filter(|r| r.outcome.success)
}

/// Record each successful session's stream values and each of its responses'
/// continuity, at the case's end (as the request samples).
pub(super) fn record(rec: &mut Recorded, runs: &[CaseRun<'_>]) {
    for r in ok(runs) {
        let at = r.sample.started_s + r.outcome.latency_s;
        if let Some(w) = &r.metrics.summary.stream {
            if let Some(v) = w.stream_ttft_ms {
                rec.push(STREAM_TTFT_MS, at, v);
            }
            rec.push(STREAM_TTFP_MS, at, w.stream_ttfp_ms);
            if let Some(v) = w.stream_rtf {
                rec.push(STREAM_RTF, at, v);
            }
        }
        for row in &r.metrics.rows {
            let stamp = Stamp {
                age_s: row.created_at_s.unwrap_or(f64::NAN),
                turn: row.turn.map(|t| t as u32),
            };
            let at = super::taken_at(r.sample, stamp.age_s, at);
            let mut put = |name: &str, v: f64| rec.push_stamped(name, at, stamp, v);
            if let Some(m) = &row.request_metrics {
                put(RESPONSE_TTFP_MS, m.ttfp_ms);
                put(RESPONSE_RTF, m.rtf.unwrap_or(f64::NAN));
            }
            if let Some(c) = row.continuity {
                put(UNDERRUN_S, c.max_underrun_s);
                put(UNDERRUN_EVENTS, c.underrun_event_count as f64);
                put(CONTINUITY_OK, f64::from(u8::from(c.is_continuous)));
            }
        }
    }
}

/// `duplex_stream_ttft_ms` / `_ttfp_ms` / `_rtf`: 0.30.0's nearest-rank summaries over
/// the successful sessions (keys absent when no session has the value).
pub(super) fn stream_summaries(runs: &[CaseRun<'_>]) -> Map<String, Value> {
    duplex_stream_metrics(ok(runs).map(|r| &r.metrics.summary))
        .into_iter()
        .filter_map(|(k, d)| Some((k.to_string(), serde_json::to_value(d).ok()?)))
        .collect()
}

/// The `duplex_metrics.json` document (`build_duplex_metrics_report`): the successful
/// sessions' rows and summaries, then the stream summaries.
pub(super) fn duplex_metrics_doc(runs: &[CaseRun<'_>]) -> Value {
    let rows: Vec<Value> = ok(runs)
        .flat_map(|r| r.metrics.rows.iter())
        .filter_map(|x| serde_json::to_value(x).ok())
        .collect();
    let sessions: Vec<Value> = ok(runs)
        .filter_map(|r| serde_json::to_value(&r.metrics.summary).ok())
        .collect();
    let mut m = Map::new();
    m.insert("duplex_request_metrics".into(), Value::Array(rows));
    m.insert("duplex_session_metrics".into(), Value::Array(sessions));
    m.extend(stream_summaries(runs));
    Value::Object(m)
}
