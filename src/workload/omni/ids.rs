//! One duplex session's table of response ids: every id an event named, held once, under a
//! dense index in first-sight order. The session's per-response records (its own flags,
//! the ledger's state, the playback clock's record, the live TTFP's stamps) are kept in
//! vectors under that index, so a long session holds one copy of each id and one 4-byte
//! table slot per response instead of a hash-map entry per holder.
//!
//! The ids are the one per-response cost that exactness cannot bound: the ledger must
//! tell a repeated id from a new one however long ago it was seen (spec §1.7), and a
//! server's ids are arbitrary strings, so anything smaller than the id itself (a hash of
//! 8 or 16 bytes) could call a new id a duplicate. They are kept as compactly as they can
//! be read back exactly: their bytes end to end in one buffer, an 8-byte end offset each
//! and the table's slot, no allocation of their own (a 37-byte server id costs about 50
//! bytes). Whoever needs an id as an `Arc<str>` (the playback clock, while a response's
//! audio is in play) makes its own copy and drops it when done.
//!
//! Pure code.

use std::hash::{BuildHasher, RandomState};

use hashbrown::HashTable;

/// A response id's index in its session's [`ResponseIds`].
pub type RespIx = u32;

/// The ids, in first-sight order, and a hash table of their indices.
#[derive(Debug, Default, Clone)]
pub struct ResponseIds {
    /// Every id's bytes, end to end, in first-sight order.
    bytes: String,
    /// Where each id ends in `bytes` (it starts where the one before it ends).
    ends: Vec<u64>,
    table: HashTable<RespIx>,
    hasher: RandomState,
}

impl ResponseIds {
    /// The index of `id`, if an event named it.
    pub fn get(&self, id: &str) -> Option<RespIx> {
        let hash = self.hasher.hash_one(id);
        self.table.find(hash, |&ix| self.id(ix) == id).copied()
    }

    /// The index of `id`, recorded if new.
    pub fn intern(&mut self, id: &str) -> RespIx {
        if let Some(ix) = self.get(id) {
            return ix;
        }
        let ix = RespIx::try_from(self.ends.len()).expect("fewer than 2^32 responses");
        self.bytes.push_str(id);
        self.ends.push(self.bytes.len() as u64);
        let hasher = &self.hasher;
        let (bytes, ends) = (&self.bytes, &self.ends);
        self.table.insert_unique(hasher.hash_one(id), ix, |&k| {
            hasher.hash_one(slice(bytes, ends, k))
        });
        ix
    }

    /// The id at `ix` (the one copy the session holds).
    pub fn id(&self, ix: RespIx) -> &str {
        slice(&self.bytes, &self.ends, ix)
    }

    /// How many ids were recorded.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Every `(index, id)`, in first-sight order.
    pub fn iter(&self) -> impl Iterator<Item = (RespIx, &str)> {
        (0..self.ends.len() as RespIx).map(|ix| (ix, self.id(ix)))
    }
}

/// Id `ix` of a table's `bytes` and `ends`.
fn slice<'a>(bytes: &'a str, ends: &[u64], ix: RespIx) -> &'a str {
    let ix = ix as usize;
    let start = if ix == 0 { 0 } else { ends[ix - 1] as usize };
    &bytes[start..ends[ix] as usize]
}

#[cfg(test)]
#[path = "ids_tests.rs"]
mod tests;
