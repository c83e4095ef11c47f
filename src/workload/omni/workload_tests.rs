//! The OmniInteract flags: each sets its declared `[workload]` key, and every error about
//! a value a flag set names that flag (not a `--{key}` that does not exist).

use super::*;
use crate::util::scenario_doc::{Patch, ScenarioDoc};

const FILE: &str = "[workload]\nkind = \"omniinteract\"\ntimeout_s = 5\n";

fn patches(flags: &[(&str, &[&str])]) -> Vec<Patch> {
    crate::workload::patches_of(FLAGS, flags)
}

#[test]
fn every_omni_flag_sets_its_workload_key() {
    let all: &[(&str, &[&str])] = &[
        ("model", &["m"]),
        ("dataset-path", &["d"]),
        ("omniinteract-subsets", &["1q1a", "1qna"]),
        ("omniinteract-ref-audio", &["r.wav"]),
        ("omniinteract-timeout-s", &["6"]),
        ("omniinteract-media-timeout-s", &["5"]),
        ("omniinteract-max-video-duration-s", &["5"]),
        ("omniinteract-require-response", &[]),
        ("omniinteract-output-dir", &["o"]),
        ("lock-timeout", &["0.5"]),
        ("disable-shuffle", &[]),
        ("extra-body", &["{\"a\": 1}"]),
        ("pacing", &["2x"]),
        ("save-result", &[]),
        ("result-dir", &["rd"]),
        ("result-filename", &["f.json"]),
        ("label", &["l"]),
        ("metadata", &["k=v"]),
        ("goodput", &["ttft:100"]),
        ("percentile-metrics", &["ttft"]),
        ("metric-percentiles", &["50,99"]),
    ];
    assert_eq!(all.len(), FLAGS.len(), "a flag without a case here");
    let doc = ScenarioDoc::parse(Path::new("s.toml"), FILE).unwrap();
    let patches = patches(all);
    let p: OmniParams = doc
        .section_with("workload", &patches)
        .deserialize()
        .unwrap();
    assert_eq!(p.timeout_s, Some(6.0), "the flag wins over the file");
    assert_eq!(p.subsets.map(|s| s.len()), Some(2));
    assert_eq!(
        p.extra_body.and_then(|t| t["a"].as_integer()),
        Some(1),
        "--extra-body is a table"
    );
    assert_eq!(p.disable_shuffle, Some(true));
    assert_eq!(p.lock_timeout_s, Some(0.5));
    assert!(p.dataset_path.unwrap().is_absolute());
    assert!(p.ref_audio.unwrap().is_absolute());
}

/// Build with `flags` on `FILE`: the error lines.
fn errors(flags: &[(&str, &[&str])]) -> Vec<String> {
    let doc = ScenarioDoc::parse(Path::new("s.toml"), FILE).unwrap();
    let patches = patches(flags);
    let section = doc.section_with("workload", &patches);
    let input = WorkloadInput {
        section: &section,
        hold_s: None,
        samples_requested: None,
        seed: 0,
        check_only: true,
    };
    build(&input)
        .err()
        .unwrap_or_default()
        .iter()
        .map(ToString::to_string)
        .collect()
}

#[test]
fn an_error_about_a_flag_value_names_the_flag_the_user_typed() {
    let e = errors(&[("omniinteract-timeout-s", &["0"])]);
    assert!(
        e.iter()
            .any(|l| l
                == "--omniinteract-timeout-s: `timeout_s` must be in (0, 1e9] seconds (got 0)"),
        "{e:#?}"
    );
    let e = errors(&[("omniinteract-max-video-duration-s", &["0"])]);
    assert!(
        e.iter()
            .any(|l| l.starts_with("--omniinteract-max-video-duration-s: `max_video_duration_s`")),
        "{e:#?}"
    );
    let e = errors(&[("lock-timeout", &["5000"])]);
    assert!(
        e.iter()
            .any(|l| l.starts_with("--lock-timeout: `lock_timeout_s` must be")),
        "{e:#?}"
    );
    // Without the flag, the file's value is positioned in the file.
    let doc = "[workload]\nkind = \"omniinteract\"\ntimeout_s = 0\n";
    let doc = ScenarioDoc::parse(Path::new("s.toml"), doc).unwrap();
    let section = doc.section("workload");
    let input = WorkloadInput {
        section: &section,
        hold_s: None,
        samples_requested: None,
        seed: 0,
        check_only: true,
    };
    let e: Vec<String> = build(&input)
        .err()
        .unwrap()
        .iter()
        .map(ToString::to_string)
        .collect();
    assert!(
        e.iter()
            .any(|l| l.starts_with("s.toml:3:13: `timeout_s` must be")),
        "{e:#?}"
    );
}
