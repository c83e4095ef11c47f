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
        assert_eq!(&**t.id(k as u32), n);
    }
    assert_eq!(t.intern(""), 1000);
    assert_eq!(t.len(), 1001);
    assert_eq!(t.get("resp_1000"), None);
    let order: Vec<&str> = t.iter().map(|(_, id)| &**id).take(3).collect();
    assert_eq!(order, ["resp_0", "resp_1", "resp_2"]);
}
