//! The time-series panel, from a result's `.hlog` interval histograms: completions per
//! second, and the headline metric's p50 and p99, over run time (x = seconds since the
//! run start), so ramp-ups and degradation show. One line per result in a comparison.
//!
//! Missing is missing: a result without a `.hlog`, with an unreadable one or one without
//! intervals gets a one-line note instead of a line, and so does a log without the
//! completions tag ([`COMPLETED_TAG`]) or without a histogram of any headline metric.
//! Each value sits in the interval its workload logged it in (a duplex case's latencies
//! at the case's start, a completion at the sample's end).

use std::fmt::Write as _;

use serde_json::Value;

use super::super::IntervalLog;
use super::super::svg::{Axis, Plot, esc, fmt_num};
use super::super::timeseries::{Bucket, buckets, grid, has_tag};
use super::{axis_title, figure, legend};
use crate::util::histlog::{COMPLETED_TAG, Interval, MICROS_PER_MS};

/// At most this many points per line (longer runs get wider buckets).
pub const MAX_BUCKETS: usize = 600;
/// Lines with at most this many points get a marker (with a tooltip) per point.
const DOTS_UP_TO: usize = 60;

/// One result on the panel.
pub struct Run<'a> {
    /// Its file name.
    pub name: &'a str,
    /// Colour class `s<colour % 8>`.
    pub colour: usize,
    /// The result document (for its headline metrics).
    pub doc: &'a Value,
    /// Its interval log.
    pub log: &'a IntervalLog,
}

/// The panel for `runs`; `named` prefixes notes with the file name (comparisons).
pub fn panel(runs: &[Run<'_>], named: bool) -> String {
    let who = |r: &Run<'_>| {
        if named {
            format!("{}: ", r.name)
        } else {
            String::new()
        }
    };
    let mut notes = Vec::new();
    let mut usable: Vec<(&Run<'_>, &[Interval])> = Vec::new();
    for r in runs {
        match r.log {
            IntervalLog::Absent => notes.push(format!(
                "{}no interval log (.hlog) beside this result, so no time series",
                who(r)
            )),
            IntervalLog::Unreadable(why) => notes.push(format!(
                "{}its .hlog could not be read ({why}), so no time series",
                who(r)
            )),
            IntervalLog::Read(iv) if iv.is_empty() => notes.push(format!(
                "{}its .hlog has no intervals, so no time series",
                who(r)
            )),
            IntervalLog::Read(iv) => usable.push((r, iv)),
        }
    }
    let mut out = String::new();
    if let Some(x) = shared_axis(&usable) {
        out.push_str(&completions(&usable, &x, &who, &mut notes));
        out.push_str(&headline(&usable, &x, &who, &mut notes));
    }
    for n in notes {
        let _ = writeln!(out, "<p class=\"nodata\">Time series: {}.</p>", esc(&n));
    }
    out
}

/// The x axis every time-series chart of the panel shares: 0 to the longest run's end.
fn shared_axis(usable: &[(&Run<'_>, &[Interval])]) -> Option<Axis> {
    let end = usable
        .iter()
        .filter_map(|(_, iv)| grid(iv).map(|(slot, n)| slot * n as f64))
        .fold(0.0, f64::max);
    (end > 0.0)
        .then(|| Axis::fit("seconds since run start", [0.0, end], false))
        .flatten()
}

/// The headline tag of `doc` with a histogram in `iv`: the first headline metric (from
/// its catalogue) whose name before the first `.` is a tag of the log.
fn headline_tag(doc: &Value, iv: &[Interval]) -> Option<String> {
    let names: Vec<String> = doc
        .pointer("/rtload/metrics")
        .and_then(Value::as_object)
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let cat = crate::config::registry::result_catalogue(doc, &names)?;
    cat.headline()
        .iter()
        .map(|h| h.split('.').next().unwrap_or(h))
        .find(|t| has_tag(iv, t))
        .map(str::to_string)
}

/// A line through `pts` in `colour` (dashed when `dashed`), with a tooltip marker per
/// point when there are few points (hollow on a dashed line).
fn draw(p: &mut Plot, pts: &[(f64, f64)], colour: usize, name: &str, dashed: bool, unit: &str) {
    p.curve(pts, colour, name, dashed);
    if pts.len() <= DOTS_UP_TO {
        let tips: Vec<(f64, f64, String)> = pts
            .iter()
            .filter(|(_, y)| y.is_finite())
            .map(|&(x, y)| {
                let tip = format!("{name}: {} {unit} at {} s", fmt_num(y, 3), fmt_num(x, 1));
                (x, y, tip)
            })
            .collect();
        p.points(&tips, colour, dashed);
    }
}

type Who<'a> = dyn Fn(&Run<'_>) -> String + 'a;

fn completions(
    usable: &[(&Run<'_>, &[Interval])],
    x: &Axis,
    who: &Who<'_>,
    notes: &mut Vec<String>,
) -> String {
    let mut lines: Vec<(&Run<'_>, Vec<Bucket>)> = Vec::new();
    for (r, iv) in usable {
        if has_tag(iv, COMPLETED_TAG) {
            lines.push((r, buckets(iv, COMPLETED_TAG, MICROS_PER_MS, MAX_BUCKETS)));
        } else {
            notes.push(format!(
                "{}its .hlog has no completions ({COMPLETED_TAG}: no sample completed, or the log predates it)",
                who(r)
            ));
        }
    }
    if lines.is_empty() {
        return String::new();
    }
    let width = lines[0].1.first().map_or(1.0, |b| b.length_s);
    let rates = lines.iter().flat_map(|(_, b)| b.iter().map(Bucket::rate));
    let svg = Axis::fit("completions per second", rates.chain([0.0]), false).map(|y| {
        let mut p = Plot::linear("ts-completions", "completions per second", x.clone(), y);
        for (r, b) in &lines {
            let pts: Vec<(f64, f64)> = b.iter().map(|b| (b.mid_s(), b.rate())).collect();
            draw(&mut p, &pts, r.colour, r.name, false, "/s");
        }
        p.finish()
    });
    let caption = format!(
        "Completions per second over run time: samples that completed in each {} s interval of the .hlog (0 where none did); x = seconds since the run start",
        fmt_num(width, 3)
    );
    let items: Vec<(String, String)> = lines
        .iter()
        .map(|(r, _)| (format!("s{}", r.colour % 8), r.name.to_string()))
        .collect();
    figure(svg, &caption, &legend(&items))
}

fn headline(
    usable: &[(&Run<'_>, &[Interval])],
    x: &Axis,
    who: &Who<'_>,
    notes: &mut Vec<String>,
) -> String {
    let mut lines: Vec<(&Run<'_>, String, Vec<Bucket>)> = Vec::new();
    for (r, iv) in usable {
        match headline_tag(r.doc, iv) {
            Some(tag) => {
                let b = buckets(iv, &tag, MICROS_PER_MS, MAX_BUCKETS);
                lines.push((r, tag, b));
            }
            None => notes.push(format!(
                "{}no headline metric of this result has a histogram in its .hlog",
                who(r)
            )),
        }
    }
    let Some(tag) = lines.first().map(|l| l.1.clone()) else {
        return String::new();
    };
    lines.retain(|(r, t, _)| {
        let same = *t == tag;
        if !same {
            notes.push(format!(
                "{}its headline {t} is not {tag}, so it is not drawn",
                who(r)
            ));
        }
        same
    });
    let (what, unit) = tag
        .strip_suffix("_ms")
        .map_or((tag.as_str(), ""), |w| (w, "ms"));
    let ys = lines
        .iter()
        .flat_map(|(_, _, b)| b.iter().flat_map(|b| [b.p50, b.p99]).flatten());
    let svg = Axis::fit(&axis_title(what, unit), ys, false).map(|y| {
        let mut p = Plot::linear(&format!("ts-{tag}"), what, x.clone(), y);
        for (r, t, b) in &lines {
            let at = |f: fn(&Bucket) -> Option<f64>| -> Vec<(f64, f64)> {
                b.iter()
                    .map(|b| (b.mid_s(), f(b).unwrap_or(f64::NAN)))
                    .collect()
            };
            draw(
                &mut p,
                &at(|b| b.p50),
                r.colour,
                &format!("{} {t} p50", r.name),
                false,
                unit,
            );
            draw(
                &mut p,
                &at(|b| b.p99),
                r.colour,
                &format!("{} {t} p99", r.name),
                true,
                unit,
            );
        }
        p.finish()
    });
    let caption = format!(
        "Headline metric {tag} over run time: p50 (solid line, filled dots) and p99 (dashed line, rings) of the values logged in each .hlog interval; gaps: intervals without values; x = seconds since the run start"
    );
    let items: Vec<(String, String)> = lines
        .iter()
        .flat_map(|(r, t, _)| {
            let c = r.colour % 8;
            [
                (format!("s{c}"), format!("{} {t} p50", r.name)),
                (format!("s{c} dash"), format!("{} {t} p99", r.name)),
            ]
        })
        .collect();
    figure(svg, &caption, &legend(&items))
}
