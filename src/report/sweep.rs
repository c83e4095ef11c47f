//! Finished sweeps: each point's outcome ([`PointResult`], whether it [`reached`] its
//! swept value), the capacity (knee), the terminal table with its capacity lines and
//! direction legend, and the sweep JSON (written and read back for the HTML report). Pure:
//! the batch runner runs the points and hands the results here.

use serde_json::{Value, json};
use std::collections::BTreeMap;

use crate::config::sweep::{Sweep, SweepParam, point_label};
use crate::report::table::{align, fmt_column};
use crate::workload::catalogue::UnitRate;

/// Point `metrics`' value of the workload's unit rate `unit` (finite values only).
pub fn unit_rate_of(metrics: &BTreeMap<String, f64>, unit: Option<&UnitRate>) -> Option<f64> {
    metrics
        .get(&unit?.metric)
        .copied()
        .filter(|v| v.is_finite())
}

/// The outcome of one sweep point.
#[derive(Debug, Clone, PartialEq)]
pub struct PointResult {
    /// The parameter value of this point.
    pub value: f64,
    /// The run's flat metric map.
    pub metrics: BTreeMap<String, f64>,
    /// Every threshold held and no measured sample failed.
    pub passed: bool,
    /// Peak measured sessions in flight at once.
    pub achieved_concurrency: Option<usize>,
    /// Measured sessions started per second (`None` under two samples).
    pub achieved_request_rate: Option<f64>,
    /// Completed measured sessions per second of run.
    pub sessions_per_s: Option<f64>,
    /// The workload's own unit rate (its catalogue's [`UnitRate`] metric, e.g. chunks/s);
    /// `None` when the workload declares none or the point lacks the metric.
    pub unit_rate: Option<f64>,
    /// The generator's send lateness p99, ms.
    pub lateness_p99_ms: Option<f64>,
    /// The point reached its swept value (see [`reached`]).
    pub reached: bool,
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

/// The capacity of a sweep: the knee. That is the highest point value such that it *and
/// every lower point* passed and reached its swept value. A failing (or short) point caps
/// the capacity even if a higher point passes again (pass-fail-pass gives the first value):
/// a load level that only works sometimes, or was never tested, is not capacity. `None`
/// when the lowest point failed or there are no points. Points are taken in ascending
/// order of value whatever order they are given in.
pub fn capacity(points: &[PointResult]) -> Option<f64> {
    let mut sorted: Vec<&PointResult> = points.iter().collect();
    sorted.sort_by(|a, b| a.value.total_cmp(&b.value));
    sorted
        .iter()
        .take_while(|p| p.passed && p.reached)
        .last()
        .map(|p| p.value)
}

/// One line under the sweep table saying which way each column is better, from the
/// workload's metric catalogue (`better: ttfc_ms.mean lower is better (ms); …`).
pub fn direction_legend(
    columns: &[&str],
    catalogue: &crate::workload::catalogue::Catalogue,
) -> String {
    use crate::workload::catalogue::Direction;
    let parts: Vec<String> = columns
        .iter()
        .filter_map(|c| catalogue.get(c))
        .map(|m| {
            let way = match m.direction {
                Direction::Lower => "lower is better",
                Direction::Higher => "higher is better",
                Direction::NotAScore => "not a score",
            };
            format!("{} {way} ({})", m.name, m.unit)
        })
        .collect();
    format!("better: {}\n", parts.join("; "))
}

/// The metric columns of a sweep table (terminal and HTML alike): the `[sweep]`
/// headline, then the workload's headline metrics, then `failed`.
pub fn table_columns(headline: Option<&str>, catalogue_headline: &[String]) -> Vec<String> {
    let mut cols: Vec<String> = headline.into_iter().map(str::to_string).collect();
    for c in catalogue_headline {
        if !cols.contains(c) {
            cols.push(c.clone());
        }
    }
    cols.push("failed".into());
    cols
}

/// The rows of a sweep table, header first: the swept value, `achieved` (peak sessions in
/// flight for `max_concurrency`, sessions started/s for `request_rate`), `sessions/s`,
/// the workload's unit rate headed by its label (`chunks/s`; only when `unit` is given,
/// `-` where a point lacks it), `columns` (metric names; `-` where a point lacks one),
/// and `result` (`pass` / `FAIL`, `+short` when the point did not reach its swept value).
pub fn table_rows(
    sweep: &Sweep,
    points: &[PointResult],
    unit: Option<&str>,
    columns: &[&str],
) -> Vec<Vec<String>> {
    let mut rows = vec![
        [sweep.param.name(), "achieved", "sessions/s"]
            .into_iter()
            .chain(unit)
            .map(str::to_string)
            .chain(columns.iter().map(|c| c.to_string()))
            .chain(std::iter::once("result".to_string()))
            .collect::<Vec<_>>(),
    ];
    let column = |f: &dyn Fn(&PointResult) -> Option<f64>| {
        fmt_column(&points.iter().map(f).collect::<Vec<_>>())
    };
    let achieved = column(&|p| match sweep.param {
        SweepParam::MaxConcurrency => p.achieved_concurrency.map(|c| c as f64),
        SweepParam::RequestRate => p.achieved_request_rate,
    });
    let per_s = column(&|p| p.sessions_per_s);
    let unit_rate = column(&|p| p.unit_rate);
    let cells: Vec<Vec<String>> = columns
        .iter()
        .map(|c| column(&|p| p.metrics.get(*c).copied()))
        .collect();
    for (i, p) in points.iter().enumerate() {
        let mut row = vec![
            sweep.param.format_value(p.value),
            achieved[i].clone(),
            per_s[i].clone(),
        ];
        if unit.is_some() {
            row.push(unit_rate[i].clone());
        }
        row.extend(cells.iter().map(|col| col[i].clone()));
        let verdict = if p.passed { "pass" } else { "FAIL" };
        row.push(if p.reached {
            verdict.to_string()
        } else {
            format!("{verdict}+short")
        });
        rows.push(row);
    }
    rows
}

/// A sweep's verdict as the `run` exit code decides it (`passed` when every point held
/// its thresholds, else `failed`; `interrupted` when the sweep stopped early) and the
/// counts behind it, e.g. `4 points: 2 passed, 2 failed, 1 short of their value;
/// capacity max_concurrency = 2`.
pub fn verdict(sweep: &Sweep, points: &[PointResult], interrupted: bool) -> (&'static str, String) {
    let passed = points.iter().filter(|p| p.passed).count();
    let short = points.iter().filter(|p| !p.reached).count();
    let word = match (interrupted, passed == points.len()) {
        (true, _) => "interrupted",
        (false, true) => "passed",
        (false, false) => "failed",
    };
    let cap = capacity(points).map_or_else(
        || "no capacity".to_string(),
        |c| format!("capacity {} = {}", sweep.param, sweep.param.format_value(c)),
    );
    let rest = format!(
        "{} points: {passed} passed, {} failed, {short} short of their value; {cap}",
        points.len(),
        points.len() - passed
    );
    (word, rest)
}

/// The lines under a sweep table: the capacity, e.g. `capacity: max_concurrency = 4
/// (highest point whose thresholds all hold)`, a note when a point above a failure passed
/// again, and one naming the points that never reached their swept value.
pub fn capacity_lines(sweep: &Sweep, points: &[PointResult]) -> String {
    let mut out = String::new();
    let cap = capacity(points);
    let mut sorted: Vec<&PointResult> = points.iter().collect();
    sorted.sort_by(|a, b| a.value.total_cmp(&b.value));
    let first_fail = sorted.iter().find(|p| !p.passed || !p.reached);
    let passed_above = first_fail.and_then(|f| {
        sorted
            .iter()
            .rev()
            .find(|p| p.passed && p.reached && p.value > f.value)
    });
    let name = sweep.param.name();
    match (cap, first_fail) {
        (Some(v), _) => out.push_str(&format!(
            "capacity: {name} = {} (highest point whose thresholds all hold)\n",
            sweep.param.format_value(v)
        )),
        (None, _) if points.is_empty() => out.push_str("capacity: no points were run\n"),
        (None, Some(f)) if passed_above.is_some() => out.push_str(&format!(
            "capacity: none (the lowest point, {}, failed its thresholds)\n",
            point_label(sweep, f.value)
        )),
        (None, _) => out.push_str("capacity: none of the points held its thresholds\n"),
    }
    if let (Some(f), Some(p)) = (first_fail, passed_above) {
        out.push_str(&format!(
            "note: {} passed, but {} below it failed; capacity stops at the first failing point\n",
            point_label(sweep, p.value),
            point_label(sweep, f.value)
        ));
    }
    let short: Vec<String> = sorted
        .iter()
        .filter(|p| !p.reached)
        .map(|p| point_label(sweep, p.value))
        .collect();
    if !short.is_empty() {
        out.push_str(&format!(
            "short: {} did not reach the swept value (see `achieved`); such a point is never \
             the capacity — give it more samples (`[sweep] samples_per_point`)\n",
            short.join(", ")
        ));
    }
    out
}

/// The terminal sweep table (`table_rows`) followed by `capacity_lines`.
pub fn render_table(
    sweep: &Sweep,
    points: &[PointResult],
    unit: Option<&str>,
    columns: &[&str],
) -> String {
    let mut out = align(&table_rows(sweep, points, unit, columns), &[true]);
    out.push_str(&capacity_lines(sweep, points));
    out
}

/// The sweep as JSON, in the shape the HTML chart reads:
/// `{"sweep": {"param", "headline" (or null), "unit_rate" ({metric, unit} or null),
/// "points": [{"value", "metrics", "passed", "achieved_concurrency",
/// "achieved_request_rate", "sessions_per_s", "unit_rate", "lateness_p99_ms", "reached"}],
/// "capacity" (or null)}, "rtload": {"metrics": {"capacity": ...}}}`. Values are integers
/// for `max_concurrency`; an unlimited rate is the string `"inf"`; non-finite metrics are
/// null. `rtload.metrics` has no `capacity` key when there is none (missing, not zero).
pub fn sweep_json(
    sweep: &Sweep,
    points: &[PointResult],
    unit: Option<&UnitRate>,
    capacity: Option<f64>,
) -> Value {
    let points: Vec<Value> = points
        .iter()
        .map(|p| {
            json!({
                "value": sweep.param.json_value(p.value),
                "metrics": p.metrics,
                "passed": p.passed,
                "achieved_concurrency": p.achieved_concurrency,
                "achieved_request_rate": p.achieved_request_rate,
                "sessions_per_s": p.sessions_per_s,
                "unit_rate": p.unit_rate,
                "lateness_p99_ms": p.lateness_p99_ms,
                "reached": p.reached,
            })
        })
        .collect();
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
        },
        "rtload": { "metrics": metrics },
    })
}

/// Read a sweep back from [`sweep_json`]'s shape (for the HTML report): the sweep (its
/// values in point order) and its points. `None` when `doc` has no readable `sweep`.
/// A point written before `reached` was recorded counts as reached.
pub fn from_json(doc: &Value) -> Option<(Sweep, Vec<PointResult>)> {
    let sw = doc.get("sweep")?;
    let param = SweepParam::from_name(sw.get("param")?.as_str()?)?;
    let value = |v: &Value| match v {
        Value::String(s) if s == "inf" => Some(f64::INFINITY),
        v => v.as_f64(),
    };
    let mut points = Vec::new();
    for p in sw.get("points")?.as_array()? {
        let metrics = p
            .get("metrics")
            .and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .filter_map(|(k, v)| Some((k.clone(), v.as_f64()?)))
                    .collect()
            })
            .unwrap_or_default();
        points.push(PointResult {
            value: value(p.get("value")?)?,
            metrics,
            passed: p.get("passed").and_then(Value::as_bool).unwrap_or(false),
            achieved_concurrency: p
                .get("achieved_concurrency")
                .and_then(Value::as_u64)
                .map(|c| c as usize),
            achieved_request_rate: p.get("achieved_request_rate").and_then(Value::as_f64),
            sessions_per_s: p.get("sessions_per_s").and_then(Value::as_f64),
            unit_rate: p.get("unit_rate").and_then(Value::as_f64),
            lateness_p99_ms: p.get("lateness_p99_ms").and_then(Value::as_f64),
            reached: p.get("reached").and_then(Value::as_bool).unwrap_or(true),
        });
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

/// The unit rate a sweep document declares (`sweep.unit_rate`), `None` when it has none
/// (the workload declares none, or the file predates it).
pub fn unit_rate_from_json(doc: &Value) -> Option<UnitRate> {
    serde_json::from_value(doc.pointer("/sweep/unit_rate")?.clone()).ok()
}

#[cfg(test)]
#[path = "sweep_tests.rs"]
mod tests;
