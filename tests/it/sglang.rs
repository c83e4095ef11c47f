//! Issue 31 item 5: the shipped `scenarios/sglang-transcription.toml` (sglang-omni's
//! realtime transcription dialect) against the embedded server's rules, and against
//! `tests/it/py/sglang_transcription_server.py`, a server written from sglang-omni's
//! source (real event shapes, several segments per session, a serial decode worker): the
//! run passes, its streaming lag agrees with the server's own timeline, and a server that
//! sends two finals for one segment fails the run naming the invariant.
//!
//! How a lag value is compared with the server's: for each partial the server logs the
//! audio it had received when it sent it; rtload's cursor is the audio it had sent when
//! the partial arrived. Every byte the server received was sent first, so rtload's value
//! is never below the server's (no tolerance below); it is above by the chunks the client
//! sent while the partial was in flight on the loopback, so each value may exceed the
//! server's by at most one chunk ([`CHUNK_MS`]), and the median excess must be 0.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::Value;

use crate::support::python;

/// The shipped scenario's `chunk_ms`.
const CHUNK_MS: f64 = 100.0;

fn shipped() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/sglang-transcription.toml")
}

fn run(args: &[&str]) -> (Option<i32>, Value, String) {
    let dir = tempfile::tempdir().unwrap();
    crate::support::run_json(&shipped(), args, &dir.path().join("out.json"))
}

#[test]
fn the_shipped_scenario_passes_against_its_embedded_rules() {
    let (code, v, text) = run(&["--num-prompts", "2"]);
    assert_eq!(code, Some(0), "{text}");
    assert_eq!(v["completed"], 2, "{v}");
    for t in [
        "PASS  repeated_finals.max == 0",
        "PASS  updated_after_final.max == 0",
        "PASS  unmatched_finals.max == 0",
        "PASS  uncommitted_finals.max == 0",
        "PASS  event_index_breaks.max == 0",
        "PASS  segment_id_descents.max == 0",
        "PASS  transcript_lag_ms.min >= 0",
    ] {
        assert!(text.contains(t), "{t}\n{text}");
    }
    let lag = &v["metrics"]["transcript_lag_ms"];
    assert_eq!(lag["unit"], "ms", "{lag}");
    assert_eq!(lag["better"], "lower", "{lag}");
    // One value per partial; the rules answer each 100 ms append 150 ms later.
    let s = &v["sessions"][0]["values"];
    let partials = s["partials"][0].as_f64().unwrap();
    let lags = s["transcript_lag_ms"].as_array().unwrap();
    assert_eq!(lags.len() as f64, partials, "{s}");
    assert!(
        lags.iter()
            .all(|l| (0.0..=CHUNK_MS * 3.0).contains(&l.as_f64().unwrap())),
        "{s}"
    );
}

/// The Python server, listening; its log is read by [`PyServer::finish`].
struct PyServer {
    child: Child,
    port: u16,
    log: PathBuf,
    _dir: tempfile::TempDir,
}

impl PyServer {
    fn start(extra: &[&str]) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("server-log.json");
        let script = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/it/py/sglang_transcription_server.py");
        let mut child = Command::new(python())
            .arg(script)
            .arg(&log)
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line
            .strip_prefix("PORT ")
            .and_then(|p| p.trim().parse().ok())
            .unwrap_or_else(|| panic!("the Python server did not start: {line:?}"));
        PyServer {
            child,
            port,
            log,
            _dir: dir,
        }
    }

    fn target(&self) -> String {
        format!("ws://127.0.0.1:{}", self.port)
    }

    /// Close its stdin (it writes its log and exits), then read the log's connections.
    fn finish(mut self) -> Vec<Value> {
        drop(self.child.stdin.take());
        let status = self.child.wait().unwrap();
        assert!(status.success(), "the Python server exited with {status}");
        let log: Value =
            serde_json::from_str(&std::fs::read_to_string(&self.log).unwrap()).unwrap();
        log["connections"].as_array().cloned().unwrap_or_default()
    }
}

impl Drop for PyServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn against_a_server_written_from_sglang_omni_the_run_passes_and_lag_matches_its_timeline() {
    let py = PyServer::start(&[]);
    let target = py.target();
    let (code, v, text) = run(&["--num-prompts", "1", "--target", &target]);
    let conns = py.finish();
    assert_eq!(code, Some(0), "{text}");
    assert_eq!(conns.len(), 1, "{conns:?}");
    let conn = &conns[0];
    assert_eq!(conn["path"], "/v1/realtime?intent=transcription");
    let s = &v["sessions"][0]["values"];
    // Several segments, each with one final, in order.
    let finals: Vec<u64> = conn["finals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_u64().unwrap())
        .collect();
    assert!(finals.len() >= 2, "{conn}");
    assert_eq!(s["segments"][0].as_f64(), Some(finals.len() as f64), "{s}");
    // The server's lag per partial: audio received when sent minus audio_end_ms.
    let server: Vec<f64> = conn["partials"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["received_ms"].as_f64().unwrap() - p["audio_end_ms"].as_f64().unwrap())
        .collect();
    let ours: Vec<f64> = s["transcript_lag_ms"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect();
    assert_eq!(ours.len(), server.len(), "ours {ours:?}\nserver {server:?}");
    assert!(!ours.is_empty());
    let mut excess: Vec<f64> = ours.iter().zip(&server).map(|(o, s)| o - s).collect();
    println!("lag ours {ours:?}\nlag server {server:?}");
    assert!(
        excess.iter().all(|e| (0.0..=CHUNK_MS).contains(e)),
        "ours {ours:?}\nserver {server:?}"
    );
    excess.sort_by(f64::total_cmp);
    assert_eq!(excess[excess.len() / 2], 0.0, "{excess:?}");
}

/// Runs the shipped scenario against the Python server broken as `mode`: exit 1 with
/// exactly the thresholds in `fail` failed among the invariants.
fn broken(mode: &str, fail: &[&str]) -> Value {
    let py = PyServer::start(&["--break", mode]);
    let target = py.target();
    let (code, v, text) = run(&["--num-prompts", "1", "--target", &target]);
    py.finish();
    assert_eq!(code, Some(1), "{mode}: {text}");
    for t in [
        "repeated_finals.max == 0",
        "updated_after_final.max == 0",
        "unmatched_finals.max == 0",
        "uncommitted_finals.max == 0",
        "event_index_breaks.max == 0",
        "segment_id_descents.max == 0",
    ] {
        let verdict = if fail.contains(&t) { "FAIL" } else { "PASS" };
        assert!(
            text.contains(&format!("{verdict}  {t}")),
            "{mode}: {verdict} {t}\n{text}"
        );
    }
    v["sessions"][0]["values"].clone()
}

#[test]
fn a_server_that_sends_two_finals_for_one_segment_fails_the_run_naming_it() {
    let s = broken(
        "double-final",
        &[
            "repeated_finals.max == 0",
            "updated_after_final.max == 0",
            "unmatched_finals.max == 0",
        ],
    );
    assert_eq!(
        s["repeated_finals"][0],
        s["segments"][0].as_f64().unwrap() / 2.0
    );
}

#[test]
fn a_partial_after_its_segments_final_or_a_stale_event_index_fails_naming_it() {
    broken("partial-after-final", &["updated_after_final.max == 0"]);
    broken("event-index", &["event_index_breaks.max == 0"]);
}
