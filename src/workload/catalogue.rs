//! The metric catalogue: what each flat metric of a workload means (unit, which way is
//! better, headline or not, one line of description), declared once by the workload and
//! read by every consumer: thresholds and sweep headline checks (names, suggestions),
//! `compare` (directions), suite/sweep tables (headline columns), the HTML report (units
//! and directions) and `check`. A workload may also declare its own unit of work
//! ([`UnitRate`]: the metric carrying units per second and its label, e.g. `chunks/s`),
//! which a sweep shows next to completed sessions/s.
//!
//! A workload declares [`Family`] rows (a name prefix plus its unit, direction and
//! description) and the concrete names its report can produce; [`Catalogue::build`] joins
//! them into one [`MetricInfo`] per concrete name. The catalogue travels inside every
//! result file as `rtload.metrics_catalogue` (see [`Catalogue::to_json`]), so tools that
//! read result files work for any workload, including one defined outside this crate.
//! So do the workload's charts ([`chart`], `rtload.charts`): what the HTML report draws.

pub mod chart;

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use chart::Chart;

/// Which way a metric improves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// Latencies, RTF (cost), failures, stalls, lateness.
    Lower,
    /// Throughput, goodput, RTFx, SLO attainment, completions.
    Higher,
    /// Counts and configuration echoes: never a regression.
    NotAScore,
}

/// How `rtload merge` combines a metric over the shards of one run. Declared by the
/// workload with each family and carried in every result's catalogue (as
/// [`MergeRule`]), so merge needs no workload names and never guesses.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Merge<'a> {
    /// A distribution statistic (`name.p99`, `name.mean`, …): recomputed from the
    /// concatenated raw values of the shards (`rtload.distributions`), so exact.
    Distribution,
    /// Summed (counts, totals).
    Sum,
    /// The largest shard value.
    Max,
    /// The smallest shard value.
    Min,
    /// The same in every shard (a configuration echo); left out when they differ.
    Same,
    /// The merged run's duration, seconds (first measured release → last measured end).
    Duration,
    /// This metric's sum (a summed metric, or the sum of a distribution's values) per
    /// second of the merged run.
    PerSecond(&'a str),
    /// The largest minus the smallest value of this distribution (per-session values).
    Spread(&'a str),
    /// The merged value of the first metric divided by the second's (summed metrics, or
    /// a distribution's `name.count`).
    Ratio(&'a str, &'a str),
    /// No exact rule: left out of a merged result, with this reason.
    Unmergeable(&'a str),
}

/// [`Merge`] as a result file carries it (`merge` of each catalogue entry).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MergeRule {
    /// See [`Merge::Distribution`].
    Distribution,
    /// See [`Merge::Sum`].
    Sum,
    /// See [`Merge::Max`].
    Max,
    /// See [`Merge::Min`].
    Min,
    /// See [`Merge::Same`].
    Same,
    /// See [`Merge::Duration`].
    Duration,
    /// See [`Merge::PerSecond`].
    PerSecond(String),
    /// See [`Merge::Spread`].
    Spread(String),
    /// See [`Merge::Ratio`].
    Ratio(String, String),
    /// See [`Merge::Unmergeable`].
    Unmergeable(String),
}

impl From<Merge<'_>> for MergeRule {
    fn from(m: Merge<'_>) -> Self {
        match m {
            Merge::Distribution => MergeRule::Distribution,
            Merge::Sum => MergeRule::Sum,
            Merge::Max => MergeRule::Max,
            Merge::Min => MergeRule::Min,
            Merge::Same => MergeRule::Same,
            Merge::Duration => MergeRule::Duration,
            Merge::PerSecond(x) => MergeRule::PerSecond(x.into()),
            Merge::Spread(x) => MergeRule::Spread(x.into()),
            Merge::Ratio(a, b) => MergeRule::Ratio(a.into(), b.into()),
            Merge::Unmergeable(why) => MergeRule::Unmergeable(why.into()),
        }
    }
}

/// A group of metrics sharing one meaning: the exact name `prefix`, or, for a
/// distribution, `prefix.<stat>` (e.g. `ttfc_ms.p99`). A `.count` stat is always
/// [`Direction::NotAScore`]. Workloads keep static tables (`Family<'static>`); a scripted
/// workload borrows its declared names.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Family<'a> {
    /// The name, or the part before the `.<stat>` suffix.
    pub prefix: &'a str,
    /// Unit (`ms`, `s`, `ratio`, `count`, `req/s`, …; `""` for dimensionless).
    pub unit: &'a str,
    /// Which way is better.
    pub direction: Direction,
    /// One line for people.
    pub description: &'a str,
    /// Where the measurement starts and ends ("first audio append's intended send →
    /// first non-empty `transcription.delta` received"), or how the number is made.
    pub origin: &'a str,
    /// How merge combines it ([`Merge::Distribution`] makes it a distribution family).
    pub merge: Merge<'a>,
}

impl<'a> Family<'a> {
    /// A scalar family row with no merge rule yet (const, so workloads can keep a static
    /// table; chain [`Family::dist`] / [`Family::merged`] and [`Family::origin`]).
    pub const fn new(
        prefix: &'a str,
        unit: &'a str,
        direction: Direction,
        description: &'a str,
    ) -> Self {
        Self {
            prefix,
            unit,
            direction,
            description,
            origin: "",
            merge: Merge::Unmergeable("no merge rule declared"),
        }
    }

    /// The same family as a distribution: its values are recorded (`super::results`)
    /// and it is published as `prefix.<stat>`.
    pub const fn dist(self) -> Self {
        self.merged(Merge::Distribution)
    }

    /// The same family with merge rule `m`.
    pub const fn merged(mut self, m: Merge<'a>) -> Self {
        self.merge = m;
        self
    }

    /// The same family with its measurement origin.
    pub const fn origin(mut self, origin: &'a str) -> Self {
        self.origin = origin;
        self
    }

    /// Whether this family is a distribution.
    pub fn is_dist(&self) -> bool {
        self.merge == Merge::Distribution
    }

    /// True when `name` is `prefix` or `prefix.<anything>`.
    pub fn covers(&self, name: &str) -> bool {
        name.strip_prefix(self.prefix)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('.'))
    }
}

/// One concrete metric as consumers see it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricInfo {
    /// The flat name (`ttfc_ms.p99`).
    pub name: String,
    /// Unit (see [`Family::unit`]).
    pub unit: String,
    /// Which way is better.
    pub direction: Direction,
    /// Shown in summary rows and featured in sweeps.
    pub headline: bool,
    /// One line for people.
    pub description: String,
    /// Where the measurement starts and ends (see [`Family::origin`]).
    #[serde(default, rename = "measurement_origin")]
    pub origin: String,
    /// How `rtload merge` combines it (absent in files written before merge rules:
    /// read by merge's fallback rules).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merge: Option<MergeRule>,
    /// The distribution it is a statistic of (`ttft_ms` for `ttft_ms.p99`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distribution: Option<String>,
}

/// A workload's own unit of work as a load tester reads throughput: the flat metric that
/// carries it as units per second of run (`chunk_throughput`) and the label a sweep's
/// column and panel show (`chunks/s`). Written into results as `rtload.unit_rate`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnitRate {
    /// The flat metric name (declared by the catalogue, direction higher-is-better).
    pub metric: String,
    /// The unit label, per second (`chunks/s`, `audio s/s`).
    pub unit: String,
}

/// `units` per second of a run lasting `duration_s`: `None` (missing, never zero) when the
/// duration is not positive or either number is not finite.
pub fn per_second(units: f64, duration_s: f64) -> Option<f64> {
    (units.is_finite() && duration_s.is_finite() && duration_s > 0.0).then(|| units / duration_s)
}

/// Every metric a workload (configured as it is) can report, in name order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Catalogue {
    metrics: Vec<MetricInfo>,
    headline: Vec<String>,
    unit_rate: Option<UnitRate>,
    aliases: std::collections::BTreeMap<String, String>,
    charts: Option<Vec<Chart>>,
}

/// Names a workload produced that no family declares (a bug in the workload's table).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("metrics without a catalogue family: {}", .0.join(", "))]
pub struct Undeclared(pub Vec<String>);

impl Catalogue {
    /// Join concrete `names` with their `families` (the longest covering prefix wins);
    /// `headline` lists the featured names in display order. A name no family covers is
    /// kept as [`Direction::NotAScore`] with no unit; [`Catalogue::check`] reports it.
    pub fn build<S: Into<String>>(
        names: impl IntoIterator<Item = S>,
        families: &[Family],
        headline: &[&str],
    ) -> Self {
        let mut metrics: Vec<MetricInfo> = names
            .into_iter()
            .map(|n| info(n.into(), families, headline))
            .collect();
        metrics.sort_by(|a, b| a.name.cmp(&b.name));
        metrics.dedup_by(|a, b| a.name == b.name);
        let headline = headline
            .iter()
            .filter(|h| metrics.iter().any(|m| m.name == **h))
            .map(|h| (*h).to_string())
            .collect();
        Self {
            metrics,
            headline,
            unit_rate: None,
            aliases: Default::default(),
            charts: None,
        }
    }

    /// The catalogue of a kind whose metrics are declared at run time (scripted,
    /// replay): `families` at the standard percentiles, the headline metric's mean and
    /// p99 then `more` as the headline, the session timeline as its chart.
    pub fn declared(families: &[Family], headline: &str, more: &[&str]) -> Self {
        let heads = [format!("{headline}.mean"), format!("{headline}.p99")];
        let mut head: Vec<&str> = heads.iter().map(String::as_str).collect();
        head.extend(more);
        Self::of(families, &crate::util::stats::STANDARD_PERCENTILES, &head)
            .with_charts(chart::session_timeline())
    }

    /// Every name `families` publish: each distribution family as
    /// `prefix.{count,mean,std,min,p<percent>…,max}` (the `super::results` stats at
    /// `percents`), each scalar family as `prefix`.
    pub fn of(families: &[Family], percents: &[f64], headline: &[&str]) -> Self {
        let stats: Vec<String> = crate::util::stats::Summary {
            count: 0,
            mean: 0.0,
            std: 0.0,
            min: 0.0,
            max: 0.0,
            percentiles: percents.iter().map(|p| (*p, 0.0)).collect(),
        }
        .stats()
        .into_iter()
        .map(|(s, _)| s)
        .collect();
        let names = families.iter().flat_map(|f| {
            if f.is_dist() {
                stats.iter().map(|s| format!("{}.{s}", f.prefix)).collect()
            } else {
                vec![f.prefix.to_string()]
            }
        });
        Self::build(names.collect::<Vec<_>>(), families, headline)
    }

    /// The catalogue of a result file written without one: `names` (its metrics) read
    /// with `families`, where a name no family covers but one of `aliases` maps takes
    /// the meaning of the metric it stands for.
    pub fn reading(
        names: &[&str],
        families: &[Family],
        headline: &[&str],
        aliases: &[(&str, &str)],
    ) -> Self {
        let mut c = Self::build(names.iter().copied(), families, headline);
        for m in &mut c.metrics {
            if families.iter().any(|f| f.covers(&m.name)) {
                continue;
            }
            if let Some((_, target)) = aliases.iter().find(|(a, _)| *a == m.name) {
                let meant = info((*target).to_string(), families, &[]);
                *m = MetricInfo {
                    name: std::mem::take(&mut m.name),
                    headline: m.headline,
                    ..meant
                };
            }
        }
        c.with_aliases(aliases)
    }

    /// Accept each `(legacy, name)` of `aliases`: thresholds and `compare` read the
    /// legacy name as `name` (written as `rtload.metric_aliases`). An alias of a name
    /// this catalogue does not declare is ignored.
    pub fn with_aliases(mut self, aliases: &[(&str, &str)]) -> Self {
        for (legacy, name) in aliases {
            if self.get(name).is_some() {
                self.aliases.insert((*legacy).into(), (*name).into());
            }
        }
        self
    }

    /// The declared name `name` stands for: itself, or what its alias points at.
    pub fn resolve<'a>(&'a self, name: &'a str) -> &'a str {
        self.aliases.get(name).map_or(name, String::as_str)
    }

    /// `metrics` with every alias of a present metric added (for threshold and
    /// comparison lookups; never written back as a second figure).
    pub fn with_alias_values(
        &self,
        metrics: &std::collections::BTreeMap<String, f64>,
    ) -> std::collections::BTreeMap<String, f64> {
        let mut m = metrics.clone();
        for (legacy, name) in &self.aliases {
            if let Some(v) = metrics.get(name) {
                m.entry(legacy.clone()).or_insert(*v);
            }
        }
        m
    }

    /// Every name thresholds and `compare` accept: the declared names, then the aliases.
    pub fn accepted_names(&self) -> Vec<String> {
        let mut n = self.names();
        n.extend(self.aliases.keys().cloned());
        n
    }

    /// The legacy names and what they stand for.
    pub fn aliases(&self) -> &std::collections::BTreeMap<String, String> {
        &self.aliases
    }

    /// The distribution families' names (what [`super::results::Recorded`] holds).
    pub fn distributions(&self) -> Vec<String> {
        let mut d: Vec<String> = self
            .metrics
            .iter()
            .filter_map(|m| m.distribution.clone())
            .collect();
        d.dedup();
        d
    }

    /// Declare the workload's unit of work: `metric` (a rate per second of run) shown as
    /// `unit`. A metric this catalogue does not declare is not a unit rate (ignored).
    pub fn with_unit_rate(mut self, metric: &str, unit: &str) -> Self {
        self.unit_rate = self.get(metric).is_some().then(|| UnitRate {
            metric: metric.to_string(),
            unit: unit.to_string(),
        });
        self
    }

    /// The workload's unit of work, if it declares one.
    pub fn unit_rate(&self) -> Option<&UnitRate> {
        self.unit_rate.as_ref()
    }

    /// Every concrete name is covered by a family of `families`.
    pub fn check(&self, families: &[Family]) -> Result<(), Undeclared> {
        let missing: Vec<String> = self
            .metrics
            .iter()
            .filter(|m| !families.iter().any(|f| f.covers(&m.name)))
            .map(|m| m.name.clone())
            .collect();
        if missing.is_empty() {
            Ok(())
        } else {
            Err(Undeclared(missing))
        }
    }

    /// Every metric, in name order.
    pub fn metrics(&self) -> &[MetricInfo] {
        &self.metrics
    }

    /// Every concrete name, in name order.
    pub fn names(&self) -> Vec<String> {
        self.metrics.iter().map(|m| m.name.clone()).collect()
    }

    /// The headline names, in display order.
    pub fn headline(&self) -> &[String] {
        &self.headline
    }

    /// The entry for `name`, if declared.
    pub fn get(&self, name: &str) -> Option<&MetricInfo> {
        self.metrics
            .binary_search_by(|m| m.name.as_str().cmp(name))
            .ok()
            .map(|i| &self.metrics[i])
    }

    /// Which way `name` improves; undeclared names are never a score.
    pub fn direction(&self, name: &str) -> Direction {
        self.get(name).map_or(Direction::NotAScore, |m| m.direction)
    }

    /// Add `other`'s entries that this catalogue lacks (e.g. NEW's over BASE's).
    pub fn merge(&mut self, other: &Catalogue) {
        for m in &other.metrics {
            if self.get(&m.name).is_none() {
                self.metrics.push(m.clone());
            }
        }
        self.metrics.sort_by(|a, b| a.name.cmp(&b.name));
        for h in &other.headline {
            if !self.headline.contains(h) {
                self.headline.push(h.clone());
            }
        }
        if self.unit_rate.is_none() {
            self.unit_rate = other.unit_rate.clone();
        }
        for (k, v) in &other.aliases {
            self.aliases.entry(k.clone()).or_insert_with(|| v.clone());
        }
        if let Some(theirs) = &other.charts {
            let mine = self.charts.get_or_insert_with(Vec::new);
            for c in theirs {
                if !mine.iter().any(|m| m.id == c.id) {
                    mine.push(c.clone());
                }
            }
        }
    }

    /// The JSON form written as `rtload.metrics_catalogue`: an array of
    /// `{name, unit, direction, headline, description}` in name order, headline metrics
    /// flagged (their display order is `rtload.headline_metrics`).
    pub fn to_json(&self) -> Value {
        serde_json::to_value(&self.metrics).unwrap_or(Value::Null)
    }

    /// Read the catalogue back from a result document (`rtload.metrics_catalogue`,
    /// `rtload.headline_metrics`, `rtload.unit_rate`, `rtload.metric_aliases` and
    /// `rtload.charts`); `None` when the file predates the catalogue or the block is
    /// malformed.
    pub fn from_result(doc: &Value) -> Option<Self> {
        let rows = doc.pointer("/rtload/metrics_catalogue")?;
        let mut metrics: Vec<MetricInfo> = serde_json::from_value(rows.clone()).ok()?;
        metrics.sort_by(|a, b| a.name.cmp(&b.name));
        let headline = match doc
            .pointer("/rtload/headline_metrics")
            .and_then(Value::as_array)
        {
            Some(h) => h
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect(),
            None => metrics
                .iter()
                .filter(|m| m.headline)
                .map(|m| m.name.clone())
                .collect(),
        };
        let unit_rate = doc
            .pointer("/rtload/unit_rate")
            .and_then(|u| serde_json::from_value(u.clone()).ok());
        let aliases = doc
            .pointer("/rtload/metric_aliases")
            .and_then(|u| serde_json::from_value(u.clone()).ok())
            .unwrap_or_default();
        Some(Self {
            metrics,
            headline,
            unit_rate,
            aliases,
            charts: chart::of_result(doc),
        })
    }

    /// Write the catalogue into a result document's `rtload` block (creating it); the
    /// unit rate as `rtload.unit_rate: {metric, unit}` or null; every chart
    /// ([`Catalogue::charts`]) as `rtload.charts`.
    pub fn write_into(&self, doc: &mut Value) {
        if let Some(obj) = doc.as_object_mut() {
            let rt = obj
                .entry("rtload")
                .or_insert_with(|| Value::Object(Default::default()));
            if let Some(rt) = rt.as_object_mut() {
                rt.insert("metrics_catalogue".into(), self.to_json());
                rt.insert(
                    "headline_metrics".into(),
                    serde_json::to_value(&self.headline).unwrap_or(Value::Null),
                );
                rt.insert(
                    "unit_rate".into(),
                    serde_json::to_value(&self.unit_rate).unwrap_or(Value::Null),
                );
                if !self.aliases.is_empty() {
                    rt.insert(
                        "metric_aliases".into(),
                        serde_json::to_value(&self.aliases).unwrap_or(Value::Null),
                    );
                }
                rt.insert(
                    chart::CHARTS_KEY.into(),
                    serde_json::to_value(self.charts()).unwrap_or(Value::Null),
                );
            }
        }
    }
}

fn info(name: String, families: &[Family], headline: &[&str]) -> MetricInfo {
    let family = families
        .iter()
        .filter(|f| f.covers(&name))
        .max_by_key(|f| f.prefix.len());
    let is_stat = family.is_some_and(|f| name.len() > f.prefix.len());
    let is_count = is_stat && name.ends_with(".count");
    let headline = headline.contains(&name.as_str());
    let Some(f) = family else {
        return MetricInfo {
            unit: String::new(),
            direction: Direction::NotAScore,
            description: String::new(),
            headline,
            name,
            origin: String::new(),
            merge: None,
            distribution: None,
        };
    };
    let distribution = (f.is_dist() && is_stat).then(|| f.prefix.to_string());
    let (unit, direction, description) = if is_count {
        (
            "count".to_string(),
            Direction::NotAScore,
            format!("number of values behind {}", f.prefix),
        )
    } else {
        (f.unit.to_string(), f.direction, f.description.to_string())
    };
    MetricInfo {
        unit,
        direction,
        description,
        headline,
        name,
        origin: f.origin.to_string(),
        merge: Some(f.merge.into()),
        distribution,
    }
}

#[cfg(test)]
#[path = "catalogue_tests.rs"]
mod tests;
