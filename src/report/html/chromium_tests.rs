//! The headless-Chromium check: every chart of every page kind is laid out with visible
//! marks inside its SVG, and no text element leaves its SVG (the page's inline script
//! measures both into `body[data-chartcheck]`; Chromium's `--dump-dom` hands it back).
//! Pages: every chart kind a result can declare — distributions (dot plots and percentile
//! curves), session series, timelines — from real results (a video run, the same with a
//! failed session, a failed transcription run, a duplex result from before
//! `rtload.charts`), a sweep, a capacity search, a result with a time-series panel, and a comparison of two
//! results (overlaid curves, dot rows and time series).

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

use super::super::{Input, IntervalLog, render};
use super::{
    CAPACITY, DUPLEX, SWEEP, TRANSCRIPTION_FAILED, VIDEO, parse, run_with_log, video_with_failure,
};

fn chromium_binary() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .flat_map(|name| std::env::split_paths(&path).map(move |dir| dir.join(name)))
        .find(|p| p.is_file())
}

/// Runs Chromium on `html` and returns the parsed `data-chartcheck` summary.
fn chart_check(browser: &Path, html: &str) -> Vec<Value> {
    let dir = tempfile::tempdir().expect("tempdir");
    let page = dir.path().join("report.html");
    std::fs::write(&page, html).expect("write page");
    let profile = dir.path().join("profile");
    let mut child = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
        ])
        .args([
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ])
        .arg("--disable-dev-shm-usage")
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg("--dump-dom")
        .arg(format!("file://{}", page.display()))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn chromium");
    let mut stdout = child.stdout.take().expect("stdout");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut dom = String::new();
        let res = stdout.read_to_string(&mut dom).map(|_| dom);
        let _ = tx.send(res);
    });
    // Safety net only: the dump normally arrives within a few seconds.
    let dom = match rx.recv_timeout(Duration::from_secs(120)) {
        Ok(res) => res.expect("read chromium output"),
        Err(_) => {
            let _ = child.kill();
            panic!("chromium did not finish within 120 s");
        }
    };
    let _ = child.wait();
    let attr = dom
        .split("data-chartcheck=\"")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .unwrap_or_else(|| {
            panic!(
                "no data-chartcheck in the dumped DOM: {}",
                &dom[..dom.len().min(400)]
            )
        });
    let json = attr
        .replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&#39;", "'")
        .replace("&amp;", "&");
    serde_json::from_str::<Vec<Value>>(&json).expect("chartcheck is JSON")
}

/// Every page kind the report draws, each as one rendered page, with the chart kinds
/// and marks it must contain (so the check below provably covers them).
fn pages() -> Vec<(&'static str, String, Vec<&'static str>)> {
    let single = |name: &str, doc: Value| Input {
        name: name.into(),
        doc,
        log: IntervalLog::Absent,
    };
    let page = |inputs: &[Input]| render(inputs).expect("renders");
    vec![
        (
            "video",
            page(&[single("video_quickstart.json", parse(VIDEO))]),
            vec![
                "data-chart=\"chunk_cadence\"",
                "class=\"band\"",
                "data-chart=\"timeline\"",
                "data-chart=\"dist-chunk_interval_ms\"",
                "data-chart=\"dist-chunk_interval_all_ms\"",
                "class=\"pmark-label\"",
                "data-chart=\"dist-session_stall_ms\"",
            ],
        ),
        (
            "video-failed",
            page(&[single("video_failed.json", video_with_failure())]),
            vec!["class=\"mark span failed\"", "<table class=\"errors\">"],
        ),
        (
            "transcription-failed",
            page(&[single(
                "transcription_failed.json",
                parse(TRANSCRIPTION_FAILED),
            )]),
            vec![
                "data-chart=\"timeline\"",
                "class=\"mark span k1\"",
                "class=\"mark span failed\"",
                "<table class=\"errors\">",
            ],
        ),
        (
            "duplex",
            page(&[single("duplex_omniinteract.json", parse(DUPLEX))]),
            vec!["data-chart=\"timeline\"", "class=\"mark span kx\""],
        ),
        (
            "sweep",
            page(&[single("sweep_concurrency.json", parse(SWEEP))]),
            vec!["data-chart=\"sweep-unit-rate\""],
        ),
        (
            "capacity",
            page(&[single("capacity.json", parse(CAPACITY))]),
            vec![
                "data-chart=\"capacity-concurrency\"",
                "class=\"mark bar s2\"",
                "data-chart=\"capacity-slo\"",
                "class=\"pt-label\"",
                "data-chart=\"capacity-tput-latency\"",
            ],
        ),
        (
            "cdf+timeseries",
            page(&[run_with_log("transcription_run.json", 200, 0.5)]),
            vec![
                "class=\"mark line\"",
                "data-chart=\"ts-completions\"",
                "data-chart=\"ts-ttft_ms\"",
                "class=\"mark line dash\"",
                "data-chart=\"dist-session_ms\"",
            ],
        ),
        (
            "overlay",
            page(&[
                run_with_log(
                    "results/baseline-with-a-rather-long-descriptive-name-2024-06-01.json",
                    200,
                    0.2,
                ),
                run_with_log(
                    "results/candidate-with-a-rather-long-descriptive-name-2024-06-02.json",
                    120,
                    1.0,
                ),
            ]),
            vec![
                "id=\"cmp-0\"",
                "data-chart=\"dist-finalization_ms\"",
                "class=\"mark dot s1\"",
            ],
        ),
    ]
}

#[test]
fn chromium_draws_every_chart() {
    let Some(browser) = chromium_binary() else {
        panic!("install chromium (apt-get install chromium)");
    };
    for (name, html, must) in pages() {
        for m in must {
            assert!(html.contains(m), "{name}: no {m}");
        }
        let n_charts = html.matches("<svg class=\"chart\"").count();
        let check = chart_check(&browser, &html);
        assert_eq!(check.len(), n_charts, "{name}: every chart measured");
        assert!(n_charts >= 2, "{name}: {n_charts} charts");
        for c in &check {
            let marks = c["marks"].as_u64().unwrap_or(0);
            let (w, h) = (
                c["width"].as_f64().unwrap_or(0.0),
                c["height"].as_f64().unwrap_or(0.0),
            );
            assert!(
                marks > 0 && w > 0.0 && h > 0.0,
                "{name}: chart not drawn: {c}"
            );
            assert_eq!(
                c["inside"],
                json!(true),
                "{name}: marks outside the chart: {c}"
            );
            assert_eq!(
                c["texts_outside"],
                json!([]),
                "{name}: text clipped by its chart: {c}"
            );
        }
    }
}
