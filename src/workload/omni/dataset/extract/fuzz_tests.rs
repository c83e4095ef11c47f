//! Property-based fuzzing (issue 11 item 16) of archive validation: arbitrary and
//! mutated tar/gzip bytes are errors with a message, never panics. Case counts are
//! bounded so CI stays fast.

use std::io::Write;

use proptest::prelude::*;

use super::{ArchiveLimits, validate_bytes};

fn tar_gz() -> Vec<u8> {
    let mut builder = tar::Builder::new(Vec::new());
    for (name, body) in [
        ("data/1q1a/video_json_map.json", &b"{\"entries\":[]}"[..]),
        ("data/1q1a/videos/a.mp4", b"video"),
    ] {
        let mut h = tar::Header::new_gnu();
        h.set_path(name).unwrap();
        h.set_size(body.len() as u64);
        h.set_mode(0o644);
        h.set_cksum();
        builder.append(&h, body).unwrap();
    }
    let tar = builder.into_inner().unwrap();
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(&tar).unwrap();
    enc.finish().unwrap()
}

/// Small limits so a fuzzed bomb stops early.
fn limits() -> ArchiveLimits {
    ArchiveLimits {
        max_total_bytes: 1 << 20,
        max_members: 64,
        max_ratio: 50,
        ratio_floor_bytes: 64 << 10,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_archive_bytes_are_errors_not_panics(bytes in prop::collection::vec(any::<u8>(), 0..2048)) {
        if let Err(e) = validate_bytes(&bytes, limits()) {
            prop_assert!(!e.to_string().is_empty());
        }
    }

    #[test]
    fn mutated_archives_are_rejected_or_valid(
        flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
        cut in proptest::option::of(any::<prop::sample::Index>()),
        gz in any::<bool>(),
    ) {
        let mut bytes = tar_gz();
        if !gz {
            let mut out = Vec::new();
            std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&bytes[..]), &mut out).unwrap();
            bytes = out;
        }
        for (at, v) in flips {
            let i = at.index(bytes.len());
            bytes[i] ^= v | 1;
        }
        if let Some(c) = cut {
            bytes.truncate(c.index(bytes.len()));
        }
        if let Err(e) = validate_bytes(&bytes, limits()) {
            prop_assert!(!e.to_string().is_empty());
        }
    }
}
