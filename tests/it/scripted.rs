//! The `scripted` workload end to end: the shipped scenarios as a user runs them (against
//! `[server.scripted]` rules), the OpenAI-Realtime scenario against an independent test
//! server, a threshold on a declared metric gating the exit code, and load-time errors.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::scripted_server;
use crate::support::rtload;

fn shipped(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scenarios")
        .join(name)
}

/// Run `rtload run <scenario> <args> --output-json`, returning (exit code, JSON, output).
fn run(scenario: &Path, args: &[&str]) -> (Option<i32>, Value, String) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("out.json");
    crate::support::run_json(scenario, args, &json)
}

#[test]
fn scripted_transcription_runs_as_shipped_and_reports_declared_metrics() {
    let (code, v, text) = run(
        &shipped("scripted-transcription.toml"),
        &["--num-prompts", "2"],
    );
    assert_eq!(code, Some(0), "{text}");
    assert_eq!(v["completed"], 2, "{v}");
    for m in ["ttft_ms", "finalization_ms", "itl_ms"] {
        let p = &v["metrics"][m];
        assert_eq!(p["unit"], "ms", "{m}: {p}");
        assert_eq!(p["better"], "lower");
        assert!(p["p99"].as_f64().is_some_and(|x| x > 0.0), "{m}: {p}");
    }
    assert!(v["rtload"]["metrics"]["ttft_ms.p99"].as_f64().is_some());
    assert!(text.contains("PASS  ttft_ms.p99 < 2000"), "{text}");
    // The HTML report renders the declared metrics like any other result.
    let dir = tempfile::tempdir().unwrap();
    let (json, html) = (dir.path().join("r.json"), dir.path().join("r.html"));
    std::fs::write(&json, v.to_string()).unwrap();
    let out = rtload()
        .args(["report", "--html"])
        .arg(&html)
        .arg(&json)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        std::fs::read_to_string(&html)
            .unwrap()
            .contains("finalization_ms.p99")
    );
}

#[test]
fn openai_realtime_runs_as_shipped_with_two_turns_per_session() {
    let (code, v, text) = run(&shipped("openai-realtime.toml"), &["--num-prompts", "1"]);
    assert_eq!(code, Some(0), "{text}");
    let s = &v["sessions"][0]["values"];
    assert_eq!(
        s["first_audio_ms"].as_array().map(Vec::len),
        Some(2),
        "one value per turn: {s}"
    );
    assert_eq!(s["audio_deltas"], serde_json::json!([10.0]));
    // Declared metrics are catalogue metrics with their unit and direction.
    let cat = v["rtload"]["metrics_catalogue"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let entry = |name: &str| {
        cat.iter()
            .find(|m| m["name"] == name)
            .cloned()
            .unwrap_or_default()
    };
    assert_eq!(entry("first_audio_ms.p99")["unit"], "ms");
    assert_eq!(entry("first_audio_ms.p99")["direction"], "lower");
    assert_eq!(entry("first_audio_ms.p99")["headline"], true);
    assert_eq!(entry("audio_deltas.mean")["direction"], "not_a_score");
    // Inter-arrival within each turn only: 2 turns x 4 gaps.
    assert_eq!(s["audio_gap_ms"].as_array().map(Vec::len), Some(8), "{s}");
}

/// `rtload serve --config` takes the scenario file `rtload run` takes and serves its
/// `[server]` rules: the shipped OpenAI-style scenario, run against that server with
/// `--target`, measures both turns as it does against the embedded one.
#[test]
fn serve_takes_a_scenario_file_and_serves_its_server_rules() {
    let sc = shipped("openai-realtime.toml");
    let (mut server, addr) = crate::support::serve(&["--config".as_ref(), sc.as_os_str()], "ws");
    let target = format!("ws://{addr}/v1/realtime");
    let (code, v, text) = run(&sc, &["--num-prompts", "1", "--target", &target]);
    let _ = server.kill();
    let _ = server.wait();
    assert_eq!(code, Some(0), "{text}");
    let s = &v["sessions"][0]["values"];
    assert_eq!(s["first_audio_ms"].as_array().map(Vec::len), Some(2), "{s}");
    assert_eq!(s["audio_deltas"], serde_json::json!([10.0]), "{s}");
}

/// The official `openai` Python SDK's realtime client, a client rtload did not write, runs
/// two voice turns against `rtload serve` with the shipped OpenAI-style rules: every
/// server event validates strictly against the SDK's own models (ids, indices, the
/// output item and content part events), both turns complete with their audio, and a
/// client event the rules do not handle is answered with the GA `error` event.
#[test]
fn the_openai_sdk_runs_two_strict_turns_against_the_shipped_rules() {
    let sc = shipped("openai-realtime.toml");
    let (mut server, addr) = crate::support::serve(&["--config".as_ref(), sc.as_os_str()], "ws");
    let client = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/py/openai_sdk_client.py");
    let out = std::process::Command::new(crate::support::python())
        .arg(&client)
        .arg(format!("ws://{addr}/v1"))
        .output()
        .unwrap();
    let _ = server.kill();
    let _ = server.wait();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        v["invalid"],
        serde_json::json!([]),
        "strict validation: {v}"
    );
    assert_eq!(v["completed_turns"], 2, "{v}");
    assert_eq!(v["audio_deltas"], serde_json::json!([5, 5]), "{v}");
    let err = &v["error"];
    assert_eq!(err["type"], "error", "{v}");
    assert_eq!(err["error"]["code"], "unknown_event", "{v}");
    assert!(
        err["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("conversation.item.retrieve")),
        "{v}"
    );
}

#[test]
fn openai_realtime_against_an_independent_server_sends_the_ga_events() {
    let server = scripted_server::start();
    let target = format!("ws://{}", server.addr);
    let (code, v, text) = run(
        &shipped("openai-realtime.toml"),
        &["--num-prompts", "1", "--target", &target],
    );
    assert_eq!(code, Some(0), "{text}");
    let seen = server.seen.lock().unwrap().clone();
    let types: Vec<&str> = seen
        .iter()
        .map(|e| e["type"].as_str().unwrap_or("?"))
        .collect();
    assert_eq!(types[0], "session.update");
    assert_eq!(seen[0]["session"]["type"], "realtime");
    assert_eq!(seen[0]["session"]["model"], "gpt-realtime");
    assert_eq!(
        seen[0]["session"]["audio"]["input"]["format"]["rate"],
        24000
    );
    // Each turn: appends, then commit, then response.create.
    let turns: Vec<&[&str]> = types[1..].split(|t| *t == "response.create").collect();
    assert_eq!(turns.len(), 3, "two turns then nothing: {types:?}");
    for turn in &turns[..2] {
        let (commit, appends) = turn.split_last().unwrap();
        assert_eq!(*commit, "input_audio_buffer.commit");
        assert!(
            appends.len() >= 10 && appends.iter().all(|t| *t == "input_audio_buffer.append"),
            "{turn:?}"
        );
    }
    // 100 ms of 24 kHz PCM16 per append (the last of a file may be shorter).
    let b64 = seen[1]["audio"].as_str().unwrap();
    assert_eq!(
        base64::Engine::decode(&base64::engine::general_purpose::STANDARD, b64)
            .unwrap()
            .len(),
        4_800
    );
    let s = &v["sessions"][0]["values"];
    assert_eq!(s["audio_deltas"], serde_json::json!([6.0]), "{s}");
    assert_eq!(s["first_text_ms"].as_array().map(Vec::len), Some(2));
}

/// The shipped transcription script, saturating, with one more `[thresholds]` entry.
fn with_threshold(threshold: &str) -> (tempfile::TempDir, PathBuf) {
    let src = std::fs::read_to_string(shipped("scripted-transcription.toml")).unwrap();
    let data = shipped("data/speech.jsonl");
    let src = src
        .replace(
            "dataset = \"data/speech.jsonl\"",
            &format!("dataset = {:?}", data.display().to_string()),
        )
        .replace("pacing = \"realtime\"", "pacing = \"saturate\"")
        .replace("[thresholds]\n", &format!("[thresholds]\n{threshold}\n"));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.toml");
    std::fs::write(&path, src).unwrap();
    (dir, path)
}

#[test]
fn a_threshold_on_a_declared_metric_gates_the_exit_code() {
    let (_d, path) = with_threshold("\"deltas.min\" = \">= 1\"");
    let (code, _, text) = run(&path, &["--num-prompts", "2"]);
    assert_eq!(code, Some(0), "{text}");
    let (_d, path) = with_threshold("\"finalization_ms.max\" = \"< 0.001\"");
    let (code, v, text) = run(&path, &["--num-prompts", "2"]);
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("FAIL  finalization_ms.max < 0.001"), "{text}");
    assert_eq!(v["failed"], 0, "sessions passed; only the threshold failed");
    let (_d, path) = with_threshold("\"finalisation_ms.p99\" = \"< 5\"");
    let (code, _, text) = run(&path, &[]);
    assert_eq!(code, Some(2), "{text}");
    assert!(
        text.contains("finalization_ms.p99"),
        "suggests the declared name: {text}"
    );
}

#[test]
fn script_errors_name_file_line_column_and_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.toml");
    std::fs::write(
        &path,
        "name = \"bad\"\n[workload]\nkind = \"scripted\"\n[[workload.steps]]\nsend = { type = \"x\", m = \"${modle}\" }\n[[workload.steps]]\nawiat = { type = \"y\" }\n[workload.metrics]\nx_ms = \"first(y) - mark(nope)\"\n",
    )
    .unwrap();
    let out = rtload().arg("check").arg(&path).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    let shown = path.display().to_string();
    assert!(
        err.contains(&format!(
            "{shown}:5:27: unknown template variable `${{modle}}`; did you mean `${{model}}`?"
        )),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "{shown}:7:1: unknown step key `awiat`; did you mean `await`?"
        )),
        "{err}"
    );
    assert!(
        err.contains("reads mark `nope`, which no step sets"),
        "{err}"
    );
}

#[test]
fn a_server_error_event_fails_the_session_with_its_message() {
    let src = std::fs::read_to_string(shipped("scripted-transcription.toml")).unwrap();
    let data = shipped("data/speech.jsonl");
    let src = src
        .replace("dataset = \"data/speech.jsonl\"", &format!("dataset = {:?}", data.display().to_string()))
        .replace("pacing = \"realtime\"", "pacing = \"saturate\"")
        .replace(
            "do = [{ after_ms = 80, send = { type = \"transcription.delta\", delta = \"word${seq} \" } }]",
            "do = [{ send = { type = \"error\", error = \"model not validated\", code = \"model_not_validated\" } }]",
        );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.toml");
    std::fs::write(&path, src).unwrap();
    let (code, v, text) = run(&path, &["--num-prompts", "1"]);
    assert_eq!(code, Some(1), "{text}");
    assert_eq!(
        v["sessions"][0]["error"], "server sent error: model not validated",
        "{v}"
    );
}
