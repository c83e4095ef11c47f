//! The shard's timer, exact to its grid. tokio's timer counts whole milliseconds and
//! rounds twice: an entry's instant is rounded up to the next millisecond tick, and the
//! runtime parks until a tick counted from a floored "now", so a wake-up lands 0–2 ms
//! after its instant (about uniformly), and so does every paced send. This timer keeps the
//! shard's wake-ups in a heap ([`Deadlines`], a plain type), arms one `timerfd`
//! (nanosecond resolution) at the earliest of them rounded up to [`GRID`], and wakes each
//! due wake-up's task when it goes off: a wake-up lands 0–[`GRID`] after its instant,
//! plus the shard's own delay. The grid bounds the shard's timer wakes to one per step,
//! however many sessions it holds — with a 1 ms grid as many as tokio's own tick, so the
//! halved lateness cost no CPU the benches could see (BENCHMARKS.md: a 250 or 500 µs
//! grid cost the client 15–45 % more CPU, and its server more reads, for ~0.1–0.5 ms).
//!
//! **Owns**, per shard thread (a current-thread runtime), the heap, the `timerfd` and the
//! task that reads it. A thread without one (another flavour of runtime, a system without
//! `timerfd`) gets `None` from [`Timer::here`], and its wake-ups use tokio's timer.

use std::cell::Cell;
use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use tokio::time::Instant;

/// The timer's resolution: alarms are rounded up to a multiple of it, so the shard wakes
/// at most once per grid step for the timer however many wake-ups are due.
pub const GRID: Duration = Duration::from_millis(1);

/// One wake-up's place in the timer: the instant it is set to and the task to wake.
#[derive(Default)]
pub struct Slot {
    /// The instant the slot is set to; `None` once it fired or was dropped.
    due: Cell<Option<Instant>>,
    /// It went off since it was last set.
    fired: Cell<bool>,
    waker: Cell<Option<Waker>>,
}

impl Slot {
    /// Fires the slot if `at` is still its instant (an entry it was moved away from is
    /// stale); returns whether it did.
    fn fire(&self, at: Instant) -> bool {
        if self.due.get() != Some(at) {
            return false;
        }
        self.due.set(None);
        self.fired.set(true);
        if let Some(w) = self.waker.take() {
            w.wake();
        }
        true
    }
}

/// A heap entry: a slot and the instant it was set to then.
struct Entry {
    at: Instant,
    slot: Rc<Slot>,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.at == other.at
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    /// Reversed: the earliest instant is the heap's top.
    fn cmp(&self, other: &Self) -> Ordering {
        other.at.cmp(&self.at)
    }
}

/// The pure core: the shard's pending instants, earliest first, and the grid its alarms
/// fall on (multiples of `grid` from `origin`).
pub struct Deadlines {
    heap: BinaryHeap<Entry>,
    origin: Instant,
    grid: Duration,
}

impl Deadlines {
    /// No instants yet; alarms on multiples of `grid` after `origin`.
    pub fn new(origin: Instant, grid: Duration) -> Self {
        Deadlines {
            heap: BinaryHeap::new(),
            origin,
            grid,
        }
    }

    /// Sets `slot` to `at` (an entry it had before becomes stale) and returns the alarm
    /// `at` needs.
    pub fn set(&mut self, slot: &Rc<Slot>, at: Instant) -> Instant {
        slot.due.set(Some(at));
        slot.fired.set(false);
        self.heap.push(Entry {
            at,
            slot: slot.clone(),
        });
        self.alarm_for(at)
    }

    /// The grid point at or after `at`.
    pub fn alarm_for(&self, at: Instant) -> Instant {
        let ns = at.saturating_duration_since(self.origin).as_nanos();
        let grid = self.grid.as_nanos().max(1);
        let steps = ns.div_ceil(grid);
        self.origin + Duration::from_nanos(u64::try_from(steps * grid).unwrap_or(u64::MAX))
    }

    /// Fires every slot due at `now`; returns how many fired.
    pub fn fire(&mut self, now: Instant) -> usize {
        let mut fired = 0;
        while self.heap.peek().is_some_and(|e| e.at <= now) {
            let e = self.heap.pop().expect("peeked");
            fired += usize::from(e.slot.fire(e.at));
        }
        fired
    }

    /// The alarm the earliest live instant needs (stale entries on top are dropped).
    pub fn next_alarm(&mut self) -> Option<Instant> {
        while let Some(e) = self.heap.peek() {
            if e.slot.due.get() == Some(e.at) {
                return Some(self.alarm_for(e.at));
            }
            self.heap.pop();
        }
        None
    }

    /// Entries held, stale ones included.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// No entries are held.
    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

/// One wake-up on the shard's timer: set it, poll it; dropping it forgets its instant.
pub struct PreciseSleep {
    slot: Rc<Slot>,
    timer: Rc<Timer>,
}

impl PreciseSleep {
    /// Goes off at `at` (replacing the instant it was set to).
    pub fn reset(&mut self, at: Instant) {
        self.timer.set(&self.slot, at);
    }

    /// Ready once it went off since it was last set.
    pub fn poll_fired(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        if self.slot.fired.get() {
            return Poll::Ready(());
        }
        let w = match self.slot.waker.take() {
            Some(w) if w.will_wake(cx.waker()) => w,
            _ => cx.waker().clone(),
        };
        self.slot.waker.set(Some(w));
        Poll::Pending
    }
}

impl Drop for PreciseSleep {
    fn drop(&mut self) {
        self.slot.due.set(None);
        drop(self.slot.waker.take());
    }
}

#[cfg(target_os = "linux")]
mod fd;
#[cfg(target_os = "linux")]
pub use fd::Timer;

/// Where `timerfd` is missing there is no shard timer: [`Timer::here`] is always `None`.
#[cfg(not(target_os = "linux"))]
pub struct Timer(());

#[cfg(not(target_os = "linux"))]
impl Timer {
    /// Never a timer here.
    pub fn here() -> Option<Rc<Timer>> {
        None
    }
    fn set(&self, _slot: &Rc<Slot>, _at: Instant) {}
}

impl PreciseSleep {
    /// A wake-up on this thread's shard timer, if the thread has one.
    pub fn here() -> Option<Self> {
        Timer::here().map(|timer| PreciseSleep {
            slot: Rc::default(),
            timer,
        })
    }
}

#[cfg(test)]
#[path = "timer_tests.rs"]
mod tests;
