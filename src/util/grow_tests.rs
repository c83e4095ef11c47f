//! Unit tests of the bounded growth.

use super::*;

#[test]
fn unused_room_stays_within_an_eighth_and_one_step() {
    let mut v: Vec<[u8; 32]> = Vec::new();
    let step = STEP_BYTES / 32;
    for n in 1..=5000 {
        push(&mut v, [0; 32]);
        assert_eq!(v.len(), n);
        let unused = v.capacity() - v.len();
        assert!(unused <= (v.len() / 8).max(step), "{n}: {}", v.capacity());
    }
    // 129 records do not hold room for 256, as a doubling vector would.
    let mut w: Vec<[u8; 32]> = Vec::new();
    (0..129).for_each(|_| push(&mut w, [0; 32]));
    assert!(w.capacity() < 160, "{}", w.capacity());
}

#[test]
fn reserve_makes_room_for_what_is_asked() {
    let mut v: Vec<u64> = Vec::new();
    reserve(&mut v, 1000);
    assert!(v.capacity() >= 1000);
    let cap = v.capacity();
    reserve(&mut v, 10);
    assert_eq!(v.capacity(), cap, "room already there: no growth");
}

#[test]
fn leb128_values_are_the_ones_put() {
    let mut out = Vec::new();
    let values = [0u64, 1, 127, 128, 300, 1 << 40, u64::MAX];
    for n in values {
        put_leb128(&mut out, n);
    }
    let (mut at, mut back) = (0, Vec::new());
    while let Some(n) = crate::util::leb128::get(&out, &mut at) {
        back.push(n);
    }
    assert_eq!(back, values);
}

#[test]
fn reserve_within_stops_at_its_bound_but_never_short_of_the_ask() {
    let mut v: Vec<u8> = Vec::new();
    for _ in 0..4096 {
        reserve_within(&mut v, 1, 4096);
        v.push(0);
        assert!(v.capacity() <= 4096, "{}", v.capacity());
    }
    reserve_within(&mut v, 100, 4096);
    assert!(v.capacity() >= 4196);
}
