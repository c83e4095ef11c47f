use super::ResponseIds;

#[test]
fn ids_are_held_once_in_first_sight_order() {
    let mut t = ResponseIds::default();
    assert_eq!(t.get("a"), None);
    let names: Vec<String> = (0..1000).map(|k| format!("resp_{k}")).collect();
    for (k, n) in names.iter().enumerate() {
        assert_eq!(t.intern(n), k as u32);
    }
    // Again, and the empty id too: the same indices, nothing added but "".
    for (k, n) in names.iter().enumerate().rev() {
        assert_eq!(t.intern(n), k as u32);
        assert_eq!(t.get(n), Some(k as u32));
        assert_eq!(t.id(k as u32), n);
    }
    assert_eq!(t.intern(""), 1000);
    assert_eq!(t.len(), 1001);
    assert_eq!(t.get("resp_1000"), None);
    let order: Vec<&str> = t.iter().map(|(_, id)| id).take(3).collect();
    assert_eq!(order, ["resp_0", "resp_1", "resp_2"]);
}

#[test]
fn ids_end_to_end_read_back_exactly() {
    // Prefixes of one another, an empty one between, multi-byte characters: each comes
    // back whole and a repeat finds its first index however many came after.
    let names = ["a", "ab", "", "abc", "b", "é€", "ab€", "a"];
    let mut t = ResponseIds::default();
    let ixs: Vec<u32> = names.iter().map(|n| t.intern(n)).collect();
    assert_eq!(ixs, [0, 1, 2, 3, 4, 5, 6, 0]);
    for (ix, n) in ixs.iter().zip(names) {
        assert_eq!(t.id(*ix), n);
    }
    for k in 0..10_000 {
        t.intern(&format!("resp_{k:032x}"));
    }
    assert_eq!(t.get("ab"), Some(1));
    assert_eq!(t.intern(""), 2);
    assert_eq!(t.get("abcd"), None);
    assert_eq!(t.len(), 10_007);
}

#[test]
fn evicted_ids_are_gone_and_the_held_ones_read_back_exactly() {
    let mut t = ResponseIds::default();
    let names: Vec<String> = (0..5_000).map(|k| format!("r{k}-é")).collect();
    for (k, n) in names.iter().enumerate() {
        assert_eq!(t.intern(n), k as u32);
        // Hold 40: the buffer's evicted front is dropped as it goes.
        if t.held_len() > 40 {
            t.evict_first();
        }
    }
    assert_eq!((t.held_len(), t.len(), t.first()), (40, 5_000, Some(4_960)));
    assert!(t.bytes.len() <= 2 * 40 * 8, "the evicted front was dropped");
    for (k, n) in names.iter().enumerate() {
        let want = (k >= 4_960).then_some(k as u32);
        assert_eq!(t.get(n), want, "{n}");
    }
    let held: Vec<(u32, &str)> = t.iter().collect();
    assert_eq!(held.first(), Some(&(4_960, "r4960-é")));
    assert_eq!(held.last(), Some(&(4_999, "r4999-é")));
    // An evicted id named again is new: a new index, never an old one.
    assert_eq!(t.intern("r0-é"), 5_000);
    assert_eq!(t.id(5_000), "r0-é");
    while t.first().is_some() {
        t.evict_first();
    }
    assert_eq!((t.held_len(), t.get("r0-é")), (0, None));
    assert_eq!(t.intern("x"), 5_001);
}
