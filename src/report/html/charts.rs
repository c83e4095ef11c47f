//! Which charts each recognised result document gets, and how its JSON maps onto them:
//! video (chunk cadence, latency histograms, session timeline), duplex (session timeline,
//! one histogram per distribution), any result with `rtload.distributions` (a histogram per
//! distribution) and
//! sweep (headline and throughput curves).
//!
//! Every chart is a `<figure>` with a `<figcaption>`; a chart without data becomes a short
//! "no data" note instead. Missing or malformed fields mean "no data", never an error.

mod duplex;
mod sweep;
mod video;

use std::fmt::Write as _;

use serde_json::Value;

use super::svg::{Axis, Plot, esc, fmt_num, histogram};

pub use duplex::duplex;
pub use sweep::sweep;
pub use video::video;

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

/// An HTML legend: one swatch per (CSS class, label); long lists are cut at 12 entries.
pub fn legend(items: &[(String, String)]) -> String {
    let mut s = String::from("<ul class=\"legend\">");
    for (class, label) in items.iter().take(12) {
        let _ = write!(
            s,
            "<li><span class=\"sw {}\"></span>{}</li>",
            esc(class),
            esc(label)
        );
    }
    if items.len() > 12 {
        let _ = write!(s, "<li>… {} more</li>", items.len() - 12);
    }
    s.push_str("</ul>");
    s
}

/// One histogram per `rtload.distributions` entry (name → array of numbers), sorted by
/// name; a name ending in `_ms` is in milliseconds. Any workload that publishes raw
/// distributions there gets these charts (duplex, realtime transcription, …).
pub fn distributions(doc: &Value) -> String {
    let dists: std::collections::BTreeMap<&String, &Value> = doc
        .pointer("/rtload/distributions")
        .and_then(Value::as_object)
        .map(|m| m.iter().collect())
        .unwrap_or_default();
    let mut out = String::new();
    for (i, (name, values)) in dists.into_iter().enumerate() {
        let values: Vec<f64> = values
            .as_array()
            .map_or(&[][..], Vec::as_slice)
            .iter()
            .map(|v| v.as_f64().unwrap_or(f64::NAN))
            .collect();
        let (what, unit) = match name.strip_suffix("_ms") {
            Some(base) => (base, "ms"),
            None => (name.as_str(), ""),
        };
        out.push_str(&histogram_figure(
            &format!("dist-{name}"),
            &values,
            what,
            unit,
            i,
            None,
        ));
    }
    out
}

/// A histogram figure of the finite values in `values` (`kind` becomes `data-chart`).
pub fn histogram_figure(
    kind: &str,
    values: &[f64],
    what: &str,
    unit: &str,
    series: usize,
    reference: Option<(f64, &str)>,
) -> String {
    let finite: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    let n = finite.len();
    let caption = match (
        finite.iter().copied().reduce(f64::min),
        finite.iter().copied().reduce(f64::max),
    ) {
        (Some(lo), Some(hi)) => format!(
            "{what}: histogram of {n} value(s), {} – {} {unit}",
            fmt_num(lo, 3),
            fmt_num(hi, 3)
        ),
        _ => format!("{what}: histogram"),
    };
    let bins = histogram(&finite);
    let max_count = bins.iter().map(|b| b.count).max().unwrap_or(0);
    let mut caption = caption;
    let mut edges: Vec<f64> = bins.iter().flat_map(|b| [b.lo, b.hi]).collect();
    if let Some((r, label)) = reference {
        let hi = finite.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        if r.is_finite() && r <= hi * 1.5 {
            edges.push(r);
        } else if r.is_finite() {
            let _ = write!(caption, "; {label} {} {unit} is off-scale", fmt_num(r, 1));
        }
    }
    let svg = (max_count > 0).then_some(()).and_then(|()| {
        let x = Axis::fit(&axis_title(what, unit), edges.iter().copied(), false)?;
        let y = Axis::fit("count", [0.0, max_count as f64], true)?;
        let mut p = Plot::linear(kind, what, x, y);
        p.bars(&bins, series, unit);
        if let Some((r, label)) = reference.filter(|(r, _)| edges.contains(r)) {
            p.vline(r, &format!("{label} {} {unit}", fmt_num(r, 1)), "");
        }
        Some(p.finish())
    });
    figure(svg, &caption, "")
}

/// "what (unit)", or just "what" without a unit.
fn axis_title(what: &str, unit: &str) -> String {
    if unit.is_empty() {
        what.to_string()
    } else {
        format!("{what} ({unit})")
    }
}
