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
fn the_run_needs_each_cases_growth_plus_the_earlier_bundles_a_batch_keeps() {
    let root = Path::new("/out");
    // Fresh: 3 × 100, nothing earlier kept while a batch is staged.
    let fresh = [(100, 0), (100, 0), (100, 0)];
    assert!(shortfall(root, &fresh, 300).is_none());
    let msg = shortfall(root, &fresh, 299).expect("short by one byte");
    for part in [
        "/out: No space left on device (ENOSPC",
        "3 case(s)",
        "nothing was run",
        "`output_dir`",
    ] {
        assert!(msg.contains(part), "{part}: {msg}");
    }
    // A rerun replacing same-sized bundles: no growth, but a batch keeps the bundles it
    // replaces until it lands (here both fit in one batch).
    let rerun = [(100, 100), (100, 100)];
    assert!(shortfall(root, &rerun, 200).is_none());
    assert!(shortfall(root, &rerun, 199).is_some());
    // What a batch keeps is bounded by its size plus its heaviest case.
    let big = super::STAGED_BYTES;
    let many = [(big, big), (big, big), (big, big)];
    assert!(shortfall(root, &many, 2 * big).is_none());
    assert!(shortfall(root, &many, 2 * big - 1).is_some());
    // Nothing to publish needs nothing.
    assert!(shortfall(root, &[], 0).is_none());
}
