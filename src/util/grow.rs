//! Growth in bounded steps for the vectors a held session extends for as long as it
//! runs (its listener's closed streams and unit log, its spilled logs' tails). A `Vec` doubles when full, so a vector of 129 records holds
//! room for 256, and a soak's sessions, started together, double together: in a
//! 10-minute soak of 200 held sessions (131 responses each) every session's per-response
//! vectors went from 128 to 256 slots in the last minute, a step in the RSS of ~2 MiB
//! that bought nothing. [`reserve`] grows a vector by an eighth of its length instead (at
//! least [`STEP_BYTES`] at once), so what it holds unused stays within an eighth and one
//! step; pushes stay amortized O(1) (each growth copies the vector once, and there are
//! O(log n) of them per doubling of its length).

/// Bytes a vector grows by at least, so a short one does not reallocate per push.
pub const STEP_BYTES: usize = 512;

/// Makes room for `additional` more elements in `v` (nothing when it has it): its
/// capacity grows by the largest of `additional`, an eighth of its length, and
/// [`STEP_BYTES`] worth of elements.
pub fn reserve<T>(v: &mut Vec<T>, additional: usize) {
    if v.capacity() - v.len() >= additional {
        return;
    }
    let step = (STEP_BYTES / std::mem::size_of::<T>().max(1)).max(1);
    v.reserve_exact(additional.max(v.len() / 8).max(step));
}

/// [`reserve`], its capacity grown to no more than `max` (but always to room for
/// `additional`): for a buffer that is emptied or closed at a known size.
pub fn reserve_within<T>(v: &mut Vec<T>, additional: usize, max: usize) {
    if v.capacity() - v.len() >= additional {
        return;
    }
    let step = (STEP_BYTES / std::mem::size_of::<T>().max(1)).max(1);
    let grown = additional.max(v.len() / 8).max(step);
    v.reserve_exact(grown.min(max.saturating_sub(v.len())).max(additional));
}

/// Appends `x` to `v`, growing it as [`reserve`] does.
pub fn push<T>(v: &mut Vec<T>, x: T) {
    reserve(v, 1);
    v.push(x);
}

/// Appends `n` in LEB128 to `out` ([`crate::util::leb128::put`]), growing it as
/// [`reserve`] does.
pub fn put_leb128(out: &mut Vec<u8>, n: u64) {
    reserve(out, 10);
    crate::util::leb128::put(out, n);
}

#[cfg(test)]
#[path = "grow_tests.rs"]
mod tests;
