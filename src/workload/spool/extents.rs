//! Where each logical file's bytes are in the spool file. The file describes itself:
//! every appended piece is written as a [`HEADER_BYTES`]-byte header (its logical file,
//! its offset there, its length) followed by its bytes, so nothing in memory grows with
//! what sessions spill during the run. The read-back index is built after the run, when
//! the report first reads, by scanning the headers ([`Index::scan`]) — incrementally, as
//! a sweep's later points append more. Per logical file it is a sorted vector of
//! 24-byte extents (a session appends in order, so a new stretch goes at the end).

use std::collections::HashMap;
use std::io::{self, BufReader, Read, Seek, SeekFrom};

/// Bytes of the header before each piece's bytes in the spool file.
pub const HEADER_BYTES: usize = 24;

/// The header written before a piece: logical file, offset and length, little-endian.
pub fn header(file: u64, offset: u64, len: u64) -> [u8; HEADER_BYTES] {
    let mut h = [0u8; HEADER_BYTES];
    h[..8].copy_from_slice(&file.to_le_bytes());
    h[8..16].copy_from_slice(&offset.to_le_bytes());
    h[16..].copy_from_slice(&len.to_le_bytes());
    h
}

fn parse(h: &[u8; HEADER_BYTES]) -> (u64, u64, u64) {
    let word = |i: usize| u64::from_le_bytes(h[i..i + 8].try_into().unwrap_or([0; 8]));
    (word(0), word(8), word(16))
}

/// One written stretch: logical `start`, `len` bytes, at `physical` in the spool file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Extent {
    /// Logical offset of its first byte.
    pub start: u64,
    /// Length in bytes.
    pub len: u64,
    /// Spool file offset of its first byte.
    pub physical: u64,
}

/// A logical file's stretches, sorted by `start`, never overlapping.
#[derive(Debug, Default)]
pub struct Extents(Vec<Extent>);

impl Extents {
    /// Records a stretch (each logical byte is written once: stretches never overlap).
    pub fn insert(&mut self, e: Extent) {
        match self.0.last() {
            Some(last) if last.start > e.start => {
                let at = self.0.partition_point(|x| x.start < e.start);
                self.0.insert(at, e);
            }
            _ => self.0.push(e),
        }
    }

    /// The stretches that may hold bytes at or after logical offset `at`: the one that
    /// starts at or before it, then every later one, in order.
    pub fn from(&self, at: u64) -> &[Extent] {
        let i = self.0.partition_point(|x| x.start <= at).saturating_sub(1);
        &self.0[i..]
    }
}

/// The read-back index: every logical file's extents, from the spool file's headers up
/// to `scanned`.
#[derive(Debug, Default)]
pub struct Index {
    files: HashMap<u64, Extents>,
    scanned: u64,
}

impl Index {
    /// Stretches indexed so far.
    #[cfg(test)]
    pub fn pieces(&self) -> usize {
        self.files.values().map(|e| e.0.len()).sum()
    }

    /// A logical file's extents, if it has any.
    pub fn get(&self, file: u64) -> Option<&Extents> {
        self.files.get(&file)
    }

    /// Reads the headers of `src` from where the last scan stopped up to `end` (the end
    /// of the last record wholly written), stepping over `holes` (regions a failed write
    /// left unreadable, `[start, end)` in file order). A header that does not fit what
    /// the writer wrote is an error, and the scan stops there.
    pub fn scan<R: Read + Seek>(
        &mut self,
        src: R,
        end: u64,
        holes: &[(u64, u64)],
    ) -> io::Result<()> {
        if self.scanned >= end {
            return Ok(());
        }
        let mut r = BufReader::with_capacity(1 << 20, src);
        r.seek(SeekFrom::Start(self.scanned))?;
        let mut at = self.scanned;
        let from = self.scanned;
        let mut holes = holes.iter().filter(|h| h.1 > from).peekable();
        while at < end {
            if let Some(&&(start, stop)) = holes.peek()
                && start <= at
            {
                if stop > at {
                    r.seek_relative(i64::try_from(stop - at).map_err(io::Error::other)?)?;
                    at = stop;
                }
                holes.next();
                continue;
            }
            let mut h = [0u8; HEADER_BYTES];
            r.read_exact(&mut h)?;
            let (file, start, len) = parse(&h);
            let physical = at + HEADER_BYTES as u64;
            let next = physical.checked_add(len).filter(|n| *n <= end);
            let bounded = holes.peek().is_none_or(|h| next.is_some_and(|n| n <= h.0));
            let Some(next) = next.filter(|_| bounded && len > 0) else {
                return Err(io::Error::other(format!(
                    "bad record header at byte {at}: file {file}, offset {start}, length {len}"
                )));
            };
            self.files.entry(file).or_default().insert(Extent {
                start,
                len,
                physical,
            });
            r.seek_relative(i64::try_from(len).map_err(io::Error::other)?)?;
            at = next;
            self.scanned = at; // a later scan never indexes a record twice
        }
        self.scanned = at;
        Ok(())
    }
}

#[cfg(test)]
#[path = "extents_tests.rs"]
mod tests;
