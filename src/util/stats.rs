//! Exact statistics on small samples: linear-interpolated percentiles, mean, sample and
//! population standard deviation.
//!
//! Where the reference clients define a statistic over a handful of values (a 16-chunk
//! rollout has nine steady intervals), it is computed exactly from the values here, with the
//! same arithmetic order as the reference so results agree to the last bit where possible.
//! Histograms are for large populations and live elsewhere.

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
/// `hi = min(lo+1, n−1)`, `w = pos − lo`, result `x[lo]·(1−w) + x[hi]·w`.
/// `[10, 20, 30, 40]` at 0.9 → 37.
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
    Ok(sorted[lo] * (1.0 - w) + sorted[hi] * w)
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
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn spec_percentile_vector() {
        let v = [40.0, 10.0, 30.0, 20.0];
        let cases = [
            (0.0, 10.0),
            (0.5, 25.0),
            (0.9, 37.0),
            (0.95, 38.5),
            (0.99, 39.7),
            (1.0, 40.0),
        ];
        for (f, want) in cases {
            let got = percentile(&v, f).unwrap();
            assert!(close(got, want), "p{f}: got {got}, want {want}");
        }
    }

    #[test]
    fn single_value_is_itself() {
        assert_eq!(percentile(&[5.0], 0.99).unwrap(), 5.0);
        assert_eq!(percentile(&[5.0], 0.0).unwrap(), 5.0);
    }

    #[test]
    fn percentile_errors() {
        assert_eq!(percentile(&[], 0.5), Err(StatsError::Empty));
        assert_eq!(
            percentile(&[1.0], 1.5),
            Err(StatsError::FractionOutOfRange(1.5))
        );
        assert!(matches!(
            percentile(&[1.0, 2.0], -0.1),
            Err(StatsError::FractionOutOfRange(_))
        ));
        assert!(matches!(
            percentile(&[1.0, 2.0], f64::NAN),
            Err(StatsError::FractionOutOfRange(_))
        ));
    }

    #[test]
    fn sample_std_vector() {
        let v = [10.0, 20.0, 30.0, 40.0];
        assert!((sample_std(&v) - 12.909_944_487_358_056).abs() < 1e-9);
        assert_eq!(sample_std(&[3.0]), 0.0);
        assert_eq!(sample_std(&[]), 0.0);
    }

    #[test]
    fn population_std_and_mean() {
        let v = [10.0, 20.0, 30.0, 40.0];
        assert!((population_std(&v) - 11.180_339_887_498_949).abs() < 1e-9);
        assert_eq!(population_std(&[7.0]), 0.0);
        assert_eq!(population_std(&[]), 0.0);
        assert_eq!(mean(&v).unwrap(), 25.0);
        assert_eq!(mean(&[]), Err(StatsError::Empty));
    }
}
