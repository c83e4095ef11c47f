//! The sample supervisor's line to its live phase. Both run on the sample's one shard
//! thread (the supervisor is a thread-local actor, the live phase a local task it spawned),
//! so the line is a queue and a waker behind an `Rc`, not a channel: the live phase's loop
//! polls it on every wake-up, and a tokio channel cost an atomic block-list pop and a
//! waker registration each time (~3–5 % of a shard's CPU at 1,000 sessions; BENCHMARKS.md,
//! "Prepared media on huge pages; the supervisor's line without atomics") plus a 32-slot
//! block per session. A send
//! also bumps the thread's generation, so a poll that finds it unchanged (and its waker
//! registered) returns at once without touching the line's own, cold, memory.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::future::poll_fn;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

/// What the sample supervisor tells its live phase.
#[derive(Debug)]
pub enum Control {
    /// End the session now with an `interrupted` outcome and this message; during the
    /// close, stop closing.
    Interrupt(String),
}

thread_local! {
    /// Sends and supervisor drops on this thread so far.
    static GENERATION: Cell<u64> = const { Cell::new(0) };
}

fn bump() {
    GENERATION.with(|g| g.set(g.get().wrapping_add(1)));
}

#[derive(Default)]
struct Line {
    queue: RefCell<VecDeque<Control>>,
    waker: RefCell<Option<Waker>>,
    /// The supervisor's end was dropped: nothing more will come.
    closed: Cell<bool>,
}

impl Line {
    fn wake(&self) {
        if let Some(w) = self.waker.borrow().as_ref() {
            w.wake_by_ref();
        }
    }
}

/// A new line: the supervisor's end and the live phase's.
pub fn line() -> (ControlTx, ControlRx) {
    let l = Rc::new(Line::default());
    let rx = ControlRx {
        line: l.clone(),
        seen: GENERATION.with(Cell::get),
        waker: None,
    };
    (ControlTx(l), rx)
}

/// The supervisor's end of the line.
pub struct ControlTx(Rc<Line>);

impl ControlTx {
    /// Queues `c` for the live phase and wakes it; `Err(c)` once the live phase has ended.
    pub fn send(&self, c: Control) -> Result<(), Control> {
        if Rc::strong_count(&self.0) == 1 {
            return Err(c);
        }
        self.0.queue.borrow_mut().push_back(c);
        bump();
        self.0.wake();
        Ok(())
    }
}

impl Drop for ControlTx {
    fn drop(&mut self) {
        self.0.closed.set(true);
        bump();
        self.0.wake();
    }
}

/// The live phase's end of the line.
pub struct ControlRx {
    line: Rc<Line>,
    /// The thread's generation when the line was last read.
    seen: u64,
    /// The waker last registered on the line.
    waker: Option<Waker>,
}

impl ControlRx {
    /// The next message, in order; `None` once the supervisor's end is gone and nothing
    /// waits. Pending registers the task's waker (kept while it stays the same one).
    pub fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Option<Control>> {
        let now = GENERATION.with(Cell::get);
        let same_waker = (self.waker.as_ref()).is_some_and(|w| w.will_wake(cx.waker()));
        if now == self.seen && same_waker {
            return Poll::Pending; // nothing was sent on this thread since the last read
        }
        if let Some(c) = self.line.queue.borrow_mut().pop_front() {
            return Poll::Ready(Some(c)); // `seen` stays behind: the next poll reads again
        }
        if self.line.closed.get() {
            return Poll::Ready(None);
        }
        self.seen = now;
        if !same_waker {
            self.waker = Some(cx.waker().clone());
            *self.line.waker.borrow_mut() = self.waker.clone();
        }
        Poll::Pending
    }

    /// Waits for the next message (see [`ControlRx::poll_recv`]).
    pub async fn recv(&mut self) -> Option<Control> {
        poll_fn(|cx| self.poll_recv(cx)).await
    }
}

#[cfg(test)]
#[path = "control_tests.rs"]
mod tests;
