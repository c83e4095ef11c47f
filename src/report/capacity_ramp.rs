//! One window of the staircase run (`rtload capacity --ramp K:T`) judged as a step of
//! the search: the window's values, refusals and failures made into the same
//! [`PointResult`] a whole run gives, then [`judge`]d by the same rule. A threshold
//! whose metric has no value in the window (e.g. a per-session metric taken when held
//! sessions end, after the last step) is not judged there; the search's whole runs
//! judge it.

use std::collections::BTreeMap;

use super::{Criteria, Phase, Step, judge};
use crate::config::thresholds::Verdict as ThresholdVerdict;
use crate::report::sweep::{Check, PointResult};
use crate::workload::steps::StepWindow;

/// Step `w` of the staircase run whose result is `file`: `metrics` are the window's
/// (its values' statistics, its classes' counts, aliases added), `verdicts` the
/// scenario's thresholds evaluated on them, `generator_bound` the run's own (a run the
/// generator could not keep up with proves nothing at any step).
pub fn ramp_step(
    criteria: &Criteria,
    w: &StepWindow,
    metrics: BTreeMap<String, f64>,
    verdicts: &[ThresholdVerdict],
    generator_bound: Option<String>,
    file: &str,
) -> Step {
    let judged: Vec<ThresholdVerdict> = verdicts
        .iter()
        .filter(|v| v.measured.is_some())
        .cloned()
        .collect();
    let checks = Check::of(&judged);
    let failed = w.classes.failed + w.classes.rejected;
    let point = PointResult {
        value: w.sessions as f64,
        metrics,
        passed: failed == 0 && checks.iter().all(|c| c.passed),
        checks,
        failed_samples: failed,
        artifact_errors: 0,
        achieved_concurrency: Some(w.peak),
        achieved_request_rate: None,
        sessions_per_s: None,
        mean_sessions: None,
        unit_rate: None,
        lateness_p99_ms: None,
        reached: w.peak >= w.sessions,
        generator_bound,
    };
    Step {
        phase: Phase::Ramp,
        concurrency: w.sessions,
        classes: w.classes,
        verdict: judge(criteria, &point, w.classes, &[]),
        point,
        slo_broken: Vec::new(),
        file: file.to_string(),
    }
}
