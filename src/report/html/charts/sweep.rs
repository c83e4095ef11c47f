//! Sweep result page, read as a load tester reads a sweep: first the table (the same
//! columns as the terminal's) with the capacity lines, then panels against the swept
//! parameter — achieved throughput (completed sessions/s, and the workload's own unit
//! rate, e.g. chunks/s, in its own panel since its scale differs), headline latency p50/p99, failures, generator lateness — and a
//! throughput-vs-latency curve. The knee (capacity) is marked on every panel, or the
//! reason there is none is in every caption; failed, short and generator-bound points get
//! red rings, and the lines under the table name what broke at each failing point.

use std::fmt::Write as _;

use serde_json::Value;

use super::super::svg::{Axis, Plot, esc, fmt_num};
use super::figure;
use crate::config::sweep::{Sweep, SweepParam};
use crate::report::sweep::{self, PointResult};
use crate::workload::catalogue::UnitRate;

/// The headline family (`ttft_ms` of `ttft_ms.p99`).
pub(super) fn family(headline: &str) -> &str {
    headline.split_once('.').map_or(headline, |(f, _)| f)
}

/// The sweep and its points (sorted by value) read from `doc`; an unreadable sweep gives
/// an empty one.
fn read_points(doc: &Value) -> (Sweep, Vec<PointResult>) {
    // An unreadable sweep still gets its (empty) table and "no data" panels.
    let (sw, mut points) = sweep::from_json(doc).unwrap_or_else(|| {
        let sw = Sweep {
            param: SweepParam::MaxConcurrency,
            values: Vec::new(),
            headline: None,
            samples_per_point: None,
        };
        (sw, Vec::new())
    });
    points.sort_by(|a, b| a.value.total_cmp(&b.value));
    (sw, points)
}

/// The catalog's headline metric names (`/rtload/headline_metrics`), empty if absent.
pub(super) fn catalog_headline(doc: &Value) -> Vec<String> {
    doc.pointer("/rtload/headline_metrics")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// One `(value, f(point))` pair per point, NaN where `f` has no value.
fn series(points: &[PointResult], f: &dyn Fn(&PointResult) -> Option<f64>) -> Vec<(f64, f64)> {
    points
        .iter()
        .map(|p| (p.value, f(p).unwrap_or(f64::NAN)))
        .collect()
}

/// The headline's p50/p99 lines (those with any finite value), else the headline itself.
fn latency_lines(
    points: &[PointResult],
    headline: &str,
    fam: &str,
) -> Vec<(String, Vec<(f64, f64)>)> {
    let lat: Vec<(String, Vec<(f64, f64)>)> = ["p50", "p99"]
        .iter()
        .map(|st| {
            let k = format!("{fam}.{st}");
            (k.clone(), series(points, &|p| p.metrics.get(&k).copied()))
        })
        .filter(|(_, s)| s.iter().any(|p| p.1.is_finite()))
        .collect();
    if lat.is_empty() {
        vec![(
            headline.to_string(),
            series(points, &|p| p.metrics.get(headline).copied()),
        )]
    } else {
        lat
    }
}

/// A panel's lines: (name, one `(value, y)` per point).
type Lines = Vec<(String, Vec<(f64, f64)>)>;

/// The throughput panels as `(kind, y title, lines, what)`: completed sessions/s, then,
/// when the sweep declares one, the workload's own unit rate on its own axis (its scale,
/// e.g. chunks/s, dwarfs sessions/s).
fn throughput_panels(
    points: &[PointResult],
    unit: Option<&UnitRate>,
) -> Vec<(&'static str, String, Lines, String)> {
    let mut out = vec![(
        "sweep-throughput",
        "per second".to_string(),
        vec![(
            "completed sessions/s".to_string(),
            series(points, &|p| p.sessions_per_s),
        )],
        "Achieved throughput".to_string(),
    )];
    if let Some(u) = unit {
        out.push((
            "sweep-unit-rate",
            u.unit.clone(),
            vec![(
                format!("{} ({})", u.unit, u.metric),
                series(points, &|p| p.unit_rate),
            )],
            format!("Achieved throughput in the workload's unit, {}", u.unit),
        ));
    }
    out
}

/// Sweep result: table first, then the panels.
pub fn sweep(doc: &Value) -> String {
    let (sw, points) = read_points(doc);
    let capacity = sweep::capacity(&points);
    let param = sw.param.name();
    let cat_headline = catalog_headline(doc);
    let headline = sw
        .headline
        .clone()
        .or_else(|| cat_headline.first().cloned())
        .unwrap_or_default();
    let unit = sweep::unit_rate_from_json(doc);
    let unit_label = unit.as_ref().map(|u| u.unit.as_str());
    let mut out = table(&sw, &points, unit_label, &cat_headline);
    out.push_str(&legacy_note(doc));
    let cap_note = capacity.map_or_else(
        || {
            let why = sweep::no_capacity_reason(&sw, &points).unwrap_or_default();
            format!("no capacity: {why}")
        },
        |c| format!("green: capacity (knee), {param} = {}", fmt_num(c, 3)),
    );
    let series = |f: &dyn Fn(&PointResult) -> Option<f64>| series(&points, f);
    let panel = |kind: &str, y: &str, lines: &[(String, Vec<(f64, f64)>)], what: &str| {
        curve(
            &points,
            kind,
            y,
            param,
            lines,
            capacity,
            &format!("{what} vs {param}; {cap_note}"),
        )
    };
    for (kind, y, lines, what) in throughput_panels(&points, unit.as_ref()) {
        out.push_str(&panel(kind, &y, &lines, &what));
    }
    let fam = family(&headline).to_string();
    let lat = latency_lines(&points, &headline, &fam);
    out.push_str(&panel(
        "sweep-headline",
        &fam,
        &lat,
        &format!("Headline {fam}"),
    ));
    let failed = vec![(
        "failed".to_string(),
        series(&|p| p.metrics.get("failed").copied()),
    )];
    out.push_str(&panel(
        "sweep-failures",
        "failed samples",
        &failed,
        "Failures",
    ));
    let late = vec![(
        "send lateness p99 (ms)".to_string(),
        series(&|p| p.lateness_p99_ms),
    )];
    out.push_str(&panel(
        "sweep-lateness",
        "ms",
        &late,
        "Generator send lateness p99",
    ));
    out.push_str(&tput_vs_latency(&points, &lat, capacity, param));
    out
}

/// The sweep table: [`sweep::table_rows`] (same columns as the terminal, the unit rate
/// headed `unit` and every judged metric included), points that can never be the
/// capacity shaded (`short`, plus `bound` when generator-bound), then the lines under it
/// (what broke at each failing point, generator-bound points, the capacity or why none).
fn table(
    sw: &Sweep,
    points: &[PointResult],
    unit: Option<&str>,
    cat_headline: &[String],
) -> String {
    let cols = sweep::table_columns(sw.headline.as_deref(), cat_headline, points);
    let cols: Vec<&str> = cols.iter().map(String::as_str).collect();
    let rows = sweep::table_rows(sw, points, unit, &cols);
    let mut s = String::from("<table class=\"points\"><caption>Sweep points</caption>");
    for (i, row) in rows.iter().enumerate() {
        let point = i.checked_sub(1).and_then(|k| points.get(k));
        let short = point.is_some_and(|p| !p.reached || p.generator_bound.is_some());
        s.push_str(match point {
            Some(p) if p.generator_bound.is_some() => "<tr class=\"short bound\">",
            _ if short => "<tr class=\"short\">",
            _ => "<tr>",
        });
        let last = row.len().saturating_sub(1);
        for (c, cell) in row.iter().enumerate() {
            let class = match (i, c == last, cell.starts_with("pass")) {
                (0, _, _) | (_, false, _) => "",
                (_, true, true) if !short => " class=\"pass\"",
                _ => " class=\"fail\"",
            };
            let tag = if i == 0 { "th" } else { "td" };
            let _ = write!(s, "<{tag}{class}>{}</{tag}>", esc(cell));
        }
        s.push_str("</tr>");
    }
    s.push_str("</table>\n<pre class=\"capacity\">");
    s.push_str(&esc(&sweep::capacity_lines(sw, points)));
    s.push_str("</pre>\n");
    s
}

/// For a `sweep.json` written before sweeps recorded each point's thresholds (no point
/// has `thresholds`): a note that its points cannot be judged again here, with the
/// capacity the run itself claimed, rather than letting "no threshold set" stand alone.
fn legacy_note(doc: &Value) -> String {
    let points = doc.pointer("/sweep/points").and_then(Value::as_array);
    let legacy =
        points.is_some_and(|p| !p.is_empty() && p.iter().all(|p| p.get("thresholds").is_none()));
    if !legacy {
        return String::new();
    }
    let claimed = match doc.pointer("/sweep/capacity") {
        Some(Value::Null) | None => "none".to_string(),
        Some(v) => v.to_string(),
    };
    format!(
        "<p class=\"note\">This sweep.json predates per-point thresholds, so no capacity is \
         claimed here; the run that wrote it claimed capacity {}.</p>\n",
        esc(&claimed)
    )
}

/// One panel: `lines` (name, points) against the swept value, knee marked.
fn curve(
    points: &[PointResult],
    kind: &str,
    y_title: &str,
    param: &str,
    lines: &[(String, Vec<(f64, f64)>)],
    capacity: Option<f64>,
    caption: &str,
) -> String {
    let ys = || lines.iter().flat_map(|(_, s)| s.iter().map(|p| p.1));
    let svg = ys().any(f64::is_finite).then_some(()).and_then(|()| {
        let x = Axis::fit(param, points.iter().map(|p| p.value).chain(capacity), false)?;
        let y = Axis::fit(y_title, ys().chain([0.0]), false)?;
        let mut p = Plot::linear(kind, caption, x, y);
        if let Some(c) = capacity {
            p.vline(c, &format!("capacity {}", fmt_num(c, 3)), "cap");
        }
        for (i, (name, s)) in lines.iter().enumerate() {
            p.line(s, i, name);
            for (pt, &(x, y)) in points.iter().zip(s) {
                if !pt.counts() {
                    let why = sweep::why_not_counted(pt).unwrap_or("failed");
                    p.fail_marker(
                        x,
                        y,
                        &format!(
                            "{param} = {}: {why} ({name} {})",
                            fmt_num(x, 3),
                            fmt_num(y, 3)
                        ),
                    );
                }
                if capacity == Some(x) {
                    p.highlight(
                        x,
                        y,
                        &format!(
                            "capacity: {param} = {} ({name} {})",
                            fmt_num(x, 3),
                            fmt_num(y, 3)
                        ),
                    );
                }
            }
        }
        Some(p.finish())
    });
    let items: Vec<(String, String)> = lines
        .iter()
        .enumerate()
        .map(|(i, (n, _))| (format!("s{}", i % 8), n.clone()))
        .collect();
    figure(svg, caption, &super::legend(&items))
}

/// How one point of a throughput-vs-latency curve is marked.
pub(super) enum Ring {
    /// No ring.
    Plain,
    /// The capacity (knee): highlighted.
    Capacity,
    /// Failed / broke: a red ring.
    Broke,
    /// Inconclusive (generator-bound, short of its load): an amber dashed ring.
    Inconclusive,
}

/// One point of a throughput-vs-latency curve: `y` against its completed sessions/s
/// ([`throughput`]), its ring with a tooltip, and an optional label drawn beside it.
pub(super) struct TputPoint {
    pub x: f64,
    pub y: f64,
    pub ring: (Ring, String),
    pub label: Option<String>,
}

/// A point's achieved throughput as the curves draw it: completed sessions/s, NaN
/// (skipped) when the point has none.
pub(super) fn throughput(p: &PointResult) -> f64 {
    p.sessions_per_s.unwrap_or(f64::NAN)
}

/// Completed sessions/s (x) against headline latency (y), one dot per point in load
/// order, the knee highlighted.
fn tput_vs_latency(
    points: &[PointResult],
    lat: &[(String, Vec<(f64, f64)>)],
    capacity: Option<f64>,
    param: &str,
) -> String {
    let Some((name, ys)) = lat.last() else {
        return String::new();
    };
    let pts: Vec<TputPoint> = points
        .iter()
        .zip(ys)
        .map(|(p, &(_, y))| {
            let label = SweepParam::from_name(param)
                .map_or_else(|| fmt_num(p.value, 3), |sp| sp.format_value(p.value));
            let ring = if capacity == Some(p.value) {
                (Ring::Capacity, format!("knee: {param} = {label}"))
            } else if !p.counts() {
                (Ring::Broke, format!("{param} = {label}"))
            } else {
                (Ring::Plain, String::new())
            };
            TputPoint {
                x: throughput(p),
                y,
                ring,
                label: None,
            }
        })
        .collect();
    let caption = format!(
        "Throughput vs latency: {name} against completed sessions/s, one point per {param} value in increasing order"
    );
    tput_latency_figure("sweep-tput-latency", &caption, name, &pts)
}

/// The throughput-vs-latency figure of `pts` (a line through them in the order given,
/// each ringed and labelled as it says), or a "no data" note.
pub(super) fn tput_latency_figure(
    kind: &str,
    caption: &str,
    name: &str,
    pts: &[TputPoint],
) -> String {
    let ok = pts.iter().any(|p| p.x.is_finite() && p.y.is_finite());
    let svg = ok.then_some(()).and_then(|()| {
        let x = Axis::fit(
            "completed sessions/s",
            pts.iter().map(|p| p.x).chain([0.0]),
            false,
        )?;
        let y = Axis::fit(name, pts.iter().map(|p| p.y).chain([0.0]), false)?;
        let mut plot = Plot::linear(kind, caption, x, y);
        let line: Vec<(f64, f64)> = pts.iter().map(|p| (p.x, p.y)).collect();
        plot.line(&line, 0, name);
        for p in pts {
            match &p.ring {
                (Ring::Plain, _) => {}
                (Ring::Capacity, tip) => plot.highlight(p.x, p.y, tip),
                (Ring::Broke, tip) => plot.fail_marker(p.x, p.y, tip),
                (Ring::Inconclusive, tip) => plot.warn_marker(p.x, p.y, tip),
            }
            if let Some(l) = &p.label {
                plot.point_label(p.x, p.y, l);
            }
        }
        Some(plot.finish())
    });
    figure(svg, caption, "")
}
