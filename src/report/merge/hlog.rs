//! The merged `.hlog`: every shard's interval histograms put on one clock (the earliest
//! shard's `StartTime`) and added per 1-second interval and tag, so a merged result has
//! the same time series, completions per second and generator histograms as one run.

use std::collections::BTreeMap;

use hdrhistogram::Histogram;

use crate::util::histlog::{HistLogError, Interval, Series};

/// One shard's log as read: its `StartTime` (unix seconds) and its intervals.
#[derive(Debug, Clone, Default)]
pub struct ShardLog {
    /// The log's `StartTime`, when it has one.
    pub start_unix_s: Option<f64>,
    /// Its intervals, in file order.
    pub intervals: Vec<Interval>,
}

/// Write the merged log of `logs` to `out` (intervals of one second); `unit(tag)` names
/// each tag's unit for its header line.
pub fn write(
    out: &mut impl std::io::Write,
    logs: &[ShardLog],
    unit: &dyn Fn(&str) -> String,
) -> Result<(), HistLogError> {
    let base = logs
        .iter()
        .filter_map(|l| l.start_unix_s)
        .reduce(f64::min)
        .unwrap_or(0.0);
    let mut tags: Vec<String> = Vec::new();
    let mut intervals: BTreeMap<(u64, usize), Histogram<u64>> = BTreeMap::new();
    for log in logs {
        let shift = log.start_unix_s.map_or(0.0, |s| s - base);
        for iv in &log.intervals {
            let at = iv.start_s + shift;
            if !at.is_finite() || at < 0.0 {
                continue;
            }
            let ti = match tags.iter().position(|t| *t == iv.tag) {
                Some(i) => i,
                None => {
                    tags.push(iv.tag.clone());
                    tags.len() - 1
                }
            };
            // A shard's interval starting within second k of the merged run lands in k.
            let k = at.floor() as u64;
            let acc = match intervals.entry((k, ti)) {
                std::collections::btree_map::Entry::Occupied(e) => e.into_mut(),
                std::collections::btree_map::Entry::Vacant(e) => e.insert(empty()?),
            };
            acc.add(&iv.hist)
                .map_err(|e| HistLogError::Parse(format!("tag {}: {e:?}", iv.tag)))?;
        }
    }
    let heads: Vec<Series> = tags
        .iter()
        .map(|t| Series::thousandths(t.clone(), unit(t), Vec::new()))
        .collect();
    crate::util::histlog::write_bucketed(out, base, 1.0, &heads, &intervals, &[])
}

/// An auto-resizing accumulator (decoded histograms have a fixed range).
fn empty() -> Result<Histogram<u64>, HistLogError> {
    let mut h = Histogram::<u64>::new(crate::util::histlog::SIGNIFICANT_DIGITS)
        .map_err(|e| HistLogError::Parse(format!("cannot create a histogram: {e:?}")))?;
    h.auto(true);
    Ok(h)
}
