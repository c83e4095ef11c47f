//! Unsigned LEB128 (7 bits a byte, low first, the high bit saying "more") and zigzag
//! for signed deltas: the byte form of the compact exact logs a live session keeps (the
//! sender's lateness, the playback role's units), where most numbers are small.

/// Appends `n` to `out`: 1 byte under 128, 2 under 16,384, … 10 at most.
pub fn put(out: &mut Vec<u8>, mut n: u64) {
    loop {
        let low = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(low);
            return;
        }
        out.push(low | 0x80);
    }
}

/// Reads the number at `*at` in `bytes` and moves `*at` past it (`None` past the end).
pub fn get(bytes: &[u8], at: &mut usize) -> Option<u64> {
    let (mut n, mut shift) = (0u64, 0u32);
    loop {
        let b = *bytes.get(*at)?;
        *at += 1;
        n |= u64::from(b & 0x7f).checked_shl(shift).unwrap_or(0);
        if b & 0x80 == 0 {
            return Some(n);
        }
        shift += 7;
    }
}

/// A signed number as an unsigned one, small for small magnitudes (0, −1, 1, −2 → 0, 1,
/// 2, 3).
pub fn zigzag(d: i64) -> u64 {
    ((d << 1) ^ (d >> 63)) as u64
}

/// The inverse of [`zigzag`].
pub fn unzigzag(z: u64) -> i64 {
    ((z >> 1) as i64) ^ -((z & 1) as i64)
}

#[cfg(test)]
#[path = "leb128_tests.rs"]
mod tests;
