//! The exact merge of flat metric maps: which rule each metric name follows, and the
//! HdrHistogram side (read a `.hlog` into one histogram per tag; add histograms).
//!
//! Rules, first match wins, for a name present in the shards' `rtload.metrics`:
//! 1. a last segment (after `.` or `_`) `max`/`min`: the largest/smallest shard value.
//! 2. `<tag>.<stat>` where `<tag>` is a histogram in the shards' `.hlog`: percentiles
//!    (`p50`, `p90`, `p95`, `p99`, `p99.9`, `median`) from the merged histogram (never
//!    averaged); `mean` (also `<tag>_mean`) the count-weighted mean of the shard means
//!    (counts from the histograms); `count` from the merged histogram.
//! 3. counts: unit `count` in the workload's metric catalogue, a last segment `count`/`total`, a name starting `total_`/`num_`, or one of
//!    [`COUNTS`]: summed.
//! 4. equal in every shard (configuration echoes such as `chunk_deadline_ms`): kept.
//! 5. anything else (ratios, rates, legacy aliases): dropped, with the reason, never guessed.

use std::collections::{BTreeMap, BTreeSet};

use hdrhistogram::Histogram;

use super::MergeError;

/// Flat metric names that are plain counts of the run (summed across shards).
pub const COUNTS: &[&str] = &[
    "sessions",
    "completed",
    "failed",
    "failed_sessions",
    "chunks_received",
    "total_frames",
    "slo_violations",
    "underrun_count",
    "video_seconds",
    "errors",
    "timeouts",
];

/// One histogram per `.hlog` tag, in the log's integer unit.
pub type Hists = BTreeMap<String, Histogram<u64>>;

/// How one merged metric was obtained (recorded in the merged result).
#[derive(Debug, Clone, PartialEq)]
pub enum How {
    /// From the merged histogram of a `.hlog` tag.
    Histogram,
    /// Exact from the shard values (max, min, count-weighted mean).
    Exact,
    /// Summed.
    Summed,
    /// Equal in every shard, kept.
    Same,
    /// Left out, with the reason.
    Dropped(String),
}

/// Read every interval of a `.hlog` text and add them up per tag.
#[cfg(test)]
pub fn read_hlog(text: &[u8]) -> Result<Hists, String> {
    let mut out: Hists = BTreeMap::new();
    for iv in crate::util::histlog::read_intervals(text).map_err(|e| e.to_string())? {
        add(&mut out, &iv.tag, &iv.hist)?;
    }
    Ok(out)
}

/// Add `h` into `into[tag]` (HdrHistogram add: counts per bucket summed).
pub fn add(into: &mut Hists, tag: &str, h: &Histogram<u64>) -> Result<(), String> {
    match into.get_mut(tag) {
        Some(acc) => acc
            .add(h)
            .map_err(|e| format!("tag {tag}: cannot add histograms: {e:?}")),
        None => {
            // Decoded histograms have a fixed range; the accumulator must grow.
            let mut acc = Histogram::<u64>::new(h.sigfig())
                .map_err(|e| format!("tag {tag}: cannot create a histogram: {e:?}"))?;
            acc.auto(true);
            acc.add(h)
                .map_err(|e| format!("tag {tag}: cannot add histograms: {e:?}"))?;
            into.insert(tag.to_owned(), acc);
            Ok(())
        }
    }
}

/// Merge the shards' histograms tag by tag.
pub fn merge_hists(shards: &[Hists]) -> Result<Hists, MergeError> {
    let mut out = Hists::new();
    for h in shards {
        for (tag, hist) in h {
            add(&mut out, tag, hist).map_err(MergeError::Histogram)?;
        }
    }
    Ok(out)
}

/// The value of percentile `q` (0..=100) of `h`, in ms (the log records µs, ×1000).
pub fn percentile_ms(h: &Histogram<u64>, q: f64) -> f64 {
    h.value_at_quantile(q / 100.0) as f64 / crate::util::histlog::MICROS_PER_MS
}

/// Whether `name` is a percentile of something (`ttft_ms.p99`, `p99_ttft_ms`,
/// `median_e2el_ms`, `x.std`): such values are never carried over from the shards, even
/// when equal, unless a merged histogram gives them.
pub fn is_quantile_name(name: &str) -> bool {
    name.split(['.', '_'])
        .any(|seg| seg == "std" || quantile_of(seg).is_some())
}

fn quantile_of(stat: &str) -> Option<f64> {
    match stat {
        "median" => Some(50.0),
        _ => stat.strip_prefix('p')?.parse().ok(),
    }
}

/// Whether `name` is a plain count (rule 2 of the module docs).
pub fn is_count_name(name: &str) -> bool {
    let last = name.rsplit('.').next().unwrap_or(name);
    matches!(last, "count" | "total")
        || name.starts_with("total_")
        || name.starts_with("num_")
        || COUNTS.contains(&name)
}

/// Merge the shards' metric maps (`metrics[i]` with histograms `shard_hists[i]`) over the
/// merged histograms `merged`. Returns the merged map and how each name was obtained.
pub fn merge_metrics(
    metrics: &[BTreeMap<String, f64>],
    shard_hists: &[Hists],
    merged: &Hists,
    counts: &BTreeSet<String>,
) -> (BTreeMap<String, f64>, BTreeMap<String, How>) {
    let names: BTreeSet<&String> = metrics.iter().flat_map(|m| m.keys()).collect();
    let (mut out, mut how) = (BTreeMap::new(), BTreeMap::new());
    for name in names {
        let vals: Vec<Option<f64>> = metrics.iter().map(|m| m.get(name).copied()).collect();
        let (value, h) = if counts.contains(name.as_str())
            && !merged.contains_key(name.rsplit_once('.').map_or("", |p| p.0))
        {
            (Some(vals.iter().flatten().sum()), How::Summed)
        } else {
            merge_one(name, &vals, shard_hists, merged)
        };
        if let Some(v) = value {
            out.insert(name.clone(), v);
        }
        how.insert(name.clone(), h);
    }
    (out, how)
}

fn merge_one(
    name: &str,
    vals: &[Option<f64>],
    shard_hists: &[Hists],
    merged: &Hists,
) -> (Option<f64>, How) {
    let present: Vec<f64> = vals.iter().flatten().copied().collect();
    let last = name.rsplit(['.', '_']).next().unwrap_or(name);
    match last {
        "max" => return (present.iter().copied().reduce(f64::max), How::Exact),
        "min" => return (present.iter().copied().reduce(f64::min), How::Exact),
        _ => {}
    }
    if let Some(tag) = name.strip_suffix("_mean")
        && merged.contains_key(tag)
    {
        return (weighted_mean(tag, vals, shard_hists), How::Exact);
    }
    if let Some((tag, stat)) = name.rsplit_once('.')
        && let Some(m) = merged.get(tag)
    {
        if let Some(q) = quantile_of(stat) {
            return ((!m.is_empty()).then(|| percentile_ms(m, q)), How::Histogram);
        }
        match stat {
            "count" => return (Some(m.len() as f64), How::Histogram),
            "mean" => return (weighted_mean(tag, vals, shard_hists), How::Exact),
            _ => {}
        }
    }
    if is_count_name(name) {
        return (Some(present.iter().sum()), How::Summed);
    }
    if is_quantile_name(name) {
        return (
            None,
            How::Dropped("a percentile without a histogram in the .hlog: never averaged".into()),
        );
    }
    if present.len() == vals.len() && present.windows(2).all(|w| w[0] == w[1]) {
        return (present.first().copied(), How::Same);
    }
    (
        None,
        How::Dropped("differs between shards and has no exact merge rule".into()),
    )
}

/// `Σ meanᵢ·nᵢ / Σ nᵢ` with `nᵢ` the shard's histogram count for `tag`; shards without
/// values for the tag contribute nothing.
fn weighted_mean(tag: &str, vals: &[Option<f64>], shard_hists: &[Hists]) -> Option<f64> {
    let (mut sum, mut n) = (0.0, 0u64);
    for (v, h) in vals.iter().zip(shard_hists) {
        let count = h.get(tag).map_or(0, Histogram::len);
        if count == 0 {
            continue;
        }
        sum += (*v)? * count as f64;
        n += count;
    }
    (n > 0).then(|| sum / n as f64)
}
