//! A sample's one wake-up timer: the session asks to be woken at an instant
//! ([`crate::workload::Effects::wake`]); the newest request replaces the previous one.
//!
//! One long-lived local task per sample sleeps until the requested instant and then
//! fires (the sample's [`super::host`] drives the session's `on_wake` right there).
//! Re-arming never spawns: a request *later* than the one the task sleeps towards only
//! moves the target (the task wakes at the old instant, sees the new one and sleeps on),
//! and only an *earlier* one (or the first) wakes the task to sleep less. A video session re-arms its chunk timeout on every message, so this is a store
//! of an `Instant` per message instead of a task spawned and aborted per message.

use std::cell::Cell;
use std::rc::Rc;

use tokio::sync::Notify;
use tokio::time::Instant;

/// What the sample and its timer task share (one thread: plain cells).
#[derive(Default)]
struct Shared {
    /// The requested instant; `None` when nothing is armed.
    target: Cell<Option<Instant>>,
    /// The instant the task currently sleeps towards, if it sleeps on one.
    sleeping_to: Cell<Option<Instant>>,
    /// Wakes the task when the target moved earlier (or was armed while it idled).
    poke: Notify,
}

/// The sample's wake-up timer; dropping it ends its task.
pub struct WakeTimer {
    shared: Rc<Shared>,
    task: tokio::task::JoinHandle<()>,
}

impl WakeTimer {
    /// Start the timer task on the current thread's `LocalSet`; `fire` is called when a
    /// request comes due (the sample's host drives the session's `on_wake`) and returns
    /// `false` once nobody listens.
    pub fn start(fire: impl Fn() -> bool + 'static) -> Self {
        let shared = Rc::new(Shared::default());
        let task = tokio::task::spawn_local(run(shared.clone(), fire));
        Self { shared, task }
    }

    /// Wake the sample at `at`, replacing any earlier request.
    pub fn arm(&mut self, at: Instant) {
        self.shared.target.set(Some(at));
        if self.shared.sleeping_to.get().is_none_or(|s| at < s) {
            self.shared.poke.notify_one();
        }
    }

    /// Cancel the pending request, if any.
    pub fn disarm(&mut self) {
        self.shared.target.set(None);
    }
}

impl Drop for WakeTimer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn run(shared: Rc<Shared>, fire: impl Fn() -> bool) {
    loop {
        let Some(at) = shared.target.get() else {
            shared.sleeping_to.set(None);
            shared.poke.notified().await;
            continue;
        };
        if Instant::now() >= at {
            shared.target.set(None);
            shared.sleeping_to.set(None);
            if !fire() {
                return;
            }
            continue;
        }
        shared.sleeping_to.set(Some(at));
        tokio::select! {
            () = tokio::time::sleep_until(at) => {}
            () = shared.poke.notified() => {}
        }
    }
}

/// Runs `body` on a current-thread runtime whose clock is paused (it advances only when
/// every task waits), inside a `LocalSet`: how the timer and the host are tested.
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
