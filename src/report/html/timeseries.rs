//! The numbers behind the time-series panel: a result's `.hlog` interval histograms
//! turned into per-bucket counts and percentiles over run time. Pure; no SVG.
//!
//! The grid is the log's: slots of the shortest interval length in it (rtload writes
//! 1 s), from the run start to the end of the last interval of any tag. A slot where a
//! tag has no histogram has no values of it: its percentiles are missing (the line breaks
//! there, never drops to 0), its count is 0. For the completions tag that 0 is a true
//! zero, since every completed sample is logged. Runs longer than `max_buckets` slots
//! are drawn in wider buckets of whole slots, their histograms added (exact); the last
//! bucket ends with the run, so its rate is not diluted.

use hdrhistogram::Histogram;

use crate::util::histlog::Interval;

/// One bucket of a tag over run time.
#[derive(Debug, Clone, PartialEq)]
pub struct Bucket {
    /// Bucket start, seconds since the run start.
    pub start_s: f64,
    /// Bucket length, seconds.
    pub length_s: f64,
    /// Values of the tag in the bucket.
    pub count: u64,
    /// Median of the bucket's values (÷ scale), `None` without values.
    pub p50: Option<f64>,
    /// 99th percentile of the bucket's values (÷ scale), `None` without values.
    pub p99: Option<f64>,
}

impl Bucket {
    /// The bucket's middle, seconds since the run start (where its point is drawn).
    pub fn mid_s(&self) -> f64 {
        self.start_s + self.length_s / 2.0
    }

    /// Values per second in the bucket.
    pub fn rate(&self) -> f64 {
        self.count as f64 / self.length_s
    }
}

/// Whether any interval of `intervals` carries `tag`.
pub fn has_tag(intervals: &[Interval], tag: &str) -> bool {
    intervals.iter().any(|i| i.tag == tag)
}

/// The grid of `intervals`: (slot length in s, number of slots); `None` without an
/// interval of positive length.
pub fn grid(intervals: &[Interval]) -> Option<(f64, usize)> {
    let slot = intervals
        .iter()
        .map(|i| i.length_s)
        .filter(|l| l.is_finite() && *l > 0.0)
        .reduce(f64::min)?;
    let end = intervals
        .iter()
        .map(|i| i.start_s + i.length_s)
        .filter(|e| e.is_finite())
        .fold(0.0, f64::max);
    Some((slot, ((end / slot) - 1e-9).ceil().max(1.0) as usize))
}

/// The buckets of `tag` over the grid of `intervals` (every interval of the log, any
/// tag, sets the run's extent), at most `max_buckets` of them; values are divided by
/// `scale` (1000: the log's µs as ms). Empty when the log has no interval.
pub fn buckets(intervals: &[Interval], tag: &str, scale: f64, max_buckets: usize) -> Vec<Bucket> {
    let Some((slot, n)) = grid(intervals) else {
        return Vec::new();
    };
    let per = n.div_ceil(max_buckets.max(1));
    let width = slot * per as f64;
    let mut hists: Vec<Option<Histogram<u64>>> = vec![None; n.div_ceil(per)];
    for iv in intervals.iter().filter(|i| i.tag == tag) {
        let b = (((iv.start_s / slot) + 1e-9).floor().max(0.0) as usize / per).min(hists.len() - 1);
        match &mut hists[b] {
            Some(acc) => {
                // Auto-resizing accumulator: adding never fails on range.
                let _ = acc.add(&iv.hist);
            }
            None => hists[b] = Some(accumulator(&iv.hist)),
        }
    }
    hists
        .iter()
        .enumerate()
        .map(|(b, h)| {
            let q = |f: f64| {
                h.as_ref()
                    .filter(|h| !h.is_empty())
                    .map(|h| h.value_at_quantile(f) as f64 / scale)
            };
            let start_s = b as f64 * width;
            Bucket {
                start_s,
                // The last bucket ends with the run.
                length_s: width.min(n as f64 * slot - start_s),
                count: h.as_ref().map_or(0, Histogram::len),
                p50: q(0.5),
                p99: q(0.99),
            }
        })
        .collect()
}

/// An auto-resizing copy of `h` (decoded histograms have a fixed range).
fn accumulator(h: &Histogram<u64>) -> Histogram<u64> {
    let mut acc = Histogram::<u64>::new(h.sigfig()).unwrap_or_else(|_| h.clone());
    acc.auto(true);
    let _ = acc.add(h);
    acc
}

#[cfg(test)]
#[path = "timeseries_tests.rs"]
mod tests;
