//! The saved result (`vllm bench serve --save-result` keys, §6.1), the flat metric map for
//! thresholds and comparisons, the OmniInteract text block and rtload's own block
//! (queue waits, send lateness, pacing lag, per-sample timeline for the HTML report).

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::{Map, Value, json};

use super::CaseRun;
use super::RunRecord;
use crate::workload::omni::artifacts::{FinalizeCase, FinalizeSummary};
use crate::workload::omni::bench_metrics::{self, BenchMetrics, SummaryHeader};
use crate::workload::omni::workload::OmniWorkload;

const BACKEND: &str = "openai-realtime-duplex";

/// The scalar flat metrics: run totals and rates (`completed`, `failed`,
/// `request_throughput`, …); the distributions' `<metric><unit>.<stat>` come from the
/// recorded values. Missing values are absent.
pub(super) fn flat_metrics(bm: &BenchMetrics, runs: &[CaseRun<'_>]) -> BTreeMap<String, f64> {
    let mut m = BTreeMap::new();
    let mut put = |k: &str, v: f64| {
        if v.is_finite() {
            m.insert(k.to_string(), v);
        }
    };
    put("completed", bm.completed as f64);
    put("failed", bm.failed as f64);
    put("duration_s", bm.duration_s);
    put("request_throughput", bm.request_throughput);
    if let Some(g) = bm.request_goodput {
        put("request_goodput", g);
    }
    if let Some(n) = bm.good_requests {
        put("good_requests", n as f64);
    }
    put("output_throughput", bm.output_throughput);
    put("output_tokens.total", bm.total_output as f64);
    put("audio_throughput", bm.audio_throughput);
    put("max_concurrent_requests", bm.max_concurrent_requests as f64);
    let lag: Vec<f64> = runs
        .iter()
        .filter_map(|r| r.out.map(|o| o.pacing_max_lag_s * 1000.0))
        .collect();
    if let Some(max) = lag.iter().copied().reduce(f64::max) {
        put("pacing_max_lag_ms.max", max);
    }
    m
}

/// `99` → `"99"`, `99.9` → `"99.9"` (vllm's `p99`/`p99.9` key style).
pub(super) fn pct_label(p: f64) -> String {
    bench_metrics::py_float(p)
        .trim_end_matches(".0")
        .to_string()
}

/// The saved result document.
pub(super) fn saved_result(
    w: &OmniWorkload,
    run: &RunRecord,
    bm: &BenchMetrics,
    runs: &[CaseRun<'_>],
    finals: &[FinalizeCase],
    summary: &FinalizeSummary,
    flat: &BTreeMap<String, f64>,
) -> Map<String, Value> {
    let p = &w.params;
    let load = run.load.as_ref();
    let mut m = Map::new();
    m.insert("date".into(), json!(date_stamp()));
    m.insert("endpoint_type".into(), json!(BACKEND));
    m.insert("backend".into(), json!(BACKEND));
    m.insert("label".into(), json!(p.label));
    m.insert("model_id".into(), json!(w.settings_base.model));
    m.insert("tokenizer_id".into(), json!(w.settings_base.model));
    m.insert("num_prompts".into(), json!(w.cases.len()));
    for kv in p.metadata.iter().flatten() {
        if let Some((k, v)) = kv.split_once('=') {
            m.insert(k.trim().into(), json!(v.trim()));
        }
    }
    let rate = load.and_then(|l| l.arrival.request_rate);
    m.insert(
        "request_rate".into(),
        rate.map_or(json!("inf"), |r| json!(r)),
    );
    m.insert(
        "burstiness".into(),
        json!(load.map_or(1.0, |l| l.arrival.burstiness)),
    );
    m.insert(
        "max_concurrency".into(),
        json!(load.map(|l| l.max_concurrency)),
    );
    if let Some(r) = load.and_then(|l| l.arrival.ramp_up.as_ref()) {
        m.insert("ramp_up_strategy".into(), json!(r.strategy));
        m.insert("ramp_up_start_rps".into(), json!(r.start_rps));
        m.insert("ramp_up_end_rps".into(), json!(r.end_rps));
    }
    m.extend(bm.to_json_map());
    let rows: Vec<Value> = runs
        .iter()
        .flat_map(|r| {
            r.metrics
                .rows
                .iter()
                .filter_map(|x| serde_json::to_value(x).ok())
        })
        .collect();
    m.insert("duplex_request_metrics".into(), Value::Array(rows));
    let sessions: Vec<Value> = runs
        .iter()
        .filter_map(|r| serde_json::to_value(&r.metrics.summary).ok())
        .collect();
    m.insert("duplex_session_metrics".into(), Value::Array(sessions));
    m.extend(super::upstream::stream_summaries(runs));
    m.insert(
        "omniinteract".into(),
        serde_json::to_value(summary).unwrap_or(Value::Null),
    );
    m.insert("rtload".into(), rtload_block(w, run, runs, finals, flat));
    m
}

fn rtload_block(
    w: &OmniWorkload,
    run: &RunRecord,
    runs: &[CaseRun<'_>],
    finals: &[FinalizeCase],
    flat: &BTreeMap<String, f64>,
) -> Value {
    let samples: Vec<Value> = runs
        .iter()
        .zip(finals)
        .map(|(r, f)| {
            let mut row = crate::workload::kit::sample_row(r.sample);
            if let Value::Object(own) = json!({
                "case": f.layout.label(),
                "error": f.result.error.as_deref().filter(|e| !e.is_empty()),
                "pacing_mean_lag_ms": r.out.map(|o| o.pacing_mean_lag_s * 1000.0),
                "pacing_max_lag_ms": r.out.map(|o| o.pacing_max_lag_s * 1000.0),
                "listener_playback": r.sample.playback,
            }) {
                row.extend(own);
            }
            if let Some(b) = r.out.and_then(|o| o.barge_in.as_ref()) {
                row.insert("barge_in".into(), json!(b));
            }
            if let Some(t) = r.out.map(|o| &o.turns).filter(|t| !t.is_empty()) {
                row.insert("turns".into(), json!(t));
            }
            Value::Object(row)
        })
        .collect();
    // The same summaries the runner's generator block writes (one formula, in the kit);
    // kept here because the saved result is written before the runner sees the report.
    let (queue_wait, send_lateness) = crate::workload::kit::wait_and_lateness(run);
    json!({
        "version": env!("CARGO_PKG_VERSION"),
        "workload": super::super::KIND,
        "endpoint": crate::util::target::redact_url(&run.endpoint),
        "pacing_mode": w.settings_base.pacing.to_string(),
        "queue_wait": queue_wait,
        "send_lateness": send_lateness,
        "metrics": flat,
        "samples": samples,
        "timeline": super::timeline::rows(runs, finals),
    })
}

/// The OmniInteract block under the vllm summary: artifacts, failures, generator facts.
pub(super) fn omni_text(
    w: &OmniWorkload,
    runs: &[CaseRun<'_>],
    finals: &[FinalizeCase],
    s: &FinalizeSummary,
) -> String {
    let mut t = format!("{:=^50}\n", " OmniInteract ");
    let c = &s.counts;
    let row = |t: &mut String, k: &str, v: String| t.push_str(&format!("{k:<40} {v:<10}\n"));
    row(&mut t, "Pacing mode:", w.settings_base.pacing.to_string());
    row(
        &mut t,
        "Cases (success / failed):",
        format!("{} / {}", c.success, c.failed),
    );
    row(
        &mut t,
        "Eligible for official eval:",
        c.eligible_for_official_eval.to_string(),
    );
    row(
        &mut t,
        "Audio clipped (bytes):",
        c.audio_clipped_bytes.to_string(),
    );
    row(&mut t, "Artifacts:", w.output_dir.display().to_string());
    let lags: Vec<f64> = runs
        .iter()
        .filter_map(|r| r.out.map(|o| o.pacing_max_lag_s * 1000.0))
        .collect();
    if let Some(max) = lags.iter().copied().reduce(f64::max) {
        row(&mut t, "Input pacing lag, max (ms):", format!("{max:.3}"));
    }
    let waits: Vec<f64> = runs
        .iter()
        .map(|r| r.sample.queue_wait_s * 1000.0)
        .collect();
    if let Some(max) = waits.iter().copied().reduce(f64::max) {
        row(
            &mut t,
            "Queue wait for a slot, max (ms):",
            format!("{max:.3}"),
        );
    }
    if let Some(msg) = &s.exclusion_message {
        t.push_str(&format!("{msg}\n"));
    }
    let failed: Vec<(usize, String)> = runs
        .iter()
        .zip(finals)
        .filter(|(_, f)| !f.result.success)
        .map(|(r, f)| {
            let err = f.result.error.as_deref().unwrap_or("failed");
            let session = r.sample.session.unwrap_or(r.sample.idx);
            (session, format!("{} ({})", err, f.layout.label()))
        })
        .collect();
    for line in crate::workload::kit::failure_lines(&failed, 10, "FAILED ") {
        t.push_str(&line);
        t.push('\n');
    }
    for e in &s.artifact_errors {
        t.push_str(&format!("ARTIFACT ERROR {e}\n"));
    }
    t.push_str(&format!("{}\n", "=".repeat(50)));
    t
}

/// `--result-dir` / `--result-filename`, or vllm's default file name.
pub(super) fn result_path(w: &OmniWorkload, h: &SummaryHeader) -> PathBuf {
    let p = &w.params;
    let dir = p.result_dir.clone().unwrap_or_else(|| PathBuf::from("."));
    let name = p.result_filename.clone().unwrap_or_else(|| {
        let label = p.label.clone().unwrap_or_else(|| BACKEND.to_string());
        bench_metrics::default_result_filename(
            &label,
            h.request_rate,
            h.max_concurrency,
            &w.settings_base.model,
            &date_stamp(),
        )
    });
    dir.join(name)
}

/// `YYYYmmdd-HHMMSS` (UTC), vllm's result date format.
fn date_stamp() -> String {
    let iso = crate::workload::env_info::utc_timestamp();
    // 2026-12-02T09:21:14.123456+00:00 → 20261202-092114
    let digits: String = iso.chars().filter(char::is_ascii_digit).collect();
    format!("{}-{}", &digits[..8], &digits[8..14])
}
