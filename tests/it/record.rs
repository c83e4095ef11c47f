//! `rtload run --record DIR`: the shipped transcription (built-in) and OpenAI-Realtime
//! (scripted) scenarios recorded against the embedded server, through a target URL with
//! `?api_key=SECRET` and an `Authorization: Bearer SECRET` header. Each session's trace
//! must agree with what the run counted and with the result's sample times; identical
//! payloads are stored once; the manifest names what ran; no secret is anywhere under
//! DIR.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use sha2::{Digest, Sha256};

use rtload::scenario::{self, Overrides};
use rtload::server::EmbeddedServer;

/// The shipped scenario `name` and its data, copied into `dir`.
pub(crate) fn copy_scenario(dir: &Path, name: &str) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let dst = dir.join("scenarios");
    copy_tree(&src.join("data"), &dst.join("data"));
    std::fs::copy(src.join(name), dst.join(name)).unwrap();
    dst.join(name)
}

/// `from` copied into `to`, directories recursively.
pub(crate) fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        let dst = to.join(p.file_name().unwrap());
        if p.is_dir() {
            copy_tree(&p, &dst);
        } else {
            std::fs::copy(&p, &dst).unwrap();
        }
    }
}

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(files(&p));
        } else {
            out.push(p);
        }
    }
    out
}

pub(crate) fn sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// One recorded run: the record directory, the result JSON, the manifest.
struct Recorded {
    _tmp: tempfile::TempDir,
    rec: PathBuf,
    scenario: PathBuf,
    result: Value,
    manifest: Value,
}

/// Runs `name` against an embedded server serving its `[server]` table, recording.
fn record(name: &str, extra: &[&str]) -> Recorded {
    let tmp = tempfile::tempdir().unwrap();
    let sc = copy_scenario(tmp.path(), name);
    let cfg = scenario::load(&sc, &Overrides::default()).unwrap();
    let srv = EmbeddedServer::start(([127, 0, 0, 1], 0).into(), cfg.server().clone()).unwrap();
    let target = format!("ws://{}/v1/realtime?api_key=SECRET", srv.addr());
    let out = Command::new(env!("CARGO_BIN_EXE_rtload"))
        .current_dir(tmp.path())
        .arg("run")
        .arg(&sc)
        .args([
            "--target",
            &target,
            "--header",
            "Authorization=Bearer SECRET",
        ])
        .args(["--record", "rec", "--output-json", "r.json", "-q"])
        .args(extra)
        .output()
        .unwrap();
    srv.stop();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(!stdout.contains("SECRET") && !stderr.contains("SECRET"));
    let rec = tmp.path().join("rec");
    let read =
        |p: PathBuf| -> Value { serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap() };
    Recorded {
        result: read(tmp.path().join("r.json")),
        manifest: read(rec.join("manifest.json")),
        scenario: sc,
        rec,
        _tmp: tmp,
    }
}

/// A session's trace: its event lines and its summary, checked for shape.
fn trace(rec: &Path, idx: u64) -> (Vec<Value>, Value) {
    let text = std::fs::read_to_string(rec.join(format!("sessions/{idx}.jsonl")))
        .unwrap_or_else(|e| panic!("session {idx} has no trace: {e}"));
    let mut lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let summary = lines.pop().unwrap()["summary"].clone();
    let header = lines.remove(0);
    assert_eq!(header["rtload_trace"], 1);
    assert_eq!(header["idx"], idx);
    assert_eq!(summary["events"], lines.len() as u64);
    assert_eq!(summary["truncated"], false);
    (lines, summary)
}

fn count(events: &[Value], dir: &str, ty: &str) -> u64 {
    (events.iter())
        .filter(|e| e["dir"] == dir && e["type"] == ty)
        .count() as u64
}

/// What holds for every recorded run: each sample's trace sits inside its span on the
/// result's clock, in order, opening when the result says it opened; every stored
/// payload is its digest's blob; the manifest names what ran; no secret anywhere.
/// Returns each session's events by index.
fn common(r: &Recorded, samples: &[Value]) -> Vec<Vec<Value>> {
    let mut all = Vec::new();
    let mut messages = 0;
    for s in samples {
        let (events, _) = trace(&r.rec, s["idx"].as_u64().unwrap());
        let (start, end) = (
            s["started_s"].as_f64().unwrap(),
            s["ended_s"].as_f64().unwrap(),
        );
        let t: Vec<f64> = events.iter().map(|e| e["t_s"].as_f64().unwrap()).collect();
        assert!(t.windows(2).all(|w| w[0] <= w[1]), "in order: {t:?}");
        assert!(
            t.iter().all(|&x| start <= x && x <= end),
            "{start}..{end}: {t:?}"
        );
        assert_eq!(events[0]["kind"], "open");
        assert!((t[0] - s["opened_s"].as_f64().unwrap()).abs() < 1e-9);
        assert_eq!(events.last().unwrap()["kind"], "close");
        for e in events.iter().filter(|e| e["sha256"].is_string()) {
            messages += 1;
            let sha = e["sha256"].as_str().unwrap();
            let blob = std::fs::read(r.rec.join("blobs").join(sha)).unwrap();
            assert_eq!(
                (sha256(&blob), blob.len() as u64),
                (sha.into(), e["bytes"].as_u64().unwrap())
            );
            if let Some(late) = e["intended_s"].as_f64() {
                assert!(late <= e["t_s"].as_f64().unwrap() + 1e-9);
            }
        }
        all.push(events);
    }
    let blobs = std::fs::read_dir(r.rec.join("blobs")).unwrap().count();
    assert!(blobs < messages, "{blobs} blobs for {messages} messages");
    let m = &r.manifest;
    assert_eq!(m["format_version"], 1);
    assert_eq!(m["rtload"]["version"], env!("CARGO_PKG_VERSION"));
    assert!(m["rtload"]["git_revision"].is_string() || m["rtload"]["git_revision"].is_null());
    let text = std::fs::read(&r.scenario).unwrap();
    assert_eq!(m["scenario"]["sha256"], sha256(&text).as_str());
    assert_eq!(
        m["scenario"]["text"],
        String::from_utf8(text).unwrap().as_str()
    );
    let inputs = m["inputs"].as_array().unwrap();
    assert!(!inputs.is_empty());
    for i in inputs {
        let p = r
            .scenario
            .parent()
            .unwrap()
            .join(i["path"].as_str().unwrap());
        assert_eq!(i["sha256"], sha256(&std::fs::read(p).unwrap()).as_str());
    }
    assert!(
        m["target"]["url"]
            .as_str()
            .unwrap()
            .ends_with("?api_key=REDACTED")
    );
    assert_eq!(
        m["target"]["headers_sent"],
        serde_json::json!(["Authorization"])
    );
    assert!(
        !m["target"]["handshake_headers"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    assert_eq!(m["totals"]["sessions"], samples.len() as u64);
    for f in files(&r.rec) {
        let bytes = std::fs::read(&f).unwrap();
        assert!(!bytes.windows(6).any(|w| w == b"SECRET"), "{}", f.display());
    }
    all
}

#[test]
fn a_recorded_transcription_run_agrees_with_what_it_counted() {
    let r = record("transcription.toml", &[]);
    let samples = r.result["files"].as_array().unwrap().clone();
    assert_eq!(samples.len(), 4);
    let traces = common(&r, &samples);
    for (s, events) in samples.iter().zip(&traces) {
        let appends = count(events, "out", "input_audio_buffer.append");
        assert_eq!(appends, s["appends"].as_u64().unwrap());
        assert_eq!(
            count(events, "in", "transcription.delta"),
            s["deltas"].as_u64().unwrap()
        );
        // Every append is paced: it carries the time it was meant for.
        let paced = events
            .iter()
            .filter(|e| e["type"] == "input_audio_buffer.append" && e["intended_s"].is_f64());
        assert_eq!(paced.count() as u64, appends);
    }
}

#[test]
fn a_recorded_scripted_run_agrees_with_what_it_counted_and_what_the_server_sent() {
    let r = record("openai-realtime.toml", &[]);
    let samples = r.result["sessions"].as_array().unwrap().clone();
    assert_eq!(samples.len(), 3);
    let traces = common(&r, &samples);
    for (s, events) in samples.iter().zip(&traces) {
        let deltas: f64 = (s["values"]["audio_deltas"].as_array().unwrap().iter())
            .map(|v| v.as_f64().unwrap())
            .sum();
        assert_eq!(
            count(events, "in", "response.output_audio.delta") as f64,
            deltas
        );
        // The scenario's [server.scripted] rules send, per session, session.created and
        // session.updated, and per turn (two) committed, three response openers, five
        // audio and five transcript deltas and five closers: 2 + 2 × 19 messages.
        let inbound = (events.iter())
            .filter(|e| e["dir"] == "in" && e["kind"] == "text")
            .count();
        assert_eq!(inbound, 40);
        assert_eq!(count(events, "out", "response.create"), 2);
    }
}

#[test]
fn a_cap_cuts_the_trace_visibly_and_a_used_directory_is_refused() {
    let r = record(
        "transcription.toml",
        &["--num-prompts", "1", "--record-max-events", "5"],
    );
    let (events, summary) = {
        let text = std::fs::read_to_string(r.rec.join("sessions/0.jsonl")).unwrap();
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        (lines.len() - 2, lines.last().unwrap()["summary"].clone())
    };
    assert_eq!((events, summary["events"].as_u64()), (5, Some(5)));
    assert_eq!(summary["truncated"], true);
    assert!(summary["events_dropped"].as_u64().unwrap() > 0);
    let warnings = r.result["rtload"]["warnings"].to_string();
    assert!(warnings.contains("--record-max-events"), "{warnings}");
    assert_eq!(r.manifest["totals"]["truncated_sessions"], 1);
    // The same directory again: refused before anything runs.
    let out = Command::new(env!("CARGO_BIN_EXE_rtload"))
        .current_dir(r.rec.parent().unwrap())
        .arg("run")
        .arg(&r.scenario)
        .args(["--record", "rec", "-q"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not empty"), "{err}");
}
