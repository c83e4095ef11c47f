//! The numbers behind a percentile (CDF) plot and a dot plot: values or histogram
//! buckets in, plotted points out. Pure; no SVG.
//!
//! # The y axis: percentile on a "nines" scale
//!
//! y = −log10(1 − p/100), so p0 → 0, p50 → 0.3, p90 → 1, p99 → 2, p99.9 → 3. A realtime
//! user lives in the tail, and on a 0–100 axis p99 and p99.9 share the top 1% of the
//! chart; on the nines scale each further "nine" gets as much room as 0–90, while the
//! median stays readable. This is the scale HdrHistogram's percentile plots use.
//!
//! # Where each value sits
//!
//! Of `n` sorted values, the `k`-th (1-based) is drawn at the Hazen position
//! p = 100·(k − ½)/n. So the maximum is drawn (at 100·(1 − 1/2n), never at 100, which is
//! infinitely high on the nines scale), and the axis reaches only as far as `n` values
//! can show: its top is log10(2n) nines, the largest value's position. With fewer than [`DOT_PLOT_BELOW`] values a curve would pretend to a
//! resolution it does not have: those are drawn as dots (a dot plot with p50/p90/p99
//! marks when every series is that small, else dots on the percentile axes).

use hdrhistogram::Histogram;

/// Series with fewer values than this are drawn value by value, not as a curve.
pub const DOT_PLOT_BELOW: u64 = 30;

/// Points per curve: above this many values, ranks are picked evenly along the nines
/// scale (the tail keeps its detail; a million values do not make a megabyte of SVG).
pub const MAX_POINTS: usize = 400;

/// Sorted `(value, count)` pairs: the one form of raw values and histogram buckets.
pub type Counts = Vec<(f64, u64)>;

/// The finite values of `values`, sorted, equal values merged into one count.
pub fn counts_of_values(values: &[f64]) -> Counts {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    v.sort_by(f64::total_cmp);
    let mut out: Counts = Vec::new();
    for x in v {
        match out.last_mut() {
            Some((last, n)) if *last == x => *n += 1,
            _ => out.push((x, 1)),
        }
    }
    out
}

/// The recorded buckets of `h`, each at its highest equivalent value (what HdrHistogram
/// reports as a percentile, and what the merged results hold) divided by `scale` (1000
/// turns the log's µs into ms).
pub fn counts_of_histogram(h: &Histogram<u64>, scale: f64) -> Counts {
    h.iter_recorded()
        .map(|v| (v.value_iterated_to() as f64 / scale, v.count_at_value()))
        .collect()
}

/// How many values `counts` holds.
pub fn total(counts: &[(f64, u64)]) -> u64 {
    counts.iter().map(|c| c.1).sum()
}

/// Every value of `counts`, repeated by its count, ascending (for dot plots: only for
/// small counts).
pub fn expand(counts: &[(f64, u64)]) -> Vec<f64> {
    counts
        .iter()
        .flat_map(|&(v, n)| std::iter::repeat_n(v, n as usize))
        .collect()
}

/// The nines-scale position of percentile `p` (0 ≤ p < 100).
pub fn nines(p: f64) -> f64 {
    -(1.0 - p / 100.0).log10()
}

/// The percentile at which the `k`-th of `n` sorted values is drawn: 100·(k − ½)/n.
pub fn hazen(k: u64, n: u64) -> f64 {
    100.0 * (k as f64 - 0.5) / n as f64
}

/// The (value, percentile) points of the percentile curve of `counts`: every value when
/// there are at most `max_points`, else `max_points` ranks evenly spaced on the nines
/// scale, the smallest and the largest value always included.
pub fn cdf_points(counts: &[(f64, u64)], max_points: usize) -> Vec<(f64, f64)> {
    let n = total(counts);
    if n == 0 {
        return Vec::new();
    }
    let ranks: Vec<u64> = if n <= max_points as u64 || max_points < 2 {
        (1..=n).collect()
    } else {
        let (y0, y1) = (nines(hazen(1, n)), nines(hazen(n, n)));
        let mut r: Vec<u64> = (0..max_points)
            .map(|j| {
                let y = y0 + (y1 - y0) * j as f64 / (max_points - 1) as f64;
                let p = 100.0 * (1.0 - 10f64.powf(-y));
                ((p * n as f64 / 100.0 + 0.5).round() as u64).clamp(1, n)
            })
            .collect();
        r.dedup();
        r
    };
    let mut out = Vec::with_capacity(ranks.len());
    let (mut bucket, mut below) = (0usize, 0u64);
    for k in ranks {
        while below + counts[bucket].1 < k {
            below += counts[bucket].1;
            bucket += 1;
        }
        out.push((counts[bucket].0, hazen(k, n)));
    }
    out
}

/// The top of a nines axis for curves reaching `max_y`: `max_y` itself (the largest
/// value sits at the top edge, no empty band above it), at least 1 (p90).
pub fn nines_top(max_y: f64) -> f64 {
    if max_y.is_finite() {
        max_y.max(1.0)
    } else {
        1.0
    }
}

/// The ticks of a nines axis up to `top` nines (as far as it reaches): (position,
/// percentile label) for 0, 50, 90, 99, 99.9, …. The 0 tick is left out above 5 nines,
/// where it would touch the 50.
pub fn nines_ticks(top: f64) -> Vec<(f64, String)> {
    let mut t = Vec::new();
    if top <= 5.0 {
        t.push((0.0, "0".to_string()));
    }
    t.push((nines(50.0), "50".to_string()));
    let mut k = 1.0;
    while k <= top + 1e-9 {
        let decimals = (k as usize).saturating_sub(2);
        t.push((
            k,
            format!("{:.*}", decimals, 100.0 - 100.0 * 10f64.powf(-k)),
        ));
        k += 1.0;
    }
    t
}

/// The p50, p90 and p99 of sorted `values`, interpolated linearly between neighbours
/// (as the workloads' reports compute them). Empty when there is no value.
pub fn marks(sorted: &[f64]) -> Vec<(&'static str, f64)> {
    [("p50", 0.5), ("p90", 0.9), ("p99", 0.99)]
        .into_iter()
        .filter_map(|(name, f)| {
            crate::util::stats::percentile_sorted(sorted, f)
                .ok()
                .map(|v| (name, v))
        })
        .collect()
}

/// Stacking lanes for dots at ascending pixel positions `xs`: each dot takes the lowest
/// lane whose last dot is at least `gap` to its left, so equal or close values stack
/// instead of hiding one another.
pub fn lanes(xs: &[f64], gap: f64) -> Vec<usize> {
    let mut last: Vec<f64> = Vec::new();
    xs.iter()
        .map(|&x| match last.iter().position(|&l| x - l >= gap) {
            Some(i) => {
                last[i] = x;
                i
            }
            None => {
                last.push(x);
                last.len() - 1
            }
        })
        .collect()
}

#[cfg(test)]
#[path = "cdf_tests.rs"]
mod tests;
