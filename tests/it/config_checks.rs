//! Everything validated at load: `rtload check` and `rtload run` reject the same bad
//! scenarios with exit 2 and a positioned range message, never a panic or an abort; `check`
//! writes nothing; a workload file wins over the built-in rollout keys.

use std::path::Path;

use crate::support::{Fixture, rtload};

/// A small video scenario with `extra` appended.
fn scenario(extra: &str) -> Fixture {
    Fixture::new(&format!(
        "[workload]\nkind = \"video-cadence\"\nnum_chunks = 3\n{extra}\n"
    ))
}

fn assert_exit_2(args: &[&str], path: &Path, needles: &[&str]) {
    let out = rtload().args(args).arg(path).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    for n in needles {
        assert!(err.contains(n), "{args:?}: want {n:?} in:\n{err}");
    }
}

#[test]
fn numeric_abuse_exits_2_from_check_and_run() {
    let cases: &[(&str, &[&str])] = &[
        (
            "[load]\nsamples = 1000000000000",
            &[":5:11:", "[0, 1000000]", "1000000000000"],
        ),
        (
            "[load]\nwarmup_samples = 9223372036854775807",
            &[":5:18:", "[0, 1000000]", "9223372036854775807"],
        ),
        (
            "[server.video]\nchunk_bytes = 100000000000",
            &[":5:15:", "chunk_bytes", "100000000000", "67108864"],
        ),
        (
            "[load]\nrequest_rate = nan",
            &[":5:16:", "request_rate", "NaN"],
        ),
        (
            "[load]\nrequest_rate = -inf",
            &[":5:16:", "request_rate", "-inf"],
        ),
        (
            "[server.video]\nchunk_intervall_ms = 3",
            &[":5:1:", "did you mean `chunk_interval_ms`?"],
        ),
        ("[output]\njson = \".\"", &[":5:8:", "is a directory"]),
        (
            "[output]\njson = \"scenario.toml/r.json\"",
            &[":5:8:", "is a file, not a directory"],
        ),
        (
            "playback_buffer_chunks = 5",
            &[":4:26:", "deeper than the rollout (3 chunks)"],
        ),
        (
            "[target]\nurl = \"ws://127.0.0.1:9\"\nheaders = { \"Bad Name\" = \"x\" }",
            &[":6:", "header name \"Bad Name\""],
        ),
    ];
    for (extra, needles) in cases {
        let f = scenario(extra);
        assert_exit_2(&["check"], &f.path, needles);
        assert_exit_2(&["run", "--quiet"], &f.path, needles);
    }
}

#[test]
fn bad_flags_exit_2_before_running() {
    let f = scenario("");
    for (flags, needle) in [
        (
            &["--request-rate", "nan"][..],
            "--request-rate: request_rate must be > 0",
        ),
        (
            &["--request-rate=-inf"][..],
            "--request-rate: request_rate must be > 0",
        ),
        (
            &["--num-prompts", "2000000"][..],
            "--num-prompts: must be in [0, 1000000]",
        ),
        (
            &["--header", "X-Key=a\u{7f}b"][..],
            "--header: the value of header \"X-Key\"",
        ),
        (
            &["--output-json", "."][..],
            "--output-json: the JSON result path",
        ),
    ] {
        let out = rtload()
            .arg("run")
            .arg("--quiet")
            .arg(&f.path)
            .args(flags)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{flags:?}: {err}");
        assert!(
            err.contains(needle),
            "{flags:?}: want {needle:?} in:\n{err}"
        );
        assert!(out.stdout.is_empty(), "{flags:?} ran");
    }
}

#[test]
fn serve_rejects_out_of_range_config_with_position() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("server.toml");
    std::fs::write(&cfg, "[video]\nchunk_bytes = 100000000000\n").unwrap();
    let out = rtload()
        .args(["serve", "--port", "0", "--config"])
        .arg(&cfg)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(":2:15: video.chunk_bytes must be between 1 and 67108864"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
}

/// A synthesized dataset left only as its archive (`ds/data.tar.gz`, the extracted
/// `ds/data/` removed) and an OmniInteract scenario whose `dataset_path` is
/// `dataset_path`, in a temp dir.
fn archived_dataset_scenario(dataset_path: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let ds = dir.path().join("ds");
    let out = rtload()
        .args(["dataset", "synth", "--tar"])
        .arg(&ds)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::remove_dir_all(ds.join("data")).unwrap();
    let sc = dir.path().join("omni.toml");
    std::fs::write(
        &sc,
        format!("[workload]\nkind = \"omniinteract\"\ndataset_path = \"{dataset_path}\"\nref_audio = \"ds/ref_audio.wav\"\noutput_dir = \"out\"\n"),
    )
    .unwrap();
    (dir, sc)
}

#[test]
fn check_validates_a_dataset_archive_without_extracting_it() {
    let (dir, sc) = archived_dataset_scenario("ds/data.tar.gz");
    let before = listing(dir.path());
    let out = rtload().arg("check").arg(&sc).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("not extracted yet"), "{err}");
    assert_eq!(listing(dir.path()), before, "check wrote files");
}

#[test]
fn check_leaves_a_dataset_dir_with_an_unextracted_archive_byte_identical() {
    // The directory form: `ds/` holds only `data.tar.gz` (+ the reference audio); `check`
    // must neither extract it (`ds/.vllm_omni_extracted`) nor touch any byte or mtime.
    let (dir, sc) = archived_dataset_scenario("ds");
    let snapshot = |root: &Path| -> Vec<(String, Vec<u8>, std::time::SystemTime)> {
        listing(root)
            .into_iter()
            .map(|p| {
                let meta = std::fs::metadata(&p).unwrap();
                let bytes = if meta.is_file() {
                    std::fs::read(&p).unwrap()
                } else {
                    Vec::new()
                };
                (p, bytes, meta.modified().unwrap())
            })
            .collect()
    };
    let before = snapshot(dir.path());
    assert!(before.iter().any(|(p, ..)| p.ends_with("data.tar.gz")));
    let out = rtload().arg("check").arg(&sc).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("not extracted yet"), "{err}");
    assert!(
        snapshot(dir.path()) == before,
        "check changed the dataset dir"
    );
    assert!(!dir.path().join("ds/.vllm_omni_extracted").exists());
}

fn listing(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            out.push(p.display().to_string());
            if p.is_dir() {
                stack.push(p);
            }
        }
    }
    out.sort();
    out
}

#[test]
fn workload_file_wins_over_the_shipped_scenarios_rollout_keys() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    let wl = dir.path().join("wl.json");
    std::fs::write(
        &wl,
        r#"{"prompt": "p", "image": "data:image/png;base64,cG5nIQ==", "num_chunks": 2, "camera_pattern": "hold"}"#,
    )
    .unwrap();
    let cfg = dir.path().join("fast.toml");
    // The shipped scenario against a fast embedded server: a copy with [server.video].
    let text = std::fs::read_to_string(root.join("scenarios/video-cadence.toml")).unwrap();
    std::fs::write(
        &cfg,
        format!(
            "{text}\n[server.video]\nfirst_chunk_ms = 5\nchunk_interval_ms = 2\nramp_chunks = 0\n"
        ),
    )
    .unwrap();
    let json = dir.path().join("r.json");
    let out = rtload()
        .args(["run", "--quiet", "--warmup-chunks", "0", "--workload"])
        .arg(&wl)
        .arg("--output-json")
        .arg(&json)
        .arg(&cfg)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("ignoring num_chunks, camera_pattern"), "{err}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["config"]["camera_pattern"], "hold", "{}", v["config"]);
    assert!(v["config"]["chunk_slo_ms"].is_null(), "{}", v["config"]);
    assert_eq!(v["workload"]["num_chunks"], 2, "{}", v["workload"]);
}

/// One `rtload check` lists every independent mistake of a file, across sections and
/// within one (a type error no longer stops its section or the file), each at its
/// line:col and naming its key; serde's bare "expected u32" never reaches the user.
#[test]
fn check_lists_every_mistake_of_a_file_in_one_pass() {
    let fx = Fixture::new(
        r#"name = "seven"
bogus_top = 1
[target]
connect_timeout_s = "ten"
max_frame_bytes = 0
[workload]
kind = "video-cadence"
num_chunks = "x"
fps = 0
widht = 640
[load]
max_concurrency = "ten"
samples = -1
[server.video]
chunk_bytes = "a"
first_chunk_ms = -5
[thresholds]
"ttfc_ms.p99" = "about 5"
[sweep]
param = "max_concurrency"
values = [0, 2]
"#,
    );
    let out = rtload().arg("check").arg(&fx.path).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    let file = fx.path.display().to_string();
    let want: &[(&str, &str)] = &[
        ("2:1", "unknown field `bogus_top`"),
        (
            "4:21",
            "[target] connect_timeout_s: expected a number, got the string \"ten\"",
        ),
        ("5:19", "`max_frame_bytes` must be in [1, 4294967296]"),
        (
            "8:14",
            "[workload] num_chunks: expected a whole number ≥ 0, got the string \"x\"",
        ),
        ("9:7", "`fps` must be in [1, 1000]"),
        ("10:1", "[workload] unknown field `widht`"),
        (
            "12:19",
            "[load] max_concurrency: expected an integer, got the string \"ten\"",
        ),
        ("13:11", "`samples` must be ≥ 0"),
        (
            "15:15",
            "[server.video] chunk_bytes: expected a whole number ≥ 0",
        ),
        ("16:18", "video.first_chunk_ms must be a number in [0, 1e9]"),
        ("18:17", "bad threshold \"about 5\" for `ttfc_ms.p99`"),
        ("21:11", "max_concurrency value `0` must be ≥ 1"),
    ];
    for (at, msg) in want {
        let line = format!("error: {file}:{at}: ");
        assert!(
            err.lines().any(|l| l.starts_with(&line) && l.contains(msg)),
            "missing {at} {msg:?} in:\n{err}"
        );
    }
    assert_eq!(err.lines().count(), want.len(), "{err}");
    for bare in [
        "expected u32",
        "expected i64",
        "expected f64",
        "expected usize",
    ] {
        assert!(!err.contains(bare), "{bare}: {err}");
    }
}

/// `check` takes `run`'s flags and prints the plan `run` would execute with them: the
/// overrides, the sweep's points, and the thresholds (each metric, operator and bound;
/// a shard leaves them to `merge`). What `run` refuses, `check` refuses.
#[test]
fn check_takes_runs_flags_and_prints_the_thresholds_it_will_apply() {
    let fx = scenario(
        "warmup_chunks = 1\n[load]\nsamples = 2\n[thresholds]\n\"ttfc_ms.p99\" = \"< 500\"\nfailed = \"== 0\"\n",
    );
    let check = |args: &[&str]| {
        let out = rtload()
            .arg("check")
            .arg(&fx.path)
            .args(args)
            .output()
            .unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.code(), text)
    };
    let (code, plan) = check(&[
        "--num-prompts",
        "5",
        "--max-concurrency",
        "7",
        "--request-rate",
        "3",
        "--target-fps",
        "8",
        "--sweep",
        "request_rate=1,2",
    ]);
    assert_eq!(code, Some(0), "{plan}");
    for want in [
        "samples            5 measured",
        "concurrency        at most 7",
        "3.0 rps",
        "real-time basis  8 fps",
        "thresholds         2, applied to the measured samples",
        "    ttfc_ms.p99      < 500  (ms, lower is better)",
        "    failed           == 0",
        "sweep              2 values",
        "request_rate=1",
    ] {
        assert!(plan.contains(want), "missing {want:?} in\n{plan}");
    }
    let (code, sharded) = check(&["--shard", "1/2", "--max-concurrency", "2"]);
    assert_eq!(code, Some(0), "{sharded}");
    assert!(
        sharded.contains("left to `rtload merge` (shard 1/2 of a sharded run"),
        "{sharded}"
    );
    let (code, none) = check(&["--max-concurrency", "0"]);
    assert_eq!(code, Some(2), "{none}");
    assert!(
        none.contains("--max-concurrency: must be in [1, 1000000] (got 0)"),
        "{none}"
    );
    let (code, both) = check(&["--sweep", "max_concurrency=1,2", "--shard", "0/2"]);
    assert_eq!(code, Some(2), "{both}");
    assert!(both.contains("cannot be combined with a sweep"), "{both}");
    let (code, split) = check(&["--shard", "1/4"]);
    assert_eq!(code, Some(2), "{split}");
    assert!(split.contains("cannot be split over 4 shards"), "{split}");
}

/// `--output-json newdir/r.json`, relative, with `newdir` not there yet: the run creates
/// it (the writability check looks at the current directory, the nearest that exists,
/// instead of refusing a path whose first component is missing).
#[test]
fn a_relative_output_json_in_a_new_folder_is_created() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(root.join("scenarios/video-cadence.toml")).unwrap();
    let cfg = dir.path().join("fast.toml");
    std::fs::write(
        &cfg,
        format!(
            "{text}\n[server.video]\nfirst_chunk_ms = 5\nchunk_interval_ms = 2\nramp_chunks = 0\n"
        ),
    )
    .unwrap();
    let out = rtload()
        .current_dir(dir.path())
        .args([
            "run",
            "--quiet",
            "--output-json",
            "fresh/r.json",
            "fast.toml",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(dir.path().join("fresh/r.json").is_file(), "{err}");
}
