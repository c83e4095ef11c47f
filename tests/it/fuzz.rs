//! Property-based fuzzing (issue 11 item 16) of the parsers that take outside input: the
//! scenario parser and the result reader (archive validation is fuzzed beside it, in
//! `src/workload/omni/dataset/extract/fuzz_tests.rs`). No panic; every failure is an error with a message. Case counts are
//! bounded so CI stays fast.

use std::path::Path;

use proptest::prelude::*;
use rtload::scenario::{Overrides, parse};

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
    fn result_reader_never_panics(text in prop_oneof![
        ".{0,200}",
        Just("{\"a\": NaN, \"b\": Infinity, \"c\": -Infinity}".to_string()),
        "[\\[\\]{}\",:0-9a-zNIfinity. -]{0,80}",
    ]) {
        let _ = rtload::report::parse_result(&text);
    }
}
