//! A sample's one wake-up: the session asks to be woken at an instant
//! ([`crate::workload::Effects::wake`]); the newest request replaces the previous one.
//! **Owns** one timer entry, the requested instant and the instant the entry is set to;
//! the sample's loop awaits [`Wake::due`] beside the reader and the sender, and drives
//! the session's `on_wake` when it resolves.
//!
//! Re-arming never touches the timer wheel for a *later* instant: it only moves the
//! target (the entry fires at the old instant, sees the new one and is set to it), and
//! only an *earlier* one (or the first) resets the entry. A video session re-arms its
//! chunk timeout on every message, so this is a store of an `Instant` per message.
//!
//! The entry is on the shard's [`Timer`](super::timer::Timer) (one `timerfd`, alarms on a
//! 1 ms grid) where the thread has one ([`Wake::precise`], the live phase's): it fires
//! within [`GRID`](super::timer::GRID) of its instant, where tokio's millisecond timer
//! fires 0–2 ms late. Elsewhere (and on the paused clocks of tests) it is a tokio `Sleep`.

use std::future::poll_fn;
use std::pin::Pin;

use tokio::time::{Instant, Sleep};

use super::timer::PreciseSleep;

/// The timer entry behind a wake-up.
enum Entry {
    Tokio(Pin<Box<Sleep>>),
    Precise(PreciseSleep),
}

impl Entry {
    fn reset(&mut self, at: Instant) {
        match self {
            Entry::Tokio(s) => s.as_mut().reset(at),
            Entry::Precise(p) => p.reset(at),
        }
    }

    async fn fired(&mut self) {
        match self {
            Entry::Tokio(s) => s.as_mut().await,
            Entry::Precise(p) => poll_fn(|cx| p.poll_fired(cx)).await,
        }
    }
}

/// The sample's wake-up (see the module header).
pub struct Wake {
    sleep: Entry,
    /// The requested instant; `None` when nothing is armed.
    target: Option<Instant>,
    /// The instant the timer entry is set to, while it means anything.
    set_to: Option<Instant>,
}

impl Default for Wake {
    fn default() -> Self {
        Wake {
            sleep: Entry::Tokio(Box::pin(tokio::time::sleep_until(Instant::now()))),
            target: None,
            set_to: None,
        }
    }
}

impl Wake {
    /// A wake-up on the shard's 1 ms-grid timer, where this thread has one (a
    /// current-thread runtime's `LocalSet` on Linux); a tokio one otherwise.
    pub fn precise() -> Self {
        match PreciseSleep::here() {
            Some(p) => Wake {
                sleep: Entry::Precise(p),
                target: None,
                set_to: None,
            },
            None => Wake::default(),
        }
    }

    /// Wake the sample at `at`, replacing any earlier request.
    pub fn arm(&mut self, at: Instant) {
        self.target = Some(at);
        if self.set_to.is_none_or(|s| at < s) {
            self.sleep.reset(at);
            self.set_to = Some(at);
        }
    }

    /// Cancel the pending request, if any.
    #[cfg(test)]
    pub fn disarm(&mut self) {
        self.target = None;
    }

    /// Whether a request is pending.
    pub fn armed(&self) -> bool {
        self.target.is_some()
    }

    /// Resolves at the requested instant (with the time it fired) and disarms; pending
    /// while nothing is armed. Cancel-safe.
    pub async fn due(&mut self) -> Instant {
        loop {
            let Some(target) = self.target else {
                return std::future::pending().await;
            };
            if self.set_to.is_none_or(|s| s > target) {
                self.sleep.reset(target);
                self.set_to = Some(target);
            }
            self.sleep.fired().await;
            self.set_to = None;
            let now = Instant::now();
            match self.target {
                Some(t) if now >= t => {
                    self.target = None;
                    return now;
                }
                // Moved later while the entry slept: set it to the new instant.
                _ => {}
            }
        }
    }
}

/// Runs `body` on a current-thread runtime whose clock is paused (it advances only when
/// every task waits), inside a `LocalSet`: how the wake-up and the loop are tested.
#[cfg(test)]
pub(super) fn on_paused_clock<T>(body: impl Future<Output = T>) -> T {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("a current-thread runtime");
    tokio::task::LocalSet::new().block_on(&rt, body)
}

#[cfg(test)]
#[path = "wake_tests.rs"]
mod tests;
