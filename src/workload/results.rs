//! The results model: every distribution metric of a run is recorded once, as the raw
//! values of its measured samples (warm-ups never enter), each stamped with the run time
//! it belongs to. Every output reads those values and nothing else:
//!
//! * the flat metrics `<name>.count/.mean/.std/.min/.p50/.p90/.p95/.p99/.max` (plus any
//!   percentile a workload is asked for) that thresholds, `compare`, sweeps and the
//!   terminal use, through the one [`Summary`] rule;
//! * the JSON result's `rtload.distributions` (`{name: [values]}`), which the HTML report
//!   draws and `rtload merge` concatenates, so merged statistics are exact;
//! * the `.hlog` interval log: one tag per metric, the same values as HdrHistograms per
//!   second of run (negative values, which HdrHistogram cannot hold, are counted in the
//!   tag's header instead).
//!
//! A workload fills one [`Recorded`] in its report; the runner writes it out.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::util::histlog::Series;
use crate::util::stats::{STANDARD_PERCENTILES, Summary};

/// The JSON key (under `rtload`) of the raw values.
pub const DISTRIBUTIONS_KEY: &str = "distributions";

/// One metric's values and when each was taken.
#[derive(Debug, Clone, Default, PartialEq)]
struct Values {
    unit: String,
    at_s: Vec<f64>,
    values: Vec<f64>,
    /// Per value, the age of its session when it was taken ([`Stamp::age_s`]; NaN: not
    /// stamped); empty while no value of the metric was stamped.
    age_s: Vec<f64>,
    /// Per value, its turn ([`Stamp::turn`]; `u32::MAX`: none), as `age_s`.
    turn: Vec<u32>,
}

/// Where in its session a value was taken: the session-age series and the per-turn
/// breakdown read these (`soak`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stamp {
    /// Seconds since the session opened.
    pub age_s: f64,
    /// The 0-based turn it belongs to, when the session speaks turns.
    pub turn: Option<u32>,
}

/// Every distribution metric of one run, recorded once.
#[derive(Debug, Clone, PartialEq)]
pub struct Recorded {
    percents: Vec<f64>,
    dists: BTreeMap<String, Values>,
}

impl Default for Recorded {
    fn default() -> Self {
        Self::new(&STANDARD_PERCENTILES)
    }
}

impl Recorded {
    /// An empty record whose flat metrics carry `percents` (in percent, e.g. `[50, 99.9]`).
    pub fn new(percents: &[f64]) -> Self {
        let mut percents = percents.to_vec();
        percents.sort_by(f64::total_cmp);
        percents.dedup();
        Self {
            percents,
            dists: BTreeMap::new(),
        }
    }

    /// An empty record at `percents` with every distribution family of `families`
    /// declared (so one without values is written as empty, never as zeros).
    pub fn declaring(families: &[crate::workload::catalogue::Family], percents: &[f64]) -> Self {
        let mut r = Self::new(percents);
        for f in families.iter().filter(|f| f.is_dist()) {
            r.declare(f.prefix, f.unit);
        }
        r
    }

    /// The percentiles the flat metrics carry.
    pub fn percents(&self) -> &[f64] {
        &self.percents
    }

    /// Declare metric `name` in `unit` (a metric declared but never given a value is
    /// written as an empty distribution: no statistics, never zeros).
    pub fn declare(&mut self, name: &str, unit: &str) {
        self.dists.entry(name.to_string()).or_default().unit = unit.to_string();
    }

    /// Record `value` of metric `name` at `at_s` seconds since the run start. Non-finite
    /// values are missing values: they are not recorded.
    pub fn push(&mut self, name: &str, at_s: f64, value: f64) {
        if !value.is_finite() {
            return;
        }
        let d = self.dists.entry(name.to_string()).or_default();
        d.at_s.push(at_s);
        d.values.push(value);
    }

    /// Record `value` of `name` at `at_s`, taken `stamp` into its session.
    pub fn push_stamped(&mut self, name: &str, at_s: f64, stamp: Stamp, value: f64) {
        if !value.is_finite() {
            return;
        }
        self.push(name, at_s, value);
        let d = self.dists.get_mut(name).expect("pushed");
        let n = d.values.len();
        d.age_s.resize(n - 1, f64::NAN);
        d.turn.resize(n - 1, u32::MAX);
        d.age_s.push(stamp.age_s);
        d.turn.push(stamp.turn.unwrap_or(u32::MAX));
    }

    /// The stamped values of every metric: `(name, stamp, value)` in recording order.
    pub fn stamped(&self) -> impl Iterator<Item = (&str, Stamp, f64)> {
        self.dists.iter().flat_map(|(name, d)| {
            (d.age_s.iter().zip(&d.turn).zip(&d.values))
                .filter(|((age, _), _)| age.is_finite())
                .map(move |((age, turn), v)| {
                    let turn = (*turn != u32::MAX).then_some(*turn);
                    let stamp = Stamp { age_s: *age, turn };
                    (name.as_str(), stamp, *v)
                })
        })
    }

    /// Record every value of `values` at `at_s`.
    pub fn extend(&mut self, name: &str, at_s: f64, values: impl IntoIterator<Item = f64>) {
        for v in values {
            self.push(name, at_s, v);
        }
    }

    /// The metric names, in order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.dists.keys().map(String::as_str)
    }

    /// The values of `name` in recording order (empty when it has none).
    pub fn values(&self, name: &str) -> &[f64] {
        self.dists.get(name).map_or(&[], |d| d.values.as_slice())
    }

    /// The statistics of `name` (`None` without values).
    pub fn summary(&self, name: &str) -> Option<Summary> {
        Summary::of(self.values(name), &self.percents)
    }

    /// Every metric's flat statistics.
    pub fn flat(&self) -> BTreeMap<String, f64> {
        let mut m = BTreeMap::new();
        for name in self.dists.keys() {
            if let Some(s) = self.summary(name) {
                put_stats(&mut m, name, &s);
            }
        }
        m
    }

    /// Every metric's flat statistics over its values taken in `[from_s, to_s)` of run
    /// time (a metric without values there has none: missing, never zero).
    pub fn flat_between(&self, from_s: f64, to_s: f64) -> BTreeMap<String, f64> {
        let mut m = BTreeMap::new();
        for (name, d) in &self.dists {
            let within: Vec<f64> = (d.at_s.iter().zip(&d.values))
                .filter(|(at, _)| (from_s..to_s).contains(*at))
                .map(|(_, v)| *v)
                .collect();
            if let Some(s) = Summary::of(&within, &self.percents) {
                put_stats(&mut m, name, &s);
            }
        }
        m
    }

    /// One `.hlog` series per metric (values as thousandths of their unit).
    pub fn series(&self) -> Vec<Series> {
        self.dists
            .iter()
            .map(|(name, d)| {
                let samples = d.at_s.iter().copied().zip(d.values.iter().copied());
                Series::thousandths(name.clone(), d.unit.clone(), samples.collect())
            })
            .collect()
    }

    /// `{name: [values]}` for the JSON result.
    pub fn to_json(&self) -> Value {
        Value::Object(
            self.dists
                .iter()
                .map(|(name, d)| (name.clone(), serde_json::json!(d.values)))
                .collect(),
        )
    }
}

/// Put `name`'s flat statistics (`name.count`, `name.mean`, …) into `m`.
pub fn put_stats(m: &mut BTreeMap<String, f64>, name: &str, s: &Summary) {
    for (stat, v) in s.stats() {
        if v.is_finite() {
            m.insert(format!("{name}.{stat}"), v);
        }
    }
}

/// The raw values a result document carries (`rtload.distributions`): name → finite
/// values; anything malformed is skipped.
pub fn values_of(doc: &Value) -> BTreeMap<String, Vec<f64>> {
    doc.get("rtload")
        .and_then(|r| r.get(DISTRIBUTIONS_KEY))
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| {
                    let vals = v.as_array()?.iter().filter_map(Value::as_f64);
                    Some((k.clone(), vals.filter(|x| x.is_finite()).collect()))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// What a written result must satisfy, checked on every result a run or a merge writes:
/// each distribution's statistics are ordered (`min ≤ p50 ≤ … ≤ p99 ≤ max`, the mean
/// within `[min, max]`) and the sample counts add up (`measured = completed + failed +
/// cancelled`, and a `completed` metric equals the completed count). Each broken one is
/// named with its values (empty when all hold).
pub fn invariant_violations(
    metrics: &BTreeMap<String, f64>,
    counts: Option<(usize, usize, usize, usize)>,
) -> Vec<String> {
    let mut out = Vec::new();
    let mut by_dist: BTreeMap<&str, Vec<(f64, &str, f64)>> = BTreeMap::new();
    for (name, v) in metrics {
        let Some((dist, stat)) = name.rsplit_once('.') else {
            continue;
        };
        let rank = match stat {
            "min" => Some(-1.0),
            "max" => Some(101.0),
            p => p.strip_prefix('p').and_then(|x| x.parse::<f64>().ok()),
        };
        if let Some(r) = rank {
            by_dist.entry(dist).or_default().push((r, stat, *v));
        }
    }
    for (dist, mut stats) in by_dist {
        stats.sort_by(|a, b| a.0.total_cmp(&b.0));
        for w in stats.windows(2) {
            if w[0].2 > w[1].2 {
                out.push(format!(
                    "{dist}: {} {} > {} {}",
                    w[0].1, w[0].2, w[1].1, w[1].2
                ));
            }
        }
        let get = |k: &str| metrics.get(&format!("{dist}.{k}")).copied();
        if let (Some(lo), Some(hi), Some(m)) = (get("min"), get("max"), get("mean"))
            && !(lo - 1e-9 * lo.abs() <= m && m <= hi + 1e-9 * hi.abs())
        {
            out.push(format!("{dist}: mean {m} outside [min {lo}, max {hi}]"));
        }
    }
    if let Some((measured, completed, failed, cancelled)) = counts {
        if measured != completed + failed + cancelled {
            out.push(format!(
                "sample counts: measured {measured} != completed {completed} + failed {failed} + cancelled {cancelled}"
            ));
        }
        if let Some(c) = metrics.get("completed").filter(|c| **c != completed as f64) {
            out.push(format!(
                "metric completed {c} != {completed} completed measured sessions"
            ));
        }
    }
    out
}

#[cfg(test)]
#[path = "results_tests.rs"]
mod tests;
