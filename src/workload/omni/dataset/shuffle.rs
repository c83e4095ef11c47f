//! CPython-compatible shuffle: an MT19937 generator seeded exactly like
//! `random.Random(seed)` and `random.Random(seed).shuffle(list)`, so rtload selects the
//! same OmniInteract cases in the same order as the reference for the same `--seed`
//! (spec §3.4 "Bit-exact shuffle parity", §7 item 5). Pure: values in, values out.

const N: usize = 624;
const M: usize = 397;
const MATRIX_A: u32 = 0x9908_b0df;
const UPPER_MASK: u32 = 0x8000_0000;
const LOWER_MASK: u32 = 0x7fff_ffff;

/// The Mersenne Twister MT19937 generator as used by CPython's `random` module.
#[derive(Debug, Clone)]
pub struct Mt19937 {
    state: [u32; N],
    index: usize,
}

impl Mt19937 {
    /// Seeds like CPython's `random.Random(seed)` for a non-negative integer seed:
    /// `init_by_array` with the 32-bit little-endian words of `seed` (key `[0]` for 0).
    /// (Python uses `|seed|` for negative seeds, so pass the absolute value.)
    pub fn new(seed: u64) -> Self {
        let lo = seed as u32;
        let hi = (seed >> 32) as u32;
        if hi == 0 {
            Self::from_key(&[lo])
        } else {
            Self::from_key(&[lo, hi])
        }
    }

    /// Seeds with the reference `init_genrand(19650218)` followed by `init_by_array(key)`.
    /// An empty key behaves like `[0]`, as CPython does.
    pub fn from_key(key: &[u32]) -> Self {
        let key: &[u32] = if key.is_empty() { &[0] } else { key };
        let mut mt = Self::from_u32(19_650_218);
        let mt_state = &mut mt.state;
        let mut i = 1usize;
        let mut j = 0usize;
        for _ in 0..N.max(key.len()) {
            let prev = mt_state[i - 1] ^ (mt_state[i - 1] >> 30);
            mt_state[i] = (mt_state[i] ^ prev.wrapping_mul(1_664_525))
                .wrapping_add(key[j])
                .wrapping_add(j as u32);
            i += 1;
            j += 1;
            if i >= N {
                mt_state[0] = mt_state[N - 1];
                i = 1;
            }
            if j >= key.len() {
                j = 0;
            }
        }
        for _ in 0..N - 1 {
            let prev = mt_state[i - 1] ^ (mt_state[i - 1] >> 30);
            mt_state[i] = (mt_state[i] ^ prev.wrapping_mul(1_566_083_941)).wrapping_sub(i as u32);
            i += 1;
            if i >= N {
                mt_state[0] = mt_state[N - 1];
                i = 1;
            }
        }
        mt_state[0] = 0x8000_0000;
        mt.index = N;
        mt
    }

    /// The reference `init_genrand(s)` (single 32-bit seed).
    fn from_u32(seed: u32) -> Self {
        let mut state = [0u32; N];
        state[0] = seed;
        for i in 1..N {
            let prev = state[i - 1] ^ (state[i - 1] >> 30);
            state[i] = prev.wrapping_mul(1_812_433_253).wrapping_add(i as u32);
        }
        Mt19937 { state, index: N }
    }

    fn twist(&mut self) {
        for k in 0..N {
            let y = (self.state[k] & UPPER_MASK) | (self.state[(k + 1) % N] & LOWER_MASK);
            let mag = if y & 1 == 1 { MATRIX_A } else { 0 };
            self.state[k] = self.state[(k + M) % N] ^ (y >> 1) ^ mag;
        }
        self.index = 0;
    }

    /// Next tempered 32-bit output (`genrand_uint32` in CPython).
    pub fn genrand_u32(&mut self) -> u32 {
        if self.index >= N {
            self.twist();
        }
        let mut y = self.state[self.index];
        self.index += 1;
        y ^= y >> 11;
        y ^= (y << 7) & 0x9d2c_5680;
        y ^= (y << 15) & 0xefc6_0000;
        y ^= y >> 18;
        y
    }

    /// `random.getrandbits(k)` for `k <= 64`: 32-bit words filled low word first, the
    /// last word keeping its top `k mod 32` bits. `k == 0` returns 0 without drawing.
    pub fn getrandbits(&mut self, k: u32) -> u64 {
        let k = k.min(64);
        if k <= 32 {
            if k == 0 {
                return 0;
            }
            return u64::from(self.genrand_u32() >> (32 - k));
        }
        let lo = u64::from(self.genrand_u32());
        let hi = u64::from(self.genrand_u32() >> (64 - k));
        lo | (hi << 32)
    }

    /// `random._randbelow(n)`: with `k = bit_length(n)`, draws `getrandbits(k)` until the
    /// value is `< n`. Returns 0 for `n == 0` (Python would loop forever there).
    pub fn randbelow(&mut self, n: u64) -> u64 {
        if n == 0 {
            return 0;
        }
        let k = u64::BITS - n.leading_zeros();
        loop {
            let r = self.getrandbits(k);
            if r < n {
                return r;
            }
        }
    }
}

/// Shuffles `items` in place exactly like `random.Random(seed).shuffle(items)` in
/// CPython: for `i` from `n-1` down to 1, `j = randbelow(i+1)`, swap `i` and `j`.
pub fn python_shuffle<T>(items: &mut [T], seed: u64) {
    let mut rng = Mt19937::new(seed);
    for i in (1..items.len()).rev() {
        // `j <= i < items.len()`, so the conversion back to usize is lossless.
        let j = rng.randbelow(i as u64 + 1) as usize;
        items.swap(i, j);
    }
}

#[cfg(test)]
#[path = "shuffle_tests.rs"]
mod tests;
