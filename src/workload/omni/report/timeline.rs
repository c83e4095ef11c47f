//! Per-session timeline rows for the HTML report: input streaming, and for each response
//! created → first audio → end of its playback, all in seconds since the run started.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::{CaseRun, Restored, SampleRecord};
use crate::workload::omni::artifacts::FinalizeCase;
use crate::workload::omni::metrics::response_id;

/// One row per measured sample: `{label, start_s, end_s, spans: [{kind, label, start_s, end_s}]}`.
pub(super) fn rows(runs: &[CaseRun<'_>], finals: &[FinalizeCase]) -> Vec<Value> {
    runs.iter().zip(finals).map(|(r, f)| row(r, f)).collect()
}

/// The spans of one session (none without an output or an open socket).
pub(super) fn spans(s: &SampleRecord, r: Option<&Restored<'_>>) -> Vec<Value> {
    let mut spans = Vec::new();
    if let (Some(r), Some(origin)) = (r, s.opened_s) {
        let o = r.out;
        if let Some(start) = o.stream_start_s {
            let secs = o.input_audio_chunks as f64 * 0.2;
            spans.push(span(
                "input",
                "input streaming",
                origin + start,
                origin + start + secs,
            ));
        }
        let mut created: BTreeMap<String, f64> = BTreeMap::new();
        let mut first_audio: BTreeMap<String, f64> = BTreeMap::new();
        for (at, ev) in r.events.iter() {
            let Some(id) = response_id(ev) else { continue };
            match ev.get("type").and_then(Value::as_str).unwrap_or("") {
                "response.created" => {
                    created.entry(id.to_string()).or_insert(*at);
                }
                "response.audio.delta" | "response.output_audio.delta" => {
                    first_audio.entry(id.to_string()).or_insert(*at);
                }
                _ => {}
            }
        }
        let mut play_end: BTreeMap<String, f64> = BTreeMap::new();
        for seg in r.segments.iter() {
            let e = play_end
                .entry(seg.response_id.to_string())
                .or_insert(seg.end_s);
            *e = e.max(seg.end_s);
        }
        for (id, c) in &created {
            if let Some(a) = first_audio.get(id) {
                spans.push(span(
                    "response",
                    &format!("{id}: created → first audio"),
                    origin + c,
                    origin + a,
                ));
                if let Some(end) = play_end.get(id) {
                    spans.push(span(
                        "playback",
                        &format!("{id}: playback"),
                        origin + a.max(*c),
                        origin + end,
                    ));
                }
            } else {
                spans.push(span(
                    "response",
                    &format!("{id}: created (no audio)"),
                    origin + c,
                    origin + c,
                ));
            }
        }
    }
    spans
}

fn row(r: &CaseRun<'_>, f: &FinalizeCase) -> Value {
    let s = r.sample;
    json!({
        "label": f.layout.label(),
        "start_s": s.started_s,
        "end_s": s.ended_s,
        "error": f.result.error.as_deref().filter(|e| !e.is_empty()),
        "spans": r.spans,
    })
}

fn span(kind: &str, label: &str, start_s: f64, end_s: f64) -> Value {
    json!({"kind": kind, "label": label, "start_s": start_s, "end_s": end_s.max(start_s)})
}
