//! Chart axes: a linear axis fitted to data with nice ticks, an axis with given ticks and
//! labels (the nines scale of a percentile plot), and the row axis of timelines and dot
//! plots.

use super::{fmt_num, nice_ticks, step_decimals};

/// A linear axis: domain, tick values with their labels, and a title.
#[derive(Debug, Clone)]
pub struct Axis {
    pub(super) lo: f64,
    pub(super) hi: f64,
    pub(super) ticks: Vec<(f64, String)>,
    pub(super) title: String,
}

impl Axis {
    /// An axis covering the finite values of `values` (padded to nice ticks). `None` when
    /// no value is finite.
    pub fn fit(title: &str, values: impl IntoIterator<Item = f64>, integer: bool) -> Option<Axis> {
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        for v in values.into_iter().filter(|v| v.is_finite()) {
            lo = lo.min(v);
            hi = hi.max(v);
        }
        if !lo.is_finite() {
            return None;
        }
        let mut ticks = nice_ticks(lo, hi, 6);
        if integer && ticks.len() >= 2 && ticks[1] - ticks[0] < 1.0 {
            ticks = nice_ticks(lo.floor(), hi.ceil().max(lo.floor() + 1.0), 6);
            ticks.retain(|t| t.fract() == 0.0);
        }
        let (first, last) = (*ticks.first()?, *ticks.last()?);
        let decimals = step_decimals(ticks.get(1).map_or(1.0, |t| t - first));
        Some(Axis {
            lo: first,
            hi: last,
            ticks: ticks.iter().map(|&t| (t, fmt_num(t, decimals))).collect(),
            title: title.to_string(),
        })
    }

    /// An axis over `[lo, hi]` with exactly the given (position, label) ticks; `None`
    /// unless `lo < hi`, both finite.
    pub fn with_ticks(title: &str, lo: f64, hi: f64, ticks: Vec<(f64, String)>) -> Option<Axis> {
        (lo.is_finite() && hi.is_finite() && lo < hi).then(|| Axis {
            lo,
            hi,
            ticks,
            title: title.to_string(),
        })
    }
}

/// The row axis of a [`super::Plot::rows`] chart.
#[derive(Debug, Clone)]
pub struct RowAxis {
    /// Row labels, top to bottom.
    pub labels: Vec<String>,
    /// Axis title.
    pub title: String,
}
