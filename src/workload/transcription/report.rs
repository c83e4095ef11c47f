//! A finished transcription run as text, JSON and flat metrics.
//!
//! JSON layout: identification (`rtload.workload`, `endpoint`, `model`, `pacing`, …),
//! per-metric distributions (`ttft_ms`, `finalization_ms`, `itl_ms`, `rtf`,
//! `streaming_lag_ms`: `{count, mean, p50, p90, p95, p99, max}` or `null`), `wer`
//! (corpus) and `wer_mean`, `tokens`, the flat `metrics`, the generator's own numbers,
//! and `files[]`: one entry per measured sample with its file, outcome, reference, text
//! and per-file numbers. `rtload.distributions` carries the raw values the HTML report
//! draws, `rtload.timeline` each session's audio streaming and transcript ([`charts`]).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::{Value, json};

use super::KIND;
use super::metrics::{Done, SessionMetrics, run_metrics, session_metrics};
use super::session::TranscriptionOutput;
use super::workload::TranscriptionWorkload;
use crate::util::stats;
use crate::workload::catalogue::chart::{self, Chart, Span, SpanKind, TimelineRow};
use crate::workload::results::Recorded;
use crate::workload::{RunRecord, SampleRecord};

/// A sample record of this workload.
type Rec = SampleRecord<Option<TranscriptionOutput>>;

/// The report of one run.
pub type TranscriptionReport = crate::workload::kit::BuiltReport;

/// One measured sample with what its session left.
struct Row<'a> {
    s: &'a Rec,
    out: Option<&'a TranscriptionOutput>,
    m: Option<SessionMetrics>,
}

/// Build the report of `run`.
pub fn build(
    w: &TranscriptionWorkload,
    run: RunRecord<Option<TranscriptionOutput>>,
) -> TranscriptionReport {
    let rows: Vec<Row<'_>> = run
        .samples
        .iter()
        .filter(|s| !s.warmup)
        .map(|s| {
            let out = s.output.as_ref().and_then(Option::as_ref);
            let m = out.map(|o| {
                let reference = w.items.get(o.item).and_then(|i| i.reference.as_deref());
                session_metrics(&o.record, reference)
            });
            Row { s, out, m }
        })
        .collect();
    let done: Vec<Done<'_>> = rows
        .iter()
        .filter(|r| r.s.outcome.is_ok())
        .filter_map(|r| Some((r.m.as_ref()?, &r.out?.record, r.s.opened_s?)))
        .collect();
    let failed = rows.iter().filter(|r| r.s.outcome.is_err()).count();
    let (mut scalars, recorded) = run_metrics(&done, failed);
    if let Some(r) = super::metrics::audio_throughput(&scalars, run.duration_s) {
        scalars.insert(super::metrics::AUDIO_THROUGHPUT.into(), r);
    }
    let mut metrics = scalars.clone();
    metrics.extend(recorded.flat());
    let json = to_json(w, &run, &rows, (done.len(), &recorded), &metrics);
    let text = render_text(w, &run, &rows, &metrics);
    TranscriptionReport {
        text,
        json,
        scalars,
        recorded,
        failures: Vec::new(),
        warnings: Vec::new(),
    }
}

/// What a transcription result draws besides a plot of each distribution: the session
/// timeline (audio streamed, first append → final commit; transcript, first delta →
/// `transcription.done`).
pub fn charts() -> Vec<Chart> {
    let kind = |kind: &str, label: &str, lane| SpanKind {
        kind: kind.into(),
        label: label.into(),
        lane,
    };
    vec![chart::timeline(
        "Session timeline: one row per measured session",
        &["session", "audio", "transcript"],
        vec![
            kind("audio", "audio streamed (first append → final commit)", 1),
            kind("transcript", "transcript (first delta → done)", 2),
        ],
    )]
}

/// The timeline row of one measured sample (times from its socket's open).
fn timeline_row(r: &Row<'_>) -> TimelineRow {
    let mut spans = vec![chart::queue_span(r.s)];
    if let (Some(o), Some(open)) = (r.out, r.s.opened_s) {
        let rec = &o.record;
        if let (Some(a), Some(b)) = (rec.first_audio_s, rec.final_commit_s) {
            spans.push(Span::new("audio", "audio streamed", open + a, open + b));
        }
        if let (Some(d), Some(done)) = (rec.deltas.first(), rec.done_s) {
            spans.push(Span::new(
                "transcript",
                "transcript",
                open + d.at_s,
                open + done,
            ));
        }
    }
    chart::timeline_row(r.s, spans)
}

/// The reference-shaped summary of one distribution: `{count, mean, p50, p90, p95,
/// p99, max}` from the recorded values, or `null` without any.
fn dist(rec: &Recorded, name: &str) -> Value {
    let Some(s) = rec.summary(name) else {
        return Value::Null;
    };
    let p = |q| s.percentile(q);
    json!({"count": s.count, "mean": s.mean, "p50": p(50.0), "p90": p(90.0), "p95": p(95.0),
           "p99": p(99.0), "max": s.max})
}

fn to_json(
    w: &TranscriptionWorkload,
    run: &RunRecord<Option<TranscriptionOutput>>,
    rows: &[Row<'_>],
    (completed, rec): (usize, &Recorded),
    metrics: &BTreeMap<String, f64>,
) -> Value {
    let s = &w.settings;
    let total = |k: &str| metrics.get(k).copied();
    json!({
        "rtload": {
            "workload": KIND,
            "metrics": metrics,
            chart::TIMELINE_KEY: rows.iter().map(timeline_row).collect::<Vec<_>>(),
        },
        "endpoint": run.endpoint,
        "model": s.model,
        "pacing": s.pacing.to_string(),
        "sample_rate": s.sample_rate,
        "chunk_ms": s.chunk_ms,
        "duration_s": run.duration_s,
        "completed": completed,
        "failed": rows.len() - completed,
        "ttft_ms": dist(rec, "ttft_ms"),
        "finalization_ms": dist(rec, "finalization_ms"),
        "itl_ms": dist(rec, "itl_ms"),
        "rtf": dist(rec, "rtf"),
        "streaming_lag_ms": dist(rec, "streaming_lag_ms"),
        "wer": total("wer"),
        "wer_mean": total("file_wer.mean"),
        "tokens": {
            "prompt_tokens": total("prompt_tokens.total"),
            "completion_tokens": total("completion_tokens.total"),
            "total_tokens": total("total_tokens.total"),
        },
        "pacing_max_lag_ms": total("pacing_max_lag_ms.max"),
        "files": rows.iter().map(|r| file_json(w, r)).collect::<Vec<_>>(),
    })
}

fn file_json(w: &TranscriptionWorkload, r: &Row<'_>) -> Value {
    let item = r.out.and_then(|o| w.items.get(o.item));
    let rec = r.out.map(|o| &o.record);
    let m = r.m.as_ref();
    let mean = |v: &[f64]| stats::mean(v).ok();
    let mut row = crate::workload::kit::sample_row(r.s);
    let own = json!({
        "file": item.map(|i| i.name.clone()),
        "ok": r.s.outcome.is_ok(),
        "error_code": rec.and_then(|r| r.error_code.clone()),
        "reference": item.and_then(|i| i.reference.clone()),
        "text": rec.and_then(|r| r.text.clone()),
        "audio_s": rec.map(|r| r.audio_s),
        "appends": rec.map(|r| r.appends),
        "deltas": rec.map(|r| r.deltas.len()),
        "ttft_ms": m.and_then(|m| m.ttft_ms),
        "finalization_ms": m.and_then(|m| m.finalization_ms),
        "rtf": m.and_then(|m| m.rtf),
        "itl_ms_mean": m.and_then(|m| mean(&m.itl_ms)),
        "streaming_lag_ms_mean": m.and_then(|m| mean(&m.streaming_lag_ms)),
        "streaming_lag_ms_max": m.and_then(|m| m.streaming_lag_ms.iter().copied().reduce(f64::max)),
        "wer": m.and_then(SessionMetrics::wer_rate),
        "usage": rec.and_then(|r| r.usage),
        "pacing_max_lag_ms": rec.map(|r| r.pacing_max_lag_s * 1000.0),
    });
    if let Value::Object(own) = own {
        row.extend(own);
    }
    Value::Object(row)
}

fn render_text(
    w: &TranscriptionWorkload,
    run: &RunRecord<Option<TranscriptionOutput>>,
    rows: &[Row<'_>],
    m: &BTreeMap<String, f64>,
) -> String {
    let mut t = String::new();
    let s = &w.settings;
    let _ = writeln!(t, "{:=^60}", " Realtime Transcription Result ");
    let row = |t: &mut String, k: &str, v: String| {
        let _ = writeln!(t, "{k:<40}{v:>20}");
    };
    row(&mut t, "Endpoint:", run.endpoint.clone());
    row(&mut t, "Model:", s.model.clone());
    row(&mut t, "Pacing mode:", s.pacing.to_string());
    row(
        &mut t,
        "Completed sessions:",
        format!("{}", m.get("completed").copied().unwrap_or(0.0)),
    );
    row(
        &mut t,
        "Failed sessions:",
        format!("{}", m.get("failed").copied().unwrap_or(0.0)),
    );
    row(
        &mut t,
        "Benchmark duration (s):",
        format!("{:.2}", run.duration_s),
    );
    for (name, label) in [
        ("ttft_ms", "TTFT (ms)"),
        ("finalization_ms", "Finalization (ms)"),
        ("itl_ms", "Delta inter-arrival (ms)"),
        ("streaming_lag_ms", "Streaming lag (ms)"),
        ("rtf", "RTF"),
    ] {
        let _ = writeln!(t, "{:-^60}", format!(" {label} "));
        for stat in ["mean", "p50", "p99", "max"] {
            let v = m.get(&format!("{name}.{stat}"));
            let shown = v.map_or_else(|| "n/a".to_string(), |v| format!("{v:.3}"));
            row(&mut t, &format!("{stat} {label}:"), shown);
        }
    }
    let _ = writeln!(t, "{:-^60}", " Accuracy and tokens ");
    let opt = |k: &str, p: usize| {
        m.get(k)
            .map_or_else(|| "n/a".into(), |v| format!("{v:.p$}"))
    };
    row(&mut t, "WER (corpus):", opt("wer", 4));
    row(&mut t, "WER (mean per file):", opt("file_wer.mean", 4));
    row(&mut t, "Prompt tokens:", opt("prompt_tokens.total", 0));
    row(
        &mut t,
        "Completion tokens:",
        opt("completion_tokens.total", 0),
    );
    row(
        &mut t,
        "Input pacing lag, max (ms):",
        opt("pacing_max_lag_ms.max", 3),
    );
    let failed: Vec<(usize, String)> = rows
        .iter()
        .filter_map(|r| {
            let f = r.s.outcome.as_ref().err()?;
            Some((r.s.session.unwrap_or(r.s.idx), f.message.clone()))
        })
        .collect();
    for line in crate::workload::kit::failure_lines(&failed, 5, "failed ") {
        let _ = writeln!(t, "{line}");
    }
    let _ = writeln!(t, "{}", "=".repeat(60));
    t
}
