//! A sample's send lateness while it is live, stored compactly. The sender records one
//! lateness (`actual − intended`, never negative) per scheduled message, about five a
//! second for a duplex session, so a held session's lateness grows with its length: as
//! `f64` seconds that was 8 bytes a message, the largest thing a soak's sessions kept
//! per response (~23 appends each). Kept here as the [`Duration`]'s whole nanoseconds in
//! LEB128 (7 bits a byte): a lateness under 2.1 ms is 3 bytes, under 268 ms 4. It is
//! exact: [`LatenessLog::seconds`] converts each back with the same
//! [`Duration::as_secs_f64`] the sender used to push, so every output sees the bits it
//! saw before (a proptest holds them equal).

use std::time::Duration;

use crate::util::leb128;

/// The lateness values of one sample, in send order (see the module header).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LatenessLog {
    bytes: Vec<u8>,
    len: usize,
}

impl LatenessLog {
    /// Appends `late`.
    pub fn push(&mut self, late: Duration) {
        // A lateness past u64 nanoseconds (584 years) cannot come from an `Instant`.
        leb128::put(
            &mut self.bytes,
            u64::try_from(late.as_nanos()).unwrap_or(u64::MAX),
        );
        self.len += 1;
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

    /// Bytes it holds (its buffer's capacity).
    #[cfg(test)]
    pub fn heap_bytes(&self) -> usize {
        self.bytes.capacity()
    }

    /// Every value as [`Duration::as_secs_f64`] gives it, in push order.
    pub fn seconds(&self) -> Vec<f64> {
        let mut out = Vec::with_capacity(self.len);
        let mut at = 0;
        while let Some(n) = leb128::get(&self.bytes, &mut at) {
            out.push(Duration::from_nanos(n).as_secs_f64());
        }
        out
    }
}

#[cfg(test)]
#[path = "lateness_tests.rs"]
mod tests;
