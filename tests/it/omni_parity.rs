//! vLLM-Omni 0.30.0 metric parity (issue 31 item 1): rtload runs OmniInteract cases
//! against the embedded server; the events it recorded (each case's `events.json`, every
//! event with its client receipt time) go into 0.30.0's own Python functions
//! (`tests/it/py/omni_parity_ref.py`: `EventCollector`, `collect_duplex_session_metrics`,
//! `build_duplex_metrics_report`, `compute_continuity_stats`, from the PyPI wheel
//! `scripts/test` installs); every key the reference writes must be in rtload's
//! `duplex_metrics.json` with an equal value: within 1 ms for times, 0.001 for RTFs and
//! seconds, exactly for counts, strings and flags. Only a row's `stages` (the engine's
//! per-stage snapshots, which rtload does not carry beyond stage 0) is left out, by name.

use std::collections::HashMap;
use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::duplex_support::{Opts, assert_bundles, duplex, out_dir, read_json};
use crate::support::{failure_messages, python};

/// 0.30.0 keys rtload does not write, with why (README "vLLM-Omni 0.30.0 names"), as
/// (path prefix, key): a row's `stages` (every engine stage's block; rtload keeps stage
/// 0 as `stage0_tokens`). The session's `stages` roll-up is compared.
const NOT_CARRIED: [(&str, &str); 1] = [("row ", "stages")];

/// The tolerance of a value under `key` (the nearest named key of its path).
fn tolerance(key: &str) -> f64 {
    if key == "count" || key.ends_with("_count") || key == "request_index" {
        0.0
    } else if key.contains("rtf") || key.ends_with("_s") {
        0.001
    } else {
        1.0
    }
}

/// Every key of `reference` is in `ours` with an equal value (recursively); mismatches
/// are appended to `out` with their path. `key` is the nearest object key above.
fn compare(path: &str, key: &str, reference: &Value, ours: &Value, out: &mut Vec<String>) {
    match (reference, ours) {
        (Value::Object(r), Value::Object(o)) => {
            for (k, rv) in r {
                if NOT_CARRIED
                    .iter()
                    .any(|(p, key)| path.starts_with(p) && k == key)
                {
                    continue;
                }
                match o.get(k) {
                    Some(ov) => compare(&format!("{path}.{k}"), k, rv, ov, out),
                    None => out.push(format!("{path}.{k}: missing (0.30.0 has {rv})")),
                }
            }
        }
        (Value::Array(r), Value::Array(o)) if r.len() == o.len() => {
            for (i, (rv, ov)) in r.iter().zip(o).enumerate() {
                compare(&format!("{path}[{i}]"), key, rv, ov, out);
            }
        }
        (Value::Number(r), Value::Number(o)) => {
            let (r, o) = (r.as_f64().unwrap(), o.as_f64().unwrap());
            if (r - o).abs() > tolerance(key) + 1e-9 {
                out.push(format!("{path}: 0.30.0 {r}, rtload {o}"));
            }
        }
        (r, o) if r == o => {}
        (r, o) => out.push(format!("{path}: 0.30.0 {r}, rtload {o}")),
    }
}

/// 0.30.0's report over the recorded cases: `(report, continuity by "session\tresponse")`.
fn reference(cases: &[Value]) -> (Value, Value) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/py/omni_parity_ref.py");
    let mut child = Command::new(python())
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let input = serde_json::to_vec(&json!({ "cases": cases })).unwrap();
    child.stdin.take().unwrap().write_all(&input).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "omni_parity_ref.py failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut v: Value = serde_json::from_slice(&out.stdout).unwrap();
    (v["report"].take(), v["continuity"].take())
}

/// `rows` keyed by `"<session_id>\t<response_id>"` (or the session id alone).
fn by_key(rows: &Value, response: bool) -> HashMap<String, &Value> {
    let rows = rows.as_array().expect("a list of rows");
    rows.iter()
        .map(|r| {
            let session = r["session_id"].as_str().unwrap_or_default().to_string();
            let key = match response {
                true => format!("{session}\t{}", r["response_id"].as_str().unwrap()),
                false => session,
            };
            (key, r)
        })
        .collect()
}

/// The recorded input of each successful case: its session id, stream start and events.
fn recorded_cases(root: &Path) -> Vec<Value> {
    let dirs = assert_bundles(root, 2, 0);
    dirs.iter()
        .map(|d| {
            let result = d.json("result.json");
            let session = &result["duplex_session_metrics"];
            json!({
                "session_id": session["session_id"],
                "stream_start_s": session["stream_started_at_s"],
                "events": d.events(),
            })
        })
        .collect()
}

#[test]
fn duplex_metrics_match_vllm_omni_0_30_on_recorded_events() {
    // Two 2 s cases under 0.30.0's event names (the ones its collector reads), stage-0
    // token metrics on every response's last delta.
    let fx = duplex(&Opts {
        duration_ms: 2000,
        samples: 2,
        max_concurrency: 2,
        server: "upstream_event_names = true",
        ..Opts::default()
    });
    let s = fx.run();
    assert!(s.passed(), "{:?}", failure_messages(&s));
    let root = out_dir(&fx);
    let ours = read_json(&root.join("duplex_metrics.json"));
    let (theirs, continuity) = reference(&recorded_cases(&root));
    let mut bad = Vec::new();
    // Per response, per session, then the run-level summaries.
    let our_rows = by_key(&ours["duplex_request_metrics"], true);
    let their_rows = by_key(&theirs["duplex_request_metrics"], true);
    assert!(
        their_rows.len() >= 8,
        "4 responses per case: {their_rows:?}"
    );
    assert_eq!(our_rows.len(), their_rows.len(), "response rows");
    for (k, r) in &their_rows {
        match our_rows.get(k) {
            Some(o) => compare(&format!("row {k}"), "", r, o, &mut bad),
            None => bad.push(format!("row {k}: missing")),
        }
        let c = &continuity[k.as_str()];
        compare(
            &format!("continuity {k}"),
            "",
            c,
            our_rows.get(k).unwrap_or(&&Value::Null),
            &mut bad,
        );
    }
    let our_sessions = by_key(&ours["duplex_session_metrics"], false);
    for (k, r) in by_key(&theirs["duplex_session_metrics"], false) {
        assert!(
            r.get("stream_ttfp_ms").is_some(),
            "0.30.0 found a stream window: {r}"
        );
        match our_sessions.get(&k) {
            Some(o) => compare(&format!("session {k}"), "", r, o, &mut bad),
            None => bad.push(format!("session {k}: missing")),
        }
    }
    let run_keys = [
        "duplex_stream_ttft_ms",
        "duplex_stream_ttfp_ms",
        "duplex_stream_rtf",
    ];
    for k in run_keys {
        assert!(theirs.get(k).is_some(), "0.30.0 summarized {k}");
        compare(k, k, &theirs[k], &ours[k], &mut bad);
    }
    eprintln!(
        "0.30.0 first row: {}\nrtload first row: {}\n0.30.0 sessions: {}",
        theirs["duplex_request_metrics"][0],
        ours["duplex_request_metrics"][0],
        theirs["duplex_session_metrics"]
    );
    assert!(
        bad.is_empty(),
        "rtload differs from vLLM-Omni 0.30.0:\n{}",
        bad.join("\n")
    );
    // One number, one source: the catalogue's distributions hold the same values.
    let m = s.report.metrics();
    let stream = &ours["duplex_stream_ttfp_ms"];
    assert_eq!(m["stream_ttfp_ms.count"], stream["count"].as_f64().unwrap());
    assert!((m["stream_ttfp_ms.mean"] - stream["mean"].as_f64().unwrap()).abs() < 0.001);
    let rows = our_rows.len() as f64;
    assert_eq!(m["response_audio_underrun_s.count"], rows, "{m:?}");
    assert_eq!(m["response_audio_continuity_ok.count"], rows, "{m:?}");
}

#[test]
fn the_comparison_sees_a_missing_key_and_each_tolerance() {
    let reference = json!({"a_ms": 10.0, "rtf": 0.5, "n_count": 3, "o": {"s": "x"}});
    let mut out = Vec::new();
    compare(
        "",
        "",
        &reference,
        &json!({"a_ms": 10.9, "rtf": 0.5009, "n_count": 3, "o": {"s": "x"}}),
        &mut out,
    );
    assert!(out.is_empty(), "{out:?}");
    let off = json!({"a_ms": 11.1, "rtf": 0.502, "n_count": 4, "o": {"s": "y"}});
    compare("", "", &reference, &off, &mut out);
    assert_eq!(out.len(), 4, "{out:?}");
    compare("", "", &reference, &json!({}), &mut out);
    assert_eq!(out.len(), 8, "{out:?}");
    // Only a row's `stages` is left out.
    let stages = json!({"stages": {"0": {}}});
    compare("row r", "", &stages, &json!({}), &mut out);
    assert_eq!(out.len(), 8, "{out:?}");
    compare("session s", "", &stages, &json!({}), &mut out);
    assert_eq!(out.len(), 9, "{out:?}");
}
