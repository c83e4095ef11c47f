//! The spool's writer thread: gathers the batches sessions hand over into one reused,
//! page-aligned block and writes each full block to the spool file with `O_DIRECT`, so
//! spilled bytes never pass through the page cache. Writing through the page cache cost
//! the client a fresh page per 4 KiB spilled (allocate, zero the partial block, copy):
//! perf put the writer at about a fifth of the live phase's samples for a few MB/s of
//! audio, where one warm buffer and a direct write cost a copy. A file system that
//! refuses `O_DIRECT` (tmpfs on older kernels, some network file systems) gets the same
//! aligned writes without it.
//!
//! Each piece goes in as a header (its logical file, offset and length) and its bytes,
//! so the file describes itself and the writer keeps no index in memory. A flush writes
//! the partial block too, zero-padded to the alignment; its unaligned tail stays in the
//! buffer and is written again, in place, with whatever follows it. The readable end
//! moves past a piece only once all its bytes are in the file, so a reader never trusts
//! bytes the file does not hold; a failed write leaves a hole the reader steps over.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use crossbeam_channel::Receiver;
use rustix::io::Errno;

use super::extents::{HEADER_BYTES, header};
use super::{Errors, Msg, Piece, Written, record};

/// Direct writes start at, and cover, multiples of this many bytes (the largest logical
/// block size of common devices).
const ALIGN: usize = 4096;

/// `O_DIRECT` as `OpenOptionsExt::custom_flags` takes it.
const O_DIRECT: i32 = rustix::fs::OFlags::DIRECT.bits() as i32;

/// The block the writer gathers batches into before one write.
pub(super) const BLOCK_BYTES: usize = 1 << 20;

/// One piece accepted into the block but not yet wholly written, and where its header
/// is in the file.
struct Stretch {
    piece: Piece,
    physical: u64,
}

impl Stretch {
    /// Where its record (header and bytes) ends in the file.
    fn end(&self) -> u64 {
        self.physical + HEADER_BYTES as u64 + self.piece.len
    }
}

/// The writer thread's state.
pub(super) struct Writer {
    path: PathBuf,
    errors: Errors,
    written: Arc<Mutex<Written>>,
    /// The write handle (opened at the first write) and whether it is `O_DIRECT`.
    out: Option<(File, bool)>,
    /// Ask for `O_DIRECT` at the first write (tests turn it off to cover the fallback's
    /// writes through the page cache).
    try_direct: bool,
    /// `BLOCK_BYTES + ALIGN` bytes; the block is `mem[head..head + BLOCK_BYTES]`.
    mem: Vec<u8>,
    head: usize,
    /// Bytes in the block, and the spool file offset of its first byte (aligned).
    len: usize,
    at: u64,
    /// Stretches whose bytes are in the block, in file order.
    stretches: Vec<Stretch>,
}

impl Writer {
    /// A writer for the spool file at `path`.
    pub(super) fn new(path: PathBuf, errors: Errors, written: Arc<Mutex<Written>>) -> Self {
        let mem = vec![0u8; BLOCK_BYTES + ALIGN];
        let head = (ALIGN - mem.as_ptr() as usize % ALIGN) % ALIGN;
        Self {
            path,
            errors,
            written,
            out: None,
            try_direct: true,
            mem,
            head,
            len: 0,
            at: 0,
            stretches: Vec::new(),
        }
    }

    /// Serves `rx` until `Stop` (or every sender is gone).
    pub(super) fn run(mut self, rx: &Receiver<Msg>) {
        while let Ok(msg) = rx.recv() {
            match msg {
                Msg::Batch { bytes, pieces } => {
                    let mut at = 0;
                    for piece in pieces {
                        let end = at + piece.len as usize;
                        self.accept(piece, &bytes[at..end]);
                        at = end;
                    }
                }
                Msg::Flush(reply) => {
                    self.write_block();
                    let _ = reply.send(());
                }
                Msg::Stop => return,
            }
        }
    }

    /// Copies `piece`'s header and `pcm` (its bytes) into the block, writing each block
    /// that fills.
    fn accept(&mut self, piece: Piece, pcm: &[u8]) {
        if pcm.is_empty() {
            return;
        }
        if self.out.is_none() {
            match self.open() {
                Ok(out) => self.out = Some(out),
                Err(e) => return record(&self.errors, piece.file, e.to_string()),
            }
        }
        self.stretches.push(Stretch {
            piece,
            physical: self.at + self.len as u64,
        });
        self.copy_in(&header(piece.file, piece.offset, piece.len));
        self.copy_in(pcm);
    }

    /// Copies `bytes` into the block, writing each block that fills.
    fn copy_in(&mut self, bytes: &[u8]) {
        let mut rest = bytes;
        while !rest.is_empty() {
            let n = rest.len().min(BLOCK_BYTES - self.len);
            let start = self.head + self.len;
            self.mem[start..start + n].copy_from_slice(&rest[..n]);
            self.len += n;
            rest = &rest[n..];
            if self.len == BLOCK_BYTES {
                self.write_block();
            }
        }
    }

    /// Creates the spool file (direct if the file system allows) and the read handle
    /// [`super::Spool::load`] uses.
    fn open(&self) -> io::Result<(File, bool)> {
        let open = |direct: bool| {
            let mut o = OpenOptions::new();
            o.create(true).truncate(true).write(true);
            if direct {
                o.custom_flags(O_DIRECT);
            }
            o.open(&self.path)
        };
        let out = match self.try_direct.then(|| open(true)) {
            Some(Ok(f)) => (f, true),
            Some(Err(e)) if Errno::from_io_error(&e) != Some(Errno::INVAL) => return Err(e),
            _ => (open(false)?, false),
        };
        let read = File::open(&self.path)?;
        self.written
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .file = Some(Arc::new(read));
        Ok(out)
    }

    /// Writes the block (zero-padded to the alignment) and moves the readable end past
    /// every stretch now wholly in the file. A full block starts over empty; a partial
    /// one keeps its unaligned tail to be written again with what follows. A failed
    /// write is recorded for every stretch in the block, the block is given up, and the
    /// region from the first of those stretches to past the last becomes a hole.
    fn write_block(&mut self) {
        if self.stretches.is_empty() {
            // Nothing to index: at most a tail already in the file, or the rest of a
            // stretch whose write failed. A block full of that is skipped, not written.
            if self.len == BLOCK_BYTES {
                self.at += BLOCK_BYTES as u64;
                self.len = 0;
            }
            return;
        }
        let padded = self.len.next_multiple_of(ALIGN);
        self.mem[self.head + self.len..self.head + padded].fill(0);
        match self.write_at_most_twice(padded) {
            Ok(()) => self.mark_written(),
            Err(e) => {
                let e = e.to_string();
                let first = self.stretches.first().map_or(self.at, |s| s.physical);
                let last = self.stretches.last().map_or(0, Stretch::end);
                let hole = (first, last.max(self.at + padded as u64));
                self.written
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .holes
                    .push(hole);
                for s in self.stretches.drain(..) {
                    record(&self.errors, s.piece.file, e.clone());
                }
                self.at += padded as u64;
                self.len = 0;
                return;
            }
        }
        let keep = self.len % ALIGN;
        let aligned = self.len - keep;
        let start = self.head;
        self.mem
            .copy_within(start + aligned..start + self.len, start);
        self.at += aligned as u64;
        self.len = keep;
    }

    /// Writes `mem[head..head + padded]` at `at`; a direct write the device refuses
    /// (`EINVAL`: an alignment it does not take) is retried once through the page cache.
    fn write_at_most_twice(&mut self, padded: usize) -> io::Result<()> {
        let Some((file, direct)) = self.out.as_ref() else {
            return Err(io::Error::other("spool file not open"));
        };
        let block = &self.mem[self.head..self.head + padded];
        match file.write_all_at(block, self.at) {
            Err(e) if *direct && Errno::from_io_error(&e) == Some(Errno::INVAL) => {
                let file = OpenOptions::new().write(true).open(&self.path)?;
                file.write_all_at(block, self.at)?;
                self.out = Some((file, false));
                Ok(())
            }
            other => other,
        }
    }

    /// Moves the readable end past the stretches whose bytes are all in the file.
    fn mark_written(&mut self) {
        let end = self.at + self.len as u64;
        let done = self.stretches.iter().take_while(|s| s.end() <= end).count();
        let mut w = self.written.lock().unwrap_or_else(PoisonError::into_inner);
        for s in self.stretches.drain(..done) {
            w.bytes += s.piece.len;
            w.end = s.end();
        }
    }
}

#[cfg(test)]
#[path = "writer_tests.rs"]
mod tests;
