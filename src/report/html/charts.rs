//! Which charts each recognised result document gets, and how its JSON maps onto them:
//! video (chunk cadence, session timeline), duplex (session timeline), sweep (headline
//! and throughput curves); every result's distributions as percentile plots or dot plots
//! ([`dist`]) and its `.hlog` over run time ([`overtime`]).
//!
//! Every chart is a `<figure>` with a `<figcaption>`; a chart without data becomes a short
//! "no data" note instead. Missing or malformed fields mean "no data", never an error.

pub mod dist;
mod duplex;
pub mod overtime;
mod sweep;
mod video;

use std::fmt::Write as _;

use serde_json::Value;

use super::svg::{ellipsize_middle, esc};
use crate::util::histlog::Interval;
pub use dist::Dist;

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

/// The distributions of a result: a video result's steady intervals and TTFC, every
/// `rtload.distributions` entry, then every tag of its interval log (`intervals`) the JSON
/// has no raw values for.
pub fn distributions(doc: &Value, video: bool, intervals: Option<&[Interval]>) -> Vec<Dist> {
    let mut out = if video {
        video::distributions(doc)
    } else {
        Vec::new()
    };
    out.extend(dist::json_dists(doc));
    if let Some(iv) = intervals {
        let more = dist::hlog_dists(iv, &out);
        out.extend(more);
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

/// "what (unit)", or just "what" without a unit.
fn axis_title(what: &str, unit: &str) -> String {
    if unit.is_empty() {
        what.to_string()
    } else {
        format!("{what} ({unit})")
    }
}
