//! A sample's send lateness while it is live, stored compactly. The sender records one
//! lateness (`actual − intended`, never negative) per scheduled message, about five a
//! second for a duplex session, so a held session's lateness grows with its length: as
//! `f64` seconds that was 8 bytes a message, the largest thing a soak's sessions kept
//! per response (~23 appends each). Kept here as the [`Duration`]'s whole nanoseconds in
//! LEB128 (7 bits a byte): a lateness under 2.1 ms is 3 bytes, under 268 ms 4. It is
//! exact: [`LatenessLog::seconds`] converts each back with the same
//! [`Duration::as_secs_f64`] the sender used to push, so every output sees the bits it
//! saw before (a proptest holds them equal).
//!
//! The bytes are kept in chunks of [`CHUNK_BYTES`], each grown in steps
//! ([`crate::util::grow`]), so a long session's log holds unused at most an eighth of
//! its open chunk and one step (a single vector doubling held up to as much again as it
//! used, ~6 KB of a 10-minute session's 10 KB, and copied itself at each doubling; a
//! chunk reserved whole held up to 4 KiB unused).

use std::time::Duration;

use crate::util::{grow, leb128};

/// Bytes of one chunk of a log.
pub const CHUNK_BYTES: usize = 4096;

/// The longest LEB128 number (`u64::MAX`).
const MAX_LEB128: usize = 10;

/// The lateness values of one sample, in send order (see the module header).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LatenessLog {
    /// Chunks filled to within one value of [`CHUNK_BYTES`], in order.
    full: Vec<Vec<u8>>,
    /// The chunk being filled.
    open: Vec<u8>,
    len: usize,
}

impl LatenessLog {
    /// Appends `late`.
    pub fn push(&mut self, late: Duration) {
        // A lateness past u64 nanoseconds (584 years) cannot come from an `Instant`.
        grow::reserve_within(&mut self.open, MAX_LEB128, CHUNK_BYTES);
        leb128::put(
            &mut self.open,
            u64::try_from(late.as_nanos()).unwrap_or(u64::MAX),
        );
        self.len += 1;
        if self.open.len() + MAX_LEB128 > CHUNK_BYTES {
            self.full.push(std::mem::take(&mut self.open));
        }
    }

    /// How many values it holds.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Holds no value.
    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes it holds (its chunks' capacities).
    #[cfg(test)]
    pub fn heap_bytes(&self) -> usize {
        let chunks: usize = self.full.iter().map(Vec::capacity).sum();
        chunks + self.open.capacity() + self.full.capacity() * std::mem::size_of::<Vec<u8>>()
    }

    /// Every value as [`Duration::as_secs_f64`] gives it, in push order.
    pub fn seconds(&self) -> Vec<f64> {
        let mut out = Vec::with_capacity(self.len);
        for chunk in self.full.iter().chain([&self.open]) {
            let mut at = 0;
            while let Some(n) = leb128::get(chunk, &mut at) {
                out.push(Duration::from_nanos(n).as_secs_f64());
            }
        }
        out
    }
}

#[cfg(test)]
#[path = "lateness_tests.rs"]
mod tests;
