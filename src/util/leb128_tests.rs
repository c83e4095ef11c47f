use proptest::prelude::*;

use super::*;

proptest! {
    #[test]
    fn numbers_come_back_in_order(ns in prop::collection::vec(any::<u64>(), 0..50)) {
        let mut bytes = Vec::new();
        for n in &ns {
            put(&mut bytes, *n);
        }
        let mut at = 0;
        let back: Vec<u64> = std::iter::from_fn(|| get(&bytes, &mut at)).collect();
        prop_assert_eq!(back, ns);
        prop_assert_eq!(at, bytes.len());
    }

    #[test]
    fn zigzag_round_trips(d in any::<i64>()) {
        prop_assert_eq!(unzigzag(zigzag(d)), d);
    }
}

#[test]
fn small_numbers_are_short() {
    let len = |n: u64| {
        let mut b = Vec::new();
        put(&mut b, n);
        b.len()
    };
    assert_eq!(
        [len(0), len(127), len(128), len(2_097_151), len(u64::MAX)],
        [1, 1, 2, 3, 10]
    );
    assert_eq!([zigzag(0), zigzag(-1), zigzag(1), zigzag(-2)], [0, 1, 2, 3]);
}
