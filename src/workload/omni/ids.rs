//! One duplex session's table of response ids: every id an event named, held once, under a
//! dense index in first-sight order. The session's per-response records (its own flags,
//! the ledger's state, the playback clock's record, the live TTFP's stamps) are kept in
//! vectors under that index, so a long session holds one id and one 4-byte table slot
//! per response instead of a hash-map entry per holder.
//!
//! Pure code.

use std::hash::{BuildHasher, RandomState};
use std::sync::Arc;

use hashbrown::HashTable;

/// A response id's index in its session's [`ResponseIds`].
pub type RespIx = u32;

/// The ids, in first-sight order, and a hash table of their indices.
#[derive(Debug, Default, Clone)]
pub struct ResponseIds {
    ids: Vec<Arc<str>>,
    table: HashTable<RespIx>,
    hasher: RandomState,
}

impl ResponseIds {
    /// The index of `id`, if an event named it.
    pub fn get(&self, id: &str) -> Option<RespIx> {
        let hash = self.hasher.hash_one(id);
        self.table
            .find(hash, |&ix| &*self.ids[ix as usize] == id)
            .copied()
    }

    /// The index of `id`, recorded if new.
    pub fn intern(&mut self, id: &str) -> RespIx {
        if let Some(ix) = self.get(id) {
            return ix;
        }
        let ix = RespIx::try_from(self.ids.len()).expect("fewer than 2^32 responses");
        self.ids.push(Arc::from(id));
        let (ids, hasher) = (&self.ids, &self.hasher);
        self.table.insert_unique(hasher.hash_one(id), ix, |&k| {
            hasher.hash_one(&*ids[k as usize])
        });
        ix
    }

    /// The id at `ix` (the one copy the session holds).
    pub fn id(&self, ix: RespIx) -> &Arc<str> {
        &self.ids[ix as usize]
    }

    /// How many ids were recorded.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Every `(index, id)`, in first-sight order.
    pub fn iter(&self) -> impl Iterator<Item = (RespIx, &Arc<str>)> {
        (0..).zip(&self.ids)
    }
}

#[cfg(test)]
#[path = "ids_tests.rs"]
mod tests;
