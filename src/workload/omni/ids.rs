//! One duplex session's table of response ids: the ids an event named, each held once,
//! under a dense index in first-sight order. The session's per-response records (its own
//! flags, the ledger's state, the playback clock's record, the live TTFP's stamps) are
//! kept under that index, so a session holds one copy of each id it holds.
//!
//! The table is a window: the session may let its oldest ids go ([`ResponseIds::evict_first`],
//! only those it has settled: see `session::responses`), so a held session's table is
//! bounded by the window and what is still in play, not by its length. Indices are never
//! reused: an id named again after it left is a new id with a new index (the checks that
//! can no longer see it are stated in `session::responses` and the README). The ids held
//! are kept as compactly as they can be read back exactly: their bytes end to end in one
//! buffer (its evicted front dropped once it is half of it), an 8-byte end offset each and
//! the table's slot, no allocation of their own. Whoever needs an id as an `Arc<str>` (the
//! playback clock, while a response's audio is in play) makes its own copy.
//!
//! Pure code.

use std::collections::VecDeque;
use std::hash::{BuildHasher, RandomState};

use hashbrown::HashTable;

/// A response id's index in its session's [`ResponseIds`].
pub type RespIx = u32;

/// The ids held, in first-sight order, and a hash table of their indices.
#[derive(Debug, Default, Clone)]
pub struct ResponseIds {
    /// The held ids' bytes, end to end, in first-sight order, from `start`.
    bytes: String,
    /// Where the first held id starts in `bytes` (what is before it was evicted).
    start: usize,
    /// Where each held id ends in `bytes` (it starts where the one before it ends).
    ends: VecDeque<u64>,
    /// The index of the first held id (how many were evicted).
    first: RespIx,
    table: HashTable<RespIx>,
    hasher: RandomState,
}

/// The held ids' bytes and offsets, to read id `ix` with.
#[derive(Clone, Copy)]
struct Held<'a> {
    bytes: &'a str,
    start: usize,
    ends: &'a VecDeque<u64>,
    first: RespIx,
}

impl<'a> Held<'a> {
    /// Held id `ix`.
    fn slice(&self, ix: RespIx) -> &'a str {
        let k = (ix - self.first) as usize;
        let start = if k == 0 {
            self.start
        } else {
            self.ends[k - 1] as usize
        };
        &self.bytes[start..self.ends[k] as usize]
    }
}

impl ResponseIds {
    fn held(&self) -> Held<'_> {
        Held {
            bytes: &self.bytes,
            start: self.start,
            ends: &self.ends,
            first: self.first,
        }
    }

    /// The index of `id`, if an event named it and it is held.
    pub fn get(&self, id: &str) -> Option<RespIx> {
        let held = self.held();
        // Most events name the newest response: one comparison before hashing.
        if let Some(k) = self.ends.len().checked_sub(1) {
            let newest = self.first + k as RespIx;
            if held.slice(newest) == id {
                return Some(newest);
            }
        }
        let hash = self.hasher.hash_one(id);
        self.table.find(hash, |&ix| held.slice(ix) == id).copied()
    }

    /// The index of `id`, recorded if new (or no longer held).
    pub fn intern(&mut self, id: &str) -> RespIx {
        if let Some(ix) = self.get(id) {
            return ix;
        }
        let n = RespIx::try_from(self.ends.len()).expect("fewer than 2^32 responses");
        let ix = (self.first.checked_add(n)).expect("fewer than 2^32 responses");
        self.bytes.push_str(id);
        self.ends.push_back(self.bytes.len() as u64);
        let hasher = &self.hasher;
        let held = Held {
            bytes: &self.bytes,
            start: self.start,
            ends: &self.ends,
            first: self.first,
        };
        self.table
            .insert_unique(hasher.hash_one(id), ix, |&k| hasher.hash_one(held.slice(k)));
        ix
    }

    /// The held id at `ix` (the one copy the session holds); panics for one not held.
    pub fn id(&self, ix: RespIx) -> &str {
        self.held().slice(ix)
    }

    /// The index of the oldest id held, if any.
    pub fn first(&self) -> Option<RespIx> {
        (!self.ends.is_empty()).then_some(self.first)
    }

    /// How many ids are held.
    pub fn held_len(&self) -> usize {
        self.ends.len()
    }

    /// How many ids were recorded, held or evicted.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.first as usize + self.ends.len()
    }

    /// Lets the oldest held id go (none held: nothing). Its index is never given again.
    pub fn evict_first(&mut self) {
        let Some(&end) = self.ends.front() else {
            return;
        };
        let ix = self.first;
        let hash = self.hasher.hash_one(self.id(ix));
        if let Ok(entry) = self.table.find_entry(hash, |&k| k == ix) {
            entry.remove();
        }
        self.ends.pop_front();
        self.first += 1;
        self.start = end as usize;
        if self.start > self.bytes.len() / 2 {
            // The evicted front is half the buffer or more: drop it (amortized O(1)).
            self.bytes.drain(..self.start);
            for e in &mut self.ends {
                *e -= self.start as u64;
            }
            self.start = 0;
        }
    }

    /// Every held `(index, id)`, in first-sight order.
    pub fn iter(&self) -> impl Iterator<Item = (RespIx, &str)> {
        let held = self.held();
        (self.first..self.first + self.ends.len() as RespIx).map(move |ix| (ix, held.slice(ix)))
    }
}

#[cfg(test)]
#[path = "ids_tests.rs"]
mod tests;
