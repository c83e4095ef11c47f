//! Atomic file writes: a unique temp file in the destination directory, then a rename over
//! the target; an existing file is untouched if anything fails. Used for every artifact and
//! result file (moved here from `engine::writer` so every layer can publish atomically).

use std::fs;
use std::io::Write;
use std::path::Path;

/// Write `bytes` to `path` atomically (temp file in the same directory + rename). An
/// existing file at `path` is untouched if anything fails.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_atomic_with(path, |f| f.write_all(bytes))
}

/// [`write_atomic`] with the content written by `fill` (which may stream it in pieces):
/// nothing appears at `path` unless `fill` and the sync succeed; the temp is removed on
/// any failure.
pub fn write_atomic_with(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    fs::create_dir_all(dir)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.{}.tmp", unique_suffix()));
    let res = (|| {
        let mut f = std::io::BufWriter::new(fs::File::create(&tmp)?);
        fill(&mut f)?;
        let f = f
            .into_inner()
            .map_err(std::io::IntoInnerError::into_error)?;
        f.sync_all()?;
        fs::rename(&tmp, path)
    })();
    if res.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    res
}

/// The text of the regular file at `path`, refusing anything else before reading a
/// byte: a FIFO (which would block), a device (`/dev/zero` would be read forever), a
/// directory, or a file over `max_bytes` (named with its size and the bound).
pub fn read_text_bounded(path: &Path, max_bytes: u64) -> std::io::Result<String> {
    use std::io::Read as _;
    let meta = fs::metadata(path)?;
    if !meta.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file (a FIFO, device or directory is not read)",
        ));
    }
    if meta.len() > max_bytes {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!(
                "{} bytes, over the {max_bytes}-byte bound for this kind of file",
                meta.len()
            ),
        ));
    }
    let mut text = String::with_capacity(meta.len() as usize);
    fs::File::open(path)?
        .take(max_bytes + 1)
        .read_to_string(&mut text)?;
    if text.len() as u64 > max_bytes {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("grew past the {max_bytes}-byte bound while being read"),
        ));
    }
    Ok(text)
}

/// The largest scenario file read (a scenario is a few KiB; this bounds a mistake).
pub const MAX_SCENARIO_BYTES: u64 = 16 * 1024 * 1024;

/// The largest result file `report`, `compare` and `merge` read: they hold a result in
/// memory several times its size while they work, so a bigger one is refused up front
/// with its size (its `.hlog` and distributions are what grow; split such a run into
/// shards and merge them).
pub const MAX_RESULT_BYTES: u64 = 256 * 1024 * 1024;

/// Checks before a run that a file can be written at `path` later: its directory is
/// created if missing and a probe file is written there, synced and removed. The error
/// names what failed (e.g. a read-only directory, a full disk, a path that is a
/// directory), so a run learns it before its first session, not after its last.
pub fn check_writable(path: &Path) -> std::io::Result<()> {
    if path.is_dir() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::IsADirectory,
            "is a directory",
        ));
    }
    write_atomic_with(&probe_path(path), |f| f.write_all(b"rtload write probe\n"))?;
    fs::remove_file(probe_path(path))
}

/// Where [`check_writable`] probes beside `path`.
fn probe_path(path: &Path) -> std::path::PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.{}.probe", std::process::id()))
}

fn unique_suffix() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    format!(
        "{}-{}-{nanos:x}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// True unless the process is known to be gone (`kill(pid, 0)` says "no such process").
pub fn owner_alive(pid: u32) -> bool {
    if pid == std::process::id() {
        return true;
    }
    let Ok(raw) = i32::try_from(pid) else {
        return true;
    };
    match rustix::process::Pid::from_raw(raw) {
        Some(p) => !matches!(
            rustix::process::test_kill_process(p),
            Err(e) if e == rustix::io::Errno::SRCH
        ),
        None => true,
    }
}

/// Helpers the file-system tests of several modules share.
#[cfg(test)]
pub(crate) mod test_support {
    /// The pid of a process that has exited and been reaped: it names no live process.
    pub(crate) fn dead_pid() -> u32 {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        pid
    }

    /// A destination whose every write fails with "disk full".
    pub(crate) struct DiskFull;

    impl std::io::Write for DiskFull {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            Err(std::io::Error::other("disk full"))
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
}
