//! The workload flag groups: every video and OmniInteract flag sets a declared
//! `[workload]` key.

use clap::Parser as _;

use crate::cli::{Cli, Command, RunArgs};

fn run_args(args: &[&str]) -> RunArgs {
    let mut argv = vec!["rtload", "run", "s.toml"];
    argv.extend(args);
    match Cli::parse_from(argv).command {
        Command::Run(r) => *r,
        _ => unreachable!(),
    }
}

fn params_keys<T: schemars::JsonSchema>() -> Vec<String> {
    let schema = schemars::schema_for!(T);
    schema.as_value()["properties"]
        .as_object()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default()
}

#[test]
fn every_video_flag_sets_a_declared_workload_key() {
    let r = run_args(&[
        "--model",
        "m",
        "--workload",
        "w.json",
        "--image",
        "data:x",
        "--prompt",
        "p",
        "--negative-prompt",
        "",
        "--num-chunks",
        "3",
        "--camera-pattern",
        "hold",
        "--width",
        "16",
        "--height",
        "32",
        "--fps",
        "8",
        "--video-seed",
        "7",
        "--flow-shift",
        "1.5",
        "--target-fps",
        "8",
        "--warmup-chunks",
        "1",
        "--chunk-slo-ms",
        "500",
        "--playback-buffer-chunks",
        "2",
        "--first-chunk-timeout",
        "9",
        "--chunk-timeout",
        "9",
        "--ping-interval",
        "0",
        "--print-chunks",
        "--save-video",
        "out",
    ]);
    let t = r.video.table().unwrap();
    let known = params_keys::<rtload::workload::video::VideoParams>();
    for k in t.keys() {
        assert!(known.contains(k), "--{k} has no [workload] key");
    }
    assert_eq!(t.len(), known.len() - 1, "{t:?}"); // all but `kind`
    assert_eq!(t["seed"].as_integer(), Some(7));
    assert_eq!(t["num_chunks"].as_integer(), Some(3));
    assert_eq!(t["target_fps"].as_float(), Some(8.0));
    assert_eq!(t["print_chunks"].as_bool(), Some(true));
    assert_eq!(t["negative_prompt"].as_str(), Some(""));
    assert!(std::path::Path::new(t["save_video"].as_str().unwrap()).is_absolute());
    assert!(run_args(&[]).video.table().unwrap().is_empty());
}

#[test]
fn every_omni_flag_sets_a_declared_workload_key() {
    let r = run_args(&[
        "--dataset-path",
        "d",
        "--omniinteract-subsets",
        "1q1a",
        "1qna",
        "--omniinteract-ref-audio",
        "r.wav",
        "--omniinteract-timeout-s",
        "5",
        "--omniinteract-media-timeout-s",
        "5",
        "--omniinteract-max-video-duration-s",
        "5",
        "--omniinteract-require-response",
        "--omniinteract-output-dir",
        "o",
        "--disable-shuffle",
        "--extra-body",
        "{\"a\": 1}",
        "--pacing",
        "2x",
        "--save-result",
        "--result-dir",
        "rd",
        "--result-filename",
        "f.json",
        "--label",
        "l",
        "--metadata",
        "k=v",
        "--goodput",
        "ttft:100",
        "--percentile-metrics",
        "ttft",
        "--metric-percentiles",
        "50,99",
    ]);
    let mut t = toml::Table::new();
    r.omni.extend(&mut t).unwrap();
    let known = params_keys::<rtload::workload::omni::workload::OmniParams>();
    for k in t.keys() {
        assert!(known.contains(k), "--{k} has no [workload] key");
    }
    assert_eq!(t["subsets"].as_array().map(Vec::len), Some(2));
    assert_eq!(t["extra_body"]["a"].as_integer(), Some(1));
    assert_eq!(t["disable_shuffle"].as_bool(), Some(true));
    let mut empty = toml::Table::new();
    run_args(&[]).omni.extend(&mut empty).unwrap();
    assert!(empty.is_empty(), "{empty:?}");
}
