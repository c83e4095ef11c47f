//! Safe, atomic, lock-free OmniInteract archive extraction (spec §3.2, seed-final).
//!
//! An archive (`.tar` or gzip-compressed `.tar.gz`, detected by content) is extracted into
//! `<target>/<fingerprint>`, where the fingerprint is `<archive size>-<archive mtime ns>`.
//! Every member is validated before anything is written: absolute names, `..` components
//! and members that are not regular files or directories (symlinks, hard links, devices,
//! FIFOs, sparse files) fail with `Unsafe path in OmniInteract archive: '<name>'`; so do
//! duplicate file names, a tar stream without its end-of-archive marker, a gzip trailer
//! whose CRC or length does not match, and going past [`ArchiveLimits`] (decompressed
//! bytes, members, compression ratio; `RTLOAD_ARCHIVE_MAX_*` raise them). The
//! tree is then written into a private staging directory `<target>/.tmp-<unique>` and
//! published with one `rename`. Concurrent extractors of the same archive converge: the
//! loser of the rename race uses the winner's tree. Staging is always removed; staging
//! named `.tmp-<pid>-<n>` left by a process that died is removed by the next extraction.

use std::ffi::OsString;
use std::fs::{self, File};
use std::io::{self, Read};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::UNIX_EPOCH;

use tar::EntryType;

use super::DatasetError;
use super::layout::data_dir;

mod verify;

pub use verify::{ArchiveLimits, ArchiveStats};
use verify::{Counted, Opened, open_reader};

/// Extract `archive` into `target` (see the module docs) and return the published tree's
/// data directory (`<target>/<fingerprint>` or `<target>/<fingerprint>/data`).
///
/// An already published tree for the same fingerprint that holds a data directory is
/// reused without reading the archive. A symlinked `target` or published directory is
/// refused.
pub fn extract_archive(archive: &Path, target: &Path) -> Result<PathBuf, DatasetError> {
    extract_archive_until(archive, target, &crate::util::cancel::requested)
}

/// [`extract_archive`], checking `stop` before each member of both passes: once it says
/// so, the extraction ends with [`DatasetError::Interrupted`] and its staging directory
/// is removed (a signal during extraction leaves nothing behind).
fn extract_archive_until(
    archive: &Path,
    target: &Path,
    stop: &dyn Fn() -> bool,
) -> Result<PathBuf, DatasetError> {
    if is_symlink(target) {
        return Err(DatasetError::SymlinkTarget(target.to_path_buf()));
    }
    let published = target.join(fingerprint(archive)?);
    if is_symlink(&published) {
        return Err(DatasetError::SymlinkPublished(published));
    }
    if published.is_dir()
        && let Ok(data) = data_dir(&published)
    {
        return Ok(data);
    }
    walk(open(archive, ArchiveLimits::from_env()?)?, |_, _| {
        stopped(stop)
    })?;
    fs::create_dir_all(target).map_err(DatasetError::io(target))?;
    // Staging dirs of extractors that died (their pid is gone) can hold gigabytes.
    crate::workload::omni::artifacts::stale::sweep(target);
    let staging = Staging::create(target)?;
    unpack(archive, &staging.0, stop)?;
    if data_dir(&staging.0).is_err() {
        return Err(DatasetError::DataNotFound(archive.to_path_buf()));
    }
    match fs::rename(&staging.0, &published) {
        Ok(()) => data_dir(&published),
        // Another extractor published the same archive first: use its tree.
        Err(_) if published.is_dir() && !is_symlink(&published) => data_dir(&published),
        Err(e) => Err(DatasetError::Io {
            path: published,
            source: e,
        }),
    }
}

/// Without writing: the data directory of `archive`'s already published tree under
/// `target`, or `None` after validating every member (what `rtload check` does).
pub fn published_or_validate(
    archive: &Path,
    target: &Path,
) -> Result<Option<PathBuf>, DatasetError> {
    if is_symlink(target) {
        return Err(DatasetError::SymlinkTarget(target.to_path_buf()));
    }
    let published = target.join(fingerprint(archive)?);
    if published.is_dir()
        && !is_symlink(&published)
        && let Ok(data) = data_dir(&published)
    {
        return Ok(Some(data));
    }
    validate_archive(archive)?;
    Ok(None)
}

/// The archive fingerprint `<size>-<mtime in ns>` naming its published tree.
pub fn fingerprint(archive: &Path) -> Result<String, DatasetError> {
    let meta = fs::metadata(archive).map_err(DatasetError::io(archive))?;
    let modified = meta.modified().map_err(DatasetError::io(archive))?;
    let mtime_ns: i128 = match modified.duration_since(UNIX_EPOCH) {
        Ok(after) => after.as_nanos() as i128,
        Err(before) => -(before.duration().as_nanos() as i128),
    };
    Ok(format!("{}-{mtime_ns}", meta.len()))
}

fn is_symlink(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}

/// What one archive member becomes on disk.
enum Member {
    Dir(PathBuf),
    File(PathBuf),
    Skip,
}

/// Classify a member, rejecting anything unsafe. The returned path is relative, made of
/// normal components only.
fn classify<R: Read>(entry: &tar::Entry<'_, R>) -> Result<Member, DatasetError> {
    let kind = entry.header().entry_type();
    if kind.is_pax_global_extensions() {
        return Ok(Member::Skip);
    }
    let raw = entry.path_bytes();
    let name = String::from_utf8_lossy(&raw).into_owned();
    let shown = name.trim_end_matches('/');
    let unsafe_member = || {
        let shown = if shown.is_empty() {
            name.as_str()
        } else {
            shown
        };
        DatasetError::UnsafeArchiveMember(shown.to_owned())
    };
    let path = entry.path().map_err(|_| unsafe_member())?;
    let mut rel = PathBuf::new();
    for component in path.components() {
        match component {
            Component::Normal(part) => rel.push(part),
            Component::CurDir => {}
            _ => return Err(unsafe_member()),
        }
    }
    let is_dir =
        kind == EntryType::Directory || (kind == EntryType::Regular && name.ends_with('/'));
    match kind {
        _ if is_dir && rel.as_os_str().is_empty() => Ok(Member::Skip),
        _ if is_dir => Ok(Member::Dir(rel)),
        EntryType::Regular | EntryType::Continuous if !rel.as_os_str().is_empty() => {
            Ok(Member::File(rel))
        }
        _ => Err(unsafe_member()),
    }
}

/// Open an archive for one pass (gunzipped when it starts with the gzip magic bytes),
/// bounded by `limits`.
fn open(archive: &Path, limits: ArchiveLimits) -> Result<Opened, DatasetError> {
    let file = File::open(archive).map_err(DatasetError::io(archive))?;
    let len = file.metadata().map_err(DatasetError::io(archive))?.len();
    Ok(open_reader(Box::new(file), len, archive, limits))
}

/// Walk every member of `opened`, calling `each` with the entry and its classification
/// after the integrity checks (member count, duplicates), then check the end of the
/// stream (end-of-archive marker, gzip trailer).
fn walk(
    opened: Opened,
    mut each: impl FnMut(&mut tar::Entry<'_, Counted>, Member) -> Result<(), DatasetError>,
) -> Result<ArchiveStats, DatasetError> {
    let Opened { mut tar, mut check } = opened;
    let mut entries = tar.entries().map_err(|e| check.read_err(e))?;
    let result = loop {
        let mut entry = match entries.next() {
            None => break Ok(()),
            Some(Err(e)) => break Err(e),
            Some(Ok(entry)) => entry,
        };
        let member = classify(&entry)?;
        let file = match &member {
            Member::File(rel) => Some(rel.clone()),
            _ => None,
        };
        let name = String::from_utf8_lossy(&entry.path_bytes()).into_owned();
        let pos = entry.raw_file_position();
        check.member(entry.header(), pos, file.as_deref(), &name)?;
        each(&mut entry, member)?;
    };
    result.map_err(|e| check.read_err(e))?;
    check.finish(tar)
}

/// Validate an archive held in memory (as [`extract_archive`]'s first pass does): safe
/// member names, no duplicates, complete tar and gzip streams, within `limits`.
#[cfg(test)]
pub fn validate_bytes(bytes: &[u8], limits: ArchiveLimits) -> Result<ArchiveStats, DatasetError> {
    let source: Box<dyn Read> = Box::new(io::Cursor::new(bytes.to_vec()));
    let opened = open_reader(source, bytes.len() as u64, Path::new("<memory>"), limits);
    walk(opened, |_, _| Ok(()))
}

/// Pass 1: read the whole archive and reject it on the first unsafe member, duplicate,
/// truncation, checksum mismatch or limit. Nothing is written.
pub fn validate_archive(archive: &Path) -> Result<ArchiveStats, DatasetError> {
    walk(open(archive, ArchiveLimits::from_env()?)?, |_, _| Ok(()))
}

/// Pass 2: write directories and regular files below `staging`. Members are re-checked,
/// so a file that changed between the passes still cannot write outside `staging`.
fn unpack(archive: &Path, staging: &Path, stop: &dyn Fn() -> bool) -> Result<(), DatasetError> {
    let opened = open(archive, ArchiveLimits::from_env()?)?;
    walk(opened, |entry, member| {
        stopped(stop)?;
        match member {
            Member::Skip => {}
            Member::Dir(rel) => {
                let dest = staging.join(rel);
                fs::create_dir_all(&dest).map_err(DatasetError::io(&dest))?;
            }
            Member::File(rel) => {
                let dest = staging.join(rel);
                if let Some(parent) = dest.parent() {
                    fs::create_dir_all(parent).map_err(DatasetError::io(parent))?;
                }
                let mut file = File::create(&dest).map_err(DatasetError::io(&dest))?;
                io::copy(entry, &mut file).map_err(|e| DatasetError::Archive {
                    path: archive.to_path_buf(),
                    source: e,
                })?;
            }
        }
        Ok(())
    })?;
    Ok(())
}

/// [`DatasetError::Interrupted`] once `stop` says so.
fn stopped(stop: &dyn Fn() -> bool) -> Result<(), DatasetError> {
    if stop() {
        Err(DatasetError::Interrupted)
    } else {
        Ok(())
    }
}

/// A private staging directory, removed (with whatever is left in it) on drop.
struct Staging(PathBuf);

impl Staging {
    fn create(target: &Path) -> Result<Staging, DatasetError> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        loop {
            let n = COUNTER.fetch_add(1, Ordering::Relaxed);
            let mut name = OsString::from(".tmp-");
            name.push(format!("{}-{n}", std::process::id()));
            let path = target.join(name);
            match fs::create_dir(&path) {
                Ok(()) => return Ok(Staging(path)),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(DatasetError::Io { path, source: e }),
            }
        }
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

#[cfg(test)]
mod fuzz_tests;
#[cfg(test)]
mod integrity_tests;
#[cfg(test)]
#[path = "extract_tests.rs"]
mod tests;
