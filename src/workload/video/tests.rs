//! The video-cadence flags: each sets its declared `[workload]` key (typed, over the
//! file's value), and an error about a value a flag set names that flag.

use std::path::Path;

use super::*;
use crate::util::scenario_doc::{Patch, ScenarioDoc};

const FILE: &str = "[workload]\nkind = \"video-cadence\"\nnum_chunks = 9\n";

fn patches(flags: &[(&str, &[&str])]) -> Vec<Patch> {
    crate::workload::patches_of(FLAGS, flags)
}

#[test]
fn every_video_flag_sets_its_workload_key() {
    let all: &[(&str, &[&str])] = &[
        ("model", &["m"]),
        ("workload", &["w.json"]),
        ("image", &["data:x"]),
        ("prompt", &["p"]),
        ("negative-prompt", &[""]),
        ("num-chunks", &["3"]),
        ("camera-pattern", &["hold"]),
        ("width", &["16"]),
        ("height", &["32"]),
        ("fps", &["8"]),
        ("video-seed", &["7"]),
        ("flow-shift", &["1.5"]),
        ("target-fps", &["8"]),
        ("warmup-chunks", &["1"]),
        ("chunk-slo-ms", &["500"]),
        ("playback-buffer-chunks", &["2"]),
        ("first-chunk-timeout", &["9"]),
        ("chunk-timeout", &["9"]),
        ("ping-interval", &["0"]),
        ("print-chunks", &[]),
        ("save-video", &["out"]),
    ];
    assert_eq!(all.len(), FLAGS.len(), "a flag without a case here");
    let doc = ScenarioDoc::parse(Path::new("s.toml"), FILE).unwrap();
    let patches = patches(all);
    let p: VideoParams = doc
        .section_with("workload", &patches)
        .deserialize()
        .unwrap();
    assert_eq!(p.seed, Some(7), "--video-seed sets `seed`");
    assert_eq!(p.num_chunks, Some(3), "the flag wins over the file");
    assert_eq!(p.target_fps, Some(8.0));
    assert_eq!(p.print_chunks, Some(true));
    assert_eq!(p.negative_prompt.as_deref(), Some(""));
    assert_eq!(p.image.as_deref(), Some("data:x"), "a URL stays as given");
    assert!(
        p.save_video.unwrap().is_absolute(),
        "a flag path is made absolute"
    );
    assert!(p.workload_file.unwrap().is_absolute());
    // Every key but `kind` has its flag.
    let schema = schemars::schema_for!(VideoParams);
    let keys = schema.as_value()["properties"].as_object().unwrap().len();
    assert_eq!(FLAGS.len(), keys - 1);
}

#[test]
fn an_error_about_a_flag_value_names_the_flag() {
    let doc = ScenarioDoc::parse(Path::new("s.toml"), FILE).unwrap();
    let run = |flags: &[(&str, &[&str])]| {
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
            .collect::<Vec<_>>()
    };
    assert_eq!(
        run(&[("target-fps", &["0"])]),
        ["--target-fps: `target_fps` must be > 0 (got 0); range (0, 1000], e.g. `target_fps = 16`"]
    );
    assert_eq!(
        run(&[("num-chunks", &["-1"])]),
        ["--num-chunks: expected a whole number ≥ 0, got the integer `-1`"]
    );
    let file_only = run(&[("width", &["100"])]);
    assert!(file_only[0].starts_with("--width: "), "{file_only:?}");
    assert!(run(&[]).is_empty());
}
