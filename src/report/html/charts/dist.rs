//! Distribution figures: a percentile (CDF) plot, or a dot plot when every series has
//! fewer than [`DOT_PLOT_BELOW`] values (the axes and positions are explained in
//! [`crate::report::html::cdf`]). One series per result: a result's own section draws
//! one, a comparison overlays one per file on the same axes.
//!
//! Where a result's distributions come from: its distribution charts (`rtload.charts`)
//! over the raw values in its JSON (`rtload.distributions`), then every tag of its
//! `.hlog` the JSON has no raw values for (queue wait, send lateness, session duration,
//! …), from the tag's histogram summed over the run (3 significant digits). The caption
//! says what each measures and from which event to which (the catalogue's
//! `measurement_origin`).

use std::fmt::Write as _;

use serde_json::Value;

use super::super::cdf::{
    Counts, DOT_PLOT_BELOW, MAX_POINTS, cdf_points, counts_of_histogram, counts_of_values, expand,
    hazen, lanes, marks, nines, nines_ticks, nines_top, total,
};
use super::super::svg::{Axis, Plot, RowAxis, fmt_num};
use super::{Declared, axis_title, figure, legend, num};
use crate::util::histlog::{Interval, MICROS_PER_MS};
use crate::workload::catalogue::chart::{Chart, Reference};

/// One distribution of one result, ready to plot.
#[derive(Debug, Clone)]
pub struct Dist {
    /// Names the same distribution across results (`ttft_ms`, a `.hlog` tag).
    pub key: String,
    /// What it measures, for titles (`ttft`).
    pub what: String,
    /// Unit of the values (`ms`, or `""`).
    pub unit: String,
    /// The values.
    pub counts: Counts,
    /// Drawn from a `.hlog` histogram rather than raw values.
    pub from_hlog: bool,
    /// The JSON carries its raw values (`rtload.distributions`).
    pub raw: bool,
    /// A labelled reference value (a deadline), drawn as a dashed vertical line.
    pub reference: Option<(f64, String)>,
    /// What it measures (the catalogue's description), or empty.
    pub description: String,
    /// From which event to which (the catalogue's `measurement_origin`), or empty.
    pub origin: String,
}

impl Dist {
    /// A distribution of raw `values` named `key` (titled by it); a key ending in `_ms`
    /// is in ms.
    pub fn from_values(key: &str, values: &[f64]) -> Dist {
        let unit = if key.ends_with("_ms") { "ms" } else { "" };
        Dist {
            key: key.to_string(),
            what: key.to_string(),
            unit: unit.to_string(),
            counts: counts_of_values(values),
            from_hlog: false,
            raw: false,
            reference: None,
            description: String::new(),
            origin: String::new(),
        }
    }
}

/// The distribution a distribution chart of `doc` plots: the values of `name` in
/// `rtload.distributions` (non-numbers skipped), its unit, description and origin from
/// the catalogue, and `reference` at its metric's value in `rtload.metrics`.
pub fn of_chart(
    doc: &Value,
    declared: &Declared,
    chart: &Chart,
    name: &str,
    reference: Option<&Reference>,
) -> Dist {
    let raw = doc
        .pointer("/rtload/distributions")
        .and_then(|m| m.get(name))
        .and_then(Value::as_array);
    let values: Vec<f64> = raw
        .map_or(&[][..], Vec::as_slice)
        .iter()
        .map(|v| v.as_f64().unwrap_or(f64::NAN))
        .collect();
    let mut d = Dist::from_values(name, &values);
    d.raw = raw.is_some();
    d.what = chart.title.clone();
    if let Some(info) = declared.dist_info(name) {
        d.unit = info.unit.clone();
        d.description = info.description.clone();
        d.origin = info.origin.clone();
    }
    d.reference = reference.and_then(|r| {
        let v = doc
            .pointer("/rtload/metrics")
            .and_then(|m| num(m, &r.metric))?;
        Some((v, r.label.clone()))
    });
    d
}

/// A distribution per `.hlog` tag not among `have` (keys with raw values), in the log's
/// first-appearance order, each summed over the whole run.
pub fn hlog_dists(intervals: &[Interval], have: &[Dist]) -> Vec<Dist> {
    let mut out: Vec<(String, hdrhistogram::Histogram<u64>)> = Vec::new();
    for iv in intervals
        .iter()
        .filter(|i| !have.iter().any(|d| d.key == i.tag))
    {
        match out.iter_mut().find(|(t, _)| *t == iv.tag) {
            Some((_, acc)) => {
                let _ = acc.add(&iv.hist);
            }
            None => {
                let mut acc = hdrhistogram::Histogram::new(iv.hist.sigfig())
                    .unwrap_or_else(|_| iv.hist.clone());
                acc.auto(true);
                let _ = acc.add(&iv.hist);
                out.push((iv.tag.clone(), acc));
            }
        }
    }
    out.into_iter()
        .map(|(tag, h)| Dist {
            counts: counts_of_histogram(&h, MICROS_PER_MS),
            from_hlog: true,
            ..Dist::from_values(&tag, &[])
        })
        .collect()
}

/// One line of a figure: legend name, colour index, distribution.
pub struct Line<'a> {
    /// Legend name (a file name in a comparison, else what the values are).
    pub name: &'a str,
    /// Colour class `s<colour % 8>`.
    pub colour: usize,
    /// The values.
    pub dist: &'a Dist,
}

/// The figure of one distribution over `lines` (all with the same key): a dot plot when
/// every line has fewer than [`DOT_PLOT_BELOW`] values, else a percentile plot. `missing`
/// names results without this distribution (said in the caption).
pub fn dist_figure(lines: &[Line<'_>], missing: &[&str], with_legend: bool) -> String {
    let Some(first) = lines.first().map(|l| l.dist) else {
        return String::new();
    };
    let lines: Vec<&Line<'_>> = lines.iter().filter(|l| total(&l.dist.counts) > 0).collect();
    let kind = format!("dist-{}", first.key);
    let dots = lines.iter().all(|l| total(&l.dist.counts) < DOT_PLOT_BELOW);
    let mut caption = caption(first, &lines, dots);
    let reference = first.reference.as_ref().filter(|(r, _)| {
        let hi = lines
            .iter()
            .filter_map(|l| l.dist.counts.last())
            .map(|c| c.0);
        r.is_finite() && *r <= hi.fold(f64::NEG_INFINITY, f64::max) * 1.5
    });
    if let (Some((r, label)), None) = (&first.reference, reference) {
        let _ = write!(
            caption,
            "; {label} {} {} is off-scale",
            fmt_num(*r, 1),
            first.unit
        );
    }
    if !missing.is_empty() {
        let _ = write!(caption, "; not in {}", missing.join(", "));
    }
    let svg = (!lines.is_empty())
        .then(|| {
            if dots {
                dot_plot(&kind, &lines, reference)
            } else {
                percentile_plot(&kind, &lines, reference)
            }
        })
        .flatten();
    let items: Vec<(String, String)> = lines
        .iter()
        .map(|l| (format!("s{}", l.colour % 8), l.name.to_string()))
        .collect();
    let legend = if with_legend {
        legend(&items)
    } else {
        String::new()
    };
    figure(svg, &caption, &legend)
}

fn caption(d: &Dist, lines: &[&Line<'_>], dots: bool) -> String {
    let ns: Vec<String> = lines
        .iter()
        .map(|l| total(&l.dist.counts).to_string())
        .collect();
    let lo = lines
        .iter()
        .filter_map(|l| l.dist.counts.first())
        .map(|c| c.0);
    let hi = lines
        .iter()
        .filter_map(|l| l.dist.counts.last())
        .map(|c| c.0);
    let mut s = match (lo.reduce(f64::min), hi.reduce(f64::max)) {
        (Some(lo), Some(hi)) => format!(
            "{}: {} value(s), {} – {} {}",
            d.what,
            ns.join(" / "),
            fmt_num(lo, 3),
            fmt_num(hi, 3),
            d.unit
        ),
        _ => return format!("{}: no values", d.what),
    };
    if dots {
        s.push_str(
            "; one dot per value (too few for a percentile curve), ticks at p50 / p90 / p99",
        );
    } else {
        s.push_str("; percentile curve, y on a nines scale (0, 50, 90, 99, 99.9 … evenly spaced so the tail gets room)");
        if lines.iter().any(|l| total(&l.dist.counts) < DOT_PLOT_BELOW) {
            let _ = write!(
                s,
                "; a result with fewer than {DOT_PLOT_BELOW} values: one dot per value"
            );
        }
    }
    if d.from_hlog {
        s.push_str("; from the .hlog histogram (3 significant digits)");
    }
    if !d.description.is_empty() {
        let _ = write!(s, ". {}", d.description);
    }
    if !d.origin.is_empty() {
        let _ = write!(s, "; measured from → to: {}", d.origin);
    }
    s
}

/// The first line's distribution and a value axis fitted to every line's values and the
/// reference mark, shared by the percentile and the dot plot.
fn value_axis<'a>(
    lines: &[&Line<'a>],
    reference: Option<&(f64, String)>,
) -> Option<(&'a Dist, Axis)> {
    let d = lines.first()?.dist;
    let values = lines.iter().flat_map(|l| l.dist.counts.iter().map(|c| c.0));
    let x = Axis::fit(
        &axis_title(&d.what, &d.unit),
        values.chain(reference.map(|r| r.0)),
        false,
    )?;
    Some((d, x))
}

fn percentile_plot(
    kind: &str,
    lines: &[&Line<'_>],
    reference: Option<&(f64, String)>,
) -> Option<String> {
    let (d, x) = value_axis(lines, reference)?;
    let top_y = lines
        .iter()
        .map(|l| nines(hazen(total(&l.dist.counts), total(&l.dist.counts))))
        .fold(0.0, f64::max);
    let top = nines_top(top_y);
    let y = Axis::with_ticks("percentile (nines scale)", 0.0, top, nines_ticks(top))?;
    let mut p = Plot::linear(kind, &d.what, x, y);
    if let Some((r, label)) = reference {
        p.vline(*r, &format!("{label} {} {}", fmt_num(*r, 1), d.unit), "");
    }
    for l in lines {
        let pts = cdf_points(&l.dist.counts, MAX_POINTS);
        if total(&l.dist.counts) < DOT_PLOT_BELOW {
            let tips: Vec<(f64, f64, String)> = pts
                .iter()
                .map(|&(v, q)| {
                    let tip = format!(
                        "{}: {} {} at p{}",
                        l.name,
                        fmt_num(v, 3),
                        d.unit,
                        fmt_num(q, 2)
                    );
                    (v, nines(q), tip)
                })
                .collect();
            p.points(&tips, l.colour, false);
        } else {
            let pts: Vec<(f64, f64)> = pts.iter().map(|&(v, q)| (v, nines(q))).collect();
            p.curve(&pts, l.colour, l.name, false);
        }
    }
    Some(p.finish())
}

fn dot_plot(kind: &str, lines: &[&Line<'_>], reference: Option<&(f64, String)>) -> Option<String> {
    let (d, x) = value_axis(lines, reference)?;
    let rows = RowAxis {
        labels: lines.iter().map(|l| l.name.to_string()).collect(),
        title: String::new(),
    };
    let mut p = Plot::dot_rows(kind, &d.what, x, rows);
    if let Some((r, label)) = reference {
        p.vline(*r, &format!("{label} {} {}", fmt_num(*r, 1), d.unit), "");
    }
    for (row, l) in lines.iter().enumerate() {
        let values = expand(&l.dist.counts);
        // Marks first, so the dots are drawn over their ticks.
        for (level, (name, v)) in marks(&values).into_iter().enumerate() {
            let tip = format!("{}: {name} = {} {}", l.name, fmt_num(v, 3), d.unit);
            p.row_mark(row, v, level, name, &tip);
        }
        let px: Vec<f64> = values.iter().map(|&v| p.x_px(v)).collect();
        for ((v, lane), n) in values.iter().zip(lanes(&px, 7.0)).zip(1..) {
            let tip = format!(
                "{}: {} {} (value {n} of {})",
                l.name,
                fmt_num(*v, 3),
                d.unit,
                values.len()
            );
            p.row_dot(row, *v, lane, l.colour, &tip);
        }
    }
    Some(p.finish())
}
