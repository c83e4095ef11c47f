//! When arenas are capped, when the heap goes on huge pages, and what the user is told.

use super::{huge_heap_tunables, message, needs_cap};

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

#[test]
fn huge_pages_are_asked_for_only_when_the_kernel_waits_to_be_asked() {
    let madvise = Some("always [madvise] never\n");
    assert_eq!(
        huge_heap_tunables(madvise, None).as_deref(),
        Some("glibc.malloc.hugetlb=1")
    );
    assert_eq!(
        huge_heap_tunables(madvise, Some("  ")).as_deref(),
        Some("glibc.malloc.hugetlb=1")
    );
    // Other tunables the user set are kept.
    assert_eq!(
        huge_heap_tunables(madvise, Some("glibc.malloc.arena_max=4")).as_deref(),
        Some("glibc.malloc.arena_max=4:glibc.malloc.hugetlb=1")
    );
    // The user's own choice, either way, stands.
    assert_eq!(
        huge_heap_tunables(madvise, Some("glibc.malloc.hugetlb=0")),
        None
    );
    // Every mapping huge already, none ever, or no THP at all: nothing to ask.
    assert_eq!(
        huge_heap_tunables(Some("[always] madvise never"), None),
        None
    );
    assert_eq!(
        huge_heap_tunables(Some("always madvise [never]"), None),
        None
    );
    assert_eq!(huge_heap_tunables(None, None), None);
}
