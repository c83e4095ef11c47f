//! A held session's append-only byte log whose memory is bounded: at most
//! [`TAIL_BYTES`] (plus one value) stay in memory; once the tail reaches that size it is
//! appended to the log's own logical file in the run's spool (never blocking, as the
//! events and PCM are) and cleared. Without a spool handle it is an ordinary growing
//! buffer (tests, unspooled runs).
//!
//! The log cannot read itself back: a session ends with [`SpilledLog::into_parts`], the
//! span of what was spilled and the tail, and only the report reads the span, after the
//! run's flush, from the same spool as the events and PCM ([`super::Spool::load`]). So
//! nothing a session does on its shard thread waits for the spool's writer or its disk
//! while other sessions are still being paced (a read-back at the session's end stalled
//! every live session's sends by 2–3 s in a 10-minute soak of 200 sessions).
//!
//! Used for what a long session must report every value of (each past turn's record):
//! memory stays flat however long the session is held, and the values come back bit for
//! bit (tests hold a spilled log equal to an unspilled one). A short session never
//! reaches the spool: its log stays in memory.

use super::{SessionSpool, Span, Spool};

/// Bytes a log keeps in memory before spilling them (the bound per log, with one value).
/// Small, because a tail that is still filling is what a soak's RSS grows by between its
/// readings: with 4 KiB, each of a held session's logs grew for minutes before its first
/// spill (heaptrack: ~1 MiB of a 200-session soak's growth over minutes 2–5 was tails
/// filling). The spill costs one piece in the spool's shared batch, not a write.
pub const TAIL_BYTES: usize = 512;

/// See the module header.
#[derive(Debug, Default)]
pub struct SpilledLog {
    tail: Vec<u8>,
    spool: Option<SessionSpool>,
}

/// A log as its session left it: the spilled bytes' span (none if nothing was spilled)
/// and the tail that follows them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LogParts {
    /// Where the spilled bytes are in the run's spool (read them after its flush).
    pub spilled: Option<Span>,
    /// The bytes after them, kept in memory.
    pub tail: Vec<u8>,
}

impl LogParts {
    /// Every byte of the log: the spilled span read from `spool` (after its flush), then
    /// the tail; an error when it cannot be read back whole (`what` names the log).
    pub fn read(&self, spool: Option<&Spool>, what: &str) -> Result<Vec<u8>, String> {
        let spilled = match (self.spilled, spool) {
            (None, _) => bytes::Bytes::new(),
            (Some(span), Some(spool)) => spool.load(span).map_err(|e| e.to_string())?,
            (Some(_), None) => return Err(format!("spilled {what} without a spool")),
        };
        self.join(&spilled)
    }

    /// Every byte of the log, given the bytes of `spilled` read back (empty when none
    /// was spilled); an error when they are not as many as were spilled.
    pub fn join(&self, spilled: &[u8]) -> Result<Vec<u8>, String> {
        let want = self.spilled.map_or(0, |s| s.len);
        if spilled.len() as u64 != want {
            return Err(format!(
                "spilled log read back {} bytes of {want}",
                spilled.len()
            ));
        }
        let mut all = Vec::with_capacity(spilled.len() + self.tail.len());
        all.extend_from_slice(spilled);
        all.extend_from_slice(&self.tail);
        Ok(all)
    }
}

impl SpilledLog {
    /// A log that spills to `spool` (a log file of its own, [`SessionSpool::log`]:
    /// nothing else appended to it).
    pub fn spilling(spool: SessionSpool) -> Self {
        Self {
            tail: Vec::new(),
            spool: Some(spool),
        }
    }

    /// Appends `bytes` (one value: it is never split between spool and tail).
    pub fn push(&mut self, bytes: &[u8]) {
        let Some(spool) = &mut self.spool else {
            self.tail.extend_from_slice(bytes);
            return;
        };
        // Grown in steps, not reserved whole at the first value: a log that never fills
        // its tail holds what it uses, not the whole tail; one that does keeps the room
        // it grew to after each spill.
        crate::util::grow::reserve_within(&mut self.tail, bytes.len(), TAIL_BYTES + 64);
        self.tail.extend_from_slice(bytes);
        if self.tail.len() >= TAIL_BYTES {
            spool.append(&self.tail);
            self.tail.clear();
        }
    }

    /// Bytes spilled to the spool so far.
    #[cfg(test)]
    pub fn spilled(&self) -> u64 {
        self.spool.as_ref().map_or(0, |s| s.whole().len)
    }

    /// The bytes still in memory (all of them while nothing was spilled).
    #[cfg(test)]
    pub fn tail(&self) -> &[u8] {
        &self.tail
    }

    /// Bytes held in memory (the tail's capacity).
    #[cfg(test)]
    pub fn heap_bytes(&self) -> usize {
        self.tail.capacity()
    }

    /// What the report needs to read the log back: no IO, O(tail).
    pub fn into_parts(self) -> LogParts {
        let spilled = (self.spool.as_ref())
            .map(SessionSpool::whole)
            .filter(|s| s.len > 0);
        LogParts {
            spilled,
            tail: self.tail,
        }
    }
}

#[cfg(test)]
#[path = "spilled_tests.rs"]
mod tests;
