//! A sample's send lateness while it is live, stored compactly and, for a held session,
//! in bounded memory. The sender records one lateness (`actual − intended`, never
//! negative) per scheduled message, about five a second for a duplex session, so a held
//! session's lateness grows with its length. Kept here as the [`Duration`]'s whole
//! nanoseconds in LEB128 (7 bits a byte): a lateness under 2.1 ms is 3 bytes, under
//! 268 ms 4. When the session gives the sender a logical file in the run's spool
//! ([`LatenessLog::spill_to`]), the bytes past a 4 KiB tail go there as they are made
//! ([`SpilledLog`]) and are read back at the sample's end, so a soak's memory for them
//! stays flat. It is exact: [`LatenessLog::seconds`] converts each back with the same
//! [`Duration::as_secs_f64`] the sender used to push, so every output sees the bits it
//! saw before (a proptest holds them equal, spilled or not).

use std::io;
use std::time::Duration;

use crate::util::leb128;
use crate::workload::spool::SessionSpool;
use crate::workload::spool::spilled::SpilledLog;

/// The lateness values of one sample, in send order (see the module header).
#[derive(Debug, Default)]
pub struct LatenessLog {
    bytes: SpilledLog,
    len: usize,
}

impl LatenessLog {
    /// Spills to `spool` (its own logical file) past the in-memory tail; call before the
    /// first [`LatenessLog::push`] (a log that already holds values keeps them in memory).
    pub fn spill_to(&mut self, spool: SessionSpool) {
        if self.bytes.is_empty() {
            self.bytes = SpilledLog::spilling(spool);
        }
    }

    /// Appends `late`.
    pub fn push(&mut self, late: Duration) {
        // A lateness past u64 nanoseconds (584 years) cannot come from an `Instant`.
        let n = u64::try_from(late.as_nanos()).unwrap_or(u64::MAX);
        let mut buf = [0u8; leb128::MAX_BYTES];
        let used = leb128::put_into(&mut buf, n);
        self.bytes.push(&buf[..used]);
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

    /// Bytes it holds in memory.
    #[cfg(test)]
    pub fn heap_bytes(&self) -> usize {
        self.bytes.heap_bytes()
    }

    /// Every value as [`Duration::as_secs_f64`] gives it, in push order; an error naming
    /// the spool file when spilled values cannot be read back.
    pub fn seconds(&self) -> io::Result<Vec<f64>> {
        let bytes = self.bytes.bytes()?;
        let mut out = Vec::with_capacity(self.len);
        let mut at = 0;
        while let Some(n) = leb128::get(&bytes, &mut at) {
            out.push(Duration::from_nanos(n).as_secs_f64());
        }
        Ok(out)
    }
}

#[cfg(test)]
#[path = "lateness_tests.rs"]
mod tests;
