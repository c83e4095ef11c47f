//! Run-wide output-root lock (spec §4.7): an exclusive `flock` on
//! `<root>/.omniinteract.lock`, held for the whole run by one [`OutputLock`]
//! value, so two runs sharing an output root never interleave case bundles
//! and manifests. A second holder (another process, or another open of the
//! file in this process) waits until the first is dropped, saying on stderr who holds
//! the lock (the holder writes its pid and start time into the lock file); with a wait
//! limit ([`OutputLock::acquire_within`], `lock_timeout_s` / `--lock-timeout`) it fails
//! instead once the limit passes.
//!
//! Filesystems without lock support (NFS, Lustre, FSx: `ENOLCK`,
//! `EOPNOTSUPP`, `EACCES`, `EINVAL`) do not stop the run: the lock proceeds
//! unlocked and reports a warning as data. Unix only (`flock(2)`).

use std::fs::{self, File, OpenOptions, TryLockError};
use std::io::{self, Write as _};
use std::path::Path;
#[cfg(test)]
use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::ArtifactError;
use super::layout::LOCK_FILE;

/// Poll period while waiting with a limit.
const POLL: Duration = Duration::from_millis(100);

/// The held output-root lock; released when dropped (or when the process exits).
#[derive(Debug)]
pub struct OutputLock {
    /// The open lock file; the `flock` lives on its open file description.
    file: File,
    /// `<root>/.omniinteract.lock`.
    #[cfg(test)]
    path: PathBuf,
    /// Set when the filesystem has no locks and the run proceeds unlocked.
    warning: Option<String>,
}

impl OutputLock {
    /// Creates `root` and the lock file if needed, then blocks until the
    /// exclusive lock is held. Fails only on errors other than "no lock
    /// support" (those give an unlocked value with a [`warning`](Self::warning)).
    #[cfg(test)]
    pub fn acquire(root: &Path) -> Result<OutputLock, ArtifactError> {
        Self::acquire_within(root, None)
    }

    /// [`OutputLock::acquire`], giving up once another holder has kept the lock for
    /// `limit` (`None`: wait as long as it takes).
    pub fn acquire_within(
        root: &Path,
        limit: Option<Duration>,
    ) -> Result<OutputLock, ArtifactError> {
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
        let warning = match wait_for(&file, &path, limit)? {
            Ok(()) => {
                note_holder(&file);
                None
            }
            Err(e) if lock_unsupported(&e) => Some(format!(
                "output root lock unavailable on this filesystem ({e}); proceeding without the lock: {}",
                path.display()
            )),
            Err(e) => return Err(lock_err(e)),
        };
        Ok(OutputLock {
            file,
            #[cfg(test)]
            path,
            warning,
        })
    }

    /// The lock file path.
    #[cfg(test)]
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

/// Take the lock; when someone else holds it, say who on stderr and wait (at most
/// `limit`, polling). The outer `Err` is the timeout; the inner one an OS error.
fn wait_for(
    file: &File,
    path: &Path,
    limit: Option<Duration>,
) -> Result<io::Result<()>, ArtifactError> {
    match file.try_lock() {
        Ok(()) => return Ok(Ok(())),
        Err(TryLockError::Error(e)) if e.kind() != io::ErrorKind::Interrupted => {
            return Ok(Err(e));
        }
        Err(_) => {}
    }
    let holder = holder_of(path);
    let until = match limit {
        Some(l) => format!("up to {:.1} s", l.as_secs_f64()),
        None => "until it is released (--lock-timeout SECONDS gives up instead)".into(),
    };
    // The library prints nothing itself: the CLI's log subscriber shows warnings.
    tracing::warn!(
        "waiting for the output lock {}: held by {holder}; waiting {until}",
        path.display()
    );
    let started = Instant::now();
    let Some(limit) = limit else {
        let res = lock_retrying(file);
        if res.is_ok() {
            tracing::warn!(
                "got the output lock after {:.1} s",
                started.elapsed().as_secs_f64()
            );
        }
        return Ok(res);
    };
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(Ok(())),
            Err(TryLockError::Error(e)) if e.kind() != io::ErrorKind::Interrupted => {
                return Ok(Err(e));
            }
            Err(_) if started.elapsed() >= limit => {
                return Err(ArtifactError::LockTimeout {
                    path: path.to_owned(),
                    holder,
                    waited_s: limit.as_secs_f64(),
                });
            }
            Err(_) => std::thread::sleep(POLL.min(limit)),
        }
    }
}

/// Who holds the lock, as the holder wrote it into the lock file.
fn holder_of(path: &Path) -> String {
    fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "another rtload run (it did not say which)".into())
}

/// Record this process as the holder (best effort: the lock works without it).
fn note_holder(mut file: &File) {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let _ = file.set_len(0);
    let _ = writeln!(
        file,
        "pid {} (rtload, holding since unix time {since})",
        std::process::id()
    );
}

/// Errors that mean "this filesystem does not do locks" (§3.2 fallback list).
pub fn lock_unsupported(err: &io::Error) -> bool {
    use rustix::io::Errno;
    matches!(
        Errno::from_io_error(err),
        Some(Errno::NOLCK | Errno::OPNOTSUPP | Errno::ACCESS | Errno::INVAL)
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
#[path = "lock_tests.rs"]
mod tests;
