//! A sample's send lateness while it is live, stored compactly. The sender records one
//! lateness (`actual − intended`, never negative) per scheduled message, about five a
//! second for a duplex session, so a held session's lateness grows with its length: as
//! `f64` seconds that was 8 bytes a message, the largest thing a soak's sessions kept
//! per response (~23 appends each). Kept here as the [`Duration`]'s whole nanoseconds in
//! LEB128 (7 bits a byte): a lateness under 2.1 ms is 3 bytes, under 268 ms 4. It is
//! exact: the values are read back with the same [`Duration::as_secs_f64`] the sender
//! used to push ([`crate::workload::spool::lateness::decode`]), so every output sees the
//! bits it saw before (a proptest holds them equal).
//!
//! The bytes are kept in chunks of at most [`CHUNK_BYTES`] (with a spool
//! [`SPILL_CHUNK_BYTES`]), each grown in steps ([`crate::util::grow`]). When the run has
//! a spool ([`LatenessSetup::spool`]) each full chunk is appended to the sample's own log file there (through the spool's shared
//! batch and writer thread: no IO here) and the chunk is reused, so a held session keeps
//! at most one chunk of lateness however long it is held; without one the full chunks
//! stay in memory. Either way the sample's end ([`LatenessLog::hand_over`]) reads
//! nothing back: it hands over the spilled span and the open chunk, and the values are
//! read after the run ([`crate::workload::spool::lateness::restore_run`]).
//!
//! What the run reads while it is live is tallied as each value is recorded: how many,
//! how many above the run's generator bound, the largest, and (for a measured sample of
//! a run with live metrics) the live histogram observes the value at once.

use std::sync::Arc;
use std::time::Duration;

use super::live::LiveMetrics;
use crate::util::{grow, leb128};
use crate::workload::spool::SessionSpool;
use crate::workload::spool::lateness::SentLateness;
use crate::workload::spool::spilled::LogParts;

/// Bytes of one chunk of a log kept in memory (the default of
/// [`LatenessSetup::chunk_bytes`]).
pub const CHUNK_BYTES: usize = 4096;
/// Bytes of the one chunk a log with a spool keeps: small, so a held session's memory
/// stops growing within a minute (~15 bytes a second), as the spilled logs' tails
/// ([`crate::workload::spool::spilled::TAIL_BYTES`]).
pub const SPILL_CHUNK_BYTES: usize = 512;

/// The longest LEB128 number (`u64::MAX`).
const MAX_LEB128: usize = 10;

/// How a sample's sender keeps its lateness (the run's settings for it).
#[derive(Debug)]
pub struct LatenessSetup {
    /// The sample's own log file in the run's spool, for full chunks; `None`: they stay
    /// in memory.
    pub spool: Option<SessionSpool>,
    /// The generator bound, seconds: a value above it is counted late (the progress
    /// line's "n of m sends").
    pub bound_s: f64,
    /// The live metrics to observe each value into at once (measured samples of a run
    /// with `--metrics-addr`).
    pub live: Option<Arc<LiveMetrics>>,
    /// Bytes of a chunk ([`CHUNK_BYTES`]; smaller under test, to spill often).
    pub chunk_bytes: usize,
}

impl Default for LatenessSetup {
    fn default() -> Self {
        Self {
            spool: None,
            bound_s: f64::INFINITY,
            live: None,
            chunk_bytes: CHUNK_BYTES,
        }
    }
}

/// The lateness values of one sample, in send order (see the module header).
#[derive(Debug, Default)]
pub struct LatenessLog {
    /// Chunks filled to within one value of the chunk size, in order (only without a
    /// spool).
    full: Vec<Vec<u8>>,
    /// The chunk being filled.
    open: Vec<u8>,
    count: u64,
    late: u64,
    max: Option<Duration>,
    setup: LatenessSetup,
}

impl LatenessLog {
    /// An empty log kept as `setup` says.
    pub fn new(setup: LatenessSetup) -> Self {
        Self {
            setup,
            ..Self::default()
        }
    }

    /// Appends `late`, tallies it and observes it live.
    pub fn push(&mut self, late: Duration) {
        let chunk = self.setup.chunk_bytes.max(MAX_LEB128 + 1);
        grow::reserve_within(&mut self.open, MAX_LEB128, chunk);
        // A lateness past u64 nanoseconds (584 years) cannot come from an `Instant`.
        leb128::put(
            &mut self.open,
            u64::try_from(late.as_nanos()).unwrap_or(u64::MAX),
        );
        self.count += 1;
        let s = late.as_secs_f64();
        if s > self.setup.bound_s {
            self.late += 1;
        }
        self.max = self.max.max(Some(late));
        if let Some(live) = &self.setup.live {
            live.lateness(s);
        }
        if self.open.len() + MAX_LEB128 > chunk {
            match &mut self.setup.spool {
                Some(spool) => {
                    spool.append(&self.open);
                    self.open.clear();
                }
                None => self.full.push(std::mem::take(&mut self.open)),
            }
        }
    }

    /// How many values it holds.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.count as usize
    }

    /// Holds no value.
    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Bytes it holds (its chunks' capacities).
    #[cfg(test)]
    pub fn heap_bytes(&self) -> usize {
        let chunks: usize = self.full.iter().map(Vec::capacity).sum();
        chunks + self.open.capacity() + self.full.capacity() * std::mem::size_of::<Vec<u8>>()
    }

    /// Every value as [`Duration::as_secs_f64`] gives it, in push order (a log that
    /// never spilled).
    #[cfg(test)]
    pub fn seconds(&self) -> Vec<f64> {
        let bytes: Vec<u8> = self
            .full
            .iter()
            .chain([&self.open])
            .flatten()
            .copied()
            .collect();
        crate::workload::spool::lateness::decode(&bytes)
    }

    /// The sample's lateness as the report reads it: the spilled span, the bytes still
    /// in memory and the tallies. No IO.
    pub fn hand_over(self) -> SentLateness {
        let spilled = (self.setup.spool.as_ref())
            .map(SessionSpool::whole)
            .filter(|s| s.len > 0);
        let tail = if self.full.is_empty() {
            self.open
        } else {
            let mut all = self.full.concat();
            all.extend_from_slice(&self.open);
            all
        };
        SentLateness {
            parts: LogParts { spilled, tail },
            count: self.count,
            late: self.late,
            max_s: self.max.map(|d| d.as_secs_f64()),
        }
    }
}

#[cfg(test)]
#[path = "lateness_tests.rs"]
mod tests;
