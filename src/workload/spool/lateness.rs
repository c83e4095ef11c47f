//! A sample's send lateness as its sender hands it over at the sample's end
//! ([`SentLateness`]), and the one read that turns it into values after the run
//! ([`restore_run`]).
//!
//! The sender keeps every lateness as whole nanoseconds in LEB128 (the engine's
//! `LatenessLog`); when the run has a spool, each full chunk of those bytes goes to a log
//! file of the sample's own in the spool (through the spool's batch and writer, as the
//! past turns do: no IO on the shard thread), so a held session's memory for its lateness
//! stays within one chunk however long it is held. The sample's end reads nothing back:
//! it hands over the spilled span and the open chunk, unread, with the running tallies
//! taken as each value was recorded (how many, how many above the run's generator bound,
//! the largest), which are what the coordinator, the progress line and the outcome rules
//! read while the run is live. After the run (at the start of publication, outside the
//! live phase's usage), the runner flushes the spool and [`restore_run`] decodes each
//! sample's bytes into
//! [`crate::workload::SampleRecord::send_lateness_s`]: every output (the JSON generator
//! block, each sample's maximum, the HDR series, the terminal summary) reads those
//! values, the very ones the sender took (`Duration::as_secs_f64` of the same
//! nanoseconds, bit for bit; tests hold a spilled run's outputs equal to an unspilled
//! one's).

use std::time::Duration;

use super::Spool;
use super::spilled::LogParts;
use crate::workload::{Failure, FailureKind, RunRecord, SampleRecord};

/// A sample's send lateness as the sender left it (see the module header).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SentLateness {
    /// The values' bytes (LEB128 nanoseconds, in send order): the spilled span, if any,
    /// and the bytes after it. Emptied once [`restore_run`] read them.
    pub parts: LogParts,
    /// How many values were recorded.
    pub count: u64,
    /// How many of them exceeded the run's generator bound (`--generator-bound-ms`).
    pub late: u64,
    /// The largest, seconds (as [`Duration::as_secs_f64`] gives it); `None` without a
    /// value.
    pub max_s: Option<f64>,
}

impl SentLateness {
    /// Whether bytes are still to be read back (the values not yet restored).
    pub fn unread(&self) -> bool {
        self.parts.spilled.is_some() || !self.parts.tail.is_empty()
    }

    /// Every value, in send order, seconds: the spilled bytes read from `spool` (after
    /// its flush) and the tail decoded; an error when the spilled bytes cannot be read
    /// back whole or the values are not as many as were recorded.
    pub fn values(&self, spool: Option<&Spool>) -> Result<Vec<f64>, String> {
        let values = decode(&self.parts.read(spool, "send lateness")?);
        if values.len() as u64 != self.count {
            return Err(format!(
                "send lateness read back {} values of {}",
                values.len(),
                self.count
            ));
        }
        Ok(values)
    }
}

/// LEB128 nanoseconds to seconds, as [`Duration::as_secs_f64`] gives them.
pub fn decode(bytes: &[u8]) -> Vec<f64> {
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(n) = crate::util::leb128::get(bytes, &mut at) {
        out.push(Duration::from_nanos(n).as_secs_f64());
    }
    out
}

/// Reads every sample's send lateness back into its `send_lateness_s` (call once every
/// sample has ended; flushes `spool` first when a sample spilled to it). A sample whose
/// values cannot be read back fails with a `report` failure naming why (its values are
/// missing, never zero).
pub fn restore_run<O>(run: &mut RunRecord<O>, spool: Option<&Spool>) {
    let spilled =
        |r: &RunRecord<O>| (r.samples.iter()).any(|s| s.send_lateness.parts.spilled.is_some());
    if let Some(spool) = spool.filter(|_| spilled(run)) {
        spool.flush();
    }
    for s in &mut run.samples {
        restore_sample(s, spool);
    }
}

/// [`restore_run`] for one sample (`spool` already flushed).
pub fn restore_sample<O>(s: &mut SampleRecord<O>, spool: Option<&Spool>) {
    if !s.send_lateness.unread() {
        return;
    }
    match s.send_lateness.values(spool) {
        Ok(v) => s.send_lateness_s = v,
        Err(e) => {
            s.send_lateness_s.clear();
            if s.outcome.is_ok() {
                let msg = format!("send lateness could not be read back: {e}");
                s.outcome = Err(Failure::new(FailureKind::Report, msg));
            }
        }
    }
    s.send_lateness.parts = LogParts::default();
}

#[cfg(test)]
#[path = "lateness_tests.rs"]
mod tests;
