//! Graceful interruption: a switch the first SIGINT/SIGTERM flips (the coordinator then
//! stops releasing samples, gives in-flight ones a grace period and cancels the rest as
//! interrupted), and the signal listener that flips it. A second signal ends the process
//! at once with exit code 130; every file rtload writes is published atomically, so what
//! is on disk stays consistent.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::sync::Notify;

/// Outcome message prefix of a sample cancelled by an interruption (its own outcome: not
/// a failure of the server).
pub const INTERRUPTED: &str = "interrupted";

/// Exit code of an interrupted run (128 + SIGINT, as shells report it).
pub const EXIT_INTERRUPTED: u8 = 130;

/// A one-way switch shared by whoever asks for the interruption and the engine.
#[derive(Debug, Clone, Default)]
pub struct InterruptSwitch {
    inner: Arc<(AtomicBool, Notify)>,
    /// The run is over: a signal now only ends what the caller still waits for (the
    /// `--metrics-linger`), so the listener does not announce a grace period.
    over: Arc<AtomicBool>,
}

impl InterruptSwitch {
    /// A switch not yet flipped.
    pub fn new() -> Self {
        Self::default()
    }

    /// Ask the run to stop (idempotent).
    pub fn trigger(&self) {
        self.inner.0.store(true, Ordering::SeqCst);
        self.inner.1.notify_waiters();
        self.inner.1.notify_one();
    }

    /// Say the run is over (what a signal ends now is the caller's to announce).
    pub fn run_over(&self) {
        self.over.store(true, Ordering::SeqCst);
    }

    /// Whether [`trigger`](Self::trigger) was called.
    pub fn is_triggered(&self) -> bool {
        self.inner.0.load(Ordering::SeqCst)
    }

    /// Resolve once the switch is flipped.
    pub async fn triggered(&self) {
        loop {
            let notified = self.inner.1.notified();
            if self.is_triggered() {
                return;
            }
            notified.await;
        }
    }
}

/// How a run reacts to an interruption.
#[derive(Debug, Clone)]
pub struct Interrupt {
    /// Flipped by the first signal.
    pub switch: InterruptSwitch,
    /// How long in-flight samples may still finish before they are cancelled.
    pub grace: Duration,
}

/// Listen for SIGINT/SIGTERM on a dedicated thread: the first flips the returned switch
/// (after printing what happens next on stderr, unless the run is already
/// [over](InterruptSwitch::run_over)), the second exits the process with 130.
/// Returns once the handlers are installed, so a signal sent afterwards is never missed.
pub fn listen_for_signals(grace: Duration) -> std::io::Result<Interrupt> {
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
                let (mut int, mut term) =
                    match (signal(SignalKind::interrupt()), signal(SignalKind::terminate())) {
                        (Ok(i), Ok(t)) => (i, t),
                        (Err(e), _) | (_, Err(e)) => return drop(ready_tx.send(Err(e))),
                    };
                let _ = ready_tx.send(Ok(()));
                tokio::select! { _ = int.recv() => {}, _ = term.recv() => {} }
                if !flip.over.load(Ordering::SeqCst) {
                    eprintln!(
                        "interrupted: releasing no new sessions; in-flight sessions get {:.1} s to finish, then are cancelled (signal again to stop at once)",
                        grace.as_secs_f64()
                    );
                }
                flip.trigger();
                tokio::select! { _ = int.recv() => {}, _ = term.recv() => {} }
                eprintln!("interrupted again: stopping now");
                std::process::exit(i32::from(EXIT_INTERRUPTED));
            });
        })?;
    ready_rx
        .recv()
        .map_err(|_| std::io::Error::other("the signal thread stopped"))??;
    Ok(Interrupt { switch, grace })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn switch_wakes_a_waiter_flipped_before_or_after() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let s = InterruptSwitch::new();
        assert!(!s.is_triggered());
        let s2 = s.clone();
        rt.block_on(async move {
            let waiter = tokio::spawn(async move { s2.triggered().await });
            tokio::task::yield_now().await;
            s.trigger();
            waiter.await.unwrap();
            s.triggered().await; // already flipped: returns at once
        });
    }
}
