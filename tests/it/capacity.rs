//! `rtload capacity` against embedded servers whose answer is known: `max_sessions = 6`
//! (the search must land on 6 exactly, limited by rejections at 7), the load model
//! (`rtf_one_at_sessions = 4`: the video RTF crosses 1 between 6 and 7 sessions), a
//! scenario with neither thresholds nor SLO (judged on good share and rejections alone),
//! one where even a single session breaks, and bad input. Short video sessions
//! (milliseconds of chunks) keep the whole module to seconds; 127.0.0.1 only.

use std::path::Path;
use std::process::Output;

use serde_json::Value;

use rtload::run::CapacityOutcome;

use crate::support::{Fixture, rtload, video_searched};

fn capacity(scenario: &Path, dir: &Path, extra: &[&str]) -> (Output, String, String) {
    let out = rtload()
        .arg("capacity")
        .arg(scenario)
        .arg("--dir")
        .arg(dir)
        .args(extra)
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout.clone()).unwrap();
    let stderr = String::from_utf8(out.stderr.clone()).unwrap();
    (out, stdout, stderr)
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// A step's ended sessions: good, degraded, rejected and failed together.
fn ended(step: &Value) -> u64 {
    let o = &step["outcomes"];
    (["good", "degraded", "rejected", "failed"].iter())
        .map(|k| o[k].as_u64().unwrap())
        .sum()
}

/// The concurrency of each step, in the order run.
fn step_values(doc: &Value) -> Vec<u64> {
    doc["capacity"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["max_concurrency"].as_u64().unwrap())
        .collect()
}

/// Sessions refused past the 6th: the staircase 1, 2, 4 holds, 8 breaks, the bisection
/// runs 6 (holds) and 7 (breaks), the confirmation runs 6 again. No threshold and no SLO
/// are set: the sentence says it judged good share and rejections alone.
///
/// The embedded server frees a session's slot just after it sends its close, so the
/// client's next session can ask a moment before the slot is free (a real refusal at a
/// hand-over, not a capacity limit). A client that retries a 503 (`retry_rejected = 2`,
/// the server's `Retry-After: 0`) gets in then, while at 7 the six others stay busy for
/// the whole session and every retry is refused.
#[test]
fn max_sessions_6_is_a_capacity_of_6_limited_by_rejections_at_7() {
    let fx = video_searched(
        5,
        1,
        "[server]\nmax_sessions = 6\nretry_after_s = 0\n[target]\nretry_rejected = 2\n",
    );
    let dir = fx.dir.path().join("cap");
    let (out, stdout, stderr) = capacity(&fx.path, &dir, &[]);
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    let first = stdout.lines().next().unwrap();
    assert!(
        first.starts_with(
            "Capacity: 6 concurrent sessions (good ≥ 99%, no rejections held; no [thresholds] \
             set); limited by: "
        ) && first.ends_with(" at 7"),
        "{stdout}"
    );
    // What broke first: the refusals (a busy machine may add that the generator was
    // bound too; refusals count either way).
    let why = first.split("limited by: ").nth(1).unwrap();
    let n: u64 = why.split(' ').next().unwrap().parse().unwrap();
    assert!(
        n > 0 && why.starts_with(&format!("{n} rejected session")),
        "{stdout}"
    );
    let doc = read_json(&dir.join("capacity.json"));
    let cap = &doc["capacity"];
    assert_eq!(cap["answer"], 6, "{cap}");
    assert_eq!(cap["limited_by"]["max_concurrency"], 7, "{cap}");
    assert_eq!(step_values(&doc), [1, 2, 4, 8, 6, 7, 6], "{stdout}");
    assert_eq!(cap["sentence"], first);
    let steps = cap["steps"].as_array().unwrap();
    for s in steps {
        let rejected = s["outcomes"]["rejected"].as_u64().unwrap();
        let n = s["max_concurrency"].as_u64().unwrap();
        // Every step is its own run, scaled like a sweep point: 4 sessions per slot.
        let ended = ended(s);
        assert_eq!(ended, 4 * n, "{s}");
        assert_eq!(rejected > 0, n > 6, "{s}");
        assert_eq!(s["verdict"], if n > 6 { "breaks" } else { "holds" }, "{s}");
        assert!(dir.join(s["result"].as_str().unwrap()).is_file(), "{s}");
    }
    assert_eq!(steps.last().unwrap()["phase"], "confirm");
    // The table: one row per step, after the sentence and a blank line.
    let rows: Vec<&str> = stdout.lines().skip(3).collect();
    assert_eq!(rows.len(), 7, "{stdout}");
    assert!(
        rows[6].starts_with("7") && rows[6].contains("confirm"),
        "{stdout}"
    );
    // Live progress: a line as each step starts and one with its verdict.
    let progress: Vec<&str> = stderr.lines().filter(|l| l.starts_with("step ")).collect();
    assert_eq!(progress.len(), 14, "{stderr}");
    assert_eq!(progress[0], "step 1: max_concurrency=1 (staircase) …");
    assert!(
        progress[11].starts_with("step 6: max_concurrency=7 (bisect) ")
            && progress[11].contains("breaks: "),
        "{stderr}"
    );
}

/// `[server.load] rtf_one_at_sessions = 4` stretches every chunk by `max(1, c / 4)`; one
/// session alone runs at video RTF ≈ 0.61 (30 ms per 50 ms chunk of video at 240 fps,
/// plus the first chunk's 20 ms), so `video_rtf_worst < 1` holds up to c = 6 (≈ 0.92)
/// and breaks at 7 (≈ 1.07). A busy machine only adds wall time, so the answer is
/// within one step of 6, limited by that threshold.
#[test]
fn the_load_model_limits_capacity_by_the_threshold_it_breaks() {
    let fx = Fixture::new(
        r#"
name = "load-model"
[workload]
kind = "video-cadence"
num_chunks = 8
warmup_chunks = 1
fps = 240
first_chunk_timeout = 30.0
chunk_timeout = 30.0
[load]
samples = 1
# A debug build beside other tests: lateness is not what this test is about.
generator_bound_ms = 1000
[thresholds]
video_rtf_worst = "< 1"
[server.video]
first_chunk_ms = 20
chunk_interval_ms = 30
ramp_chunks = 0
[server.load]
rtf_one_at_sessions = 4
"#,
    );
    let dir = fx.dir.path().join("cap");
    let (out, stdout, stderr) = capacity(&fx.path, &dir, &["--quiet"]);
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    assert!(
        !stderr.lines().any(|l| l.starts_with("step ")),
        "--quiet keeps progress off: {stderr}"
    );
    let doc = read_json(&dir.join("capacity.json"));
    let cap = &doc["capacity"];
    let answer = cap["answer"].as_u64().unwrap();
    assert!((5..=7).contains(&answer), "{stdout}");
    let limit = &cap["limited_by"];
    assert_eq!(limit["max_concurrency"], answer + 1, "{cap}");
    let reason = limit["reasons"][0].as_str().unwrap();
    assert!(
        reason.starts_with("video_rtf_worst = ") && reason.ends_with(" (< 1)"),
        "{cap}"
    );
    let first = stdout.lines().next().unwrap();
    assert!(
        first.starts_with(&format!(
            "Capacity: {answer} concurrent sessions (good ≥ 99%, no rejections, \
             video_rtf_worst < 1 held); limited by: video_rtf_worst = "
        )),
        "{stdout}"
    );
    assert!(
        stdout.lines().nth(2).unwrap().contains("video_rtf_worst"),
        "{stdout}"
    );
}

/// Nothing limits a plain scenario up to `--max 4`: the library's search stops there,
/// confirms, and says the capacity is at least 4 and what it judged.
#[test]
fn a_search_that_never_breaks_reports_at_least_max() {
    // Sessions of ~80 ms: long enough that every step has its concurrency in flight on a
    // busy machine (with 5 ms chunks a step could end its sessions as fast as it starts
    // them, and the search would stop there as inconclusive).
    let fx = video_searched(3, 1, "chunk_interval_ms = 40\n");
    let dir = fx.dir.path().join("cap");
    let bounds = rtload::run::CapacityBounds {
        start: 1,
        max: 4,
        ramp: None,
    };
    let mut lines = Vec::new();
    let r = rtload::run::run_capacity(&fx.scenario(), bounds, 0.99, &dir, true, None, &mut |l| {
        lines.push(l.to_string())
    })
    .unwrap();
    assert_eq!(
        r.outcome,
        Some(CapacityOutcome::Capacity {
            sessions: 4,
            limit: None
        }),
        "{}",
        r.text
    );
    assert!(
        r.text.starts_with(
            "Capacity: at least 4 concurrent sessions (good ≥ 99%, no rejections held at the \
             search's --max 4; no [thresholds] set; nothing broke)"
        ),
        "{}",
        r.text
    );
    assert_eq!(lines.len(), 8, "{lines:#?}");
    let doc = read_json(&dir.join("capacity.json"));
    assert_eq!(step_values(&doc), [1, 2, 4, 4]);
    assert_eq!(doc["capacity"]["limited_by"], Value::Null);
}

/// A threshold no session can meet breaks at 1: no capacity, exit 1, one step.
#[test]
fn even_one_session_breaking_exits_1() {
    let fx = video_searched(3, 1, "[thresholds]\nvideo_rtf_worst = \"< 0.000001\"\n");
    let dir = fx.dir.path().join("cap");
    let (out, stdout, stderr) = capacity(&fx.path, &dir, &[]);
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    assert!(
        stdout.starts_with("Capacity: none: even 1 concurrent session breaks"),
        "{stdout}"
    );
    let doc = read_json(&dir.join("capacity.json"));
    assert_eq!(step_values(&doc), [1]);
    assert_eq!(doc["capacity"]["answer"], Value::Null);
}

/// Bad flags are usage errors (exit 2) naming the flag and the fix; nothing runs.
#[test]
fn bad_capacity_flags_exit_2() {
    let fx = video_searched(3, 1, "");
    let dir = fx.dir.path().join("cap");
    for (flags, want) in [
        (
            &["--good-share", "1.5"][..],
            "--good-share must be in (0, 1] (got 1.5)",
        ),
        (
            &["--start", "8", "--max", "4"][..],
            "--max (4) must be at least --start (8)",
        ),
        (
            &["--max-concurrency", "3"][..],
            "does not take --max-concurrency",
        ),
    ] {
        let (out, stdout, stderr) = capacity(&fx.path, &dir, flags);
        assert_eq!(out.status.code(), Some(2), "{flags:?}: {stdout}{stderr}");
        assert!(stderr.contains(want), "{flags:?}: {stderr}");
        assert!(!dir.exists(), "{flags:?} ran something");
    }
}

/// The `(x, y)` of every `<title>NAME (x, y)</title>` dot in chart `kind` of `html`.
fn dots(html: &str, kind: &str, name: &str) -> Vec<(f64, f64)> {
    let svg = html
        .split(&format!("data-chart=\"{kind}\""))
        .nth(1)
        .and_then(|s| s.split("</svg>").next())
        .unwrap_or_else(|| panic!("no chart {kind}"));
    svg.split(&format!("<title>{name} ("))
        .skip(1)
        .map(|s| {
            let (x, y) = s
                .split(")</title>")
                .next()
                .unwrap()
                .split_once(", ")
                .unwrap();
            (x.parse().unwrap(), y.parse().unwrap())
        })
        .collect()
}

/// `v` as the page prints a chart value (3 decimals at most).
fn drawn(v: f64) -> f64 {
    format!("{v:.3}").parse().unwrap()
}

/// A real search (the server admits 2 sessions: 1 and 2 hold, 4 and 3 are refused, 2
/// confirms) writes `capacity.html` beside `capacity.json`, and `rtload report` draws
/// the same page from the JSON: the same answer, step concurrencies, class counts,
/// sessions/s and p99s as the JSON records.
#[test]
fn capacity_html_draws_the_numbers_capacity_json_records() {
    let fx = video_searched(
        3,
        1,
        "[server]\nmax_sessions = 2\nretry_after_s = 0\n[target]\nretry_rejected = 2\n\
         [thresholds]\nttfc_ms.p99 = \"< 30000\"\n",
    );
    let dir = fx.dir.path().join("cap");
    let bounds = rtload::run::CapacityBounds {
        start: 1,
        max: 4,
        ramp: None,
    };
    let r = rtload::run::run_capacity(&fx.scenario(), bounds, 0.99, &dir, true, None, &mut |_| {})
        .unwrap();
    assert!(
        r.files
            .ends_with(&[dir.join("capacity.json"), dir.join("capacity.html")])
    );
    let doc = read_json(&dir.join("capacity.json"));
    let page = std::fs::read_to_string(dir.join("capacity.html")).unwrap();
    let out = fx.dir.path().join("report.html");
    let rep = rtload()
        .arg("report")
        .arg(dir.join("capacity.json"))
        .arg("--html")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(rep.status.code(), Some(0), "{rep:?}");
    let report = std::fs::read_to_string(&out).unwrap();
    let cap = &doc["capacity"];
    let steps = cap["steps"].as_array().unwrap();
    for html in [&page, &report] {
        let sentence = cap["sentence"].as_str().unwrap().replace('<', "&lt;");
        assert!(html.contains(&format!("{sentence}</p>")), "{sentence}");
        match cap["answer"].as_u64() {
            Some(n) => assert!(html.contains(&format!("green: capacity {n}")), "{cap}"),
            None => assert!(!html.contains("mark hl"), "{cap}"),
        }
        // A step without the metric (every session refused) has no dot, never a 0.
        let measured = |s: &Value| s["thresholds"][0]["measured"].as_f64();
        let want: Vec<(f64, f64)> = (1..)
            .zip(steps)
            .filter_map(|(n, s)| Some((n as f64, drawn(measured(s)?))))
            .collect();
        assert_eq!(dots(html, "capacity-slo", "ttfc_ms.p99"), want);
        for (i, s) in steps.iter().enumerate() {
            let (n, c, o) = (i + 1, &s["max_concurrency"], &s["outcomes"]);
            let row = format!(
                "<td>{n}</td><td>{}</td><td>{c}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>",
                s["phase"].as_str().unwrap(),
                o["good"],
                o["degraded"],
                o["rejected"],
                o["failed"]
            );
            assert!(html.contains(&row), "{row}");
            let good = format!(
                "<title>step {n}, max_concurrency {c}: {} good</title>",
                o["good"]
            );
            assert!(o["good"] == 0 || html.contains(&good), "{good}");
        }
        let mut order: Vec<&Value> = steps.iter().collect();
        order.sort_by_key(|s| s["max_concurrency"].as_u64());
        let want: Vec<(f64, f64)> = order
            .iter()
            .map(|s| {
                let x = s["sessions_per_s"].as_f64().unwrap();
                (
                    drawn(x),
                    drawn(s["thresholds"][0]["measured"].as_f64().unwrap()),
                )
            })
            .collect();
        assert_eq!(dots(html, "capacity-tput-latency", "ttfc_ms.p99"), want);
    }
}

/// Held steps (`[load] duration_s`): each step runs exactly its concurrency of
/// OmniInteract sessions at once, each held the whole duration, against a server that
/// admits 2: 1 and 2 hold, 4 and 3 break on rejections, 2 is confirmed; the sentence says
/// how long the sessions were held.
#[test]
fn held_steps_run_their_concurrency_for_the_hold_and_say_so() {
    crate::duplex_support::require_ffmpeg();
    let fx = crate::duplex_support::duplex(&crate::duplex_support::Opts {
        duration_ms: 1000,
        samples: 1,
        max_concurrency: 1,
        workload: "turn_gap_ms = 200\n",
        server: "turns = \"commit\"\nfinal_decision = \"respond\"\n",
        // A debug build on a shared machine: lateness is not what this test is about.
        load: "duration_s = 2\ngenerator_bound_ms = 1000\n",
        prelude: "[server]\nmax_sessions = 2\nretry_after_s = 0\n[target]\nretry_rejected = 2\n",
        ..Default::default()
    });
    let dir = fx.dir.path().join("cap");
    let (out, stdout, stderr) = capacity(&fx.path, &dir, &["--max", "4", "--quiet"]);
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    let first = stdout.lines().next().unwrap();
    assert!(
        first.starts_with("Capacity: 2 concurrent sessions (")
            && first.contains(", each session held 2 s")
            && first.ends_with(" at 3"),
        "{stdout}"
    );
    let doc = read_json(&dir.join("capacity.json"));
    assert_eq!(doc["capacity"]["criteria"]["hold_s"], 2.0);
    assert_eq!(step_values(&doc), [1, 2, 4, 3, 2], "{stdout}");
    for s in doc["capacity"]["steps"].as_array().unwrap() {
        let n = s["max_concurrency"].as_u64().unwrap();
        let ended = ended(s);
        assert_eq!(ended, n, "exactly its concurrency, at once: {s}");
        // Every admitted session was held: its result's sessions lasted the duration.
        let step = rtload::report::read_result(&dir.join(s["result"].as_str().unwrap())).unwrap();
        for row in step["rtload"]["samples"].as_array().unwrap() {
            let ends: Vec<f64> = (row["turns"].as_array().into_iter().flatten())
                .filter_map(|t| t["speech_end_s"].as_f64())
                .collect();
            if let Some(last) = ends.last() {
                assert!(*last >= 2.0 && ends.len() >= 2, "{row}");
            }
        }
    }
}
