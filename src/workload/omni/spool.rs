//! The run's capture spool: what measured sessions keep for their artifacts (output PCM
//! for `output.wav`, the event log for `events.json`) is spilled during the run to one
//! file in a directory outside the output root, so a session's memory does not grow with
//! its length. Each session writes its own *logical* files (one per kind), addressed by
//! offset as if each were a file of its own; sessions hand their bytes to a channel
//! (never blocking) in batches, and one dedicated writer thread appends every batch to
//! the spool file and indexes where it went. After the run the report flushes once and
//! reads each span back through that index; publication still happens after timing,
//! from those bytes.
//!
//! One physical file for the whole run, not one per session: creating a file costs an
//! inode allocation, which on a long-lived ext4 volume took more CPU than the writes
//! themselves (perf: `find_inode_bit`, `recently_deleted`), and a file per session held
//! a descriptor per session.
//!
//! A write error is remembered per logical file and surfaces when that file is read
//! back, naming the spool file. The spool lives as long as the workload's prepared
//! inputs (every run of a sweep or suite point shares it) and its directory is removed
//! when it is dropped; spools of processes that died are swept when the next one is
//! created.

use std::collections::{BTreeMap, HashMap};
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;

use bytes::Bytes;
use crossbeam_channel::{Receiver, Sender};

use super::artifacts::stale::owner_alive;

/// Spool directories created by this process (keeps names unique within it).
static DIRS: AtomicU64 = AtomicU64::new(0);
/// A spool directory's name: this, the owner's pid, `-`, a number.
const PREFIX: &str = "rtload-spool-";
/// A session hands what it appends to the writer in batches of about this many bytes
/// (one channel message and one `pwrite` per batch instead of per audio delta); see
/// [`SessionSpool::with_batch`] for a handle that appends smaller things.
pub const BATCH_BYTES: usize = 16 * 1024;

/// Removes the spool directories in `parent` whose owner process is gone (best effort).
fn sweep_dead(parent: &Path) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let pid = name
            .to_str()
            .and_then(|n| n.strip_prefix(PREFIX))
            .and_then(|rest| rest.split('-').next())
            .and_then(|p| p.parse::<u32>().ok());
        if pid.is_some_and(|pid| !owner_alive(pid)) {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// Where one stretch of spooled bytes lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    /// The session's logical file (its number in the spool).
    pub file: u64,
    /// Byte offset in that logical file.
    pub offset: u64,
    /// Length in bytes.
    pub len: u64,
}

enum Msg {
    Write { file: u64, offset: u64, pcm: Bytes },
    Flush(Sender<()>),
    Stop,
}

/// The first write error of each logical file, as text.
type Errors = Arc<Mutex<HashMap<u64, String>>>;

/// Where each logical file's written stretches are in the spool file: per logical file,
/// logical offset → (length, physical offset).
type Index = HashMap<u64, BTreeMap<u64, (u64, u64)>>;

/// What the writer has written: the index and the open spool file (opened at the first
/// write; reads go through the same handle).
#[derive(Debug, Default)]
struct Written {
    index: Index,
    file: Option<Arc<File>>,
}

/// State shared by the spool, its session handles and its writer.
#[derive(Debug)]
struct Shared {
    dir: PathBuf,
    tx: Sender<Msg>,
    errors: Errors,
    written: Arc<Mutex<Written>>,
}

impl Shared {
    fn path(&self) -> PathBuf {
        file_path(&self.dir)
    }
}

/// The spool file in `dir`.
fn file_path(dir: &Path) -> PathBuf {
    dir.join("spool.bin")
}

/// One run's spool: a directory and its writer thread.
#[derive(Debug)]
pub struct Spool {
    shared: Arc<Shared>,
    next_file: AtomicU64,
    writer: Mutex<Option<JoinHandle<()>>>,
}

impl Spool {
    /// A fresh spool directory `rtload-spool-<pid>-<n>` under `parent` (the caller passes
    /// `std::env::temp_dir()`, outside the output root) and its writer thread. Spools
    /// left there by dead processes (a killed run) are removed first.
    pub fn create(parent: &Path) -> io::Result<Self> {
        let n = DIRS.fetch_add(1, Ordering::Relaxed);
        let dir = parent.join(format!("{PREFIX}{}-{n}", std::process::id()));
        std::fs::create_dir_all(parent)?;
        sweep_dead(parent);
        std::fs::create_dir(&dir)?;
        let (tx, rx) = crossbeam_channel::unbounded();
        let errors = Errors::default();
        let written = Arc::new(Mutex::new(Written::default()));
        let (w_path, w_errors, w_written) = (file_path(&dir), errors.clone(), written.clone());
        let writer = std::thread::Builder::new()
            .name("rtload-spool".into())
            .spawn(move || write_loop(&w_path, &w_errors, &w_written, &rx));
        let shared = Arc::new(Shared {
            dir,
            tx,
            errors,
            written,
        });
        let writer = match writer {
            Ok(h) => h,
            Err(e) => {
                let _ = std::fs::remove_dir_all(&shared.dir);
                return Err(e);
            }
        };
        Ok(Self {
            shared,
            next_file: AtomicU64::new(0),
            writer: Mutex::new(Some(writer)),
        })
    }

    /// The spool directory.
    pub fn dir(&self) -> &Path {
        &self.shared.dir
    }

    /// A handle for one session: its own logical file, appended to in arrival order.
    pub fn session(&self) -> SessionSpool {
        SessionSpool {
            shared: Arc::clone(&self.shared),
            file: self.next_file.fetch_add(1, Ordering::Relaxed),
            end: 0,
            pending: Vec::new(),
            pending_at: 0,
            batch: BATCH_BYTES,
        }
    }

    /// Waits until every write sent before this call is done (the barrier before reading
    /// back). Returns at once if the writer is gone.
    pub fn flush(&self) {
        let (tx, rx) = crossbeam_channel::bounded(1);
        if self.shared.tx.send(Msg::Flush(tx)).is_ok() {
            let _ = rx.recv();
        }
    }

    /// Reads `span` back (call [`Spool::flush`] first). A write error of its logical
    /// file, bytes that were never written, or a read error is an error naming the spool
    /// file.
    pub fn load(&self, span: Span) -> io::Result<Bytes> {
        let path = self.shared.path();
        let named =
            |what: String| io::Error::other(format!("spool file {}: {what}", path.display()));
        let recorded = self
            .shared
            .errors
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&span.file)
            .cloned();
        if let Some(e) = recorded {
            return Err(named(format!("write failed: {e}")));
        }
        let mut buf = vec![0u8; span.len as usize];
        if span.len == 0 {
            return Ok(Bytes::from(buf));
        }
        let written = self
            .shared
            .written
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let extents = written.index.get(&span.file);
        let (Some(file), Some(extents)) = (written.file.as_ref(), extents) else {
            return Err(named(format!("session {} wrote nothing", span.file)));
        };
        let end = span.offset + span.len;
        let mut at = span.offset;
        // The stretch that starts at or before `at`, then the ones after it, in order.
        let first = extents.range(..=at).next_back().map_or(at, |(k, _)| *k);
        for (&start, &(len, physical)) in extents.range(first..end) {
            if start + len <= at {
                continue; // ends before `at`
            }
            if start > at {
                break; // a hole
            }
            let upto = (start + len).min(end);
            let dst = &mut buf[(at - span.offset) as usize..(upto - span.offset) as usize];
            file.read_exact_at(dst, physical + (at - start))
                .map_err(|e| named(e.to_string()))?;
            at = upto;
            if at == end {
                return Ok(Bytes::from(buf));
            }
        }
        Err(named(format!(
            "session {}: bytes {at}..{end} were never written",
            span.file
        )))
    }

    /// Stops the writer and removes the directory (idempotent; also done on drop).
    pub fn close(&self) -> io::Result<()> {
        let writer = self
            .writer
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        let Some(writer) = writer else {
            return Ok(());
        };
        // Writes queued before `Stop` are done before the thread ends; a session handle
        // that outlives the spool finds the writer gone and records that.
        let _ = self.shared.tx.send(Msg::Stop);
        let _ = writer.join();
        match std::fs::remove_dir_all(&self.shared.dir) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }
}

impl Drop for Spool {
    fn drop(&mut self) {
        let _ = self.close();
    }
}

/// One session's writing end: gathers appended chunks into batches of
/// [`BATCH_BYTES`] and hands each batch to the writer thread.
#[derive(Debug)]
pub struct SessionSpool {
    shared: Arc<Shared>,
    file: u64,
    end: u64,
    /// Appended bytes not yet handed to the writer; they start at `pending_at`.
    pending: Vec<u8>,
    pending_at: u64,
    /// Hand the pending bytes over once they reach this many.
    batch: usize,
}

impl SessionSpool {
    /// This handle with batches of `bytes` instead of [`BATCH_BYTES`] (at least 1): a
    /// session's event log appends ~200-byte lines, and what is pending is memory the
    /// session holds.
    pub fn with_batch(mut self, bytes: usize) -> Self {
        self.batch = bytes.max(1);
        self
    }

    /// Queues `pcm` at the end of this session's logical file and returns where it will
    /// be.
    /// Never blocks. Small chunks are copied into the pending batch, which is handed
    /// over once it holds a batch ([`BATCH_BYTES`] unless set); a chunk that large with
    /// nothing pending is moved, not copied. What is pending is handed over by
    /// [`SessionSpool::send_pending`] or when the handle is dropped.
    pub fn append(&mut self, pcm: Bytes) -> Span {
        let span = Span {
            file: self.file,
            offset: self.end,
            len: pcm.len() as u64,
        };
        self.end += span.len;
        if self.pending.is_empty() && pcm.len() >= self.batch {
            self.write_at(span.offset, pcm);
            return span;
        }
        if self.pending.is_empty() {
            self.pending_at = span.offset;
        }
        // Grown as needed (no batch-sized reservation up front: that is held per session).
        self.pending.extend_from_slice(&pcm);
        if self.pending.len() >= self.batch {
            self.send_pending();
        }
        span
    }

    /// Hands the pending batch (if any) to the writer thread.
    pub fn send_pending(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        let pcm = Bytes::from(std::mem::take(&mut self.pending));
        self.write_at(self.pending_at, pcm);
    }

    /// Queues `pcm` at `offset` of this session's logical file (positional: order never
    /// matters; each logical byte is written once).
    pub fn write_at(&self, offset: u64, pcm: Bytes) {
        let msg = Msg::Write {
            file: self.file,
            offset,
            pcm,
        };
        if self.shared.tx.send(msg).is_err() {
            record(
                &self.shared.errors,
                self.file,
                "spool writer is gone".into(),
            );
        }
    }
}

impl Drop for SessionSpool {
    fn drop(&mut self) {
        // The channel keeps order: the pending batch is written before any later
        // `Spool::flush` returns.
        self.send_pending();
    }
}

fn record(errors: &Errors, file: u64, e: String) {
    errors
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .entry(file)
        .or_insert(e);
}

/// The writer thread: appends each batch to the spool file (opened at the first write)
/// and indexes it, until `Stop` (or every sender is gone).
fn write_loop(path: &Path, errors: &Errors, written: &Mutex<Written>, rx: &Receiver<Msg>) {
    let mut file: Option<Arc<File>> = None;
    let mut end = 0u64;
    while let Ok(msg) = rx.recv() {
        match msg {
            Msg::Write {
                file: logical,
                offset,
                pcm,
            } => {
                if file.is_none() {
                    match OpenOptions::new()
                        .create(true)
                        .truncate(true)
                        .read(true)
                        .write(true)
                        .open(path)
                    {
                        Ok(f) => file = Some(Arc::new(f)),
                        Err(e) => {
                            record(errors, logical, e.to_string());
                            continue;
                        }
                    }
                }
                let Some(f) = file.as_ref().filter(|_| !pcm.is_empty()) else {
                    continue;
                };
                if let Err(e) = f.write_all_at(&pcm, end) {
                    record(errors, logical, e.to_string());
                    continue;
                }
                let mut w = written.lock().unwrap_or_else(PoisonError::into_inner);
                w.file.get_or_insert_with(|| Arc::clone(f));
                w.index
                    .entry(logical)
                    .or_default()
                    .insert(offset, (pcm.len() as u64, end));
                end += pcm.len() as u64;
            }
            Msg::Flush(reply) => {
                let _ = reply.send(());
            }
            Msg::Stop => return,
        }
    }
}

#[cfg(test)]
#[path = "spool_tests.rs"]
mod tests;
