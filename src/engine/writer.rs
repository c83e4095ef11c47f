//! The artifact writer role: a fixed pool of blocking `std::thread` workers fed by a
//! bounded channel. **Owns** the writer threads, the queue and the run's list of files
//! that could not be written.
//!
//! Samples hand their finished files (captured media included) here after their session
//! ended, so no file IO ever runs on a shard thread. The queue really bounds memory: when it is full, `submit`
//! waits asynchronously (the sample does not report, so its concurrency slot stays taken
//! and no new session starts) — never a thread per artifact. Every file is published
//! atomically: a unique temp file in the destination directory, then a rename over the
//! target; the temp is always removed.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use tokio::sync::mpsc;

use crate::util::fs::write_atomic_with;
use crate::util::write_atomic;
use crate::workload::{Artifact, ArtifactBody};

/// Artifacts queued beyond this make `submit` wait (backpressure to the samples).
const QUEUE: usize = 256;

/// A handle samples use to publish files; cheap to clone and `Send`.
#[derive(Debug, Clone)]
pub struct WriterHandle {
    tx: mpsc::Sender<Artifact>,
}

impl WriterHandle {
    /// Queue an artifact. Never blocks the caller's thread; when the queue is full the
    /// returned future waits for room (nothing is spawned to hold the artifact).
    pub async fn submit(&self, artifact: Artifact) {
        // A closed writer (run over) drops the artifact: nothing is waiting to publish it.
        let _ = self.tx.send(artifact).await;
    }
}

/// Writes `body` to `path` atomically: in-memory bytes at once; a spooled span after the
/// spool's barrier (its last batch may still be gathering), copied out in pieces.
fn publish(path: &Path, body: &ArtifactBody) -> std::io::Result<()> {
    match body {
        ArtifactBody::Bytes(b) => write_atomic(path, b),
        ArtifactBody::Spooled(spool, span) => {
            spool.flush();
            write_atomic_with(path, |f| spool.copy_to(*span, f))
        }
    }
}

/// Owns the writer threads; `finish` drains the queue and reports failures.
#[derive(Debug)]
pub struct Writer {
    handle: WriterHandle,
    threads: Vec<JoinHandle<()>>,
    errors: Arc<Mutex<Vec<String>>>,
}

impl Writer {
    /// Start `n_threads` writers publishing under `root`.
    pub fn start(root: PathBuf, n_threads: usize) -> Self {
        let (tx, rx) = mpsc::channel::<Artifact>(QUEUE);
        let rx = Arc::new(Mutex::new(rx));
        let errors = Arc::new(Mutex::new(Vec::new()));
        let threads = (0..n_threads.max(1))
            .map(|_| {
                let rx = Arc::clone(&rx);
                let root = root.clone();
                let errors = Arc::clone(&errors);
                std::thread::spawn(move || {
                    // One worker waits on the queue at a time; the others wait on the lock.
                    let next = || rx.lock().unwrap_or_else(|p| p.into_inner()).blocking_recv();
                    while let Some(a) = next() {
                        let path = root.join(&a.rel_path);
                        if let Err(e) = publish(&path, &a.body) {
                            let msg = format!("{}: {e}", path.display());
                            errors.lock().unwrap_or_else(|p| p.into_inner()).push(msg);
                        }
                    }
                })
            })
            .collect();
        Self {
            handle: WriterHandle { tx },
            threads,
            errors,
        }
    }

    /// A handle for samples.
    pub fn handle(&self) -> WriterHandle {
        self.handle.clone()
    }

    /// Wait for every queued artifact and return the write errors.
    pub fn finish(self) -> Vec<String> {
        drop(self.handle);
        for t in self.threads {
            let _ = t.join();
        }
        std::mem::take(&mut *self.errors.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

#[cfg(test)]
#[path = "writer_tests.rs"]
mod tests;
