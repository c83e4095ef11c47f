//! The run over time, for long sessions (a soak, `[load] duration_s`): the generator's
//! RSS and CPU per interval of the live phase, and the workload's stamped values
//! ([`Stamp`]: latency, RTF, stalls per response or turn) per interval of session age
//! and per turn, beside the sessions that failed at each age. Every figure is read from
//! the run's recorded values (the same [`Recorded`] every other output reads) and the
//! sampler's readings; the terminal block and `rtload.soak` in the JSON result are two
//! renderings of one [`Soak`].

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::results::Recorded;
use crate::util::stats::Summary;
use crate::util::usage::PhaseUsage;

/// The generator's use of the machine over one interval of the live phase.
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceRow {
    /// Seconds since the live phase started: the interval's start and end.
    pub from_s: f64,
    /// See `from_s`.
    pub to_s: f64,
    /// RSS at the interval's end, MiB.
    pub rss_mib: Option<f64>,
    /// The largest RSS sampled during the interval, MiB.
    pub rss_max_mib: Option<f64>,
    /// CPU seconds the process used during the interval.
    pub cpu_s: Option<f64>,
    /// Sessions in flight at the interval's end.
    pub sessions: usize,
}

/// The stamped values of one slice (an interval of session age, or one turn).
#[derive(Debug, Clone, PartialEq)]
pub struct Slice {
    /// The slice: `[from_s, to_s)` of session age, or the turn (`from_s` = `to_s` = turn).
    pub from_s: f64,
    /// See `from_s`.
    pub to_s: f64,
    /// Measured sessions still open at `from_s` (age slices; 0 for turns).
    pub sessions: usize,
    /// Measured sessions that failed at an age in the slice (age slices; 0 for turns).
    pub failed: usize,
    /// Each stamped metric's statistics over the slice's values.
    pub metrics: BTreeMap<String, Summary>,
}

/// The run over time: see the module docs.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Soak {
    /// The interval, seconds (`[load] series_interval_s`).
    pub interval_s: f64,
    /// One row per interval of the live phase.
    pub resources: Vec<ResourceRow>,
    /// One slice per interval of session age, from 0 to the oldest session's.
    pub by_age: Vec<Slice>,
    /// One slice per turn that has stamped values.
    pub by_turn: Vec<Slice>,
}

/// A measured session's span: seconds from its open to its end, and whether it failed.
pub type SessionSpan = (f64, bool);

impl Soak {
    /// The soak of a run: `usage`'s interval readings, `rec`'s stamped values and the
    /// measured sessions' `spans`; `in_flight(t_s)` counts sessions in flight at live-phase
    /// second `t_s`.
    pub fn of(
        interval_s: f64,
        usage: &PhaseUsage,
        rec: &Recorded,
        spans: &[SessionSpan],
        in_flight: impl Fn(f64) -> usize,
    ) -> Soak {
        Soak {
            interval_s,
            resources: resources(usage, in_flight),
            by_age: by_age(interval_s, rec, spans),
            by_turn: by_turn(rec),
        }
    }

    /// Worth a terminal block: the run spanned more than one interval of either clock.
    pub fn spans_intervals(&self) -> bool {
        self.resources.len() > 1 || self.by_age.len() > 1
    }

    /// `rtload.soak` in the JSON result.
    pub fn to_json(&self) -> Value {
        let mib = |v: Option<f64>| v.map(|m| (m * 1000.0).round() / 1000.0);
        let resources: Vec<Value> = (self.resources.iter())
            .map(|r| {
                json!({"from_s": r.from_s, "to_s": r.to_s, "rss_mib": mib(r.rss_mib),
                    "rss_max_mib": mib(r.rss_max_mib), "cpu_s": r.cpu_s,
                    "core_share": core_share(r), "sessions": r.sessions})
            })
            .collect();
        let slice = |s: &Slice, turn: bool| {
            let metrics: serde_json::Map<String, Value> = (s.metrics.iter())
                .map(|(k, m)| (k.clone(), summary_json(m)))
                .collect();
            if turn {
                json!({"turn": s.from_s as u64, "metrics": metrics})
            } else {
                json!({"from_s": s.from_s, "to_s": s.to_s, "sessions": s.sessions,
                    "failed": s.failed, "metrics": metrics})
            }
        };
        json!({
            "interval_s": self.interval_s,
            "resources": resources,
            "session_age": self.by_age.iter().map(|s| slice(s, false)).collect::<Vec<_>>(),
            "turns": self.by_turn.iter().map(|s| slice(s, true)).collect::<Vec<_>>(),
        })
    }
}

/// CPU seconds over the interval's wall seconds: the share of one core it used.
pub fn core_share(r: &ResourceRow) -> Option<f64> {
    let wall = r.to_s - r.from_s;
    r.cpu_s.filter(|_| wall > 0.0).map(|c| c / wall)
}

fn summary_json(s: &Summary) -> Value {
    json!({"count": s.count, "mean": s.mean, "p50": s.percentile(50.0), "p99": s.percentile(99.0),
        "max": s.max})
}

fn resources(usage: &PhaseUsage, in_flight: impl Fn(f64) -> usize) -> Vec<ResourceRow> {
    let mib = |b: Option<u64>| b.map(|b| b as f64 / (1024.0 * 1024.0));
    let (mut from_s, mut cpu_before) = (0.0, usage.start.cpu_s);
    let mut rows = Vec::with_capacity(usage.series.len());
    for u in usage.series.iter().filter(|u| u.t_s.is_finite()) {
        rows.push(ResourceRow {
            from_s,
            to_s: u.t_s,
            rss_mib: mib(u.rss_bytes),
            rss_max_mib: mib(u.rss_max_bytes),
            cpu_s: u.cpu_s.zip(cpu_before).map(|(a, b)| (a - b).max(0.0)),
            sessions: in_flight(u.t_s),
        });
        (from_s, cpu_before) = (u.t_s, u.cpu_s);
    }
    rows
}

/// Per interval of session age: the stamped values taken at that age, the sessions still
/// open at its start and those that failed within it.
fn by_age(interval_s: f64, rec: &Recorded, spans: &[SessionSpan]) -> Vec<Slice> {
    let slot = |age: f64| (age.max(0.0) / interval_s).floor() as usize;
    let mut values: BTreeMap<usize, BTreeMap<&str, Vec<f64>>> = BTreeMap::new();
    for (name, stamp, v) in rec.stamped() {
        let by_name = values.entry(slot(stamp.age_s)).or_default();
        by_name.entry(name).or_default().push(v);
    }
    let oldest = spans.iter().map(|(age, _)| slot(*age)).max();
    let last = oldest.max(values.keys().next_back().copied());
    let Some(last) = last else {
        return Vec::new();
    };
    (0..=last)
        .map(|k| {
            let from_s = k as f64 * interval_s;
            Slice {
                from_s,
                to_s: from_s + interval_s,
                sessions: spans.iter().filter(|(age, _)| *age >= from_s).count(),
                failed: (spans.iter())
                    .filter(|(age, failed)| *failed && slot(*age) == k)
                    .count(),
                metrics: summaries(values.remove(&k).unwrap_or_default(), rec.percents()),
            }
        })
        .collect()
}

fn by_turn(rec: &Recorded) -> Vec<Slice> {
    let mut values: BTreeMap<u32, BTreeMap<&str, Vec<f64>>> = BTreeMap::new();
    for (name, stamp, v) in rec.stamped() {
        if let Some(t) = stamp.turn {
            values
                .entry(t)
                .or_default()
                .entry(name)
                .or_default()
                .push(v);
        }
    }
    (values.into_iter())
        .map(|(t, m)| Slice {
            from_s: f64::from(t),
            to_s: f64::from(t),
            sessions: 0,
            failed: 0,
            metrics: summaries(m, rec.percents()),
        })
        .collect()
}

fn summaries(m: BTreeMap<&str, Vec<f64>>, pcts: &[f64]) -> BTreeMap<String, Summary> {
    (m.into_iter())
        .filter_map(|(k, v)| Some((k.to_string(), Summary::of(&v, pcts)?)))
        .collect()
}

#[path = "soak_text.rs"]
mod text;

#[cfg(test)]
#[path = "soak_tests.rs"]
mod tests;
