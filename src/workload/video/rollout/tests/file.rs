//! The JSON workload file (§6.3): overrides, validation, errors.

use super::*;

#[test]
fn readme_workload_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("first_frame.png"), b"png!").expect("write");
    let doc = r#"{
      "prompt": "The camera moves slowly forward through the scene.",
      "image": "first_frame.png",
      "num_chunks": 24,
      "camera_pattern": "orbit",
      "fps": 16,
      "seed": 42,
      "prompt_updates": [
        {"after_chunk": 8, "prompt": "Rain begins to fall", "transition_chunks": 2},
        {"after_chunk": 3, "prompt": "Sun"}
      ]
    }"#;
    std::fs::write(dir.path().join("wl.json"), doc).expect("write");
    let o = RolloutOptions {
        workload_file: Some("wl.json".into()),
        ..opts()
    };
    let r = resolve(&o, dir.path()).expect("readme example");
    assert_eq!(r.num_chunks(), 24);
    assert_eq!(r.camera_pattern, "orbit");
    assert_eq!(r.camera_action_script[1][0], ["a"]);
    assert_eq!(r.image_url, "data:image/png;base64,cG5nIQ==");
    assert_eq!(
        r.workload_file.as_deref(),
        Some(dir.path().join("wl.json").as_path())
    );
    let want = [
        PromptUpdate {
            after_chunk: 8,
            prompt: "Rain begins to fall".into(),
            transition_chunks: 2,
        },
        PromptUpdate {
            after_chunk: 3,
            prompt: "Sun".into(),
            transition_chunks: 3,
        },
    ];
    assert_eq!(r.prompt_updates, want);
    let order: Vec<u32> = r
        .updates_in_send_order()
        .iter()
        .map(|u| u.after_chunk)
        .collect();
    assert_eq!(order, [3, 8]);
    assert_eq!(
        r.describe_json()["prompt_updates"],
        json!([{"after_chunk": 8, "transition_chunks": 2}, {"after_chunk": 3, "transition_chunks": 3}])
    );
    assert_eq!(r.describe_json()["num_frames"], 285);
}

#[test]
fn file_image_relative_to_file_and_option_relative_to_base() {
    let base = tempfile::tempdir().expect("tempdir");
    let sub = base.path().join("rollouts");
    std::fs::create_dir(&sub).expect("mkdir");
    std::fs::write(sub.join("near.png"), b"near").expect("write");
    std::fs::write(base.path().join("cli.gif"), b"cli").expect("write");
    std::fs::write(
        sub.join("wl.json"),
        r#"{"image": "near.png", "num_chunks": 2}"#,
    )
    .expect("write");
    let o = RolloutOptions {
        workload_file: Some("rollouts/wl.json".into()),
        ..opts()
    };
    assert_eq!(
        resolve(&o, base.path()).expect("ok").image_url,
        "data:image/png;base64,bmVhcg=="
    );
    let o = RolloutOptions {
        image: Some("cli.gif".into()),
        ..o
    };
    let r = resolve(&o, base.path()).expect("ok");
    assert_eq!(r.image_url, "data:image/gif;base64,Y2xp");
}

#[test]
fn options_override_file_values() {
    let doc = file_doc(
        r#""prompt": "file", "width": 640, "height": 368, "fps": 24, "seed": 7, "flow_shift": 3.0,
           "negative_prompt": "blur""#,
    );
    let r = file_ok(&doc, opts());
    assert_eq!(r.prompt, "file");
    assert_eq!(
        (r.width, r.height, r.fps, r.seed, r.flow_shift),
        (640, 368, 24, 7, 3.0)
    );
    assert_eq!(r.negative_prompt.as_deref(), Some("blur"));
    assert_eq!(r.image_url, "https://example.invalid/a.png");

    let o = RolloutOptions {
        model: Some("m".into()),
        prompt: Some("cli".into()),
        width: Some(832),
        height: Some(480),
        fps: Some(16),
        seed: Some(1),
        flow_shift: Some(8.0),
        negative_prompt: Some(String::new()),
        image: Some("data:image/png;base64,QQ==".into()),
        ..opts()
    };
    let r = file_ok(&doc, o);
    assert_eq!(r.model, "m");
    assert_eq!(r.prompt, "cli");
    assert_eq!(
        (r.width, r.height, r.fps, r.seed, r.flow_shift),
        (832, 480, 16, 1, 8.0)
    );
    assert_eq!(r.negative_prompt.as_deref(), Some(""));
    assert_eq!(r.image_url, "data:image/png;base64,QQ==");
}

#[test]
fn file_script_wins_and_extra_params_merge_last() {
    let doc = r#"{"image_reference": "http://x/i.png", "num_chunks": 9, "camera_pattern": "bogus",
        "camera_action_script": [[["w"], ["a", "s"], []], [[], [], ["d"]]],
        "extra_params": {"flow_shift": 2.5, "guidance": 1}, "flow_shift": 4.0, "negative_prompt": null}"#;
    let r = file_ok(doc, opts());
    assert_eq!(r.num_chunks(), 2);
    assert_eq!(r.camera_pattern, CUSTOM_CAMERA_PATTERN);
    assert_eq!(r.image_url, "http://x/i.png");
    assert_eq!(r.negative_prompt, None);
    let p = session_start(&r);
    assert_eq!(p["num_frames"], 21);
    assert_eq!(p["extra_params"]["flow_shift"], json!(2.5));
    assert_eq!(p["extra_params"]["guidance"], json!(1));
    assert_eq!(
        p["extra_params"]["camera_action_script"][0][1],
        json!(["a", "s"])
    );
}

#[test]
fn file_structure_errors() {
    let cases: &[(&str, &str)] = &[
        ("[1, 2]", "A workload file must contain a JSON object."),
        (
            r#"{"image": "http://x/a.png"}"#,
            "A workload file needs either camera_action_script or num_chunks.",
        ),
        (
            r#"{"num_chunks": 2}"#,
            "A workload file needs an image or image_reference field.",
        ),
        (
            r#"{"num_chunks": 2, "image": ""}"#,
            "A workload file needs an image or image_reference field.",
        ),
        (
            &file_doc(r#""extra_params": [1]"#),
            "Workload extra_params must be a JSON object.",
        ),
        (
            &file_doc(r#""num_chunks": 0"#),
            "num_chunks must be at least 1.",
        ),
        (
            &file_doc(r#""camera_pattern": "zoom""#),
            "Unknown camera pattern 'zoom'; expected one of ['forward', 'hold', 'orbit'].",
        ),
        (
            r#"{"image": "nope.png", "num_chunks": 1}"#,
            "--image is neither a URL nor a readable file: nope.png",
        ),
    ];
    for (doc, want) in cases {
        assert_eq!(file_err(doc), *want, "{doc}");
    }
}

#[test]
fn file_validation_errors() {
    let cases: &[(&str, &str)] = &[
        (
            r#""prompt": " ""#,
            "Workload.prompt must contain non-whitespace text.",
        ),
        (
            r#""width": 100"#,
            "Workload width/height must be positive multiples of 16.",
        ),
        (
            r#""height": -16"#,
            "Workload width/height must be positive multiples of 16.",
        ),
        (r#""fps": 0"#, "Workload.fps must be positive."),
        (
            r#""camera_action_script": []"#,
            "camera_action_script must not be empty.",
        ),
        (
            r#""camera_action_script": "w""#,
            "camera_action_script must be a list of per-chunk action lists.",
        ),
        (
            r#""camera_action_script": ["w"]"#,
            "camera_action_script[0] must be a list of three action lists.",
        ),
        (
            r#""camera_action_script": [[[], [], []], [[], []]]"#,
            "camera_action_script[1] must hold exactly 3 action lists (got 2); one AR block is 3 latent frames.",
        ),
        (
            r#""camera_action_script": [[[], "w", []]]"#,
            "camera_action_script[0][1] must be a list of strings.",
        ),
        (
            r#""camera_action_script": [[[], [], ["w", 1]]]"#,
            "camera_action_script[0][2] must contain only strings.",
        ),
        (
            r#""prompt_updates": [{"after_chunk": -1, "prompt": "x"}]"#,
            "PromptUpdate.after_chunk must be non-negative.",
        ),
        (
            r#""prompt_updates": [{"after_chunk": 1, "prompt": "\t"}]"#,
            "PromptUpdate.prompt must contain non-whitespace text.",
        ),
        (
            r#""prompt_updates": [{"after_chunk": 1, "prompt": "x", "transition_chunks": -2}]"#,
            "PromptUpdate.transition_chunks must be non-negative.",
        ),
        (
            r#""prompt_updates": [{"after_chunk": 1, "prompt": "x"}, {"after_chunk": 1, "prompt": "y"}]"#,
            "Duplicate prompt update after chunk 1; event IDs must be unique.",
        ),
        (
            r#""prompt_updates": [{"after_chunk": 4, "prompt": "x"}]"#,
            "Prompt update after chunk 4 never fires in a 4-chunk rollout.",
        ),
    ];
    for (extra, want) in cases {
        assert_eq!(file_err(&file_doc(extra)), *want, "{extra}");
    }
    // The last boundary that can fire is num_chunks − 1.
    let r = file_ok(
        &file_doc(r#""prompt_updates": [{"after_chunk": 3, "prompt": "x"}]"#),
        opts(),
    );
    assert_eq!(r.prompt_updates[0].after_chunk, 3);
}

#[test]
fn file_type_and_key_errors() {
    assert_eq!(
        file_err(&file_doc(r#""widht": 832"#)),
        "unknown workload file key 'widht'; expected one of ['prompt', 'image', 'image_reference', \
         'num_chunks', 'camera_pattern', 'camera_action_script', 'width', 'height', 'fps', 'seed', \
         'flow_shift', 'negative_prompt', 'prompt_updates', 'extra_params']"
    );
    assert!(
        file_err(&file_doc(
            r#""prompt_updates": [{"after_chunk": 1, "prompt": "x", "transiton": 1}]"#
        ))
        .starts_with("unknown workload file key 'prompt_updates[0].transiton'")
    );
    assert_eq!(
        file_err(&file_doc(r#""width": "832""#)),
        "workload file key 'width' must be an integer"
    );
    assert_eq!(
        file_err(&file_doc(r#""fps": 16.5"#)),
        "workload file key 'fps' must be an integer"
    );
    assert_eq!(
        file_err(&file_doc(r#""prompt": 3"#)),
        "workload file key 'prompt' must be a string"
    );
    assert_eq!(
        file_err(&file_doc(r#""flow_shift": "x""#)),
        "workload file key 'flow_shift' must be a number"
    );
    assert_eq!(
        file_err(&file_doc(r#""prompt_updates": [{"prompt": "x"}]"#)),
        "workload file key 'prompt_updates[0].after_chunk' must be given (an integer)"
    );
    assert_eq!(
        file_err(&file_doc(r#""prompt_updates": {"after_chunk": 1}"#)),
        "workload file key 'prompt_updates' must be a list of objects"
    );
    // Integral floats are accepted, as the reference's int() does.
    assert_eq!(file_ok(&file_doc(r#""fps": 24.0"#), opts()).fps, 24);
    let e = file_err("{not json");
    assert!(
        e.starts_with("workload file ") && e.contains("is not valid JSON: "),
        "{e}"
    );
    let o = RolloutOptions {
        workload_file: Some("absent.json".into()),
        ..opts()
    };
    assert!(
        err(&o, Path::new("/nonexistent-dir"))
            .starts_with("cannot read workload file /nonexistent-dir/absent.json: ")
    );
}

#[test]
fn builtin_only_options_rejected_with_a_file() {
    let doc = file_doc("");
    let (dir, base) = with_file(&doc);
    let o = RolloutOptions {
        num_chunks: Some(3),
        ..base.clone()
    };
    assert_eq!(
        err(&o, dir.path()),
        "num_chunks applies only to the built-in workload; set it in the workload file instead"
    );
    let o = RolloutOptions {
        camera_pattern: Some("hold".into()),
        ..base
    };
    assert_eq!(
        err(&o, dir.path()),
        "camera_pattern applies only to the built-in workload; set it in the workload file instead"
    );
}

#[test]
fn options_deserialize_from_toml_and_reject_unknown_keys() {
    let o: RolloutOptions = toml::from_str(
        "model = \"m\"\nworkload_file = \"wl.json\"\nwidth = 640\nflow_shift = 3.5\nseed = -1\n",
    )
    .expect("toml");
    assert_eq!(o.model.as_deref(), Some("m"));
    assert_eq!(o.workload_file.as_deref(), Some(Path::new("wl.json")));
    assert_eq!(
        (o.width, o.height, o.seed, o.flow_shift),
        (Some(640), None, Some(-1), Some(3.5))
    );
    assert!(toml::from_str::<RolloutOptions>("num_chunk = 3\n").is_err());
}
