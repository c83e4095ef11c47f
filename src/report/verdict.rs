//! A result's verdict block, the one shape every result file carries (`rtload.verdict`,
//! `rtload.thresholds`, `rtload.sample_counts`), written by a run and by `rtload merge`
//! alike, so a report reads a merged result's verdict exactly as a run's.

use serde_json::{Value, json};

use crate::config::thresholds::Verdict;

/// A result's sample counts (measured = completed + failed + cancelled).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Measured samples run.
    pub measured: usize,
    /// Measured samples that failed (engine, session or report).
    pub failed: usize,
    /// Measured samples an interrupt cancelled.
    pub cancelled: usize,
    /// Warm-up samples run before the measured ones.
    pub warmup: usize,
}

impl Counts {
    /// Measured samples that completed.
    pub fn completed(&self) -> usize {
        self.measured.saturating_sub(self.failed + self.cancelled)
    }

    /// The counts a result carries as `rtload.sample_counts`, if any.
    pub fn of_result(doc: &Value) -> Option<Counts> {
        let c = doc.pointer("/rtload/sample_counts")?;
        let n = |k: &str| c.get(k).and_then(Value::as_u64).map(|v| v as usize);
        Some(Counts {
            measured: n("measured")?,
            failed: n("failed")?,
            cancelled: n("cancelled").unwrap_or(0),
            warmup: n("warmup").unwrap_or(0),
        })
    }
}

/// The word of a verdict: `interrupted`, `passed` or `failed`.
pub fn word(passed: bool, interrupted: bool) -> &'static str {
    match (interrupted, passed) {
        (true, _) => "interrupted",
        (false, true) => "passed",
        (false, false) => "failed",
    }
}

/// `{verdict, thresholds, sample_counts}`: every threshold with its measured value
/// (`null` when the run has no such metric) and whether it held.
pub fn block(verdicts: &[Verdict], passed: bool, interrupted: bool, counts: Counts) -> Value {
    let thresholds: Vec<Value> = verdicts
        .iter()
        .map(|v| {
            json!({
                "metric": v.threshold.metric,
                "expr": v.threshold.expr,
                "measured": v.measured.filter(|m| m.is_finite()),
                "passed": v.passed,
            })
        })
        .collect();
    json!({
        "verdict": word(passed, interrupted),
        "thresholds": thresholds,
        "sample_counts": {
            "measured": counts.measured,
            "completed": counts.completed(),
            "failed": counts.failed,
            "cancelled": counts.cancelled,
            "warmup": counts.warmup,
        },
    })
}
