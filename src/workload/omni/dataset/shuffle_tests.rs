use super::*;

#[track_caller]
fn check(seed: u64, expected: &[usize]) {
    let mut items: Vec<usize> = (0..expected.len()).collect();
    python_shuffle(&mut items, seed);
    assert_eq!(items, expected, "seed {seed}");
}

#[test]
fn spec_vectors_range_10() {
    check(0, &[7, 8, 1, 5, 3, 4, 2, 0, 9, 6]);
    check(1, &[6, 8, 9, 7, 5, 3, 0, 4, 1, 2]);
    check(42, &[7, 3, 2, 8, 5, 6, 9, 4, 0, 1]);
}

#[test]
fn cross_checked_with_cpython() {
    // Generated once with CPython 3: `r = list(range(n)); random.Random(s).shuffle(r)`.
    check(7, &[4, 0, 5, 3, 1, 2]);
    check(123_456_789, &[0, 2, 1, 4, 3]);
    check(
        2u64.pow(32) + 5,
        &[12, 10, 3, 6, 1, 8, 11, 13, 14, 5, 0, 9, 4, 7, 2],
    );
    check(u64::MAX, &[5, 7, 3, 6, 4, 2, 1, 0]);
}

#[test]
fn genrand_matches_cpython_getrandbits_32() {
    // `random.Random(0).getrandbits(32)` three times.
    let mut rng = Mt19937::new(0);
    let got: Vec<u32> = (0..3).map(|_| rng.genrand_u32()).collect();
    assert_eq!(got, [3_626_764_237, 1_654_615_998, 3_255_389_356]);
}

#[test]
fn getrandbits_64_matches_cpython() {
    // `random.Random(3).getrandbits(64)` and then `getrandbits(40)`.
    let mut rng = Mt19937::new(3);
    assert_eq!(rng.getrandbits(64), GETRANDBITS_64_SEED3);
    assert_eq!(rng.getrandbits(40), GETRANDBITS_40_SEED3);
}

#[test]
fn trivial_inputs_do_not_panic() {
    let mut empty: [u8; 0] = [];
    python_shuffle(&mut empty, 0);
    let mut one = [9];
    python_shuffle(&mut one, 0);
    assert_eq!(one, [9]);
    assert_eq!(Mt19937::new(0).randbelow(0), 0);
    assert_eq!(Mt19937::new(0).getrandbits(0), 0);
}

#[test]
fn randbelow_stays_in_range() {
    let mut rng = Mt19937::new(5);
    for n in 1..200u64 {
        assert!(rng.randbelow(n) < n);
    }
    assert!(rng.randbelow(u64::MAX) < u64::MAX);
}

const GETRANDBITS_64_SEED3: u64 = 10_932_295_209_482_665_981;
const GETRANDBITS_40_SEED3: u64 = 144_071_367_498;
