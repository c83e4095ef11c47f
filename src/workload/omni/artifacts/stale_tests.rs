use super::*;

#[test]
fn names_carry_their_owner() {
    assert_eq!(owner_pid(".output.wav.4242-00ab.tmp"), Some(4242));
    assert_eq!(owner_pid(".result.json.77-3-1f.tmp"), Some(77));
    assert_eq!(owner_pid(".a1--0123abcd.99-5.stage"), Some(99));
    assert_eq!(owner_pid(".tmp-1234-0"), Some(1234));
    assert_eq!(owner_pid("output.wav"), None);
    assert_eq!(owner_pid(".done"), None);
    assert_eq!(owner_pid(".output.wav.00ab12.tmp"), None); // old random-only name
}

#[test]
fn only_leftovers_of_dead_owners_are_removed() {
    let dir = tempfile::tempdir().unwrap();
    let dead = crate::util::fs::test_support::dead_pid();
    let me = std::process::id();
    let dead_tmp = format!(".output.wav.{dead}-1.tmp");
    let live_tmp = format!(".output.wav.{me}-1.tmp");
    let dead_stage = format!(".tmp-{dead}-0");
    fs::write(dir.path().join(&dead_tmp), b"x").unwrap();
    fs::write(dir.path().join(&live_tmp), b"x").unwrap();
    fs::create_dir(dir.path().join(&dead_stage)).unwrap();
    fs::write(dir.path().join(&dead_stage).join("big"), b"x").unwrap();
    fs::write(dir.path().join("output.wav"), b"keep").unwrap();
    assert!(!owner_alive(dead));
    assert_eq!(sweep(dir.path()), 2);
    assert!(dir.path().join(&live_tmp).exists());
    assert!(dir.path().join("output.wav").exists());
    assert!(!dir.path().join(&dead_tmp).exists());
    assert!(!dir.path().join(&dead_stage).exists());
}
