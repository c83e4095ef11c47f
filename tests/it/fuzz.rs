//! Property-based fuzzing (issue 11 item 16) of the parsers that take outside input: the
//! scenario parser, archive validation (arbitrary and mutated tar/gzip bytes) and the
//! result reader. No panic; every failure is an error with a message. Case counts are
//! bounded so CI stays fast.

use std::io::Write;
use std::path::Path;

use proptest::prelude::*;
use rtload::scenario::{Overrides, parse};
use rtload::workload::omni::dataset::extract::{ArchiveLimits, validate_bytes};

/// Scenario-shaped TOML: known tables and keys with arbitrary values, plus raw lines.
fn scenario_text() -> impl Strategy<Value = String> {
    let key = prop::sample::select(vec![
        "name",
        "kind",
        "num_chunks",
        "samples",
        "max_concurrency",
        "url",
        "rate",
        "seed",
        "duration",
        "headers",
        "warmup_chunks",
        "dataset_path",
        "timeout_s",
        "thresholds",
        "first_chunk_ms",
        "request_rate",
        "output_json",
    ]);
    let value = prop_oneof![
        any::<i64>().prop_map(|n| n.to_string()),
        any::<f64>().prop_map(|f| format!("{f:?}")),
        "[a-z0-9:/._-]{0,12}".prop_map(|s| format!("\"{s}\"")),
        Just("\"video-cadence\"".to_string()),
        Just("\"omniinteract\"".to_string()),
        Just("[1, 2]".to_string()),
        Just("{ a = 1 }".to_string()),
        Just("1e309".to_string()),
        Just("-0".to_string()),
    ];
    let table = prop::sample::select(vec![
        "",
        "[workload]",
        "[load]",
        "[target]",
        "[server.video]",
        "[server.duplex]",
        "[thresholds]",
        "[[stages]]",
        "[sweep]",
    ]);
    let line = prop_oneof![
        4 => (key, value).prop_map(|(k, v)| format!("{k} = {v}")),
        1 => table.prop_map(str::to_string),
        1 => ".{0,30}",
    ];
    prop::collection::vec(line, 0..24).prop_map(|l| l.join("\n"))
}

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
    fn scenario_parser_never_panics(text in scenario_text()) {
        if let Err(errors) = parse(Path::new("fuzz.toml"), &text, &Overrides::default()) {
            prop_assert!(!errors.is_empty());
            for e in errors {
                prop_assert!(!e.to_string().trim().is_empty());
            }
        }
    }

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

    #[test]
    fn result_reader_never_panics(text in prop_oneof![
        ".{0,200}",
        Just("{\"a\": NaN, \"b\": Infinity, \"c\": -Infinity}".to_string()),
        "[\\[\\]{}\",:0-9a-zNIfinity. -]{0,80}",
    ]) {
        let _ = rtload::report::parse_result(&text);
    }
}
