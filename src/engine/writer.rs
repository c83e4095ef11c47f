//! The artifact writer: blocking `std::thread` workers fed by a bounded channel.
//!
//! Sample actors hand finished files here after their session ended, so no file IO ever
//! runs on a shard thread. Every file is published atomically: a unique temp file in the
//! destination directory, then a rename over the target; the temp is always removed.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use crossbeam_channel::{Receiver, Sender, TrySendError};

use crate::util::write_atomic;
use crate::workload::Artifact;

/// Jobs waiting beyond this make `submit` fall back to a blocking hand-off off the shard.
const QUEUE: usize = 256;

/// A handle samples use to publish files; cheap to clone and `Send`.
#[derive(Debug, Clone)]
pub struct WriterHandle {
    root: PathBuf,
    tx: Sender<Artifact>,
}

impl WriterHandle {
    /// Queue an artifact without blocking the caller's thread.
    pub fn submit(&self, artifact: Artifact) {
        match self.tx.try_send(artifact) {
            Ok(()) | Err(TrySendError::Disconnected(_)) => {}
            Err(TrySendError::Full(a)) => {
                let tx = self.tx.clone();
                // Queue full: hand the blocking send to a plain thread, never the shard.
                std::thread::spawn(move || tx.send(a));
            }
        }
    }

    /// The directory artifacts are published under.
    pub fn root(&self) -> &Path {
        &self.root
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
        let (tx, rx) = crossbeam_channel::bounded::<Artifact>(QUEUE);
        let errors = Arc::new(Mutex::new(Vec::new()));
        let threads = (0..n_threads.max(1))
            .map(|_| {
                let rx: Receiver<Artifact> = rx.clone();
                let root = root.clone();
                let errors = Arc::clone(&errors);
                std::thread::spawn(move || {
                    for a in rx {
                        let path = root.join(&a.rel_path);
                        if let Err(e) = write_atomic(&path, &a.bytes) {
                            let msg = format!("{}: {e}", path.display());
                            errors.lock().unwrap_or_else(|p| p.into_inner()).push(msg);
                        }
                    }
                })
            })
            .collect();
        Self {
            handle: WriterHandle { root, tx },
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
mod tests {
    use std::fs;

    use super::*;

    #[test]
    fn writes_atomically_and_drains() {
        let dir = tempfile::tempdir().unwrap();
        let w = Writer::start(dir.path().to_path_buf(), 2);
        for i in 0..10 {
            w.handle().submit(Artifact {
                rel_path: format!("s/{i}.bin").into(),
                bytes: bytes::Bytes::from(vec![i as u8; 3]),
            });
        }
        assert!(w.finish().is_empty());
        for i in 0..10 {
            assert_eq!(
                fs::read(dir.path().join(format!("s/{i}.bin"))).unwrap(),
                vec![i as u8; 3]
            );
        }
        let leftovers: Vec<_> = fs::read_dir(dir.path().join("s"))
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
            .collect();
        assert!(leftovers.is_empty());
    }
}
