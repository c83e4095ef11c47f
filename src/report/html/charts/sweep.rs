//! Sweep result charts: the headline metric and throughput against the swept parameter,
//! with the capacity point highlighted, plus a table of the points.

use std::fmt::Write as _;

use serde_json::Value;

use super::super::svg::{Axis, Plot, esc, fmt_num};
use super::{arr, f, figure, num};

/// A sweep point: parameter value, its flat metrics and whether it passed.
struct Point<'a> {
    value: f64,
    metrics: &'a Value,
    passed: Option<bool>,
}

/// The throughput key to plot: `request_throughput` if any point has it, else the first
/// (sorted) metric name containing "throughput".
fn throughput_key(points: &[Point]) -> Option<String> {
    let mut names: Vec<&String> = points
        .iter()
        .filter_map(|p| p.metrics.as_object())
        .flat_map(|m| m.keys())
        .filter(|k| k.contains("throughput"))
        .collect();
    names.sort();
    names
        .iter()
        .find(|k| k.as_str() == "request_throughput")
        .or(names.first())
        .map(|k| k.to_string())
}

/// Sweep result: headline metric and throughput vs the swept parameter, plus a points table.
pub fn sweep(doc: &Value) -> String {
    let sw = doc.get("sweep").unwrap_or(&Value::Null);
    let param = sw
        .get("param")
        .and_then(Value::as_str)
        .unwrap_or("parameter");
    let headline = sw.get("headline").and_then(Value::as_str).unwrap_or("");
    let capacity = num(sw, "capacity");
    let mut points: Vec<Point> = arr(sw, "points")
        .iter()
        .filter_map(|p| {
            Some(Point {
                value: num(p, "value")?,
                metrics: p.get("metrics").unwrap_or(&Value::Null),
                passed: p.get("passed").and_then(Value::as_bool),
            })
        })
        .collect();
    points.sort_by(|a, b| a.value.total_cmp(&b.value));
    let cap_note = capacity.map_or_else(
        || "no point passed, so there is no capacity".to_string(),
        |c| format!("green: capacity, {param} = {}", fmt_num(c, 3)),
    );
    let mut out = sweep_curve(
        &points,
        "sweep-headline",
        headline,
        param,
        capacity,
        &format!("Sweep: {headline} vs {param}; red rings: points that failed; {cap_note}"),
    );
    if let Some(key) = throughput_key(&points) {
        out.push_str(&sweep_curve(
            &points,
            "sweep-throughput",
            &key,
            param,
            capacity,
            &format!("Sweep: {key} vs {param}; {cap_note}"),
        ));
    }
    out.push_str(&points_table(
        &points,
        param,
        headline,
        throughput_key(&points).as_deref(),
    ));
    out
}

fn sweep_curve(
    points: &[Point],
    kind: &str,
    key: &str,
    param: &str,
    capacity: Option<f64>,
    caption: &str,
) -> String {
    let pts: Vec<(f64, f64)> = points
        .iter()
        .map(|p| (p.value, f(p.metrics, key)))
        .collect();
    let finite = || pts.iter().filter(|p| p.1.is_finite());
    let svg = (finite().count() > 0).then_some(()).and_then(|()| {
        let x = Axis::fit(param, pts.iter().map(|p| p.0).chain(capacity), false)?;
        let y = Axis::fit(key, finite().map(|p| p.1).chain([0.0]), false)?;
        let mut p = Plot::linear(kind, caption, x, y);
        if let Some(c) = capacity {
            p.vline(c, &format!("capacity {}", fmt_num(c, 3)), "cap");
        }
        p.line(&pts, 0, key);
        for (pt, &(x, y)) in points.iter().zip(&pts) {
            if pt.passed == Some(false) {
                p.fail_marker(
                    x,
                    y,
                    &format!(
                        "{param} = {}: failed ({key} {})",
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
                        "capacity: {param} = {} ({key} {})",
                        fmt_num(x, 3),
                        fmt_num(y, 3)
                    ),
                );
            }
        }
        Some(p.finish())
    });
    figure(svg, caption, "")
}

fn points_table(points: &[Point], param: &str, headline: &str, tput: Option<&str>) -> String {
    let mut s = format!(
        "<table class=\"points\"><caption>Sweep points</caption><tr><th>{}</th><th>{}</th>",
        esc(param),
        esc(headline)
    );
    if let Some(t) = tput {
        let _ = write!(s, "<th>{}</th>", esc(t));
    }
    s.push_str("<th>passed</th></tr>");
    for p in points {
        let _ = write!(
            s,
            "<tr><td>{}</td><td>{}</td>",
            fmt_num(p.value, 3),
            fmt_num(f(p.metrics, headline), 3)
        );
        if let Some(t) = tput {
            let _ = write!(s, "<td>{}</td>", fmt_num(f(p.metrics, t), 3));
        }
        let passed = match p.passed {
            Some(true) => "<td class=\"pass\">yes</td>",
            Some(false) => "<td class=\"fail\">no</td>",
            None => "<td>–</td>",
        };
        let _ = write!(s, "{passed}</tr>");
    }
    s.push_str("</table>\n");
    s
}
