//! A finished sweep as text, the same for the terminal and the HTML page: the table's
//! columns and rows, the lines under it (why each failing point failed, which points the
//! generator bound, the capacity or why there is none), the verdict, the direction legend
//! and the live progress lines. Every figure comes from the [`PointResult`]s.

use super::{PointResult, capacity, judged, judged_metrics, no_capacity_reason, sorted};
use crate::config::sweep::{Sweep, SweepParam, point_label};
use crate::config::thresholds::format_value;
use crate::report::table::{align, fmt_column};

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
/// headline, the workload's headline metrics, every metric a threshold judges at
/// `points` (so a sweep judged on `rtf.p99` shows it), then `failed`.
pub fn table_columns(
    headline: Option<&str>,
    catalogue_headline: &[String],
    points: &[PointResult],
) -> Vec<String> {
    let mut cols: Vec<String> = headline.into_iter().map(str::to_string).collect();
    let judged = judged_metrics(points);
    for c in catalogue_headline.iter().chain(&judged) {
        if !cols.contains(c) && c != "failed" {
            cols.push(c.clone());
        }
    }
    cols.push("failed".into());
    cols
}

/// A point's `result` cell: `pass` / `FAIL`, then `+short` when it did not reach its
/// swept value and `+gen-bound` when the generator bound it.
fn result_cell(p: &PointResult) -> String {
    let mut s = String::from(if p.passed { "pass" } else { "FAIL" });
    if !p.reached {
        s.push_str("+short");
    }
    if p.generator_bound.is_some() {
        s.push_str("+gen-bound");
    }
    s
}

/// The rows of a sweep table, header first: the swept value, `achieved` (peak sessions in
/// flight for `max_concurrency`, sessions started/s for `request_rate`, then the mean
/// sessions in flight that rate produced, `mean sessions`), `sessions/s`,
/// the workload's unit rate headed by its label (`chunks/s`; only when `unit` is given,
/// `-` where a point lacks it), `columns` (metric names; `-` where a point lacks one),
/// and `result` (`pass` / `FAIL`, `+short` when the point did not reach its swept value,
/// `+gen-bound` when the generator bound it).
pub fn table_rows(
    sweep: &Sweep,
    points: &[PointResult],
    unit: Option<&str>,
    columns: &[&str],
) -> Vec<Vec<String>> {
    let rate = sweep.param == SweepParam::RequestRate;
    let mut rows = vec![
        [sweep.param.name(), "achieved"]
            .into_iter()
            .chain(rate.then_some("mean sessions"))
            .chain(std::iter::once("sessions/s"))
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
    let mean = column(&|p| p.mean_sessions);
    let unit_rate = column(&|p| p.unit_rate);
    let cells: Vec<Vec<String>> = columns
        .iter()
        .map(|c| column(&|p| p.metrics.get(*c).copied()))
        .collect();
    for (i, p) in points.iter().enumerate() {
        let mut row = vec![sweep.param.format_value(p.value), achieved[i].clone()];
        if rate {
            row.push(mean[i].clone());
        }
        row.push(per_s[i].clone());
        if unit.is_some() {
            row.push(unit_rate[i].clone());
        }
        row.extend(cells.iter().map(|col| col[i].clone()));
        row.push(result_cell(p));
        rows.push(row);
    }
    rows
}

/// Why a point failed, one item per reason: each broken threshold with its measured
/// value (`ttft_ms.p99 = 612.400 (< 500)`, `ttft_ms.p99 missing (< 500)`), then failed
/// samples and unwritten artifacts. Empty for a passing point.
pub fn fail_reasons(p: &PointResult) -> Vec<String> {
    if p.passed {
        return Vec::new();
    }
    let mut out: Vec<String> = p
        .checks
        .iter()
        .filter(|c| !c.passed)
        .map(|c| match c.measured.filter(|m| m.is_finite()) {
            Some(m) => format!("{} = {} ({})", c.metric, format_value(m), c.expr),
            None => format!("{} missing ({})", c.metric, c.expr),
        })
        .collect();
    if p.failed_samples > 0 {
        out.push(format!("{} measured sample(s) failed", p.failed_samples));
    }
    if p.artifact_errors > 0 {
        out.push(format!("{} artifact(s) not written", p.artifact_errors));
    }
    if out.is_empty() {
        out.push("failed (no reason recorded)".into());
    }
    out
}

/// A sweep's verdict as the `run` exit code decides it (`passed` when every point held
/// its thresholds, else `failed`; `interrupted` when the sweep stopped early) and the
/// counts behind it, e.g. `4 points: 2 passed, 2 failed, 1 short of their value, 0
/// generator-bound; capacity max_concurrency = 2`.
pub fn verdict(sweep: &Sweep, points: &[PointResult], interrupted: bool) -> (&'static str, String) {
    let passed = points.iter().filter(|p| p.passed).count();
    let short = points.iter().filter(|p| !p.reached).count();
    let bound = points
        .iter()
        .filter(|p| p.generator_bound.is_some())
        .count();
    let word = match (interrupted, passed == points.len()) {
        (true, _) => "interrupted",
        (false, true) => "passed",
        (false, false) => "failed",
    };
    let cap = match capacity(points) {
        Some(c) => format!("capacity {} = {}", sweep.param, sweep.param.format_value(c)),
        None if !points.is_empty() && !judged(points) => "no threshold set: no capacity".into(),
        None => "no capacity".into(),
    };
    let rest = format!(
        "{} points: {passed} passed, {} failed, {short} short of their value, {bound} \
         generator-bound; {cap}",
        points.len(),
        points.len() - passed
    );
    (word, rest)
}

/// The lines under a sweep table: one per failing point naming what broke (`FAIL
/// max_concurrency=4: ttft_ms.p99 = 612.400 (< 500)`), one per generator-bound point,
/// the capacity (`capacity: max_concurrency = 4 (highest point whose thresholds all
/// hold)`) or why there is none, a note when a point above the knee passed again, and one
/// naming the points that never reached their swept value.
pub fn capacity_lines(sweep: &Sweep, points: &[PointResult]) -> String {
    let mut out = String::new();
    let sorted = sorted(points);
    for p in &sorted {
        let reasons = fail_reasons(p);
        if !reasons.is_empty() {
            let label = point_label(sweep, p.value);
            out.push_str(&format!("FAIL {label}: {}\n", reasons.join("; ")));
        }
    }
    for p in &sorted {
        if let Some(why) = &p.generator_bound {
            out.push_str(&format!(
                "generator-bound {}: {why}; such a point is never the capacity\n",
                point_label(sweep, p.value)
            ));
        }
    }
    let name = sweep.param.name();
    match (capacity(points), no_capacity_reason(sweep, points)) {
        (Some(v), _) => out.push_str(&format!(
            "capacity: {name} = {} (highest point whose thresholds all hold)\n",
            sweep.param.format_value(v)
        )),
        (None, reason) => out.push_str(&format!("capacity: {}\n", reason.unwrap_or_default())),
    }
    out.push_str(&knee_note(sweep, &sorted));
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

/// "note: X passed, but Y below it failed; …" when a point above the first one that does
/// not count passed again (only when thresholds judged the points).
fn knee_note(sweep: &Sweep, sorted: &[&PointResult]) -> String {
    if sorted.iter().all(|p| p.checks.is_empty()) {
        return String::new();
    }
    let Some(f) = sorted.iter().find(|p| !p.counts()) else {
        return String::new();
    };
    let Some(p) = sorted
        .iter()
        .rev()
        .find(|p| p.counts() && p.value > f.value)
    else {
        return String::new();
    };
    let why = if !f.passed {
        "failed"
    } else if !f.reached {
        "fell short"
    } else {
        "was generator-bound"
    };
    format!(
        "note: {} passed, but {} below it {why}; capacity stops at the first point that \
         failed, fell short or was generator-bound\n",
        point_label(sweep, p.value),
        point_label(sweep, f.value)
    )
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

/// A live progress line: point `index` (from 1) of `of` at `value` starting (`point 2 of
/// 4: max_concurrency=2 …`, when `done` is `None`) or finished with its result cell and
/// what broke (`point 2 of 4: max_concurrency=2 FAIL: ttft_ms.p99 = 612.400 (< 500)`).
pub fn progress_line(
    sweep: &Sweep,
    index: usize,
    of: usize,
    value: f64,
    done: Option<&PointResult>,
) -> String {
    let head = format!("point {index} of {of}: {}", point_label(sweep, value));
    let Some(p) = done else {
        return format!("{head} …");
    };
    let mut line = format!("{head} {}", result_cell(p));
    let reasons = fail_reasons(p);
    if !reasons.is_empty() {
        line.push_str(&format!(": {}", reasons.join("; ")));
    }
    if let Some(why) = &p.generator_bound {
        line.push_str(&format!(" ({why})"));
    }
    line
}
