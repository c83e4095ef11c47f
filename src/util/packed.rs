//! Bytes kept for a whole run, packed into large anonymous mappings advised as transparent
//! huge pages (`MADV_HUGEPAGE`), handed out as shared [`Bytes`] slices.
//!
//! Why: prepared media (a duplex case's built appends) is written once before timing and
//! read once per send, seconds later. On a VM, a 4 KiB page left idle for seconds can cost
//! many times more to read than a fresh one (25× after 8 s on this project's benchmark
//! machine), a 2 MiB page does not, and on any machine huge pages save TLB misses
//! (BENCHMARKS.md, "Prepared media on huge pages"). A kernel without transparent huge
//! pages ignores the advice and the mapping works as plain memory.
//!
//! Two phases, no `unsafe`: [`Packer::push`] copies bytes into the open mapping and
//! returns a [`Ticket`]; [`Packer::finish`] seals every mapping read-only, after which
//! [`Packed::get`] hands out each ticket's bytes. Each mapping is freed when the last of
//! its slices is dropped.

use std::io;
use std::ops::Range;

use bytes::Bytes;
use memmap2::{Advice, MmapMut};

/// Bytes per mapping: sixteen 2 MiB huge pages. A larger item gets a mapping of its own.
pub const CHUNK_BYTES: usize = 32 << 20;

/// Where one pushed item lies: its mapping and range there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ticket {
    chunk: usize,
    range: Range<usize>,
}

/// Copies items into huge-page mappings (the first phase).
pub struct Packer {
    chunk_bytes: usize,
    open: Option<MmapMut>,
    used: usize,
    sealed: Vec<Bytes>,
}

impl Default for Packer {
    fn default() -> Self {
        Self::new()
    }
}

impl Packer {
    /// A packer with [`CHUNK_BYTES`] mappings.
    pub fn new() -> Self {
        Self::with_chunk_bytes(CHUNK_BYTES)
    }

    /// A packer whose mappings hold `chunk_bytes` (at least 1).
    pub fn with_chunk_bytes(chunk_bytes: usize) -> Self {
        Self {
            chunk_bytes: chunk_bytes.max(1),
            open: None,
            used: 0,
            sealed: Vec::new(),
        }
    }

    /// Copies `item` in; its bytes are [`Packed::get`]'s once the packer is finished.
    /// Fails only when the kernel refuses a mapping (e.g. an address-space limit).
    pub fn push(&mut self, item: &[u8]) -> io::Result<Ticket> {
        if item.len() > self.chunk_bytes {
            // Sealed first, so mappings keep the order their tickets name.
            self.seal_open()?;
            let mut own = map(item.len())?;
            own.copy_from_slice(item);
            self.sealed.push(seal(own)?);
            let chunk = self.sealed.len() - 1;
            return Ok(Ticket {
                chunk,
                range: 0..item.len(),
            });
        }
        let fits = self.used + item.len() <= self.chunk_bytes;
        let mut open = match self.open.take() {
            Some(open) if fits => open,
            full => {
                if let Some(full) = full {
                    self.sealed.push(seal(full)?);
                }
                self.used = 0;
                map(self.chunk_bytes)?
            }
        };
        let range = self.used..self.used + item.len();
        open[range.clone()].copy_from_slice(item);
        self.open = Some(open);
        self.used = range.end;
        Ok(Ticket {
            chunk: self.sealed.len(),
            range,
        })
    }

    /// Seals every mapping read-only: the second phase.
    pub fn finish(mut self) -> io::Result<Packed> {
        self.seal_open()?;
        Ok(Packed {
            chunks: self.sealed,
        })
    }

    fn seal_open(&mut self) -> io::Result<()> {
        if let Some(open) = self.open.take() {
            self.sealed.push(seal(open)?);
            self.used = 0;
        }
        Ok(())
    }
}

/// The sealed mappings: every ticket's bytes.
#[derive(Debug, Default)]
pub struct Packed {
    chunks: Vec<Bytes>,
}

impl Packed {
    /// The bytes `ticket` was given for, shared with the mapping (no copy); `None` for a
    /// ticket from another packer that names no mapping here.
    pub fn get(&self, ticket: &Ticket) -> Option<Bytes> {
        (self.chunks.get(ticket.chunk))
            .filter(|c| ticket.range.end <= c.len())
            .map(|c| c.slice(ticket.range.clone()))
    }

    /// Every ticket's bytes, in order; an error naming the first ticket this set has no
    /// mapping for (one from another packer).
    pub fn get_all<'a>(
        &self,
        tickets: impl IntoIterator<Item = &'a Ticket>,
    ) -> io::Result<Vec<Bytes>> {
        (tickets.into_iter())
            .map(|t| self.get(t).ok_or_else(|| foreign(t)))
            .collect()
    }

    /// Mappings made.
    pub fn mappings(&self) -> usize {
        self.chunks.len()
    }
}

/// The error for a ticket this set has no mapping for.
pub fn foreign(t: &Ticket) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("no packed mapping {} holds bytes {:?}", t.chunk, t.range),
    )
}

fn map(len: usize) -> io::Result<MmapMut> {
    let m = MmapMut::map_anon(len.max(1))?;
    // Advice, not a requirement: without transparent huge pages the mapping is plain.
    let _ = m.advise(Advice::HugePage);
    Ok(m)
}

fn seal(m: MmapMut) -> io::Result<Bytes> {
    Ok(Bytes::from_owner(m.make_read_only()?))
}

#[cfg(test)]
#[path = "packed_tests.rs"]
mod tests;
