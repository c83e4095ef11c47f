//! Finished sweeps: each point's outcome ([`PointResult`]: its metrics, every threshold
//! judged on it with the measured value, whether it [`reached`] its swept value and
//! whether the generator bound it), the capacity (knee, claimed only when thresholds
//! judged the points), and the sweep JSON (written and read back for the HTML report).
//! The terminal and HTML text is in `sweep_text.rs`. Pure: the batch runner runs the
//! points and hands the results here.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::collections::BTreeMap;

use crate::config::sweep::{Sweep, SweepParam, point_label};
use crate::workload::catalogue::UnitRate;

#[path = "sweep_text.rs"]
mod text;
pub use text::{
    capacity_lines, direction_legend, progress_line, render_table, table_columns, table_rows,
    verdict,
};

/// Point `metrics`' value of the workload's unit rate `unit` (finite values only).
pub fn unit_rate_of(metrics: &BTreeMap<String, f64>, unit: Option<&UnitRate>) -> Option<f64> {
    metrics
        .get(&unit?.metric)
        .copied()
        .filter(|v| v.is_finite())
}

/// One `[thresholds]` entry judged at one sweep point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Check {
    /// The flat metric name, e.g. `ttft_ms.p99`.
    pub metric: String,
    /// The expression, e.g. `< 500`.
    pub expr: String,
    /// The point's value of the metric; `None` when it had none (which fails).
    pub measured: Option<f64>,
    /// Whether the threshold held.
    pub passed: bool,
}

impl Check {
    /// Every verdict of a run as the checks of its sweep point.
    pub fn of(verdicts: &[crate::config::thresholds::Verdict]) -> Vec<Check> {
        verdicts
            .iter()
            .map(|v| Check {
                metric: v.threshold.metric.clone(),
                expr: v.threshold.expr.clone(),
                measured: v.measured,
                passed: v.passed,
            })
            .collect()
    }
}

/// The outcome of one sweep point.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PointResult {
    /// The parameter value of this point.
    pub value: f64,
    /// The run's flat metric map.
    pub metrics: BTreeMap<String, f64>,
    /// Every threshold held and no measured sample failed.
    pub passed: bool,
    /// Every `[thresholds]` entry with its measured value at this point (empty when the
    /// scenario sets none, and then the sweep claims no capacity).
    pub checks: Vec<Check>,
    /// Measured samples that failed.
    pub failed_samples: usize,
    /// Artifact files that could not be written.
    pub artifact_errors: usize,
    /// Peak measured sessions in flight at once.
    pub achieved_concurrency: Option<usize>,
    /// Measured sessions started per second (`None` under two samples).
    pub achieved_request_rate: Option<f64>,
    /// Completed measured sessions per second of run.
    pub sessions_per_s: Option<f64>,
    /// Mean measured sessions in flight (the result's `achieved.mean_sessions`): what an
    /// offered arrival rate produced.
    pub mean_sessions: Option<f64>,
    /// The workload's own unit rate (its catalogue's [`UnitRate`] metric, e.g. chunks/s);
    /// `None` when the workload declares none or the point lacks the metric.
    pub unit_rate: Option<f64>,
    /// The generator's send lateness p99, ms.
    pub lateness_p99_ms: Option<f64>,
    /// The point reached its swept value (see [`reached`]).
    pub reached: bool,
    /// The run's own "results may be generator-bound: …" (its JSON's `generator_bound`),
    /// `None` when the generator kept up. Such a point is never the capacity.
    pub generator_bound: Option<String>,
}

impl PointResult {
    /// The point may be the capacity: it passed, reached its value and the generator
    /// kept up.
    pub fn counts(&self) -> bool {
        self.passed && self.reached && self.generator_bound.is_none()
    }
}

/// Whether a point reached its swept `value`: a `max_concurrency` point when its peak
/// sessions in flight equal the value; a finite `request_rate` point when sessions
/// started at least 90% as fast as the arrival plan released them (`planned_rate`), and
/// an unlimited one always.
pub fn reached(
    param: SweepParam,
    value: f64,
    concurrency: usize,
    rate: Option<f64>,
    planned_rate: Option<f64>,
) -> bool {
    match param {
        SweepParam::MaxConcurrency => concurrency as f64 >= value,
        SweepParam::RequestRate if value.is_infinite() => true,
        SweepParam::RequestRate => match (rate, planned_rate) {
            (Some(r), Some(p)) => r >= 0.9 * p,
            _ => false,
        },
    }
}

/// Whether thresholds judged the points (any point has a check): without them a sweep
/// claims no capacity, since "nothing failed" says nothing about how much load is fine.
pub fn judged(points: &[PointResult]) -> bool {
    points.iter().any(|p| !p.checks.is_empty())
}

/// The metrics the thresholds judge, in the order they were first checked.
pub fn judged_metrics(points: &[PointResult]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for c in points.iter().flat_map(|p| &p.checks) {
        if !out.contains(&c.metric) {
            out.push(c.metric.clone());
        }
    }
    out
}

/// Points in ascending order of value.
fn sorted(points: &[PointResult]) -> Vec<&PointResult> {
    let mut sorted: Vec<&PointResult> = points.iter().collect();
    sorted.sort_by(|a, b| a.value.total_cmp(&b.value));
    sorted
}

/// The capacity of a sweep: the knee. That is the highest point value such that it *and
/// every lower point* passed, reached its swept value and was not generator-bound
/// ([`PointResult::counts`]). A failing (short, generator-bound) point caps the capacity
/// even if a higher point passes again (pass-fail-pass gives the first value): a load
/// level that only works sometimes, or was never tested, is not capacity. `None` when
/// no threshold judged the points ([`judged`]), when the lowest point does not count or
/// there are no points ([`no_capacity_reason`] says which). Points are taken in ascending
/// order of value whatever order they are given in.
pub fn capacity(points: &[PointResult]) -> Option<f64> {
    if !judged(points) {
        return None;
    }
    sorted(points)
        .iter()
        .take_while(|p| p.counts())
        .last()
        .map(|p| p.value)
}

/// Why a point does not count toward the capacity (`None` when it does), e.g. `failed
/// its thresholds`.
pub fn why_not_counted(p: &PointResult) -> Option<&'static str> {
    if !p.passed {
        Some("failed its thresholds")
    } else if !p.reached {
        Some("did not reach its swept value")
    } else if p.generator_bound.is_some() {
        Some("was generator-bound")
    } else {
        None
    }
}

/// Why the sweep has no capacity, `None` when it has one: no points, no thresholds (`no
/// threshold set: no capacity …`), or the lowest point does not count.
pub fn no_capacity_reason(sweep: &Sweep, points: &[PointResult]) -> Option<String> {
    if capacity(points).is_some() {
        return None;
    }
    let sorted = sorted(points);
    Some(match sorted.first() {
        None => "no points were run".to_string(),
        Some(_) if !judged(points) => "no threshold set: no capacity (capacity is the highest \
             point whose [thresholds] all hold; set some to judge the points)"
            .to_string(),
        Some(_) if sorted.iter().all(|p| !p.passed) => {
            "none of the points held its thresholds".to_string()
        }
        Some(low) => format!(
            "none (the lowest point, {}, {})",
            point_label(sweep, low.value),
            why_not_counted(low).unwrap_or("does not count")
        ),
    })
}

/// The sweep as JSON, in the shape the HTML chart reads:
/// `{"sweep": {"param", "headline" (or null), "unit_rate" ({metric, unit} or null),
/// "points": [{"value", "metrics", "passed", "thresholds" ([{metric, expr, measured,
/// passed}]), "failed_samples", "artifact_errors", "achieved_concurrency",
/// "achieved_request_rate", "sessions_per_s", "unit_rate", "lateness_p99_ms", "reached",
/// "generator_bound" (the run's message or null)}], "capacity" (or null),
/// "capacity_reason" (why there is none, or null)}, "rtload": {"metrics": {"capacity":
/// ...}}}`. Values are integers for `max_concurrency`; an unlimited rate is the string
/// `"inf"`; non-finite metrics are null. `rtload.metrics` has no `capacity` key when there
/// is none (missing, not zero).
pub fn sweep_json(
    sweep: &Sweep,
    points: &[PointResult],
    unit: Option<&UnitRate>,
    capacity: Option<f64>,
) -> Value {
    let reason = no_capacity_reason(sweep, points);
    let points: Vec<Value> = points.iter().map(|p| point_json(sweep.param, p)).collect();
    let cap = capacity.map(|c| sweep.param.json_value(c));
    let mut metrics = serde_json::Map::new();
    if let Some(c) = &cap {
        metrics.insert("capacity".into(), c.clone());
    }
    json!({
        "sweep": {
            "param": sweep.param.name(),
            "headline": sweep.headline,
            "unit_rate": unit,
            "points": points,
            "capacity": cap,
            "capacity_reason": if cap.is_some() { None } else { reason },
        },
        "rtload": { "metrics": metrics },
    })
}

/// One point of [`sweep_json`]'s `points` (a capacity step carries the same fields).
pub fn point_json(param: SweepParam, p: &PointResult) -> Value {
    json!({
        "value": param.json_value(p.value),
        "metrics": p.metrics,
        "passed": p.passed,
        "thresholds": p.checks,
        "failed_samples": p.failed_samples,
        "artifact_errors": p.artifact_errors,
        "achieved_concurrency": p.achieved_concurrency,
        "achieved_request_rate": p.achieved_request_rate,
        "sessions_per_s": p.sessions_per_s,
        "mean_sessions": p.mean_sessions,
        "unit_rate": p.unit_rate,
        "lateness_p99_ms": p.lateness_p99_ms,
        "reached": p.reached,
        "generator_bound": p.generator_bound,
    })
}

/// Read a sweep back from [`sweep_json`]'s shape (for the HTML report): the sweep (its
/// values in point order) and its points. `None` when `doc` has no readable `sweep`.
/// A point written before `reached` was recorded counts as reached; one written before
/// its thresholds were recorded has none (so such a sweep claims no capacity).
pub fn from_json(doc: &Value) -> Option<(Sweep, Vec<PointResult>)> {
    let sw = doc.get("sweep")?;
    let param = SweepParam::from_name(sw.get("param")?.as_str()?)?;
    let mut points = Vec::new();
    for p in sw.get("points")?.as_array()? {
        points.push(point_from_json(p)?);
    }
    let sweep = Sweep {
        param,
        values: points.iter().map(|p| p.value).collect(),
        headline: sw
            .get("headline")
            .and_then(Value::as_str)
            .map(str::to_string),
        samples_per_point: None,
    };
    Some((sweep, points))
}

/// One point of [`sweep_json`]'s `points` (or a capacity step); `None` without a
/// readable value.
pub fn point_from_json(p: &Value) -> Option<PointResult> {
    let value = match p.get("value")? {
        Value::String(s) if s == "inf" => f64::INFINITY,
        v => v.as_f64()?,
    };
    let metrics = p
        .get("metrics")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| Some((k.clone(), v.as_f64()?)))
                .collect()
        })
        .unwrap_or_default();
    let f = |k: &str| p.get(k).and_then(Value::as_f64);
    let count = |k: &str| p.get(k).and_then(Value::as_u64).map_or(0, |n| n as usize);
    Some(PointResult {
        value,
        metrics,
        passed: p.get("passed").and_then(Value::as_bool).unwrap_or(false),
        checks: p
            .get("thresholds")
            .and_then(|t| serde_json::from_value(t.clone()).ok())
            .unwrap_or_default(),
        failed_samples: count("failed_samples"),
        artifact_errors: count("artifact_errors"),
        achieved_concurrency: p
            .get("achieved_concurrency")
            .and_then(Value::as_u64)
            .map(|c| c as usize),
        achieved_request_rate: f("achieved_request_rate"),
        sessions_per_s: f("sessions_per_s"),
        mean_sessions: f("mean_sessions"),
        unit_rate: f("unit_rate"),
        lateness_p99_ms: f("lateness_p99_ms"),
        reached: p.get("reached").and_then(Value::as_bool).unwrap_or(true),
        generator_bound: p
            .get("generator_bound")
            .and_then(Value::as_str)
            .map(str::to_string),
    })
}

/// The unit rate a sweep document declares (`sweep.unit_rate`), `None` when it has none
/// (the workload declares none, or the file predates it).
pub fn unit_rate_from_json(doc: &Value) -> Option<UnitRate> {
    serde_json::from_value(doc.pointer("/sweep/unit_rate")?.clone()).ok()
}

#[cfg(test)]
#[path = "sweep_tests.rs"]
mod tests;
