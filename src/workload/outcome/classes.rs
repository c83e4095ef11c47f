//! The four classes a measured session ends in ([`Class`]), the rules that decide them
//! ([`Rules`]: the capacity patterns of server errors and the scenario's per-session SLO
//! bounds) and their counts ([`ClassCounts`]). Pure: a sample's record in, a class out.
//! The engine classifies each sample as it ends (live progress, `--metrics-addr`) and
//! the runner classifies the run's records once more after the report, with the
//! report's own failures added, for every output: one rule, one set of records.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::{Failure, FailureKind, RejectPattern, is_rejection};
use crate::workload::SampleRecord;
use crate::workload::catalogue::{Catalogue, Direction::*, Family, Merge};

/// How a measured session ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Class {
    /// Completed, and no per-session SLO broken.
    Good,
    /// Completed, but broke a per-session SLO of the scenario (`[slo]`).
    Degraded,
    /// The server refused it for capacity (HTTP 429/503 on the upgrade, close code 1013,
    /// or an error event matching the capacity patterns).
    Rejected,
    /// Anything else that did not complete.
    Failed,
}

impl Class {
    /// Every class, in output order.
    pub const ALL: [Class; 4] = [Class::Good, Class::Degraded, Class::Rejected, Class::Failed];

    /// The stable name, as counted in JSON (`rtload.outcomes`), progress and Prometheus.
    pub fn label(self) -> &'static str {
        match self {
            Class::Good => "good",
            Class::Degraded => "degraded",
            Class::Rejected => "rejected",
            Class::Failed => "failed",
        }
    }
}

/// The per-session values a per-session SLO can bound, read from the engine's own
/// record of each session (so every workload that feeds the playback role has the
/// playback ones): `stall_count` (times the simulated listener/viewer ran dry),
/// `stall_ms` (time it waited), `playback_start_ms` (open → first stream's playback
/// start), `session_ms` (connect → end), `queue_wait_ms`, `send_lateness_max_ms`.
pub const SESSION_METRICS: [&str; 6] = [
    "stall_count",
    "stall_ms",
    "playback_start_ms",
    "session_ms",
    "queue_wait_ms",
    "send_lateness_max_ms",
];

/// Session `rec`'s value of `metric` (one of [`SESSION_METRICS`]); `None` when the
/// session has none (no media played, no scheduled send) or the name is unknown.
pub fn session_value<O>(rec: &SampleRecord<O>, metric: &str) -> Option<f64> {
    let played = rec.playback.as_ref().filter(|p| p.stream_count() > 0);
    match metric {
        "stall_count" => played.map(|p| p.stall_count() as f64),
        "stall_ms" => played.map(|p| p.total_stall_s() * 1e3),
        "playback_start_ms" => played
            .and_then(|p| p.first_stream())
            .map(|s| s.start_s * 1e3),
        "session_ms" => Some((rec.ended_s - rec.started_s) * 1e3),
        "queue_wait_ms" => Some(rec.queue_wait_s * 1e3),
        // The sender's running maximum (read while the run is live, before the values
        // are read back; the same value as theirs).
        "send_lateness_max_ms" => rec.send_lateness.max_s.map(|l| l * 1e3),
        _ => None,
    }
}

/// One per-session SLO bound: `metric <expr>` must hold for each session's own value.
#[derive(Clone)]
pub struct SessionBound {
    /// One of [`SESSION_METRICS`].
    pub metric: String,
    /// The condition as written, e.g. `== 0`.
    pub expr: String,
    /// Whether a value meets it.
    pub holds: Arc<dyn Fn(f64) -> bool + Send + Sync>,
}

impl std::fmt::Debug for SessionBound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SessionBound({} {})", self.metric, self.expr)
    }
}

/// What decides a session's class: the capacity patterns of server errors and the
/// per-session SLO bounds.
#[derive(Debug, Clone, Default)]
pub struct Rules {
    /// Server errors matching one of these are rejections.
    pub reject_patterns: Vec<RejectPattern>,
    /// Bounds every completed session must meet to be good.
    pub slo: Vec<SessionBound>,
}

impl Rules {
    /// The class of a sample that ended with `outcome` (its record's, or a report-time
    /// failure), `None` when an interrupt cancelled it (its own outcome).
    pub fn class<O>(&self, rec: &SampleRecord<O>, outcome: Result<(), &Failure>) -> Option<Class> {
        match outcome {
            Err(f) if f.kind == FailureKind::Interrupted => None,
            Err(f) if is_rejection(f, &self.reject_patterns) => Some(Class::Rejected),
            Err(_) => Some(Class::Failed),
            Ok(()) if self.broken(rec).is_empty() => Some(Class::Good),
            Ok(()) => Some(Class::Degraded),
        }
    }

    /// The class of `rec` by its own outcome.
    pub fn classify<O>(&self, rec: &SampleRecord<O>) -> Option<Class> {
        self.class(rec, rec.outcome.as_ref().map(|_| ()))
    }

    /// Each bound `rec` breaks, as `stall_count 3 (SLO == 0)`. A value the session does
    /// not have is not judged.
    pub fn broken<O>(&self, rec: &SampleRecord<O>) -> Vec<String> {
        self.slo
            .iter()
            .filter_map(|b| {
                let v = session_value(rec, &b.metric)?;
                (!(b.holds)(v)).then(|| format!("{} {} (SLO {})", b.metric, num(v), b.expr))
            })
            .collect()
    }
}

/// A value as the SLO reasons print it: integers bare, else 3 decimals.
fn num(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        format!("{v:.3}")
    }
}

/// Measured sessions per [`Class`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ClassCounts {
    /// Completed within every per-session SLO.
    pub good: usize,
    /// Completed, an SLO broken.
    pub degraded: usize,
    /// Refused for capacity.
    pub rejected: usize,
    /// Did not complete otherwise.
    pub failed: usize,
}

impl ClassCounts {
    /// Counts one session of class `c`.
    pub fn add(&mut self, c: Class) {
        *self.slot(c) += 1;
    }

    fn slot(&mut self, c: Class) -> &mut usize {
        match c {
            Class::Good => &mut self.good,
            Class::Degraded => &mut self.degraded,
            Class::Rejected => &mut self.rejected,
            Class::Failed => &mut self.failed,
        }
    }

    /// The count of class `c`.
    pub fn get(&self, c: Class) -> usize {
        match c {
            Class::Good => self.good,
            Class::Degraded => self.degraded,
            Class::Rejected => self.rejected,
            Class::Failed => self.failed,
        }
    }

    /// These counts and `other`'s, class by class (shards of one run).
    pub fn plus(self, other: ClassCounts) -> ClassCounts {
        ClassCounts {
            good: self.good + other.good,
            degraded: self.degraded + other.degraded,
            rejected: self.rejected + other.rejected,
            failed: self.failed + other.failed,
        }
    }

    /// Sessions classified.
    pub fn total(&self) -> usize {
        self.good + self.degraded + self.rejected + self.failed
    }

    /// The metrics thresholds read: `good`, `degraded`, `rejected`, `ended_sessions`,
    /// and `rejected_ratio` / `degraded_ratio` over the ended sessions (absent when none
    /// ended). `failed` stays the workload's own metric (every measured session that
    /// did not complete, rejected ones included).
    pub fn metrics(&self) -> BTreeMap<String, f64> {
        let mut m = BTreeMap::new();
        for c in [Class::Good, Class::Degraded, Class::Rejected] {
            m.insert(c.label().to_string(), self.get(c) as f64);
        }
        let total = self.total();
        m.insert(ENDED.to_string(), total as f64);
        if total > 0 {
            m.insert("rejected_ratio".into(), self.rejected as f64 / total as f64);
            m.insert("degraded_ratio".into(), self.degraded as f64 / total as f64);
        }
        m
    }

    /// `{good, degraded, rejected, failed}`.
    pub fn to_json(self) -> serde_json::Value {
        serde_json::json!({
            "good": self.good,
            "degraded": self.degraded,
            "rejected": self.rejected,
            "failed": self.failed,
        })
    }

    /// The counts of a `{good, degraded, rejected, failed}` object (missing = 0).
    pub fn from_json(v: &serde_json::Value) -> Self {
        let n = |k: &str| v.get(k).and_then(serde_json::Value::as_u64).unwrap_or(0) as usize;
        Self {
            good: n("good"),
            degraded: n("degraded"),
            rejected: n("rejected"),
            failed: n("failed"),
        }
    }

    /// `3 good, 1 degraded, 2 rejected, 0 failed`.
    pub fn render(&self) -> String {
        Class::ALL
            .iter()
            .map(|c| format!("{} {}", self.get(*c), c.label()))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The metric counting the classified sessions (the ratios' denominator).
pub const ENDED: &str = "ended_sessions";

/// What the class metrics mean (every workload's catalogue carries them).
const FAMILIES: &[Family] = &[
    Family::new("good", "sessions", Higher, "measured sessions completed within every per-session SLO")
        .origin("measured sessions whose outcome was success and whose own values met every [slo] bound")
        .merged(Merge::Sum),
    Family::new("degraded", "sessions", Lower, "measured sessions completed that broke a per-session SLO")
        .origin("measured sessions whose outcome was success and whose own value broke an [slo] bound")
        .merged(Merge::Sum),
    Family::new("rejected", "sessions", Lower, "measured sessions the server refused for capacity")
        .origin("upgrade answered 429/503, close code 1013, or an error event matching the capacity patterns")
        .merged(Merge::Sum),
    Family::new(ENDED, "sessions", NotAScore, "measured sessions that ended (good + degraded + rejected + failed)")
        .origin("measured sessions with an outcome; interrupt-cancelled ones excluded")
        .merged(Merge::Sum),
    Family::new("rejected_ratio", "ratio", Lower, "share of the ended sessions refused for capacity")
        .origin("rejected / ended_sessions")
        .merged(Merge::Ratio("rejected", ENDED)),
    Family::new("degraded_ratio", "ratio", Lower, "share of the ended sessions that broke a per-session SLO")
        .origin("degraded / ended_sessions")
        .merged(Merge::Ratio("degraded", ENDED)),
];

/// The class metrics' catalogue entries, merged into every workload's catalogue.
pub fn catalogue() -> Catalogue {
    Catalogue::build(FAMILIES.iter().map(|f| f.prefix), FAMILIES, &[])
}

#[cfg(test)]
#[path = "classes_tests.rs"]
mod tests;
