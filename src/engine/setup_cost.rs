//! What opening its sessions cost the generator: the CPU each session's thread spent
//! polling its connect (TCP connect, TLS, WebSocket handshake) and sending its opening
//! messages (a duplex session's first `session.update`), read from the thread's own CPU
//! clock around each poll and summed over the run. **Owns** the run's tally; sessions add
//! to it through cheap clones.
//!
//! The thread CPU clock counts only what ran on that thread during the poll, so sessions
//! sharing a shard thread are not charged for each other; what the runtime does between
//! polls (its reactor, its timers) is not in it.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};

/// CPU nanoseconds the calling thread has used so far (0 where the clock is unavailable).
pub fn thread_cpu_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    u64::try_from(t.tv_sec).unwrap_or(0) * 1_000_000_000 + u64::try_from(t.tv_nsec).unwrap_or(0)
}

/// The run's tally of setup CPU; clones share it.
#[derive(Debug, Clone, Default)]
pub struct SetupTally(Arc<Counts>);

#[derive(Debug, Default)]
struct Counts {
    cpu_ns: AtomicU64,
    sessions: AtomicU64,
}

/// The setup cost of a run: CPU seconds summed over every session that tried to
/// connect, and how many did.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SetupCost {
    /// Thread CPU seconds spent connecting and sending the opening messages.
    pub cpu_s: f64,
    /// Sessions that tried to connect (each is counted once, opened or not).
    pub sessions: u64,
}

impl SetupTally {
    /// Adds one session's setup CPU.
    pub fn add(&self, cpu_ns: u64) {
        self.0.cpu_ns.fetch_add(cpu_ns, Ordering::Relaxed);
        self.0.sessions.fetch_add(1, Ordering::Relaxed);
    }

    /// What has been added so far.
    pub fn cost(&self) -> SetupCost {
        SetupCost {
            cpu_s: self.0.cpu_ns.load(Ordering::Relaxed) as f64 / 1e9,
            sessions: self.0.sessions.load(Ordering::Relaxed),
        }
    }
}

/// A future whose polls are timed on the polling thread's CPU clock: its output comes
/// with the CPU nanoseconds all its polls used.
pub struct OnCpu<F> {
    inner: Pin<Box<F>>,
    cpu_ns: u64,
}

impl<F: Future> OnCpu<F> {
    /// Times `inner`'s polls.
    pub fn new(inner: F) -> Self {
        Self {
            inner: Box::pin(inner),
            cpu_ns: 0,
        }
    }
}

impl<F: Future> Future for OnCpu<F> {
    type Output = (F::Output, u64);

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let before = thread_cpu_ns();
        let polled = self.inner.as_mut().poll(cx);
        let used = thread_cpu_ns().saturating_sub(before);
        self.cpu_ns += used;
        polled.map(|out| (out, self.cpu_ns))
    }
}

#[cfg(test)]
#[path = "setup_cost_tests.rs"]
mod tests;
