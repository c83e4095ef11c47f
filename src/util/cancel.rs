//! The process's "a signal asked us to stop" flag, for long work outside the engine that
//! no run's interrupt switch reaches (a dataset archive extracted while the scenario
//! loads): the signal listener raises it with the first SIGINT/SIGTERM, and such work
//! checks it between steps and stops, cleaning up after itself. Only the signal listener
//! raises it, so work driven by tests (which trigger their own switches) never sees it.

use std::sync::atomic::{AtomicBool, Ordering};

static REQUESTED: AtomicBool = AtomicBool::new(false);

/// Ask long work to stop (the signal listener, on the first signal).
pub fn request() {
    REQUESTED.store(true, Ordering::SeqCst);
}

/// Whether a signal asked the process to stop.
pub fn requested() -> bool {
    REQUESTED.load(Ordering::SeqCst)
}
