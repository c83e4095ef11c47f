//! `rtload capacity --ramp K:T` against the embedded duplex server, whose answers are
//! known: one staircase run (K more held sessions every T seconds, earlier ones still
//! streaming) judged step by step, then bisection and confirmation with whole held
//! runs. The load model (`rtf = 0.5`, `rtf_one_at_sessions = 8`: the stream's RTF
//! crosses 1 at 16 sessions) gives 16 within one ramp step, limited by RTF; the
//! admission limit alone (`max_sessions = 24`) gives 24, limited by rejections,
//! refused sessions counted as rejected, not failed. 127.0.0.1 only.

use std::path::Path;

use serde_json::Value;

use crate::duplex_support::{Opts, duplex, require_ffmpeg};
use crate::support::{Fixture, rtload};

fn fixture(server: &str, thresholds: &str) -> Fixture {
    require_ffmpeg();
    duplex(&Opts {
        duration_ms: 1000,
        samples: 1,
        max_concurrency: 1,
        workload: "turn_gap_ms = 200\n",
        server: &format!("turns = \"commit\"\nfinal_decision = \"respond\"\nrtf = 0.5\n{server}"),
        // A debug build on a shared machine: lateness is not what this test is about.
        load: "duration_s = 2\ngenerator_bound_ms = 1000\n",
        prelude: &format!("{thresholds}\n[target]\nretry_rejected = 0\n"),
        ..Default::default()
    })
}

fn search(fx: &Fixture, extra: &[&str]) -> (Value, String, String) {
    let dir = fx.dir.path().join("cap");
    let out = rtload()
        .arg("capacity")
        .arg(&fx.path)
        .arg("--dir")
        .arg(&dir)
        .args(["--ramp", "4:2", "--max", "28"])
        .args(extra)
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout.clone()).unwrap();
    let stderr = String::from_utf8(out.stderr.clone()).unwrap();
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    let doc =
        serde_json::from_str(&std::fs::read_to_string(dir.join("capacity.json")).unwrap()).unwrap();
    (doc, stdout, stderr)
}

fn phases(doc: &Value) -> Vec<(String, u64)> {
    (doc["capacity"]["steps"].as_array().unwrap().iter())
        .map(|s| {
            (
                s["phase"].as_str().unwrap().to_string(),
                s["max_concurrency"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// The ramp's result: every window's sessions came from one run.
fn ramp_file(doc: &Value, dir: &Path) -> Value {
    let s = &doc["capacity"]["steps"][0];
    rtload::report::read_result(&dir.join(s["result"].as_str().unwrap())).unwrap()
}

#[test]
fn the_load_model_gives_16_sessions_limited_by_rtf() {
    let fx = fixture(
        "[server.load]\nrtf_one_at_sessions = 8\n",
        "[thresholds]\nresponse_rtf.p99 = \"< 1\"",
    );
    let (doc, stdout, stderr) = search(&fx, &[]);
    eprintln!("{stdout}{stderr}");
    let cap = &doc["capacity"];
    let answer = cap["answer"].as_u64().unwrap();
    assert!(answer.abs_diff(16) <= 4, "{stdout}");
    let reason = cap["limited_by"]["reasons"][0].as_str().unwrap();
    assert!(reason.starts_with("response_rtf.p99 = "), "{cap}");
    let p = phases(&doc);
    assert_eq!(p[0], ("ramp".to_string(), 4), "{p:?}");
    assert!(p.iter().any(|(ph, _)| ph == "confirm"), "{p:?}");
    let ramp = ramp_file(&doc, &fx.dir.path().join("cap"));
    assert_eq!(ramp["rtload"]["outcomes"]["rejected"], 0);
}

#[test]
fn the_admission_limit_alone_gives_24_limited_by_rejections() {
    let fx = fixture("[server]\nmax_sessions = 24\n", "");
    let (doc, stdout, stderr) = search(&fx, &[]);
    eprintln!("{stdout}{stderr}");
    let cap = &doc["capacity"];
    assert_eq!(cap["answer"], 24, "{stdout}");
    assert_eq!(cap["limited_by"]["max_concurrency"], 25, "{stdout}");
    let p = phases(&doc);
    let ramp: Vec<u64> = p
        .iter()
        .filter(|(ph, _)| ph == "ramp")
        .map(|x| x.1)
        .collect();
    assert_eq!(ramp, [4, 8, 12, 16, 20, 24, 28], "{p:?}");
    // The last window: the 4 sessions past 24 were refused, and counted as rejected.
    let last = &cap["steps"][6]["outcomes"];
    assert_eq!(
        (last["rejected"].as_u64(), last["failed"].as_u64()),
        (Some(4), Some(0))
    );
    let ramp = ramp_file(&doc, &fx.dir.path().join("cap"));
    let o = &ramp["rtload"]["outcomes"];
    assert_eq!(
        (o["rejected"].as_u64(), o["failed"].as_u64()),
        (Some(4), Some(0)),
        "{o}"
    );
}
