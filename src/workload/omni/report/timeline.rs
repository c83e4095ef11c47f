//! The session timeline (`rtload.timeline`, drawn by the HTML report as this workload's
//! chart declares): per measured session its queue wait, input streaming, and for each
//! response created → first audio → end of its playback, all in seconds since the run
//! started.

use std::collections::BTreeMap;

use serde_json::Value;

use super::{CaseRun, Restored, SampleRecord};
use crate::workload::catalogue::chart::{self, Chart, Span, SpanKind, TimelineRow};
use crate::workload::omni::artifacts::FinalizeCase;
use crate::workload::omni::metrics::response_id;

/// The timeline chart: lane 0 the session (and its queue wait), then input streaming,
/// then the responses (created → first audio, over their playback).
pub fn charts() -> Vec<Chart> {
    let kind = |kind: &str, label: &str, lane| SpanKind {
        kind: kind.into(),
        label: label.into(),
        lane,
    };
    vec![chart::timeline(
        "Session timeline: one row per measured session",
        &["session", "input", "responses"],
        vec![
            kind("input", "input streaming", 1),
            // Playback under the response, so the shorter response span stays visible.
            kind("playback", "response playback", 2),
            kind("response", "response created → first audio", 2),
        ],
    )]
}

/// One row per measured sample (its session number, case label, extent, error, spans).
pub(super) fn rows(runs: &[CaseRun<'_>], finals: &[FinalizeCase]) -> Vec<TimelineRow> {
    runs.iter().zip(finals).map(|(r, f)| row(r, f)).collect()
}

/// The spans of one session (only the queue wait without an output or an open socket).
pub(super) fn spans(s: &SampleRecord, r: Option<&Restored<'_>>) -> Vec<Span> {
    let mut spans = vec![chart::queue_span(s)];
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
        for (at, ev) in r.events.each() {
            let Some(id) = response_id(&ev) else { continue };
            match ev.get("type").and_then(Value::as_str).unwrap_or("") {
                "response.created" => {
                    created.entry(id.to_string()).or_insert(at);
                }
                "response.audio.delta" | "response.output_audio.delta" => {
                    first_audio.entry(id.to_string()).or_insert(at);
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

fn row(r: &CaseRun<'_>, f: &FinalizeCase) -> TimelineRow {
    TimelineRow {
        label: Some(f.layout.label()),
        error: f.result.error.clone().filter(|e| !e.is_empty()),
        ..chart::timeline_row(r.sample, r.spans.clone())
    }
}

fn span(kind: &str, label: &str, start_s: f64, end_s: f64) -> Span {
    Span::new(kind, label, start_s, end_s)
}
