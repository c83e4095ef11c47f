//! Engine behaviour seen end to end: concurrency, arrivals, warm-ups, fidelity.

use crate::support::{sample_rows, video};

fn f(v: &serde_json::Value, k: &str) -> f64 {
    v[k].as_f64()
        .unwrap_or_else(|| panic!("{k} missing in {v}"))
}

#[test]
fn three_samples_at_concurrency_three_overlap() {
    // Sessions last at least 1.5 s server-side; all three must be open at once.
    let fx = video(3, 3, "first_chunk_ms = 1500");
    let s = fx.run();
    assert!(s.passed(), "{:?}", s.failures);
    let rows = sample_rows(&s);
    assert_eq!(rows.len(), 3);
    let last_start = rows.iter().map(|r| f(r, "started_s")).fold(0.0, f64::max);
    let first_end = rows
        .iter()
        .map(|r| f(r, "ended_s"))
        .fold(f64::INFINITY, f64::min);
    assert!(last_start < first_end, "samples did not overlap: {rows:?}");
}

#[test]
fn concurrency_cap_serializes_samples_and_reports_queue_wait() {
    let fx = video(2, 3, "");
    let text = std::fs::read_to_string(&fx.path)
        .unwrap()
        .replace("max_concurrency = 3", "max_concurrency = 1");
    std::fs::write(&fx.path, text).unwrap();
    let s = fx.run();
    assert!(s.passed(), "{:?}", s.failures);
    let rows = sample_rows(&s);
    for w in rows.windows(2) {
        assert!(
            f(&w[1], "started_s") >= f(&w[0], "ended_s"),
            "cap 1 let samples overlap: {rows:?}"
        );
    }
    // All three were released at t=0 (rate inf): the later ones waited for a slot.
    assert!(f(&rows[2], "queue_wait_ms") >= f(&rows[0], "queue_wait_ms"));
    assert!(f(&rows[2], "queue_wait_ms") > 0.0);
}

#[test]
fn poisson_rate_releases_on_the_plan() {
    let fx = video(2, 6, "");
    let text = std::fs::read_to_string(&fx.path).unwrap().replace(
        "max_concurrency = 6",
        "max_concurrency = 6\nrequest_rate = 2.0\nburstiness = 1.0\nseed = 3",
    );
    std::fs::write(&fx.path, text).unwrap();
    let sc = fx.scenario();
    let plan = rtload::scenario::plan(6, &sc.load().arrival).unwrap();
    // Poisson gaps are not all equal (that would be a constant-rate plan).
    let gaps: Vec<f64> = plan.offsets_s.windows(2).map(|w| w[1] - w[0]).collect();
    assert!(gaps.iter().any(|g| (g - gaps[0]).abs() > 1e-3), "{gaps:?}");
    let s = fx.run();
    assert!(s.passed(), "{:?}", s.failures);
    let rows = sample_rows(&s);
    let base = f(&rows[0], "scheduled_s") - plan.offsets_s[0];
    for (r, off) in rows.iter().zip(&plan.offsets_s) {
        let got = f(r, "scheduled_s") - base;
        assert!((got - off).abs() < 1e-6, "release {got} != plan {off}");
        // The sample started no earlier than its release.
        assert!(f(r, "started_s") + 1e-9 >= f(r, "scheduled_s"));
    }
}

#[test]
fn warmups_run_first_and_appear_in_no_metric() {
    let fx = video(3, 1, "");
    let text = std::fs::read_to_string(&fx.path)
        .unwrap()
        .replace("samples = 1", "samples = 1\nwarmup_samples = 2");
    std::fs::write(&fx.path, text).unwrap();
    // The engine's own order (warm-ups end before a measured sample starts) is tested
    // where the runner drives it: src/runner/tests.rs.
    // Through the runner with a server: one measured session in every metric.
    let s = fx.run();
    assert!(s.passed(), "{:?}", s.failures);
    let json = s.report.to_json();
    assert_eq!(json["config"]["warmup_sessions"], 2);
    assert_eq!(json["config"]["sessions"], 1);
    assert_eq!(json["sessions"].as_array().unwrap().len(), 1);
    assert_eq!(json["metrics"]["sessions"], 1);
    assert_eq!(s.report.metrics()["chunks_received"], 3.0);
    assert_eq!(sample_rows(&s).len(), 1);
}

#[test]
fn client_intervals_agree_with_server_send_stamps() {
    let fx = video(8, 2, "jitter_ms = 3");
    let s = fx.run();
    assert!(s.passed(), "{:?}", s.failures);
    let json = s.report.to_json();
    for (sess, row) in json["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .zip(sample_rows(&s))
    {
        let chunks = sess["chunks"].as_array().unwrap();
        let server: Vec<f64> = row["server_sent_at_s"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
        assert_eq!(chunks.len(), server.len());
        let mut diffs: Vec<f64> = (1..chunks.len())
            .map(|i| {
                chunks[i]["inter_arrival_ms"].as_f64().unwrap()
                    - (server[i] - server[i - 1]) * 1000.0
            })
            .collect();
        // A scheduler hiccup delays one arrival: it lengthens one interval and shortens
        // the next by the same amount, so the mean and the median stay put. Bounds are
        // generous safety nets; the measured figures are in BENCHMARKS.md.
        let mean = diffs.iter().sum::<f64>() / diffs.len() as f64;
        diffs.sort_by(f64::total_cmp);
        let median = diffs[diffs.len() / 2];
        assert!(
            mean.abs() < 10.0,
            "mean client-server difference {mean} ms: {diffs:?}"
        );
        assert!(
            median.abs() < 5.0,
            "median client-server difference {median} ms: {diffs:?}"
        );
    }
    let c = &json["rtload"]["cadence_vs_server"];
    assert_eq!(c["pairs"], 14);
}

#[test]
fn json_result_has_the_reference_layout() {
    let fx = video(4, 1, "");
    let out = fx.dir.path().join("out.json");
    let text = std::fs::read_to_string(&fx.path).unwrap().replace(
        "name = \"t\"",
        "name = \"t\"\n[output]\njson = \"out.json\"",
    );
    std::fs::write(&fx.path, text).unwrap();
    let s = fx.run();
    assert!(s.passed(), "{:?}", s.failures);
    let raw = std::fs::read_to_string(&out).unwrap();
    assert!(
        raw.ends_with("}\n") && raw.starts_with("{\n  \""),
        "2-space indent, trailing newline"
    );
    let v: serde_json::Value = serde_json::from_str(&raw).unwrap();
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "benchmark",
            "config",
            "endpoint",
            "git_revision",
            "hostname",
            "metrics",
            "model",
            "rtload",
            "sessions",
            "timestamp",
            "workload"
        ],
        "sorted top-level keys"
    );
    assert_eq!(v["benchmark"], "lingbot_world_realtime");
    assert_eq!(v["workload"]["num_frames"], 45);
    assert_eq!(v["workload"]["video_seconds"], 45.0 / 16.0);
    let chunk_keys: Vec<&str> = v["sessions"][0]["chunks"][0]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        chunk_keys,
        [
            "arrival_s",
            "byte_length",
            "index",
            "inter_arrival_ms",
            "num_frames"
        ]
    );
    for k in ["session_index", "request_id", "video_start_ms", "metrics"] {
        assert!(v["sessions"][0].get(k).is_some(), "session key {k}");
    }
    for k in [
        "sessions",
        "warmup_sessions",
        "warmup_chunks",
        "camera_pattern",
        "chunk_slo_ms",
        "target_fps",
        "mux_fps",
        "playback_buffer_chunks",
        "workload_file",
    ] {
        assert!(v["config"].get(k).is_some(), "config key {k}");
    }
    assert!(v["timestamp"].as_str().unwrap().ends_with("+00:00"));
}

/// `RUST_LOG=rtload=debug` traces a session's life inside its span: connect, first send,
/// first receive, close, outcome, in that order (the binary's subscriber, as a user runs
/// it; no URL credentials in the log).
#[test]
fn rust_log_debug_traces_a_sessions_life() {
    let fx = video(3, 1, "");
    let out = crate::support::rtload()
        .arg("run")
        .arg(&fx.path)
        .arg("--quiet")
        .env("RUST_LOG", "rtload=debug")
        .output()
        .unwrap();
    let stderr = strip_ansi(&String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let session: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("session{idx=0") && l.contains("rtload::engine"))
        .collect();
    let at = |what: &str| {
        session
            .iter()
            .position(|l| l.contains(what))
            .unwrap_or_else(|| panic!("no {what:?} in the session's trace:\n{stderr}"))
    };
    let order = [
        at(": connect"),
        at(": first send"),
        at(": first receive"),
        at(": close"),
        at(": outcome"),
    ];
    assert!(order.is_sorted(), "{order:?} in\n{}", session.join("\n"));
    assert!(session[order[4]].contains("outcome=\"ok\""), "{stderr}");
}

/// Drops ANSI colour sequences (`ESC [ … m`).
fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for c in chars.by_ref() {
                if c == 'm' {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}
