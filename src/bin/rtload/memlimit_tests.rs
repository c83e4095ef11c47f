//! When arenas are capped, and what the user is told.

use super::{message, needs_cap};

#[test]
fn no_limit_a_roomy_limit_or_capped_arenas_need_no_cap() {
    assert!(!needs_cap(None, None, 2));
    assert!(!needs_cap(Some(512 << 20), Some("2"), 2));
    // 8 arenas × 2 cores × 64 MiB = 1 GiB of reservations: a 4 GiB limit has room.
    assert!(!needs_cap(Some(4 << 30), None, 2));
}

#[test]
fn a_tight_limit_needs_a_cap_and_the_messages_say_why() {
    assert!(needs_cap(Some(512 << 20), None, 2));
    // An empty MALLOC_ARENA_MAX is glibc's default, not a cap.
    assert!(needs_cap(Some(512 << 20), Some(""), 2));
    let done = message(512 << 20, true, None);
    for part in ["512 MiB", "64 MiB", "capped at 2"] {
        assert!(done.contains(part), "{part}: {done}");
    }
    let e = std::io::Error::from(std::io::ErrorKind::NotFound);
    let failed = message(512 << 20, false, Some(&e));
    assert!(failed.contains("set it yourself"), "{failed}");
}
