//! The charts of a result, drawn from what the result itself declares: its
//! `rtload.charts` (the workload's chart declarations, see
//! [`crate::workload::catalogue::chart`]) over the generic blocks they read —
//! `rtload.distributions` ([`dist`]), `rtload.session_series` ([`series`]) and
//! `rtload.timeline` ([`timeline`]) — plus a plot of each `.hlog` tag the JSON has no
//! raw values for and the `.hlog` over run time ([`overtime`]); a sweep's curves
//! ([`sweep`]). No chart knows a workload.
//!
//! A result without `rtload.charts` (written before charts were declared) gets the
//! charts of the registered kind that wrote it (`config::registry`), else a
//! distribution plot per `rtload.distributions` entry.
//!
//! Every chart is a `<figure>` with a `<figcaption>`; a chart without data becomes a short
//! "no data" note instead. Missing or malformed fields mean "no data", never an error.

mod capacity;
pub mod dist;
pub mod overtime;
mod series;
mod soak;
mod sweep;
mod timeline;

use std::fmt::Write as _;

use serde_json::Value;

use super::svg::{ellipsize_middle, esc};
use crate::util::histlog::Interval;
use crate::workload::catalogue::chart::{self, Chart, Draw};
use crate::workload::catalogue::{Catalogue, MetricInfo};
pub use dist::Dist;

pub use capacity::capacity;
pub use soak::soak;
pub use sweep::sweep;

/// The finite number at `v[key]`, if any (JSON `null`, strings and NaN-as-null are `None`).
pub fn num(v: &Value, key: &str) -> Option<f64> {
    v.get(key).and_then(Value::as_f64).filter(|x| x.is_finite())
}

/// The array at `v[key]`, or an empty slice.
pub fn arr<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    v.get(key)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// The number at `v[key]`, NaN when missing (so it is skipped, never drawn as 0).
fn f(v: &Value, key: &str) -> f64 {
    num(v, key).unwrap_or(f64::NAN)
}

/// A figure around `svg`, or a "no data" note when `svg` is `None`.
pub fn figure(svg: Option<String>, caption: &str, legend: &str) -> String {
    match svg {
        Some(svg) => format!(
            "<figure>{svg}{legend}<figcaption>{}</figcaption></figure>\n",
            esc(caption)
        ),
        None => format!(
            "<figure class=\"empty\"><p class=\"nodata\">no data</p><figcaption>{}</figcaption></figure>\n",
            esc(caption)
        ),
    }
}

/// Legend labels longer than this are shortened in the middle (full text on hover).
pub const LEGEND_CHARS: usize = 48;

/// An HTML legend: one swatch per (CSS class, label); long lists are cut at 12 entries,
/// long labels shortened in the middle with the full label on hover.
pub fn legend(items: &[(String, String)]) -> String {
    let mut s = String::from("<ul class=\"legend\">");
    for (class, label) in items.iter().take(12) {
        let short = ellipsize_middle(label, LEGEND_CHARS);
        let title = if short == *label {
            String::new()
        } else {
            format!(" title=\"{}\"", esc(label))
        };
        let _ = write!(
            s,
            "<li{title}><span class=\"sw {}\"></span>{}</li>",
            esc(class),
            esc(&short)
        );
    }
    if items.len() > 12 {
        let _ = write!(s, "<li>… {} more</li>", items.len() - 12);
    }
    s.push_str("</ul>");
    s
}

/// What a result declares about itself: its catalogue (its own, or for an older file the
/// registered kind's) and every chart it gets.
pub struct Declared {
    /// The catalogue, when one could be found.
    pub catalogue: Option<Catalogue>,
    /// The charts, in drawing order.
    pub charts: Vec<Chart>,
}

impl Declared {
    /// Read `doc`'s declarations: its catalogue's charts, then a distribution plot of
    /// each `rtload.distributions` entry none of them plots.
    pub fn of(doc: &Value) -> Declared {
        let names: Vec<&str> = doc
            .pointer("/rtload/metrics")
            .and_then(Value::as_object)
            .map(|m| m.keys().map(String::as_str).collect())
            .unwrap_or_default();
        let catalogue = crate::config::registry::result_catalogue(doc, &names);
        let declared = catalogue
            .as_ref()
            .map(Catalogue::charts)
            .unwrap_or_default();
        let raw: Vec<String> = doc
            .pointer("/rtload/distributions")
            .and_then(Value::as_object)
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default();
        Declared {
            charts: chart::default_charts(&declared, &raw),
            catalogue,
        }
    }

    /// The catalogue entry of a statistic of distribution `name` (its unit, description
    /// and measurement origin), if the catalogue has one.
    pub fn dist_info(&self, name: &str) -> Option<&MetricInfo> {
        let c = self.catalogue.as_ref()?;
        c.metrics()
            .iter()
            .find(|m| m.distribution.as_deref() == Some(name) && !m.name.ends_with(".count"))
    }
}

/// The distributions of a result, ready to plot: one per distribution chart it declares
/// (raw values from `rtload.distributions`, or the `.hlog` histogram of the same name
/// when the JSON has none), then every tag of its interval log (`intervals`) the JSON has
/// no raw values for.
pub fn distributions(
    doc: &Value,
    declared: &Declared,
    intervals: Option<&[Interval]>,
) -> Vec<Dist> {
    let mut out: Vec<Dist> = declared
        .charts
        .iter()
        .filter_map(|c| match &c.draw {
            Draw::Distribution {
                distribution,
                reference,
            } => Some(dist::of_chart(
                doc,
                declared,
                c,
                distribution,
                reference.as_ref(),
            )),
            _ => None,
        })
        .collect();
    if let Some(iv) = intervals {
        let have: Vec<Dist> = out.iter().filter(|d| d.raw).cloned().collect();
        for h in dist::hlog_dists(iv, &have) {
            match out.iter_mut().find(|d| d.key == h.key) {
                Some(d) => {
                    d.counts = h.counts;
                    d.from_hlog = true;
                }
                None => out.push(h),
            }
        }
    }
    out
}

/// One figure per distribution of one result (no legend: the caption says what it is).
pub fn dist_figures(dists: &[Dist]) -> String {
    dists
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let line = dist::Line {
                name: &d.what,
                colour: i,
                dist: d,
            };
            dist::dist_figure(&[line], &[], false)
        })
        .collect()
}

/// The figures of `doc`'s charts other than distributions (session series, timelines),
/// in declared order.
pub fn other_figures(doc: &Value, declared: &Declared) -> String {
    let metric = |name: &str| doc.pointer("/rtload/metrics").and_then(|m| num(m, name));
    let rt = doc.get("rtload").unwrap_or(&Value::Null);
    declared
        .charts
        .iter()
        .map(|c| match &c.draw {
            Draw::Distribution { .. } => String::new(),
            Draw::SessionSeries {
                series,
                x,
                y,
                reference,
                band,
            } => {
                let reference = reference
                    .as_ref()
                    .and_then(|r| Some((metric(&r.metric)?, r)));
                let spec = series::Spec {
                    chart: c,
                    series,
                    x,
                    y,
                    reference,
                    band: band.as_deref(),
                };
                series::figure_of(&spec, arr(rt, chart::SESSION_SERIES_KEY))
            }
            Draw::Timeline { lanes, kinds } => {
                timeline::figure_of(c, lanes, kinds, arr(rt, chart::TIMELINE_KEY))
            }
        })
        .collect()
}

/// "what (unit)", or just "what" without a unit.
fn axis_title(what: &str, unit: &str) -> String {
    if unit.is_empty() {
        what.to_string()
    } else {
        format!("{what} ({unit})")
    }
}
