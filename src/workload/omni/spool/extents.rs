//! Where one logical file's bytes are in the spool file: its written stretches in
//! logical order, as a sorted vector (a session appends in order, so a new stretch goes
//! at the end) that merges a stretch continuing the previous one both logically and
//! physically (a response's audio deltas that arrived together land side by side). It
//! grows with what a session spills, so it is kept small: 24 bytes a stretch, no tree
//! nodes. Pure.

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
        match self.0.last_mut() {
            Some(last)
                if last.start + last.len == e.start && last.physical + last.len == e.physical =>
            {
                last.len += e.len;
            }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn e(start: u64, len: u64, physical: u64) -> Extent {
        Extent {
            start,
            len,
            physical,
        }
    }

    #[test]
    fn a_stretch_continuing_the_last_both_ways_merges_with_it() {
        let mut x = Extents::default();
        x.insert(e(0, 10, 100));
        x.insert(e(10, 5, 110)); // continues both: merged
        x.insert(e(15, 5, 500)); // continues logically only: kept apart
        x.insert(e(20, 5, 505)); // continues that one
        assert_eq!(x.from(0), [e(0, 15, 100), e(15, 10, 500)]);
    }

    #[test]
    fn lookup_starts_at_the_stretch_holding_the_offset() {
        let mut x = Extents::default();
        for (i, p) in [(0u64, 40u64), (10, 80), (20, 10)] {
            x.insert(e(i, 10, p));
        }
        assert_eq!(x.from(0).len(), 3);
        assert_eq!(x.from(0)[0].start, 0);
        assert_eq!(x.from(9)[0].start, 0);
        assert_eq!(x.from(10)[0].start, 10);
        assert_eq!(x.from(25)[0].start, 20);
        assert_eq!(
            x.from(99).len(),
            1,
            "past the end: the last, which the reader skips"
        );
    }

    #[test]
    fn a_stretch_recorded_out_of_order_goes_in_its_place() {
        let mut x = Extents::default();
        x.insert(e(20, 5, 0));
        x.insert(e(0, 10, 5));
        x.insert(e(10, 10, 15));
        let starts: Vec<u64> = x.from(0).iter().map(|s| s.start).collect();
        assert_eq!(starts, [0, 10, 20]);
    }
}
