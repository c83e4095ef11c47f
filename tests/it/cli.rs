//! The `rtload` binary as a user runs it: exit codes, error messages, serve + run.

use crate::support::rtload;
use crate::support::{Fixture, video};

#[test]
fn quickstart_is_the_duplex_benchmark_and_writes_bundles_and_manifest() {
    // Copy the scenario next to its dataset in a temp dir so artifacts land there.
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let dir = tempfile::tempdir().unwrap();
    let sc = dir.path().join("quickstart.toml");
    std::fs::copy(root.join("quickstart.toml"), &sc).unwrap();
    let data = root.join("data").display().to_string();
    let text = std::fs::read_to_string(&sc)
        .unwrap()
        .replace("\"data/", &format!("\"{data}/"));
    std::fs::write(&sc, text).unwrap();
    let out = rtload().arg("run").arg(&sc).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("============ Serving Benchmark Result ============"),
        "{stdout}"
    );
    assert!(
        stdout.contains("Successful requests:                     3"),
        "{stdout}"
    );
    assert!(
        stdout.contains("Pacing mode:                             realtime"),
        "{stdout}"
    );
    let artifacts = dir.path().join("quickstart-output");
    let manifest = std::fs::read_to_string(artifacts.join("official_eval_manifest.jsonl")).unwrap();
    assert_eq!(manifest.lines().count(), 3, "{manifest}");
    let done: Vec<_> = walk(&artifacts)
        .into_iter()
        .filter(|p| p.ends_with(".done"))
        .collect();
    assert_eq!(done.len(), 3);
    for d in done {
        let case = d.parent().unwrap();
        for f in [
            "output.wav",
            "wav_transcript.json",
            "events.json",
            "result.json",
        ] {
            assert!(case.join(f).is_file(), "{} missing {f}", case.display());
        }
    }
}

#[test]
fn video_quickstart_prints_the_cadence_report() {
    let root = env!("CARGO_MANIFEST_DIR");
    let out = rtload()
        .args(["run", &format!("{root}/scenarios/video-quickstart.toml")])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("rtload: LingBot-World realtime video cadence"),
        "{stdout}"
    );
    assert!(
        stdout.contains("Sessions:         3 measured, 1 warm-up"),
        "{stdout}"
    );
}

pub fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn failed_sample_exits_1() {
    let fx = video(
        3,
        2,
        "[server.video.faults]\nonly_sessions = [0]\nstopped = true",
    );
    let out = rtload().arg("run").arg(&fx.path).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("The session was stopped before it finished"),
        "{stderr}"
    );
    assert!(
        stderr.contains("1 of 2 measured samples failed"),
        "{stderr}"
    );
}

#[test]
fn config_errors_exit_2_with_position_value_and_fix() {
    let fx = Fixture::new(
        "[workload]\nkind = \"video-cadence\"\ntarget_fps = -4\n[load]\nburstiness = \"x\"\nmax_concurrency = 0\n",
    );
    let out = rtload().arg("run").arg(&fx.path).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    let p = fx.path.display();
    assert!(
        stderr.contains(&format!("{p}:3:14: `target_fps` must be > 0 (got -4)")),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!(
            "{p}:5:14: `burstiness` must be a number or \"inf\" (got \"x\")"
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!("{p}:6:19: `max_concurrency` must be ≥ 1 (got 0)")),
        "{stderr}"
    );
}

#[test]
fn unknown_keys_and_kinds_are_errors() {
    let fx = Fixture::new("[workload]\nkind = \"video-cadense\"\n");
    let out = rtload().arg("check").arg(&fx.path).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr.contains(
            ":2:8: unknown workload kind \"video-cadense\"; known kinds: \"video-cadence\""
        ),
        "{stderr}"
    );

    let fx = Fixture::new("[workload]\nkind = \"video-cadence\"\nnum_chunk = 3\n");
    let out = rtload().arg("check").arg(&fx.path).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr.contains(":3:1: [workload] unknown field `num_chunk`"),
        "{stderr}"
    );
}

#[test]
fn serve_then_run_against_it_with_json_output() {
    let (mut server, addr) = crate::support::serve(&[], "ws");
    let fx = video(4, 1, "");
    let out_json = fx.dir.path().join("out.json");
    let out = rtload()
        .arg("run")
        .arg(&fx.path)
        .args(["--target", &format!("ws://{addr}"), "--output-json"])
        .arg(&out_json)
        .args(["--num-chunks", "3", "--print-chunks"])
        .output()
        .unwrap();
    let _ = server.kill();
    let _ = server.wait();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out_json).unwrap()).unwrap();
    assert_eq!(v["endpoint"], format!("ws://{addr}/v1/realtime/video"));
    assert_eq!(
        v["workload"]["num_chunks"], 3,
        "--num-chunks overrides the file"
    );
    assert!(stdout.matches("chunk").count() >= 3, "{stdout}");
}

/// The shipped OmniInteract scenario copied into a temp dir (its dataset named by
/// absolute path), so anything a run would write lands there.
fn omniinteract_copy() -> (tempfile::TempDir, std::path::PathBuf) {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let dir = tempfile::tempdir().unwrap();
    let sc = dir.path().join("omniinteract.toml");
    let data = root.join("data").display().to_string();
    let text = std::fs::read_to_string(root.join("omniinteract.toml"))
        .unwrap()
        .replace("\"data/", &format!("\"{data}/"));
    std::fs::write(&sc, text).unwrap();
    (dir, sc)
}

/// An error about a value a workload flag set names that flag, as typed (not a `--{key}`
/// that does not exist), exits 2 and runs nothing.
#[test]
fn an_omniinteract_flag_error_names_the_flag_and_runs_nothing() {
    for (flag, key) in [
        ("--omniinteract-timeout-s", "timeout_s"),
        (
            "--omniinteract-max-video-duration-s",
            "max_video_duration_s",
        ),
    ] {
        let (dir, sc) = omniinteract_copy();
        let out = rtload()
            .arg("run")
            .arg(&sc)
            .args([flag, "0"])
            .current_dir(dir.path())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{flag}: {stderr}");
        let lines: Vec<&str> = stderr.lines().collect();
        assert_eq!(
            lines,
            [format!(
                "error: {flag}: `{key}` must be in (0, 1e9] seconds (got 0)"
            )],
            "{flag}"
        );
        assert!(
            out.stdout.is_empty(),
            "{}",
            String::from_utf8_lossy(&out.stdout)
        );
        let written: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(written, ["omniinteract.toml"], "nothing ran: {written:?}");
    }
}

/// A workload flag the scenario's kind does not have is an error naming the flag and the
/// kind it belongs to, not silently ignored.
#[test]
fn a_flag_of_another_workload_kind_is_an_error() {
    let (dir, sc) = omniinteract_copy();
    let out = rtload()
        .arg("check")
        .arg(&sc)
        .args(["--num-chunks", "3"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.starts_with(
            "error: --num-chunks: an option of the \"video-cadence\" workload, but the scenario's workload is \"omniinteract\""
        ),
        "{stderr}"
    );
}

/// `rtload run --help` lists the workload flags as README "The command line" documents
/// them, each with the `[workload]` key it sets.
#[test]
fn run_help_lists_the_documented_workload_flags() {
    let out = rtload().args(["run", "--help"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let help = String::from_utf8_lossy(&out.stdout);
    for (flag, key) in [
        ("--omniinteract-timeout-s <S>", "[timeout_s]"),
        (
            "--omniinteract-max-video-duration-s <S>",
            "[max_video_duration_s]",
        ),
        ("--omniinteract-subsets <SUBSET>...", "[subsets]"),
        ("--dataset-path <PATH>", "[dataset_path"),
        ("--extra-body <JSON>", "[extra_body]"),
        ("--lock-timeout <SECONDS>", "[lock_timeout_s]"),
        ("--video-seed <N>", "[seed]"),
        ("--workload <FILE>", "[workload_file]"),
        ("--num-chunks <N>", "[num_chunks]"),
        ("--print-chunks", "[print_chunks]"),
        ("--model <MODEL>", "[model"),
    ] {
        let entry = help
            .split("\n\n")
            .find(|e| e.lines().any(|l| l.trim() == flag))
            .unwrap_or_else(|| panic!("{flag} not in run --help:\n{help}"));
        assert!(entry.contains(key), "{flag}: {entry}");
    }
    for heading in ["Video cadence workload:", "OmniInteract workload:"] {
        assert!(help.contains(heading), "{heading}:\n{help}");
    }
}
