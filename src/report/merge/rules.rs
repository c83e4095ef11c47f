//! The catalogue-driven merge: every metric by the rule its workload declared (carried
//! in each shard's `rtload.metrics_catalogue`, see [`MergeRule`]), over the shards' flat
//! metrics and raw values (`rtload.distributions`). Distribution statistics are recomputed
//! from the concatenated values with the one [`Summary`] rule, so a merged result's
//! percentiles are exactly those of one run over the same values; rates and ratios are
//! recomputed from their merged parts; nothing is averaged or guessed.

use std::collections::BTreeMap;

use crate::util::stats::Summary;
use crate::workload::catalogue::{Catalogue, MergeRule};

use super::How;

/// What the rules merge: each shard's flat metrics and raw values (shard order), and the
/// merged run's duration.
pub struct RuleInput<'a> {
    /// Each shard's `rtload.metrics`.
    pub metrics: &'a [BTreeMap<String, f64>],
    /// Each shard's `rtload.distributions`.
    pub values: &'a [BTreeMap<String, Vec<f64>>],
    /// Seconds from the earliest first release to the latest end.
    pub duration_s: Option<f64>,
}

/// The merged flat metrics, how each was obtained, and the merged raw values.
pub struct RuleOutput {
    /// Flat name → merged value.
    pub metrics: BTreeMap<String, f64>,
    /// Flat name → how.
    pub how: BTreeMap<String, How>,
    /// Distribution → the shards' values concatenated in shard order.
    pub values: BTreeMap<String, Vec<f64>>,
}

/// Whether `cat` carries merge rules (results written since the results model).
pub fn has_rules(cat: &Catalogue) -> bool {
    cat.metrics().iter().any(|m| m.merge.is_some())
}

/// Merge by `cat`'s rules.
pub fn merge(cat: &Catalogue, input: &RuleInput<'_>) -> RuleOutput {
    let mut values: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for d in cat.distributions() {
        let all: Vec<f64> = input
            .values
            .iter()
            .flat_map(|v| v.get(&d).into_iter().flatten().copied())
            .collect();
        values.insert(d, all);
    }
    let names: std::collections::BTreeSet<&String> =
        input.metrics.iter().flat_map(|m| m.keys()).collect();
    let mut out = RuleOutput {
        metrics: BTreeMap::new(),
        how: BTreeMap::new(),
        values,
    };
    // Plain rules first: the derived ones (rates, ratios, spreads) read their results.
    for pass in [false, true] {
        for name in &names {
            let Some(rule) = cat.get(name).and_then(|m| m.merge.as_ref()) else {
                if !pass {
                    out.how.insert(
                        (*name).clone(),
                        How::Dropped("not in the workload's metric catalogue".into()),
                    );
                }
                continue;
            };
            if derived(rule) == pass {
                let (v, how) = one(cat, name, rule, input, &out);
                if let Some(v) = v.filter(|v| v.is_finite()) {
                    out.metrics.insert((*name).clone(), v);
                }
                out.how.insert((*name).clone(), how);
            }
        }
    }
    out
}

fn derived(rule: &MergeRule) -> bool {
    matches!(
        rule,
        MergeRule::PerSecond(_) | MergeRule::Ratio(..) | MergeRule::Spread(_)
    )
}

fn one(
    cat: &Catalogue,
    name: &str,
    rule: &MergeRule,
    input: &RuleInput<'_>,
    done: &RuleOutput,
) -> (Option<f64>, How) {
    let present: Vec<f64> = input
        .metrics
        .iter()
        .filter_map(|m| m.get(name).copied())
        .collect();
    match rule {
        MergeRule::Distribution => (stat(cat, name, &done.values), How::Exact),
        MergeRule::Sum => (
            (!present.is_empty()).then(|| present.iter().sum()),
            How::Summed,
        ),
        MergeRule::Max => (present.iter().copied().reduce(f64::max), How::Exact),
        MergeRule::Min => (present.iter().copied().reduce(f64::min), How::Exact),
        MergeRule::Same => {
            if present.len() == input.metrics.len() && present.windows(2).all(|w| w[0] == w[1]) {
                (present.first().copied(), How::Same)
            } else {
                (None, How::Dropped("differs between shards".into()))
            }
        }
        MergeRule::Duration => (input.duration_s, How::Exact),
        MergeRule::PerSecond(of) => {
            let total = sum_of(of, done);
            let rate = total
                .zip(input.duration_s)
                .and_then(|(t, d)| crate::workload::catalogue::per_second(t, d));
            (rate, How::Exact)
        }
        MergeRule::Ratio(a, b) => {
            let v = value_of(a, done)
                .zip(value_of(b, done))
                .filter(|(_, d)| *d != 0.0)
                .map(|(n, d)| n / d);
            (v, How::Exact)
        }
        MergeRule::Spread(d) => {
            let v = done.values.get(d.as_str()).and_then(|v| {
                let lo = v.iter().copied().reduce(f64::min)?;
                Some(v.iter().copied().fold(lo, f64::max) - lo)
            });
            (v, How::Exact)
        }
        MergeRule::Unmergeable(why) => (None, How::Dropped(why.clone())),
    }
}

/// `name`'s statistic (`ttft_ms.p99` → p99 of `ttft_ms`) over the merged values.
fn stat(cat: &Catalogue, name: &str, values: &BTreeMap<String, Vec<f64>>) -> Option<f64> {
    let dist = cat.get(name)?.distribution.as_deref()?;
    let stat = name.strip_prefix(dist)?.strip_prefix('.')?;
    let percent = stat
        .strip_prefix('p')
        .and_then(|p| p.parse::<f64>().ok())
        .filter(|_| stat != "p")
        .map_or(Vec::new(), |p| vec![p]);
    let s = Summary::of(values.get(dist)?, &percent)?;
    s.stats()
        .into_iter()
        .find(|(k, _)| k == stat)
        .map(|(_, v)| v)
}

/// A merged metric, or the sum of a merged distribution's values.
fn sum_of(name: &str, done: &RuleOutput) -> Option<f64> {
    match done.values.get(name) {
        Some(v) => Some(v.iter().sum()),
        None => done.metrics.get(name).copied(),
    }
}

/// A merged metric (a statistic of a distribution included).
fn value_of(name: &str, done: &RuleOutput) -> Option<f64> {
    done.metrics.get(name).copied()
}
