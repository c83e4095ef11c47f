//! A session-series chart: one line per session from the `rtload.session_series` rows
//! of the chart's series (`{series, session, points: [[x, y], …], band_to_x}`), with the
//! declared reference line (a metric's value) and shaded band.

use std::fmt::Write as _;

use serde_json::Value;

use super::super::svg::{Axis, Plot, fmt_num};
use super::{arr, axis_title, figure, legend, num};
use crate::workload::catalogue::chart::{Chart, Reference, Scale};

/// What a session-series chart declares, its reference resolved to a value.
pub struct Spec<'a> {
    /// The chart (id, title).
    pub chart: &'a Chart,
    /// The series its rows carry.
    pub series: &'a str,
    /// The x axis.
    pub x: &'a Scale,
    /// The y axis.
    pub y: &'a Scale,
    /// The reference line: the metric's value and the declaration.
    pub reference: Option<(f64, &'a Reference)>,
    /// The shaded band's label.
    pub band: Option<&'a str>,
}

/// One session's line.
struct Line {
    session: String,
    points: Vec<(f64, f64)>,
    band_to: Option<f64>,
}

/// The rows of `series` among `rows`, by session number; malformed points are skipped.
fn lines(series: &str, rows: &[Value]) -> Vec<Line> {
    let mut out: Vec<(f64, Line)> = rows
        .iter()
        .filter(|r| r.get("series").and_then(Value::as_str) == Some(series))
        .enumerate()
        .map(|(i, r)| {
            let n = num(r, "session");
            let points = arr(r, "points")
                .iter()
                .filter_map(|p| {
                    let p = p.as_array()?;
                    Some((p.first()?.as_f64()?, p.get(1)?.as_f64()?))
                })
                .filter(|(x, y)| x.is_finite() && y.is_finite())
                .collect();
            let session = n.map_or_else(|| format!("row {i}"), |n| format!("session {n}"));
            let line = Line {
                session,
                points,
                band_to: num(r, "band_to_x"),
            };
            (n.unwrap_or(f64::INFINITY), line)
        })
        .collect();
    out.sort_by(|a, b| a.0.total_cmp(&b.0));
    out.into_iter().map(|(_, l)| l).collect()
}

/// The figure of `spec` over `rows` (the result's `rtload.session_series`).
pub fn figure_of(spec: &Spec<'_>, rows: &[Value]) -> String {
    let lines = lines(spec.series, rows);
    let band_to = lines.iter().filter_map(|l| l.band_to).reduce(f64::max);
    let mut caption = format!("{}: one line per session", spec.chart.title);
    if let Some((v, r)) = spec.reference {
        let _ = write!(
            caption,
            "; dashed line: {} {} {} ({})",
            r.label,
            fmt_num(v, 1),
            spec.y.unit,
            r.metric
        );
    }
    if let (Some(label), Some(to)) = (spec.band, band_to) {
        let _ = write!(caption, "; shaded: {label} (below {})", fmt_num(to, 1));
    }
    let pts = || lines.iter().flat_map(|l| l.points.iter());
    if pts().next().is_none() {
        let _ = write!(
            caption,
            "; this result has no rtload.session_series rows of {}",
            spec.series
        );
        return figure(None, &caption, "");
    }
    let svg = (|| {
        let x = Axis::fit(
            &axis_title(&spec.x.label, &spec.x.unit),
            pts().map(|p| p.0),
            spec.x.integer,
        )?;
        let ys = pts()
            .map(|p| p.1)
            .chain([0.0])
            .chain(spec.reference.map(|r| r.0));
        let y = Axis::fit(&axis_title(&spec.y.label, &spec.y.unit), ys, spec.y.integer)?;
        let mut p = Plot::linear(&spec.chart.id, &spec.chart.title, x, y);
        if let (Some(label), Some(to)) = (spec.band, band_to) {
            p.band(f64::NEG_INFINITY, to, label);
        }
        if let Some((v, r)) = spec.reference {
            p.hline(v, &r.label);
        }
        for (i, l) in lines.iter().enumerate() {
            p.line(&l.points, i, &l.session);
        }
        Some(p.finish())
    })();
    let items: Vec<(String, String)> = lines
        .iter()
        .enumerate()
        .map(|(i, l)| (format!("s{}", i % 8), l.session.clone()))
        .collect();
    figure(svg, &caption, &legend(&items))
}
