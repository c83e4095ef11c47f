//! From the engine's output to a [`RunSummary`]: measured failures (interrupt-cancelled
//! samples set apart, report-time failures added), counts by kind, the generator-bound
//! warning, the workload's report and the threshold verdicts; then the JSON result when
//! the scenario asks for one.

use super::result::{ResultExtras, engine_series, write_result};
use super::{Distributed, Ran, RunError, RunSummary};
use crate::config::scenario::Scenario;
use crate::workload::{Failure, FailureKind, Report, RunRecord};

/// Builds the run's report, failures and verdicts, writes the JSON result when asked, and
/// returns the summary.
pub(super) fn summarize(
    scenario: &Scenario,
    dist: &Distributed,
    shard: crate::workload::shard::Shard,
    ran: Ran,
) -> Result<RunSummary, RunError> {
    let mut out = ran.out;
    out.run.load = Some(scenario.load().clone());
    let (mut failures, measured) = failures(&out.run);
    // Samples cancelled by an interrupt are their own outcome, not failures.
    let cancelled_idx = take_cancelled(&mut failures);
    let cancelled = cancelled_idx.len();
    let engine_series = engine_series(&out.run);
    let generator_bound = generator_bound(&out.run, &ran.usage, ran.live_wall_s, scenario);
    let tag = shard_tag(
        scenario,
        (dist, shard),
        &ran.mine,
        &out.run,
        ran.run_start_unix_s,
    );
    let generator_run = out.run.clone();
    let warmup = out.run.samples.iter().filter(|s| s.warmup).count(); // a shard's part
    let achieved = crate::workload::kit::Achieved::of(&out.run);
    let report = report_with_failures(&ran.this_run, out.run, &mut failures, &cancelled_idx)?;
    let (outcomes, outcomes_json, classes) =
        classify(scenario, &generator_run, &failures, &cancelled_idx);
    let failures_by_kind = count_kinds(&failures);
    let failures_json = crate::workload::kit::failures_json(&failures, failures_by_kind.clone());
    let failures: Vec<(usize, String)> =
        failures.into_iter().map(|(i, f)| (i, f.message)).collect();
    let verdicts = verdicts(scenario, shard, &metrics_with(report.as_ref(), outcomes));
    let (soak, steps) = over_time(scenario, &generator_run, &ran.usage, &*report, &classes);
    let counts = (measured, failures.len(), cancelled);
    let warnings = warnings([ran.prepared, out.warnings], report.as_ref(), counts);
    // A signal during publication: the files are finished, the run ends interrupted.
    let interrupted = out.interrupted || ran.switch.is_some_and(|s| s.is_triggered());
    let artifact_errors = [out.artifact_errors, report.publication_errors()].concat();
    let mut summary = RunSummary {
        report,
        failures,
        failures_by_kind,
        outcomes,
        measured,
        artifact_errors,
        json_path: scenario.output_json().map(std::path::Path::to_path_buf),
        verdicts,
        url: ran.url,
        interrupted,
        cancelled,
        warmup,
        achieved,
        generator_bound,
        warnings,
        soak,
        steps,
        receipts: receipts_line(&ran.wire),
    };
    if let Some(path) = &summary.json_path {
        let extras = ResultExtras {
            setup: out.setup,
            generator_run,
            usage: ran.usage,
            tag,
            target_timeline: ran.target_timeline,
            engine_series,
            run_start_unix_s: ran.run_start_unix_s,
            tls: ran.tls,
            failures: failures_json,
            outcomes: outcomes_json,
            wire: ran.wire,
        };
        // A result that could not be written fails the run, and the report is still
        // printed: nothing already measured is lost with it.
        if let Err(e) = write_result(path, scenario, dist, &summary, extras) {
            summary.artifact_errors.push(e.to_string());
        }
    }
    Ok(summary)
}

/// This shard's tag for a merge (its releases `mine`, its run's start, the thresholds).
fn shard_tag(
    scenario: &Scenario,
    (dist, shard): (&Distributed, crate::workload::shard::Shard),
    mine: &[(usize, f64)],
    run: &RunRecord,
    run_start_unix_s: f64,
) -> crate::report::merge::ShardTag {
    crate::report::merge::ShardTag::of_run(
        scenario.name(),
        shard,
        dist.start_at_unix_s,
        mine,
        run,
        run_start_unix_s,
        scenario.thresholds(),
    )
}

/// The terminal's receipts line, read from the run's `rtload.wire` block.
fn receipts_line(wire: &serde_json::Value) -> Option<String> {
    let block = wire.pointer("/wire/receipts")?;
    crate::engine::transport::receipts::text(block)
}

/// The workload's report of `run`, its own failures added to `failures` (never one for a
/// sample already failed or cancelled: `cancelled_idx`).
fn report_with_failures(
    this_run: &std::sync::Arc<dyn crate::workload::WorkloadRun>,
    run: RunRecord,
    failures: &mut Vec<(usize, Failure)>,
    cancelled_idx: &[usize],
) -> Result<Box<dyn Report>, RunError> {
    let measured_idx: Vec<usize> = run
        .samples
        .iter()
        .filter(|s| !s.warmup)
        .map(|s| s.session.unwrap_or(s.idx))
        .collect();
    let report = this_run.report(run).map_err(RunError::Report)?;
    add_report_failures(failures, report.as_ref(), &measured_idx, cancelled_idx);
    Ok(report)
}

/// The run's own notes (`first`: the workload's preparation's, then the engine's, e.g. a
/// recording cut by a cap), the report's own warnings, then every broken invariant of its
/// numbers with the run's `(measured, failed, cancelled)` counts.
fn warnings(
    first: [Vec<String>; 2],
    report: &dyn Report,
    (measured, failed, cancelled): (usize, usize, usize),
) -> Vec<String> {
    let counts = (measured, measured - failed - cancelled, failed, cancelled);
    let mut w = first.concat();
    w.extend(report.warnings());
    w.extend(
        crate::workload::results::invariant_violations(&report.metrics(), Some(counts))
            .into_iter()
            .map(|v| format!("invariant broken (a bug in rtload; please report it): {v}")),
    );
    w
}

/// Each `[thresholds]` entry judged on the report's metrics (legacy names read through
/// the catalogue's aliases). A shard's own numbers say nothing about the run's: `rtload
/// merge` evaluates the thresholds (carried in the shard tag) on the merged result.
fn verdicts(
    scenario: &Scenario,
    shard: crate::workload::shard::Shard,
    metrics: &std::collections::BTreeMap<String, f64>,
) -> Vec<crate::config::thresholds::Verdict> {
    if shard.count > 1 {
        return Vec::new();
    }
    let cat = scenario.workload().catalogue();
    crate::config::thresholds::evaluate(scenario.thresholds(), &cat.with_alias_values(metrics))
}

/// The report's metrics with the outcome class metrics (`good`, `degraded`, `rejected`,
/// `ended_sessions`, the ratios) added: what thresholds judge and `rtload.metrics` holds.
pub(super) fn metrics_with(
    report: &dyn Report,
    outcomes: crate::workload::outcome::ClassCounts,
) -> std::collections::BTreeMap<String, f64> {
    let mut m = report.metrics();
    m.extend(outcomes.metrics());
    m
}

/// Every measured session's class by the scenario's rules, judged on its record and
/// its final failure (`failures`, report-time ones included; `cancelled_idx` are in none): the
/// counts, and `rtload.outcomes` (`{good, degraded, rejected, failed, sessions:
/// [{session, class, slo_broken?}]}`).
fn classify(
    scenario: &Scenario,
    run: &RunRecord,
    failures: &[(usize, Failure)],
    cancelled_idx: &[usize],
) -> (
    crate::workload::outcome::ClassCounts,
    serde_json::Value,
    std::collections::HashMap<usize, crate::workload::outcome::Class>,
) {
    use crate::workload::outcome::Class;
    let rules = scenario.outcome_rules();
    let failed: std::collections::HashMap<usize, &Failure> =
        failures.iter().map(|(i, f)| (*i, f)).collect();
    let cancelled: std::collections::HashSet<usize> = cancelled_idx.iter().copied().collect();
    let mut counts = crate::workload::outcome::ClassCounts::default();
    let mut sessions = Vec::new();
    let mut classes = std::collections::HashMap::new();
    for rec in run.samples.iter().filter(|s| !s.warmup) {
        let idx = rec.session.unwrap_or(rec.idx);
        if cancelled.contains(&idx) {
            continue;
        }
        let failure = failed.get(&idx).copied();
        let Some(class) = rules.class(rec, failure.map_or(Ok(()), Err)) else {
            continue;
        };
        counts.add(class);
        classes.insert(idx, class);
        let mut row = serde_json::json!({ "session": idx, "class": class.label() });
        if class == Class::Degraded {
            row["slo_broken"] = serde_json::json!(rules.broken(rec));
        }
        sessions.push(row);
    }
    let mut json = counts.to_json();
    json["sessions"] = serde_json::Value::Array(sessions);
    (counts, json, classes)
}

/// A staircase run's step windows (`arrival.steps`; empty otherwise), from the measured
/// sessions' times and classes and the report's values.
fn steps(
    scenario: &Scenario,
    run: &RunRecord,
    classes: &std::collections::HashMap<usize, crate::workload::outcome::Class>,
    recorded: &crate::workload::results::Recorded,
) -> Vec<crate::workload::steps::StepWindow> {
    use crate::workload::steps::{StepSample, windows};
    let Some(st) = scenario.load().arrival.steps else {
        return Vec::new();
    };
    let samples: Vec<StepSample> = (run.samples.iter().filter(|s| !s.warmup))
        .map(|s| {
            let order = s.session.unwrap_or(s.idx);
            StepSample {
                order,
                scheduled_s: s.scheduled_s,
                started_s: s.started_s,
                ended_s: s.ended_s,
                class: classes.get(&order).copied(),
            }
        })
        .collect();
    windows(st, &samples, recorded)
}

fn failures(run: &RunRecord) -> (Vec<(usize, Failure)>, usize) {
    let measured: Vec<_> = run.samples.iter().filter(|s| !s.warmup).collect();
    let failed = measured
        .iter()
        .filter_map(|s| {
            let e = s.outcome.as_ref().err()?;
            Some((s.session.unwrap_or(s.idx), e.clone()))
        })
        .collect();
    (failed, measured.len())
}

/// Sets interrupt-cancelled samples apart from `failures`, returning their indices.
fn take_cancelled(failures: &mut Vec<(usize, Failure)>) -> Vec<usize> {
    let cancelled_idx: Vec<usize> = failures
        .iter()
        .filter(|(_, f)| f.kind == FailureKind::Interrupted)
        .map(|(i, _)| *i)
        .collect();
    failures.retain(|(_, f)| f.kind != FailureKind::Interrupted);
    cancelled_idx
}

/// Failures only the report could see (e.g. too few chunks for the metrics) count like
/// any other: in the summary, the per-kind counts and the exit code. `measured_idx` maps
/// a position among measured samples to its session number.
fn add_report_failures(
    failures: &mut Vec<(usize, Failure)>,
    report: &dyn Report,
    measured_idx: &[usize],
    cancelled_idx: &[usize],
) {
    for (pos, msg) in report.report_failures() {
        let idx = measured_idx.get(pos).copied().unwrap_or(pos);
        if !failures.iter().any(|(i, _)| *i == idx) && !cancelled_idx.contains(&idx) {
            failures.push((idx, Failure::new(FailureKind::Report, msg)));
        }
    }
    failures.sort_by_key(|(i, _)| *i);
}

/// The failures counted by kind, keyed by the kind's name.
fn count_kinds(failures: &[(usize, Failure)]) -> std::collections::BTreeMap<String, usize> {
    crate::workload::outcome::count_by_kind(failures.iter().map(|(_, f)| f.kind))
        .into_iter()
        .map(|(k, n)| (k.to_string(), n))
        .collect()
}

/// The run over time: the soak (`usage`'s interval readings, the report's stamped
/// values, and each measured session's age at its end (from its open) and whether it
/// failed) and, under a staircase arrival, its step windows.
fn over_time(
    scenario: &Scenario,
    run: &RunRecord,
    usage: &crate::workload::kit::PhaseUsage,
    report: &dyn Report,
    classes: &std::collections::HashMap<usize, crate::workload::outcome::Class>,
) -> (
    crate::workload::soak::Soak,
    Vec<crate::workload::steps::StepWindow>,
) {
    use crate::workload::outcome::Class;
    // Failed as the failures list counts them: rejected sessions too.
    let failed = |i: usize| matches!(classes.get(&i), Some(Class::Failed | Class::Rejected));
    let measured = run.samples.iter().filter(|s| !s.warmup);
    let spans: Vec<(f64, bool)> = measured
        .map(|s| {
            let age = s.ended_s - s.opened_s.unwrap_or(s.started_s);
            (age.max(0.0), failed(s.session.unwrap_or(s.idx)))
        })
        .collect();
    let in_flight = |t: f64| {
        (run.samples.iter())
            .filter(|s| s.started_s <= t && t < s.ended_s)
            .count()
    };
    let soak = crate::workload::soak::Soak::of(
        scenario.load().series_interval_s,
        usage,
        report.recorded(),
        &spans,
        in_flight,
    );
    (soak, steps(scenario, run, classes, report.recorded()))
}

/// "results may be generator-bound: …" when the run's send lateness p99 exceeded
/// `[load] generator_bound_ms` or the generator used ≥ 90 % of a core in the live phase.
fn generator_bound(
    run: &RunRecord,
    usage: &crate::workload::kit::PhaseUsage,
    live_wall_s: f64,
    scenario: &Scenario,
) -> Option<String> {
    use crate::workload::kit;
    let (_, lateness) = kit::wait_and_lateness(run);
    kit::generator_bound(
        lateness["p99_ms"].as_f64(),
        kit::core_share(usage.start, usage.end, live_wall_s),
        scenario.load().generator_bound_ms,
    )
}

#[cfg(test)]
#[path = "summary_tests.rs"]
mod tests;
