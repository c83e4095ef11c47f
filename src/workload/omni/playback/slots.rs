//! The clock's responses under the session's index, as a window: the session lets its
//! oldest responses go once they are settled and out of its own window
//! (`session::responses`), and no event can name such an index again (an id named after
//! it left comes with a new index). The clock then drops their slots from the front, as
//! soon as each is frozen (a let-go response whose last ack is still owed stays until it
//! is sent), so a long session holds a slot only for each response the session still
//! holds or still plays, not 16 bytes for every response it ever had.
//!
//! Indices stay the session's: `slots[ix]` is response `ix`'s slot while it is held.

use std::collections::VecDeque;
use std::ops::{Index, IndexMut};

use super::PlaybackClock;
use super::frozen::Slot;
use crate::workload::omni::ids::RespIx;

/// Slots from index `first` on.
#[derive(Debug, Default, Clone)]
pub(super) struct Slots {
    v: VecDeque<Slot>,
    /// The index of `v`'s first slot: every index before it was let go and dropped.
    first: usize,
    /// The session let go of every index before this one.
    let_go: usize,
}

impl Slots {
    /// One past the highest index held (the indices before `first` count: they were).
    pub fn len(&self) -> usize {
        self.first + self.v.len()
    }

    /// The first index still held.
    pub fn first(&self) -> usize {
        self.first
    }

    /// Slots held.
    #[cfg(test)]
    pub fn held(&self) -> usize {
        self.v.len()
    }

    /// Response `r`'s slot; `None` for an index never seen or let go and dropped.
    pub fn get(&self, r: usize) -> Option<&Slot> {
        self.v.get(r.checked_sub(self.first)?)
    }

    /// Makes room up to index `r` with empty slots (an index before `first` is a
    /// session's mistake: it was let go).
    pub fn grow_to(&mut self, r: usize) {
        debug_assert!(r >= self.first, "response {r} was let go");
        if self.len() <= r {
            self.v.resize_with(r + 1 - self.first, Slot::default);
        }
    }

    /// The slots held, with their indices, in index order.
    pub fn iter(&self) -> impl Iterator<Item = (usize, &Slot)> {
        (self.first..).zip(&self.v)
    }

    /// The session let go of every index before `upto`: drop the front slots among
    /// them that are frozen.
    pub fn let_go_below(&mut self, upto: usize) {
        self.let_go = self.let_go.max(upto);
        self.drop_front();
    }

    /// Drop the front slots the session let go of, as far as the first still in play.
    pub fn drop_front(&mut self) {
        while self.first < self.let_go && matches!(self.v.front(), Some(Slot::Frozen(_))) {
            self.v.pop_front();
            self.first += 1;
        }
    }
}

impl Index<usize> for Slots {
    type Output = Slot;
    fn index(&self, r: usize) -> &Slot {
        &self.v[r - self.first]
    }
}

impl IndexMut<usize> for Slots {
    fn index_mut(&mut self, r: usize) -> &mut Slot {
        &mut self.v[r - self.first]
    }
}

impl PlaybackClock {
    /// The session let go of every response before index `upto` (`session::responses`):
    /// none is named again, so each one's slot goes once it is settled ([`super::slots`]).
    pub fn let_go_below(&mut self, upto: RespIx) {
        self.resps.let_go_below(upto as usize);
    }

    /// Slots the clock holds: one per response from the first it still holds on.
    #[cfg(test)]
    pub fn slots_held(&self) -> usize {
        self.resps.held()
    }
}
