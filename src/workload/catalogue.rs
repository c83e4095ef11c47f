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

use serde::{Deserialize, Serialize};
use serde_json::Value;

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

/// A group of metrics sharing one meaning: the exact name `prefix`, or `prefix.<stat>`
/// (e.g. `ttfc_ms.p99`). A `.count` stat is always [`Direction::NotAScore`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Family {
    /// The name, or the part before the `.<stat>` suffix.
    pub prefix: &'static str,
    /// Unit (`ms`, `s`, `ratio`, `count`, `req/s`, …; `""` for dimensionless).
    pub unit: &'static str,
    /// Which way is better.
    pub direction: Direction,
    /// One line for people.
    pub description: &'static str,
}

impl Family {
    /// A family row (const, so workloads can keep a static table).
    pub const fn new(
        prefix: &'static str,
        unit: &'static str,
        direction: Direction,
        description: &'static str,
    ) -> Self {
        Self {
            prefix,
            unit,
            direction,
            description,
        }
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
        }
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
    }

    /// The JSON form written as `rtload.metrics_catalogue`: an array of
    /// `{name, unit, direction, headline, description}` in name order, headline metrics
    /// flagged (their display order is `rtload.headline_metrics`).
    pub fn to_json(&self) -> Value {
        serde_json::to_value(&self.metrics).unwrap_or(Value::Null)
    }

    /// Read the catalogue back from a result document (`rtload.metrics_catalogue`,
    /// `rtload.headline_metrics` and `rtload.unit_rate`); `None` when the file predates the catalogue or the
    /// block is malformed.
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
        Some(Self {
            metrics,
            headline,
            unit_rate,
        })
    }

    /// Write the catalogue into a result document's `rtload` block (creating it); the
    /// unit rate as `rtload.unit_rate: {metric, unit}` or null.
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
            }
        }
    }
}

fn info(name: String, families: &[Family], headline: &[&str]) -> MetricInfo {
    let family = families
        .iter()
        .filter(|f| f.covers(&name))
        .max_by_key(|f| f.prefix.len());
    let is_count = family.is_some_and(|f| name.len() > f.prefix.len()) && name.ends_with(".count");
    let headline = headline.contains(&name.as_str());
    match family {
        Some(f) if is_count => MetricInfo {
            unit: "count".into(),
            direction: Direction::NotAScore,
            description: format!("number of values behind {}", f.prefix),
            headline,
            name,
        },
        Some(f) => MetricInfo {
            unit: f.unit.into(),
            direction: f.direction,
            description: f.description.into(),
            headline,
            name,
        },
        None => MetricInfo {
            unit: String::new(),
            direction: Direction::NotAScore,
            description: String::new(),
            headline,
            name,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FAMILIES: [Family; 3] = [
        Family::new("ttfc_ms", "ms", Direction::Lower, "time to first chunk"),
        Family::new("ttfc_ms_mean", "ms", Direction::Lower, "mean TTFC"),
        Family::new(
            "completed",
            "count",
            Direction::Higher,
            "sessions completed",
        ),
    ];

    #[test]
    fn longest_prefix_wins_and_count_is_not_a_score() {
        let c = Catalogue::build(
            [
                "ttfc_ms.p99",
                "ttfc_ms_mean",
                "ttfc_ms.count",
                "completed",
                "odd",
            ],
            &FAMILIES,
            &["ttfc_ms.p99", "missing"],
        );
        assert_eq!(c.direction("ttfc_ms.p99"), Direction::Lower);
        assert_eq!(
            c.get("ttfc_ms_mean").map(|m| m.description.as_str()),
            Some("mean TTFC")
        );
        assert_eq!(c.direction("ttfc_ms.count"), Direction::NotAScore);
        assert_eq!(c.direction("completed"), Direction::Higher);
        assert_eq!(c.direction("nope"), Direction::NotAScore);
        assert_eq!(c.headline(), ["ttfc_ms.p99".to_string()]);
        assert_eq!(c.check(&FAMILIES), Err(Undeclared(vec!["odd".into()])));
    }

    #[test]
    fn per_second_is_missing_without_a_duration() {
        assert_eq!(per_second(96.0, 4.0), Some(24.0));
        assert_eq!(per_second(0.0, 2.0), Some(0.0));
        assert_eq!(per_second(5.0, 0.0), None);
        assert_eq!(per_second(5.0, -1.0), None);
        assert_eq!(per_second(f64::NAN, 1.0), None);
        assert_eq!(per_second(1.0, f64::INFINITY), None);
    }

    #[test]
    fn unit_rate_must_be_declared() {
        let c = Catalogue::build(["completed"], &FAMILIES, &[]);
        assert_eq!(c.clone().with_unit_rate("nope", "x/s").unit_rate(), None);
        let c = c.with_unit_rate("completed", "sessions/s");
        assert_eq!(
            c.unit_rate(),
            Some(&UnitRate {
                metric: "completed".into(),
                unit: "sessions/s".into()
            })
        );
    }

    #[test]
    fn round_trips_through_a_result_document() {
        let c = Catalogue::build(["ttfc_ms.p99", "completed"], &FAMILIES, &["completed"])
            .with_unit_rate("completed", "sessions/s");
        let mut doc = serde_json::json!({"metrics": {}});
        c.write_into(&mut doc);
        assert_eq!(doc["rtload"]["metrics_catalogue"][0]["direction"], "higher");
        assert_eq!(doc["rtload"]["unit_rate"]["unit"], "sessions/s");
        assert_eq!(Catalogue::from_result(&doc), Some(c));
        assert_eq!(
            Catalogue::from_result(&serde_json::json!({"rtload": {}})),
            None
        );
    }
}
