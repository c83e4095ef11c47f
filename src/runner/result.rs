//! The run's result files: the JSON document (the workload's report plus the metric
//! catalogue, generator, achieved-load, verdict, TLS, interrupt, shard and target-metrics
//! blocks) and the `.hlog` interval log beside it, each written atomically.

use super::{Distributed, RunError, RunSummary};
use crate::config::scenario::Scenario;
use crate::util::target::redact_text;
use crate::workload::RunRecord;

/// What the JSON result needs beyond the summary.
pub(super) struct ResultExtras {
    /// The engine's run record, for the generator block.
    pub(super) generator_run: RunRecord,
    /// Resource usage over the live phase.
    pub(super) usage: crate::workload::kit::PhaseUsage,
    /// This shard's tag (written only for a sharded run).
    pub(super) tag: crate::report::merge::ShardTag,
    /// The target's scraped metrics, if any.
    pub(super) target_timeline: Option<crate::util::scrape::Timeline>,
    /// The engine's own histogram series.
    pub(super) engine_series: Vec<crate::util::histlog::Series>,
    /// Unix time the run started.
    pub(super) run_start_unix_s: f64,
    /// Whether the run used TLS.
    pub(super) tls: bool,
    /// Every measured failure (`rtload.failures`).
    pub(super) failures: serde_json::Value,
    /// Every measured session's outcome class and their counts (`rtload.outcomes`).
    pub(super) outcomes: serde_json::Value,
    /// The `rtload.wire` block: TCP_NODELAY and the compression negotiated.
    pub(super) wire: serde_json::Value,
    /// What opening the sessions cost, for `rtload.phase_cpu`; `None` (the block absent)
    /// for a result recomputed from a recording.
    pub(super) setup: Option<crate::engine::setup_cost::SetupCost>,
}

/// Builds the JSON result document (report, catalogue, generator, verdict, TLS, interrupt,
/// shard and target-metrics blocks) and publishes it with the series to `path`.
pub(super) fn write_result(
    path: &std::path::Path,
    scenario: &Scenario,
    dist: &Distributed,
    summary: &RunSummary,
    extras: ResultExtras,
) -> Result<(), RunError> {
    let report = &summary.report;
    let interrupted = summary.interrupted;
    let mut doc = report.to_json();
    scenario.workload().catalogue().write_into(&mut doc);
    crate::workload::kit::merge_into(
        &mut doc,
        serde_json::json!({
            "metrics": super::summary::metrics_with(report.as_ref(), summary.outcomes),
            "outcomes": extras.outcomes,
            crate::workload::results::DISTRIBUTIONS_KEY: report.recorded().to_json(),
            "warnings": summary.warnings,
            "failures": extras.failures,
            "soak": summary.soak.to_json(),
        }),
    );
    generator_blocks(&mut doc, &extras, summary);
    crate::workload::kit::merge_into(&mut doc, summary.achieved.to_json());
    crate::workload::kit::merge_into(
        &mut doc,
        serde_json::json!({ "generator_bound": summary.generator_bound }),
    );
    crate::workload::kit::merge_into(
        &mut doc,
        crate::report::verdict::block(
            &summary.verdicts,
            summary.passed(),
            interrupted,
            crate::report::verdict::Counts {
                measured: summary.measured,
                failed: summary.failures.len(),
                cancelled: summary.cancelled,
                warmup: summary.warmup,
            },
        ),
    );
    if extras.tls {
        crate::workload::kit::merge_into(
            &mut doc,
            crate::engine::tls::result_block(scenario.tls()),
        );
    }
    crate::workload::kit::merge_into(&mut doc, extras.wire);
    if interrupted && let Some(obj) = doc.as_object_mut() {
        obj.insert("interrupted".into(), serde_json::Value::Bool(true));
    }
    // Only a sharded run is tagged: a plain run keeps the reference's exact layout.
    if let (Some(obj), true) = (doc.as_object_mut(), dist.shard.is_some()) {
        obj.insert(
            crate::report::merge::SHARD_KEY.into(),
            serde_json::to_value(&extras.tag).unwrap_or_default(),
        );
    }
    if let (Some(obj), Some(tl)) = (doc.as_object_mut(), &extras.target_timeline) {
        obj.insert(
            crate::report::merge::TARGET_METRICS_KEY.into(),
            serde_json::to_value(tl).unwrap_or_default(),
        );
    }
    let mut series = report.recorded().series();
    series.extend(extras.engine_series);
    publish(
        path,
        &redact_text(&report.json_text(&doc)),
        &series,
        extras.run_start_unix_s,
        interrupted,
    )
}

/// The generator block and, for a run that ran here, `rtload.phase_cpu`, whose
/// publication reading is taken now: the workload's report and artifacts are done.
fn generator_blocks(doc: &mut serde_json::Value, extras: &ResultExtras, summary: &RunSummary) {
    let block = crate::workload::kit::generator_block(
        &extras.generator_run,
        &summary.failures_by_kind,
        &extras.usage,
    );
    if let Some(setup) = extras.setup {
        let p = super::phase_cpu::PhaseCpu::now(&extras.usage, setup, &extras.generator_run);
        let live_session_s = block
            .pointer("/resources/live_session_s")
            .and_then(|v| v.as_f64());
        crate::workload::kit::merge_into(doc, p.block(live_session_s));
    }
    crate::workload::kit::merge_into(doc, block);
}

/// Write the result JSON text to `path` and the interval log beside it (`.hlog`), each
/// atomically.
fn publish(
    path: &std::path::Path,
    text: &str,
    series: &[crate::util::histlog::Series],
    run_start_unix_s: f64,
    interrupted: bool,
) -> Result<(), RunError> {
    let fail = |p: &std::path::Path, e: &dyn std::fmt::Display| RunError::Output {
        path: p.to_path_buf(),
        msg: e.to_string(),
    };
    crate::util::write_atomic(path, text.as_bytes()).map_err(|e| fail(path, &e))?;
    let hlog = path.with_extension("hlog");
    let mut buf = Vec::new();
    if interrupted {
        buf.extend_from_slice(b"#[Interrupted: true]\n");
    }
    crate::util::histlog::write_interval_log(&mut buf, run_start_unix_s, 1.0, series)
        .map_err(|e| fail(&hlog, &e))?;
    crate::util::write_atomic(&hlog, &buf).map_err(|e| fail(&hlog, &e))
}

/// The generator's own series: queue wait per sample (at its release), send lateness
/// per scheduled message (at its sample's start), and the duration of every completed
/// sample (connect → end) at its end: the per-interval count of
/// [`crate::util::histlog::COMPLETED_TAG`] is the completions per second the HTML report draws.
pub(super) fn engine_series(run: &RunRecord) -> Vec<crate::util::histlog::Series> {
    let measured = run.samples.iter().filter(|s| !s.warmup);
    let completed = measured
        .clone()
        .filter(|s| s.outcome.is_ok())
        .map(|s| (s.ended_s, (s.ended_s - s.started_s) * 1000.0))
        .collect();
    let waits = measured
        .clone()
        .map(|s| (s.scheduled_s, s.queue_wait_s * 1000.0))
        .collect();
    let late = measured
        .flat_map(|s| {
            s.send_lateness_s
                .iter()
                .map(move |l| (s.started_s, l * 1000.0))
        })
        .collect();
    vec![
        crate::util::histlog::Series::micros("queue_wait_ms", waits),
        crate::util::histlog::Series::micros("send_lateness_ms", late),
        crate::util::histlog::Series::micros(crate::util::histlog::COMPLETED_TAG, completed),
    ]
}

#[cfg(test)]
#[path = "result_lateness_tests.rs"]
mod lateness_tests;
