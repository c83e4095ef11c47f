//! Run-wide output-root lock (spec §4.7): an exclusive `flock` on
//! `<root>/.omniinteract.lock`, held for the whole run by one [`OutputLock`]
//! value, so two runs sharing an output root never interleave case bundles
//! and manifests. A second holder (another process, or another open of the
//! file in this process) blocks until the first is dropped.
//!
//! Filesystems without lock support (NFS, Lustre, FSx: `ENOLCK`,
//! `EOPNOTSUPP`, `EACCES`, `EINVAL`) do not stop the run: the lock proceeds
//! unlocked and reports a warning as data. Unix only (`flock(2)`).

use std::fs::{self, File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};

use super::ArtifactError;
use super::layout::LOCK_FILE;

/// The held output-root lock; released when dropped (or when the process exits).
#[derive(Debug)]
pub struct OutputLock {
    /// The open lock file; the `flock` lives on its open file description.
    file: File,
    /// `<root>/.omniinteract.lock`.
    path: PathBuf,
    /// Set when the filesystem has no locks and the run proceeds unlocked.
    warning: Option<String>,
}

impl OutputLock {
    /// Creates `root` and the lock file if needed, then blocks until the
    /// exclusive lock is held. Fails only on errors other than "no lock
    /// support" (those give an unlocked value with a [`warning`](Self::warning)).
    pub fn acquire(root: &Path) -> Result<OutputLock, ArtifactError> {
        fs::create_dir_all(root).map_err(|source| ArtifactError::CreateDir {
            path: root.to_owned(),
            source,
        })?;
        let path = root.join(LOCK_FILE);
        let lock_err = |source| ArtifactError::Lock {
            path: path.clone(),
            source,
        };
        let file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(&path)
            .map_err(lock_err)?;
        let warning = match lock_retrying(&file) {
            Ok(()) => None,
            Err(e) if lock_unsupported(&e) => Some(format!(
                "output root lock unavailable on this filesystem ({e}); proceeding without the lock: {}",
                path.display()
            )),
            Err(e) => return Err(lock_err(e)),
        };
        Ok(OutputLock {
            file,
            path,
            warning,
        })
    }

    /// The lock file path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether the exclusive lock is actually held (false in the fallback).
    pub fn is_held(&self) -> bool {
        self.warning.is_none()
    }

    /// The fallback warning when the filesystem has no locks.
    pub fn warning(&self) -> Option<&str> {
        self.warning.as_deref()
    }
}

impl Drop for OutputLock {
    fn drop(&mut self) {
        if self.is_held() {
            // Closing the file releases the lock too; unlocking first is just explicit.
            let _ = self.file.unlock();
        }
    }
}

/// Errors that mean "this filesystem does not do locks" (§3.2 fallback list).
pub fn lock_unsupported(err: &io::Error) -> bool {
    matches!(
        err.raw_os_error(),
        Some(libc::ENOLCK | libc::EOPNOTSUPP | libc::EACCES | libc::EINVAL)
    )
}

/// An exclusive `flock(2)`-style lock on `file` (std's `File::lock`), retried on `EINTR`.
fn lock_retrying(file: &File) -> io::Result<()> {
    loop {
        match file.lock() {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            other => return other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::mpsc::{TryRecvError, sync_channel};
    use std::time::Duration;

    /// Safety net only: nothing waits on time for synchronization.
    const SAFETY: Duration = Duration::from_secs(30);

    #[test]
    fn second_holder_blocks_until_first_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("out");
        let first = OutputLock::acquire(&root).unwrap();
        assert!(first.is_held(), "{:?}", first.warning());
        assert_eq!(first.path(), root.join(LOCK_FILE));

        let released = Arc::new(AtomicBool::new(false));
        let (started_tx, started_rx) = sync_channel(1);
        let (acquired_tx, acquired_rx) = sync_channel(1);
        let handle = {
            let (root, released) = (root.clone(), Arc::clone(&released));
            std::thread::spawn(move || {
                started_tx.send(()).unwrap();
                let second = OutputLock::acquire(&root).unwrap();
                // Must only get here after the first lock was released.
                acquired_tx.send(released.load(Ordering::SeqCst)).unwrap();
                drop(second);
            })
        };
        started_rx.recv_timeout(SAFETY).unwrap();
        // Whatever the scheduling, the second holder cannot have the lock yet.
        assert_eq!(acquired_rx.try_recv().err(), Some(TryRecvError::Empty));
        released.store(true, Ordering::SeqCst);
        drop(first);
        let saw_release = acquired_rx.recv_timeout(SAFETY);
        assert_eq!(saw_release, Ok(true));
        handle.join().unwrap();
        // Re-acquirable afterwards.
        assert!(OutputLock::acquire(&root).unwrap().is_held());
    }

    #[test]
    fn unsupported_errnos_fall_back() {
        for errno in [libc::ENOLCK, libc::EOPNOTSUPP, libc::EACCES, libc::EINVAL] {
            assert!(
                lock_unsupported(&io::Error::from_raw_os_error(errno)),
                "{errno}"
            );
        }
        assert!(!lock_unsupported(&io::Error::from_raw_os_error(
            libc::EBADF
        )));
        assert!(!lock_unsupported(&io::Error::other("x")));
    }

    #[test]
    fn root_that_is_a_file_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("file");
        fs::write(&root, b"x").unwrap();
        assert!(matches!(
            OutputLock::acquire(&root),
            Err(ArtifactError::CreateDir { .. })
        ));
    }
}
