//! Interruption: a switch with two stages — the first SIGINT/SIGTERM flips it (the
//! coordinator then stops releasing samples, gives in-flight ones a grace period and
//! cancels the rest as interrupted), the second cancels the in-flight samples at once —
//! and the signal listener that flips it. Either way the run returns, so the caller still
//! writes everything that finished, marked interrupted. A signal while the results are
//! written ([`Phase::Publishing`]) lets the writing finish and still ends the run as
//! interrupted. The library neither prints nor
//! exits: the listener tells the caller each signal it acted on ([`Signal`]) and the
//! caller says what happens.

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Duration;

use tokio::sync::Notify;

/// Outcome message prefix of a sample cancelled by an interruption (its own outcome: not
/// a failure of the server).
pub const INTERRUPTED: &str = "interrupted";

/// Exit code of an interrupted run (128 + SIGINT, as shells report it).
pub const EXIT_INTERRUPTED: u8 = 130;

/// A one-way, two-stage switch shared by whoever asks for the interruption and the
/// engine: stage 1 stops the run gracefully, stage 2 cancels what still runs.
#[derive(Debug, Clone, Default)]
pub struct InterruptSwitch {
    inner: Arc<(AtomicU8, Notify)>,
    /// Where the run is ([`Phase`] as a number): what a signal now stops.
    phase: Arc<AtomicU8>,
}

/// Where a run is, for what a signal stops.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Before the run (the scenario loads, its dataset is extracted): a signal stops
    /// that work (extraction removes its staging) and nothing runs.
    Preparing,
    /// Sessions run: a signal stops releasing and ends them.
    Running,
    /// The sessions are over and their results are being written: a signal lets the
    /// writing finish, then the run ends as interrupted (exit 130, results marked).
    Publishing,
    /// The results are written: a signal only ends what the caller still waits for (the
    /// `--metrics-linger`).
    Over,
}

impl InterruptSwitch {
    /// A switch not yet flipped.
    pub fn new() -> Self {
        Self::default()
    }

    /// Ask the run to stop gracefully (idempotent).
    pub fn trigger(&self) {
        self.raise(1);
    }

    /// Ask the run to cancel what still runs, now (implies [`trigger`](Self::trigger)).
    pub fn cancel_now(&self) {
        self.raise(2);
    }

    fn raise(&self, stage: u8) {
        self.inner.0.fetch_max(stage, Ordering::SeqCst);
        self.inner.1.notify_waiters();
        self.inner.1.notify_one();
    }

    /// Say where the run is (a sweep's next point starts [`Phase::Running`] again).
    pub fn enter(&self, phase: Phase) {
        self.phase.store(phase as u8, Ordering::SeqCst);
    }

    /// Say the run is over (what a signal ends now is the caller's to announce).
    pub fn run_over(&self) {
        self.enter(Phase::Over);
    }

    /// Where the run is.
    pub fn phase(&self) -> Phase {
        match self.phase.load(Ordering::SeqCst) {
            0 => Phase::Preparing,
            1 => Phase::Running,
            2 => Phase::Publishing,
            _ => Phase::Over,
        }
    }

    /// Whether [`trigger`](Self::trigger) (or [`cancel_now`](Self::cancel_now)) was called.
    pub fn is_triggered(&self) -> bool {
        self.inner.0.load(Ordering::SeqCst) >= 1
    }

    /// Whether [`cancel_now`](Self::cancel_now) was called.
    pub fn is_cancelled(&self) -> bool {
        self.inner.0.load(Ordering::SeqCst) >= 2
    }

    /// Resolve once the switch is flipped.
    pub async fn triggered(&self) {
        self.reached(1).await;
    }

    /// Resolve once what runs is to be cancelled now.
    pub async fn cancelled(&self) {
        self.reached(2).await;
    }

    async fn reached(&self, stage: u8) {
        loop {
            let notified = self.inner.1.notified();
            if self.inner.0.load(Ordering::SeqCst) >= stage {
                return;
            }
            notified.await;
        }
    }
}

/// How a run reacts to an interruption.
#[derive(Debug, Clone)]
pub struct Interrupt {
    /// Flipped by the first signal, raised by the second.
    pub switch: InterruptSwitch,
    /// How long in-flight samples may still finish before they are cancelled.
    pub grace: Duration,
}

/// A signal the listener acted on, for the caller to announce.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// The first. Running: nothing new is released; in-flight sessions get the grace
    /// period. Publishing: the results are finished, then the run ends as interrupted.
    /// Over: it only ends what the caller waits for (e.g. the `--metrics-linger`).
    First {
        /// Where the run was.
        phase: Phase,
    },
    /// The second: in-flight sessions are cancelled now; the run still returns (and
    /// still writes what finished).
    Second {
        /// Where the run was.
        phase: Phase,
    },
    /// A later one (the third is 3): the library has nothing more to stop; the caller
    /// may end the process.
    Later(u32),
}

/// Listen for SIGINT/SIGTERM on a dedicated thread: the first flips the returned switch,
/// the second [cancels](InterruptSwitch::cancel_now) what runs; `told` hears of each
/// signal right after the switch moved. Returns once the handlers are installed, so a
/// signal sent afterwards is never missed.
pub fn listen_for_signals(
    grace: Duration,
    told: impl Fn(Signal) + Send + 'static,
) -> std::io::Result<Interrupt> {
    use tokio::signal::unix::{SignalKind, signal};
    let switch = InterruptSwitch::new();
    let flip = switch.clone();
    let (ready_tx, ready_rx) = std::sync::mpsc::channel::<std::io::Result<()>>();
    std::thread::Builder::new()
        .name("rtload-signals".into())
        .spawn(move || {
            let rt = match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(rt) => rt,
                Err(e) => return drop(ready_tx.send(Err(e))),
            };
            rt.block_on(async move {
                let (mut int, mut term) = match (
                    signal(SignalKind::interrupt()),
                    signal(SignalKind::terminate()),
                ) {
                    (Ok(i), Ok(t)) => (i, t),
                    (Err(e), _) | (_, Err(e)) => return drop(ready_tx.send(Err(e))),
                };
                let _ = ready_tx.send(Ok(()));
                for n in 1u32.. {
                    tokio::select! { _ = int.recv() => {}, _ = term.recv() => {} }
                    match n {
                        1 => {
                            // Also stops work no run's switch reaches yet (extraction).
                            crate::util::cancel::request();
                            flip.trigger();
                            told(Signal::First {
                                phase: flip.phase(),
                            });
                        }
                        2 => {
                            flip.cancel_now();
                            told(Signal::Second {
                                phase: flip.phase(),
                            });
                        }
                        n => told(Signal::Later(n)),
                    }
                }
            });
        })?;
    ready_rx
        .recv()
        .map_err(|_| std::io::Error::other("the signal thread stopped"))??;
    Ok(Interrupt { switch, grace })
}

#[cfg(test)]
#[path = "interrupt_tests.rs"]
mod tests;
