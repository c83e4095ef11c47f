//! The bundle estimate and when it does not fit.

use std::path::Path;

use super::{bundle_bytes, shortfall};

#[test]
fn a_bundle_is_its_full_length_wav_plus_the_json_allowance() {
    // 10 s at 24 kHz PCM16 = 480,000 bytes, plus the header and 64 KiB.
    assert_eq!(bundle_bytes(10.0), 44 + 480_000 + 65_536);
    // Whole seconds, rounded up, as the WAV horizon is.
    assert_eq!(bundle_bytes(9.2), bundle_bytes(10.0));
    assert_eq!(bundle_bytes(f64::NAN), 44 + 65_536);
}

#[test]
fn the_run_needs_each_cases_growth_plus_the_largest_case_staged_once() {
    let root = Path::new("/out");
    // Fresh: 3 × 100 + the largest staged (100) = 400.
    let fresh = [(100, 0), (100, 0), (100, 0)];
    assert!(shortfall(root, &fresh, 400).is_none());
    let msg = shortfall(root, &fresh, 399).expect("short by one byte");
    for part in [
        "/out: No space left on device (ENOSPC",
        "3 case(s)",
        "nothing was run",
        "`output_dir`",
    ] {
        assert!(msg.contains(part), "{part}: {msg}");
    }
    // A rerun replacing same-sized bundles needs only the one being staged.
    let rerun = [(100, 100), (100, 100)];
    assert!(shortfall(root, &rerun, 100).is_none());
    assert!(shortfall(root, &rerun, 99).is_some());
    // Nothing to publish needs nothing.
    assert!(shortfall(root, &[], 0).is_none());
}
