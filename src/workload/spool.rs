//! The run's capture spool: what measured sessions keep for their artifacts
//! (OmniInteract's output PCM for `output.wav` and event log for `events.json`, the video
//! workload's `--save-video` media) is spilled during the run to one
//! file in a directory outside the output root, so the media and events a session
//! receives never accumulate in its memory. Each session writes its own *logical* files
//! (one per kind), addressed by offset as if each were a file of its own. Every session's
//! appends gather in one batch for the whole spool (so a session holds no pending bytes
//! of its own), which is handed to a channel (never blocking) once it holds
//! [`BATCH_BYTES`]; one dedicated writer thread ([`writer`]) appends every batch to the
//! spool file, directly rather than through the page cache, each piece behind a header
//! naming its logical file and offset. Nothing in memory grows with what is spilled:
//! after the run the report flushes once (which hands over the last partial batch), the
//! first read builds the index from the headers ([`extents`]) and each span is read back
//! through it; publication still happens after timing, from those bytes.
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

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;

use bytes::Bytes;
use crossbeam_channel::Sender;

use crate::util::fs::owner_alive;
use extents::{Extent, Index};
use writer::Writer;

mod extents;
pub mod lateness;
pub mod playback;
pub mod spilled;
mod writer;

/// Spool directories created by this process (keeps names unique within it).
static DIRS: AtomicU64 = AtomicU64::new(0);
/// [`Spool::copy_to`] reads a span back in pieces of at most this many bytes.
pub const COPY_BYTES: usize = 1 << 20;
/// A spool directory's name: this, the owner's pid, `-`, a number.
const PREFIX: &str = "rtload-spool-";
/// The run's appends are handed to the writer in batches of about this many bytes (one
/// channel message, and at most one writer wake-up, per batch instead of per audio
/// delta or event line). One batch for the whole spool, not one per session.
pub const BATCH_BYTES: usize = 64 * 1024;

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

/// One appended stretch in a batch: its logical file, its offset there and its length.
#[derive(Debug, Clone, Copy)]
struct Piece {
    file: u64,
    offset: u64,
    len: u64,
}

enum Msg {
    /// `bytes` holds each piece's bytes, one after another.
    Batch {
        bytes: Bytes,
        pieces: Vec<Piece>,
    },
    Flush(Sender<()>),
    Stop,
}

/// What the run's sessions have appended and not yet handed to the writer.
#[derive(Debug, Default)]
struct Batch {
    bytes: Vec<u8>,
    pieces: Vec<Piece>,
}

impl Batch {
    /// The gathered bytes and pieces, leaving this batch empty.
    fn take(&mut self) -> (Bytes, Vec<Piece>) {
        (
            Bytes::from(std::mem::take(&mut self.bytes)),
            std::mem::take(&mut self.pieces),
        )
    }
}

/// The first write error of each logical file, as text.
type Errors = Arc<Mutex<HashMap<u64, String>>>;

/// What the writer has written: how many bytes of pieces, where the last record wholly
/// in the file ends, the holes failed writes left, and a read handle on the spool file
/// (opened with it at the first write). The same size however much was spilled (holes
/// come only from failed writes).
#[derive(Debug, Default)]
struct Written {
    bytes: u64,
    end: u64,
    holes: Vec<(u64, u64)>,
    file: Option<Arc<File>>,
}

/// State shared by the spool, its session handles and its writer.
#[derive(Debug)]
struct Shared {
    dir: PathBuf,
    tx: Sender<Msg>,
    errors: Errors,
    written: Arc<Mutex<Written>>,
    batch: Mutex<Batch>,
    /// The next logical file's number (sessions and their own logs draw from it).
    next_file: AtomicU64,
}

impl Shared {
    fn path(&self) -> PathBuf {
        file_path(&self.dir)
    }

    /// Adds `pcm` (`piece` of a logical file) to the batch, handing the batch over first
    /// if `pcm` would take it past [`BATCH_BYTES`] and again once it holds that many (a
    /// batch is reserved once at its full size: it never grows by doubling).
    ///
    /// A batch is sent while the batch lock is held (the channel is unbounded, so sending
    /// never blocks): batches then reach the writer in the order they were taken, and a
    /// [`Spool::flush`] on another thread cannot overtake one that an append took just
    /// before it. Sent after the lock was released, such a batch could arrive behind the
    /// flush's barrier, and an artifact writer reading a finished session back while the
    /// run went on found its last bytes "never written" (seen once in CI, in
    /// `save_video_writes_each_measured_sessions_media`).
    fn append(&self, piece: Piece, pcm: &[u8]) {
        let mut batch = self.batch.lock().unwrap_or_else(PoisonError::into_inner);
        if !batch.bytes.is_empty() && batch.bytes.len() + pcm.len() > BATCH_BYTES {
            let (bytes, pieces) = batch.take();
            self.send(bytes, pieces);
        }
        if batch.bytes.capacity() == 0 {
            batch.bytes.reserve_exact(BATCH_BYTES.max(pcm.len()));
        }
        batch.bytes.extend_from_slice(pcm);
        batch.pieces.push(piece);
        if batch.bytes.len() >= BATCH_BYTES {
            let (bytes, pieces) = batch.take();
            self.send(bytes, pieces);
        }
    }

    /// Hands over what the batch holds (if anything), under the batch lock as
    /// [`Shared::append`] does.
    fn hand_over(&self) {
        let mut batch = self.batch.lock().unwrap_or_else(PoisonError::into_inner);
        if !batch.pieces.is_empty() {
            let (bytes, pieces) = batch.take();
            self.send(bytes, pieces);
        }
    }

    fn send(&self, bytes: Bytes, pieces: Vec<Piece>) {
        if let Err(e) = self.tx.send(Msg::Batch { bytes, pieces })
            && let Msg::Batch { pieces, .. } = e.into_inner()
        {
            for p in pieces {
                record(&self.errors, p.file, "spool writer is gone".into());
            }
        }
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
    /// Built from the file's headers at the first read after the run, extended by later
    /// reads when more was written (a sweep's later points).
    index: Mutex<Index>,
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
            .spawn(move || Writer::new(w_path, w_errors, w_written).run(&rx));
        let shared = Arc::new(Shared {
            dir,
            tx,
            errors,
            written,
            batch: Mutex::default(),
            next_file: AtomicU64::new(0),
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
            index: Mutex::default(),
            writer: Mutex::new(Some(writer)),
        })
    }

    /// The spool directory.
    pub fn dir(&self) -> &Path {
        &self.shared.dir
    }

    /// A handle for one session: its own logical file, appended to in arrival order.
    pub fn session(&self) -> SessionSpool {
        fresh(&self.shared)
    }

    /// Hands over the last partial batch and waits until every byte appended before this
    /// call is in the spool file (the barrier before reading back). Returns at once if
    /// the writer is gone.
    pub fn flush(&self) {
        self.shared.hand_over();
        self.sync();
    }

    /// Waits until the writer has written every batch handed over so far (what is still
    /// gathering stays in the batch).
    fn sync(&self) {
        let (tx, rx) = crossbeam_channel::bounded(1);
        if self.shared.tx.send(Msg::Flush(tx)).is_ok() {
            let _ = rx.recv();
        }
    }

    /// Reads `span` back (call [`Spool::flush`] first). A write error of its logical
    /// file, bytes that were never written, or a read error is an error naming the spool
    /// file.
    pub fn load(&self, span: Span) -> io::Result<Bytes> {
        let mut buf = vec![0u8; span.len as usize];
        self.pieces(span, |file, physical, at, n| {
            let dst = &mut buf[(at - span.offset) as usize..][..n];
            file.read_exact_at(dst, physical)
                .map_err(|e| self.named(e.to_string()))
        })?;
        Ok(Bytes::from(buf))
    }

    /// Writes `span` to `out` (call [`Spool::flush`] first), reading at most
    /// `COPY_BYTES` at a time, so a long recording is never held whole in memory. The
    /// errors of [`Spool::load`], plus `out`'s own write errors as they are.
    pub fn copy_to(&self, span: Span, out: &mut dyn Write) -> io::Result<()> {
        let mut buf = vec![0u8; (span.len as usize).min(COPY_BYTES)];
        self.pieces(span, |file, physical, _, n| {
            file.read_exact_at(&mut buf[..n], physical)
                .map_err(|e| self.named(e.to_string()))?;
            out.write_all(&buf[..n])
        })
    }

    /// An error naming the spool file.
    fn named(&self, what: String) -> io::Error {
        io::Error::other(format!(
            "spool file {}: {what}",
            self.shared.path().display()
        ))
    }

    /// Walks `span` through the index in pieces of at most [`COPY_BYTES`], calling
    /// `piece(file, physical offset, logical offset, length)` for each in order.
    fn pieces(
        &self,
        span: Span,
        mut piece: impl FnMut(&File, u64, u64, usize) -> io::Result<()>,
    ) -> io::Result<()> {
        let recorded = self
            .shared
            .errors
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&span.file)
            .cloned();
        if let Some(e) = recorded {
            return Err(self.named(format!("write failed: {e}")));
        }
        if span.len == 0 {
            return Ok(());
        }
        let (file, end, holes) = {
            let w = self
                .shared
                .written
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            (w.file.clone(), w.end, w.holes.clone())
        };
        let mut index = self.index.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(file) = file.as_deref() {
            index
                .scan(file, end, &holes)
                .map_err(|e| self.named(e.to_string()))?;
        }
        let (Some(file), Some(extents)) = (file, index.get(span.file)) else {
            return Err(self.named(format!("session {} wrote nothing", span.file)));
        };
        let end = span.offset + span.len;
        let mut at = span.offset;
        for &Extent {
            start,
            len,
            physical,
        } in extents.from(at)
        {
            if start + len <= at {
                continue; // ends before `at`
            }
            if start > at {
                break; // a hole
            }
            let upto = (start + len).min(end);
            while at < upto {
                let n = ((upto - at) as usize).min(COPY_BYTES);
                piece(&file, physical + (at - start), at, n)?;
                at += n as u64;
            }
            if at == end {
                return Ok(());
            }
        }
        Err(self.named(format!(
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

/// One session's writing end: its own logical file, appended to in arrival order through
/// the spool's shared batch. Holds no bytes of its own.
#[derive(Debug)]
pub struct SessionSpool {
    shared: Arc<Shared>,
    file: u64,
    end: u64,
}

impl SessionSpool {
    /// Queues `pcm` at the end of this session's logical file and returns where it will
    /// be. Never blocks: the bytes are copied into the spool's batch, which goes to the
    /// writer once it holds [`BATCH_BYTES`] or at [`Spool::flush`].
    pub fn append(&mut self, pcm: &[u8]) -> Span {
        let span = Span {
            file: self.file,
            offset: self.end,
            len: pcm.len() as u64,
        };
        self.end += span.len;
        if !pcm.is_empty() {
            let piece = Piece {
                file: span.file,
                offset: span.offset,
                len: span.len,
            };
            self.shared.append(piece, pcm);
        }
        span
    }

    /// A fresh logical file on the same spool, for another store of the same session
    /// (a [`spilled::SpilledLog`]: nothing else appends to it).
    pub fn log(&self) -> SessionSpool {
        fresh(&self.shared)
    }

    /// Everything appended so far, as one span from the start of the logical file.
    pub fn whole(&self) -> Span {
        Span {
            file: self.file,
            offset: 0,
            len: self.end,
        }
    }
}

/// A fresh logical file on `shared`.
fn fresh(shared: &Arc<Shared>) -> SessionSpool {
    SessionSpool {
        shared: Arc::clone(shared),
        file: shared.next_file.fetch_add(1, Ordering::Relaxed),
        end: 0,
    }
}

fn record(errors: &Errors, file: u64, e: String) {
    errors
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .entry(file)
        .or_insert(e);
}

#[cfg(test)]
#[path = "spool_tests.rs"]
mod tests;
