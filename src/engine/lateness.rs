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
        let mut n = u64::try_from(late.as_nanos()).unwrap_or(u64::MAX);
        loop {
            let low = (n & 0x7f) as u8;
            n >>= 7;
            if n == 0 {
                self.bytes.push(low);
                break;
            }
            self.bytes.push(low | 0x80);
        }
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
        let (mut n, mut shift) = (0u64, 0u32);
        for b in &self.bytes {
            n |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                out.push(Duration::from_nanos(n).as_secs_f64());
                (n, shift) = (0, 0);
            } else {
                shift += 7;
            }
        }
        out
    }
}

#[cfg(test)]
#[path = "lateness_tests.rs"]
mod tests;
