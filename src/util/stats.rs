//! Exact statistics on small samples: linear-interpolated percentiles, mean, sample and
//! population standard deviation.
//!
//! Where the reference clients define a statistic over a handful of values (a 16-chunk
//! rollout has nine steady intervals), it is computed exactly from the values here, with the
//! same arithmetic order as the reference so results agree to the last bit where possible.
//! Histograms are for large populations and live elsewhere.
//!
//! [`Summary`] is the one rule for a metric's statistics (count, mean, population std,
//! min, percentiles, max): every flat metric `<name>.<stat>` of every workload, and the
//! `vllm bench serve` aggregates, are read from it.

use thiserror::Error;

/// Why a statistic could not be computed.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum StatsError {
    /// The statistic needs at least one value.
    #[error("no values to summarize")]
    Empty,
    /// A percentile fraction outside `[0, 1]` (or NaN).
    #[error("percentile fraction must be within [0, 1], got {0}")]
    FractionOutOfRange(f64),
}

/// Linearly interpolated percentile of `values` (any order) at fraction `f` in `[0, 1]`.
///
/// Sorts a copy, then: one value → itself; `pos = f·(n−1)`, `lo = ⌊pos⌋`,
/// `hi = min(lo+1, n−1)`, `w = pos − lo`, result `x[lo] + (x[hi] − x[lo])·w`, computed
/// from the upper end when `w ≥ ½` as numpy's `percentile` (method `linear`) does, so
/// values agree with the Python references to the last bit. `[10, 20, 30, 40]` at 0.9 → 37.
pub fn percentile(values: &[f64], f: f64) -> Result<f64, StatsError> {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    percentile_sorted(&sorted, f)
}

/// [`percentile`] for values already sorted ascending (no copy; use it to take several
/// percentiles of one sample).
pub fn percentile_sorted(sorted: &[f64], f: f64) -> Result<f64, StatsError> {
    if sorted.is_empty() {
        return Err(StatsError::Empty);
    }
    if !(0.0..=1.0).contains(&f) {
        return Err(StatsError::FractionOutOfRange(f));
    }
    let n = sorted.len();
    if n == 1 {
        return Ok(sorted[0]);
    }
    let pos = f * (n - 1) as f64;
    // `pos` is finite and within [0, n−1], so the truncation is the floor and in range.
    let lo = (pos.floor() as usize).min(n - 1);
    let hi = (lo + 1).min(n - 1);
    let w = pos - lo as f64;
    Ok(lerp(sorted[lo], sorted[hi], w))
}

/// numpy's `_lerp`: `a + (b − a)·t`, or `b − (b − a)·(1 − t)` when `t ≥ ½`.
fn lerp(a: f64, b: f64, t: f64) -> f64 {
    let d = b - a;
    if t >= 0.5 {
        b - d * (1.0 - t)
    } else {
        a + d * t
    }
}

/// The standard percentiles of every distribution metric (in percent), as flat names
/// `p50`, `p90`, `p95`, `p99`.
pub const STANDARD_PERCENTILES: [f64; 4] = [50.0, 90.0, 95.0, 99.0];

/// One metric's statistics over its values: the one rule every output reads.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    /// Number of values.
    pub count: usize,
    /// Arithmetic mean (summed in input order).
    pub mean: f64,
    /// Population standard deviation (ddof = 0, numpy's default).
    pub std: f64,
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
    /// `(percent, value)` for each percentile asked for, in the order asked.
    pub percentiles: Vec<(f64, f64)>,
}

impl Summary {
    /// Summarize `values` (non-finite values must already be gone) at `percents` (each in
    /// `[0, 100]`); `None` for no values — missing, never zero.
    pub fn of(values: &[f64], percents: &[f64]) -> Option<Summary> {
        let mean = mean(values).ok()?;
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        let percentiles = percents
            .iter()
            .filter_map(|p| Some((*p, percentile_sorted(&sorted, p / 100.0).ok()?)))
            .collect();
        Some(Summary {
            count: values.len(),
            mean,
            std: population_std(values),
            min: sorted[0],
            max: sorted[sorted.len() - 1],
            percentiles,
        })
    }

    /// The value at `percent`, when it was asked for.
    pub fn percentile(&self, percent: f64) -> Option<f64> {
        self.percentiles
            .iter()
            .find(|(p, _)| *p == percent)
            .map(|(_, v)| *v)
    }

    /// Flat `(stat, value)` pairs: `count`, `mean`, `std`, `min`, `p<percent>` for each
    /// percentile (`p50`, `p99.9`), `max`.
    pub fn stats(&self) -> Vec<(String, f64)> {
        let mut out = vec![
            ("count".to_string(), self.count as f64),
            ("mean".to_string(), self.mean),
            ("std".to_string(), self.std),
            ("min".to_string(), self.min),
        ];
        out.extend(
            self.percentiles
                .iter()
                .map(|(p, v)| (percent_label(*p), *v)),
        );
        out.push(("max".to_string(), self.max));
        out
    }
}

/// `50.0` → `"p50"`, `99.9` → `"p99.9"`: the flat name of a percentile.
pub fn percent_label(p: f64) -> String {
    if p.fract() == 0.0 && p.abs() < 1e15 {
        format!("p{}", p as i64)
    } else {
        format!("p{p}")
    }
}

/// Arithmetic mean (sum in input order, divided by the count).
pub fn mean(values: &[f64]) -> Result<f64, StatsError> {
    if values.is_empty() {
        return Err(StatsError::Empty);
    }
    Ok(values.iter().sum::<f64>() / values.len() as f64)
}

/// Sample standard deviation (ddof = 1); 0 when there are fewer than two values.
pub fn sample_std(values: &[f64]) -> f64 {
    std_with_ddof(values, 1)
}

/// Population standard deviation (ddof = 0, numpy's default); 0 for an empty sample.
pub fn population_std(values: &[f64]) -> f64 {
    std_with_ddof(values, 0)
}

fn std_with_ddof(values: &[f64], ddof: usize) -> f64 {
    let n = values.len();
    if n <= ddof || n == 0 {
        return 0.0;
    }
    let m = values.iter().sum::<f64>() / n as f64;
    let ss: f64 = values.iter().map(|v| (v - m) * (v - m)).sum();
    (ss / (n - ddof) as f64).sqrt()
}

/// `{count, mean_ms, p99_ms, max_ms}` of millisecond values, or `null` when there are
/// none (missing, never zero). Used for the generator's own queue waits and lateness.
pub fn summary_ms_json(v: &[f64]) -> serde_json::Value {
    match (mean(v), percentile(v, 0.99)) {
        (Ok(m), Ok(p99)) => serde_json::json!({
            "count": v.len(),
            "mean_ms": m,
            "p99_ms": p99,
            "max_ms": v.iter().copied().fold(f64::MIN, f64::max),
        }),
        _ => serde_json::Value::Null,
    }
}

#[cfg(test)]
#[path = "stats_tests.rs"]
mod tests;
