//! A held session's append-only byte log whose memory is bounded: at most
//! [`TAIL_BYTES`] (plus one value) stay in memory; once the tail reaches that size it is
//! appended to the log's own logical file in the run's spool (never blocking, as the
//! events and PCM are) and cleared. Reading the log back ([`SpilledLog::bytes`]) gives
//! every byte pushed, in order: the spilled ones read back from the spool file, then the
//! tail. Without a spool handle it is an ordinary growing buffer (tests, unspooled runs).
//!
//! Used for what a long session must report every value of (each send's lateness, each
//! past turn's record): memory stays flat however long the session is held, and the
//! values come back bit for bit (a test holds a spilled log equal to an unspilled one).
//! A short session never reaches the spool: its log stays in memory, as before.

use std::borrow::Cow;
use std::io;

use super::SessionSpool;

/// Bytes a log keeps in memory before spilling them (the bound per log, with one value).
pub const TAIL_BYTES: usize = 4096;

/// See the module header.
#[derive(Debug, Default)]
pub struct SpilledLog {
    tail: Vec<u8>,
    spool: Option<SessionSpool>,
    /// Bytes appended to the spool so far.
    spilled: u64,
}

impl SpilledLog {
    /// A log that spills to `spool` (a log file of its own, [`super::Spool::log`]:
    /// nothing else appended to it).
    pub fn spilling(spool: SessionSpool) -> Self {
        Self {
            tail: Vec::new(),
            spool: Some(spool),
            spilled: 0,
        }
    }

    /// Appends `bytes` (one value: it is never split between spool and tail).
    pub fn push(&mut self, bytes: &[u8]) {
        let Some(spool) = &mut self.spool else {
            self.tail.extend_from_slice(bytes);
            return;
        };
        if self.tail.capacity() == 0 {
            // Reserved once: a spilling log's tail never grows by doubling.
            self.tail.reserve_exact(TAIL_BYTES + bytes.len().max(16));
        }
        self.tail.extend_from_slice(bytes);
        if self.tail.len() >= TAIL_BYTES {
            spool.append(&self.tail);
            self.spilled += self.tail.len() as u64;
            self.tail.clear();
        }
    }

    /// Bytes pushed so far.
    pub fn len(&self) -> u64 {
        self.spilled + self.tail.len() as u64
    }

    /// Nothing pushed.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes spilled to the spool so far.
    #[cfg(test)]
    pub fn spilled(&self) -> u64 {
        self.spilled
    }

    /// Bytes held in memory (the tail's capacity).
    #[cfg(test)]
    pub fn heap_bytes(&self) -> usize {
        self.tail.capacity()
    }

    /// Every byte pushed, in order. Borrowed while nothing was spilled; otherwise read
    /// back from the spool ([`SessionSpool::read_back`]: blocks for one batch write),
    /// failing as it does, with an error naming the spool file.
    pub fn bytes(&self) -> io::Result<Cow<'_, [u8]>> {
        let Some(spool) = self.spool.as_ref().filter(|_| self.spilled > 0) else {
            return Ok(Cow::Borrowed(&self.tail));
        };
        let back = spool.read_back()?;
        if back.len() as u64 != self.spilled {
            return Err(io::Error::other(format!(
                "spilled log read back {} bytes of {}",
                back.len(),
                self.spilled
            )));
        }
        let mut all = Vec::with_capacity(back.len() + self.tail.len());
        all.extend_from_slice(&back);
        all.extend_from_slice(&self.tail);
        Ok(Cow::Owned(all))
    }
}

#[cfg(test)]
#[path = "spilled_tests.rs"]
mod tests;
