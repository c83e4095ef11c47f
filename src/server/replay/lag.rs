//! How late this server's timers fire: tokio's timer wheel ticks in whole milliseconds
//! and rounds every deadline *up* to the next tick, and a busy machine wakes a task later
//! still, so a reply scheduled for `t` leaves at `t + lag`. The recording already holds
//! the recorded server's own lag; replaying it must not add a second one. [`TimerLag`]
//! keeps the median lateness of the last [`WINDOW`] timers that had to wait, over every
//! replayed connection (shared); each connection aims its timer that much early and sends
//! what is due by then, so the median reply leaves on time (half a little early, half a
//! little late, as the tick falls). The median, not a mean: a loaded machine's occasional
//! late wake-up (which the recording has too, at random) does not move it. Before the
//! first observation it is [`PRIOR`], the tick's rounding on average.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// The largest lag estimated: past it the machine is overloaded, not late.
const MAX_LAG: Duration = Duration::from_millis(10);
/// Timers whose lateness the median is taken over.
const WINDOW: usize = 31;
/// The estimate before any timer fired: half of tokio's 1 ms tick, what rounding a
/// deadline up to it costs on average.
const PRIOR: Duration = Duration::from_micros(500);

/// The median lateness of the last [`WINDOW`] timers, in nanoseconds.
#[derive(Debug)]
pub(crate) struct TimerLag {
    median: AtomicU64,
    recent: Mutex<Recent>,
}

/// A ring of the last lateness values, in nanoseconds.
#[derive(Debug)]
struct Recent {
    values: [u64; WINDOW],
    len: usize,
    next: usize,
}

impl Default for TimerLag {
    fn default() -> Self {
        TimerLag {
            median: AtomicU64::new(PRIOR.as_nanos() as u64),
            recent: Mutex::new(Recent {
                values: [0; WINDOW],
                len: 0,
                next: 0,
            }),
        }
    }
}

impl TimerLag {
    /// The current estimate.
    pub(crate) fn get(&self) -> Duration {
        Duration::from_nanos(self.median.load(Ordering::Relaxed))
    }

    /// A timer fired `late` after the instant it was aimed at.
    pub(crate) fn observe(&self, late: Duration) {
        let late = late.min(MAX_LAG).as_nanos() as u64;
        let mut r = self.recent.lock().unwrap_or_else(|p| p.into_inner());
        let at = r.next;
        r.values[at] = late;
        r.next = (at + 1) % WINDOW;
        r.len = (r.len + 1).min(WINDOW);
        let mut v = r.values;
        let v = &mut v[..r.len];
        let mid = v.len() / 2;
        let (_, median, _) = v.select_nth_unstable(mid);
        self.median.store(*median, Ordering::Relaxed);
    }
}

#[cfg(test)]
#[path = "lag_tests.rs"]
mod tests;
