//! Tests for the rollout: arithmetic and URL vectors (§2.1, §2.2), `session.start`
//! (§2.3), the workload file and its override rule and errors (§6.3).

use std::path::Path;

use serde_json::json;
use tempfile::TempDir;

use super::*;

fn opts() -> RolloutOptions {
    RolloutOptions::default()
}

/// Resolve with `base` as the scenario directory and return the error text.
#[track_caller]
fn err(o: &RolloutOptions, base: &Path) -> String {
    match resolve(o, base) {
        Ok(r) => panic!("expected an error, got {r:?}"),
        Err(e) => e.to_string(),
    }
}

/// A temp dir holding `wl.json` with `doc`, and options pointing at it.
fn with_file(doc: &str) -> (TempDir, RolloutOptions) {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("wl.json"), doc).expect("write");
    let o = RolloutOptions {
        workload_file: Some("wl.json".into()),
        ..opts()
    };
    (dir, o)
}

/// A file with a valid image and chunk count plus `extra` keys (a JSON object body).
fn file_doc(extra: &str) -> String {
    let sep = if extra.is_empty() { "" } else { ", " };
    format!(r#"{{"image": "https://example.invalid/a.png", "num_chunks": 4{sep}{extra}}}"#)
}

#[track_caller]
fn file_err(doc: &str) -> String {
    let (dir, o) = with_file(doc);
    err(&o, dir.path())
}

#[track_caller]
fn file_ok(doc: &str, o: RolloutOptions) -> Rollout {
    let (dir, base) = with_file(doc);
    let o = RolloutOptions {
        workload_file: base.workload_file,
        ..o
    };
    resolve(&o, dir.path()).expect("valid workload file")
}

#[test]
fn frame_arithmetic_vectors() {
    for (n, f) in [(1, 9), (3, 33), (7, 81), (16, 189), (40, 477)] {
        assert_eq!(num_frames(n), f, "num_frames({n})");
    }
    assert_eq!(chunks_for_frames(33), 3);
    assert_eq!(chunks_for_frames(81), 7);
    for n in 1..=32 {
        assert_eq!(chunks_for_frames(num_frames(n)), n, "round trip {n}");
        let sum: u32 = (0..u64::from(n)).map(frames_in_chunk).sum();
        assert_eq!(sum, num_frames(n), "per-chunk frames sum for {n}");
    }
    assert_eq!((0..5).map(frames_in_chunk).sum::<u32>(), 57);
    assert_eq!(frames_in_chunk(0), 9);
    assert_eq!(frames_in_chunk(1), 12);
    assert_eq!(num_frames(0), 0);
    assert_eq!(chunks_for_frames(0), 0);
    assert!((steady_deadline_ms(16.0) - 750.0).abs() < 1e-9);
    assert!((steady_deadline_ms(12.0) - 1000.0).abs() < 1e-9);
}

#[test]
fn builtin_defaults() {
    let r = resolve(&opts(), Path::new(".")).expect("defaults");
    assert_eq!(r.model, DEFAULT_MODEL);
    assert_eq!(
        r.prompt,
        "The camera moves slowly forward through the scene."
    );
    assert_eq!(r.num_chunks(), 16);
    assert_eq!(r.num_frames(), 189);
    assert_eq!((r.width, r.height, r.fps, r.seed), (832, 480, 16, 42));
    assert_eq!(r.flow_shift, 5.0);
    assert_eq!(r.negative_prompt, None);
    assert_eq!(r.camera_pattern, "forward");
    assert_eq!(r.image_url, image::default_image_data_url());
    assert_eq!(r.image_source, "generated default");
    assert!((r.video_seconds() - 189.0 / 16.0).abs() < 1e-12);
    assert!(
        r.camera_action_script
            .iter()
            .all(|c| c.iter().all(|f| f == &["w"]))
    );
    assert_eq!(r.workload_file, None);
}

#[test]
fn session_start_vector_three_chunks() {
    let o = RolloutOptions {
        num_chunks: Some(3),
        image: Some("https://example.invalid/first.png".into()),
        ..opts()
    };
    let r = resolve(&o, Path::new(".")).expect("3 chunks");
    let p = session_start(&r);
    assert_eq!(p["type"], "session.start");
    assert_eq!(p["model"], DEFAULT_MODEL);
    assert_eq!(p["num_frames"], 33);
    assert_eq!(
        p["image_reference"],
        json!({"image_url": "https://example.invalid/first.png"})
    );
    assert_eq!(p["extra_params"]["flow_shift"], json!(5.0));
    assert_eq!(
        p["extra_params"]["camera_action_script"]
            .as_array()
            .map(Vec::len),
        Some(3)
    );
    assert_eq!(
        p["extra_params"]["camera_action_script"][0],
        json!([["w"], ["w"], ["w"]])
    );
    assert_eq!(
        (p["width"].clone(), p["height"].clone()),
        (json!(832), json!(480))
    );
    assert_eq!(
        (p["fps"].clone(), p["seed"].clone()),
        (json!(16), json!(42))
    );
    assert!(p.get("negative_prompt").is_none());
    assert_eq!(p.as_object().map(|m| m.len()), Some(10));
    // flow_shift serializes as a float.
    assert!(
        serde_json::to_string(&p)
            .expect("json")
            .contains("\"flow_shift\":5.0")
    );
}

#[test]
fn negative_prompt_sent_only_when_given_and_empty_is_real() {
    let o = RolloutOptions {
        negative_prompt: Some(String::new()),
        ..opts()
    };
    let p = session_start(&resolve(&o, Path::new(".")).expect("ok"));
    assert_eq!(p["negative_prompt"], "");
}

#[test]
fn camera_patterns() {
    let script = camera_script(5, "orbit").expect("orbit");
    let keys: Vec<&str> = script.iter().map(|c| c[0][0].as_str()).collect();
    assert_eq!(keys, ["w", "a", "s", "d", "w"]);
    assert!(script.iter().all(|c| c[0] == c[1] && c[1] == c[2]));
    let hold = camera_script(2, "hold").expect("hold");
    assert!(hold.iter().all(|c| c.iter().all(Vec::is_empty)));
    assert_eq!(
        camera_script(2, "spin").expect_err("unknown").to_string(),
        "Unknown camera pattern 'spin'; expected one of ['forward', 'hold', 'orbit']."
    );
    assert_eq!(
        camera_script(2, "it's").expect_err("unknown").to_string(),
        "Unknown camera pattern \"it's\"; expected one of ['forward', 'hold', 'orbit']."
    );
    assert_eq!(
        camera_script(0, "forward").expect_err("zero").to_string(),
        "num_chunks must be at least 1."
    );
    let o = RolloutOptions {
        num_chunks: Some(0),
        ..opts()
    };
    assert_eq!(err(&o, Path::new(".")), "num_chunks must be at least 1.");
}

#[test]
fn builtin_validation_messages() {
    let base = Path::new(".");
    let cases = [
        (
            RolloutOptions {
                prompt: Some("  ".into()),
                ..opts()
            },
            "Workload.prompt must contain non-whitespace text.",
        ),
        (
            RolloutOptions {
                width: Some(830),
                ..opts()
            },
            "Workload width/height must be positive multiples of 16.",
        ),
        (
            RolloutOptions {
                height: Some(0),
                ..opts()
            },
            "Workload width/height must be positive multiples of 16.",
        ),
        (
            RolloutOptions {
                fps: Some(0),
                ..opts()
            },
            "Workload.fps must be positive.",
        ),
        (
            RolloutOptions {
                flow_shift: Some(f64::NAN),
                ..opts()
            },
            "Workload.flow_shift must be a finite number.",
        ),
    ];
    for (o, want) in cases {
        assert_eq!(err(&o, base), want);
    }
}

#[test]
fn image_resolution() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("frame.JPG"), b"\xff\xd8jpeg").expect("write");
    std::fs::write(dir.path().join("frame"), b"raw").expect("write");
    let (url, source) = resolve_image("frame.JPG", dir.path()).expect("file");
    assert_eq!(url, "data:image/jpeg;base64,/9hqcGVn");
    assert!(source.ends_with("frame.JPG"));
    let (url, _) = resolve_image("frame", dir.path()).expect("no ext");
    assert_eq!(url, "data:image/png;base64,cmF3");
    for passthrough in [
        "http://x/a.png",
        "https://x/a.png",
        "data:image/png;base64,AAAA",
    ] {
        assert_eq!(
            resolve_image(passthrough, dir.path()).expect("url").0,
            passthrough
        );
    }
    assert_eq!(
        resolve_image("missing.png", dir.path())
            .expect_err("missing")
            .to_string(),
        "--image is neither a URL nor a readable file: missing.png"
    );
    // A directory is not a readable file.
    let sub = dir.path().join("sub");
    std::fs::create_dir(&sub).expect("mkdir");
    assert!(matches!(
        resolve_image("sub", dir.path()),
        Err(RolloutError::ImageNotFound(_))
    ));
    let o = RolloutOptions {
        image: Some("frame".into()),
        ..opts()
    };
    assert_eq!(
        resolve(&o, dir.path()).expect("ok").image_url,
        "data:image/png;base64,cmF3"
    );
}

#[test]
fn interaction_message() {
    let u = PromptUpdate {
        after_chunk: 8,
        prompt: "Rain begins to fall".into(),
        transition_chunks: 2,
    };
    assert_eq!(
        interaction(&u),
        json!({"type": "session.interaction", "interaction": {
            "event_id": "chunk-8", "event": {"prompt": "Rain begins to fall"}, "transition_chunks": 2}})
    );
}

mod file;
