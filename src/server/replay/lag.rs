//! How late this server's timers fire: tokio's timer wheel ticks in whole milliseconds
//! and a busy machine wakes a task later still, so a reply scheduled for `t` leaves at
//! `t + lag`. The recording already holds the recorded server's own lag; replaying it
//! must not add a second one. [`TimerLag`] keeps a low estimate of the lateness every
//! replayed connection observes (shared, lock-free): a moving average that follows a
//! smaller lateness fast (weight 1/4) and a larger one slowly (1/32), so the tick's
//! rounding is learnt and a busy machine's occasional late wake-ups (which the
//! recording has too, at random) are not. Each connection aims its timer that much
//! early and sends what is due by then.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// The largest lag estimated: past it the machine is overloaded, not late.
const MAX_LAG: Duration = Duration::from_millis(10);

/// A low moving average of timer lateness, in nanoseconds.
#[derive(Debug, Default)]
pub(crate) struct TimerLag(AtomicU64);

impl TimerLag {
    /// The current estimate.
    pub(crate) fn get(&self) -> Duration {
        Duration::from_nanos(self.0.load(Ordering::Relaxed))
    }

    /// A timer aimed at `aim` fired `late` after it. Concurrent updates may lose one
    /// another's sample; the average does not need every one.
    pub(crate) fn observe(&self, late: Duration) {
        let late = late.min(MAX_LAG).as_nanos() as i64;
        let old = self.0.load(Ordering::Relaxed) as i64;
        let new = old + (late - old) / if late < old { 4 } else { 32 };
        self.0.store(new.max(0) as u64, Ordering::Relaxed);
    }
}
