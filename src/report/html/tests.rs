//! Tests of the HTML report: primitives (escaping, ticks, non-finite handling), document
//! recognition, determinism, and a headless-Chromium check that every chart is drawn.

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

use super::svg::{Axis, Plot, coord, esc, histogram, nice_ticks};
use super::{DocKind, HtmlError, classify, render_html};

const VIDEO: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/results/video_quickstart.json"
));
const DUPLEX: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/results/duplex_omniinteract.json"
));
const SWEEP: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/results/sweep_concurrency.json"
));

fn parse(s: &str) -> Value {
    serde_json::from_str(s).expect("fixture is valid JSON")
}

fn render(docs: &[(&str, Value)]) -> String {
    let docs: Vec<(String, Value)> = docs
        .iter()
        .map(|(n, v)| (n.to_string(), v.clone()))
        .collect();
    render_html(&docs).expect("renders")
}

/// The video fixture with session 1 failed (as the engine reports a failed sample).
fn video_with_failure() -> Value {
    let mut v = parse(VIDEO);
    v["rtload"]["samples"][1]["error"] =
        json!("server closed the stream: <1011> \"overloaded\" & gone");
    v["rtload"]["samples"][1]["ended_s"] = json!(2.1);
    v
}

/// Number of `<svg class="chart" data-chart="KIND"` occurrences.
fn count_chart(html: &str, kind: &str) -> usize {
    html.matches(&format!("<svg class=\"chart\" data-chart=\"{kind}\""))
        .count()
}

#[test]
fn esc_escapes_markup_and_quotes() {
    assert_eq!(
        esc(r#"<a href="x">'&'</a>"#),
        "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
    );
    assert_eq!(esc("ok\u{1}\tµs"), "ok\tµs");
}

#[test]
fn text_from_documents_is_escaped() {
    let html = render(&[("<b>evil</b>.json", video_with_failure())]);
    assert!(html.contains("&lt;b&gt;evil&lt;/b&gt;.json"));
    assert!(!html.contains("<b>evil</b>"));
    assert!(html.contains("&lt;1011&gt; &quot;overloaded&quot; &amp; gone"));
}

#[test]
fn coord_rejects_non_finite_and_normalises_zero() {
    assert_eq!(coord(f64::NAN), None);
    assert_eq!(coord(f64::INFINITY), None);
    assert_eq!(coord(-0.001).as_deref(), Some("0.00"));
    assert_eq!(coord(12.345).as_deref(), Some("12.35"));
}

#[track_caller]
fn check_ticks(lo: f64, hi: f64, max: usize, want: &[f64]) {
    let got = nice_ticks(lo, hi, max);
    assert_eq!(got, want, "ticks of [{lo}, {hi}] max {max}");
}

#[test]
fn nice_ticks_cover_the_range_with_round_steps() {
    check_ticks(0.0, 750.0, 6, &[0.0, 200.0, 400.0, 600.0, 800.0]);
    check_ticks(52.4, 97.1, 6, &[50.0, 60.0, 70.0, 80.0, 90.0, 100.0]);
    check_ticks(0.0, 1.0, 5, &[0.0, 0.2, 0.4, 0.6, 0.8, 1.0]);
    check_ticks(0.1, 0.3, 4, &[0.1, 0.15, 0.2, 0.25, 0.3]);
    check_ticks(-3.0, 7.0, 5, &[-4.0, -2.0, 0.0, 2.0, 4.0, 6.0, 8.0]);
    check_ticks(5.0, 5.0, 5, &[4.4, 4.6, 4.8, 5.0, 5.2, 5.4, 5.6]);
    check_ticks(0.0, 0.0, 5, &[-1.0, -0.5, 0.0, 0.5, 1.0]);
    assert!(nice_ticks(f64::NAN, 1.0, 5).is_empty());
    assert!(nice_ticks(0.0, f64::INFINITY, 5).is_empty());
    assert!(nice_ticks(-1e308, 1e308, 5).is_empty());
}

#[test]
fn integer_axis_has_integer_ticks() {
    let a = Axis::fit("chunk", [1.0, 3.0], true).expect("axis");
    let mut p = Plot::linear(
        "t",
        "t",
        a,
        Axis::fit("y", [0.0, 1.0], false).expect("axis"),
    );
    p.line(&[(1.0, 0.5), (3.0, 0.5)], 0, "s");
    let svg = p.finish();
    assert!(svg.contains(">1</text>") && svg.contains(">3</text>"));
    assert!(!svg.contains(">1.5</text>"));
}

#[test]
fn histogram_ignores_non_finite_values() {
    let bins = histogram(&[
        1.0,
        f64::NAN,
        2.0,
        f64::INFINITY,
        2.5,
        f64::NEG_INFINITY,
        9.0,
    ]);
    assert_eq!(bins.iter().map(|b| b.count).sum::<usize>(), 4);
    assert!(bins.first().is_some_and(|b| b.lo <= 1.0) && bins.last().is_some_and(|b| b.hi >= 9.0));
    assert!(histogram(&[f64::NAN]).is_empty());
    let one = histogram(&[5.0, 5.0]);
    assert_eq!(one.iter().map(|b| b.count).sum::<usize>(), 2);
}

#[test]
fn nan_points_break_the_line_instead_of_dropping_to_zero() {
    let x = Axis::fit("x", [0.0, 4.0], true).expect("axis");
    let y = Axis::fit("y", [10.0, 20.0], false).expect("axis");
    let mut p = Plot::linear("t", "t", x, y);
    p.line(
        &[
            (0.0, 10.0),
            (1.0, f64::NAN),
            (2.0, 20.0),
            (3.0, f64::INFINITY),
            (4.0, 15.0),
        ],
        0,
        "s",
    );
    let svg = p.finish();
    assert_eq!(svg.matches("<circle class=\"mark dot\"").count(), 3);
    // Three separate sub-paths: every finite point starts a new "M" after a gap.
    let d = svg
        .split("class=\"mark line\" d=\"")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .expect("path");
    assert_eq!(d.matches('M').count(), 3, "path {d}");
    assert!(!svg.contains("NaN") && !svg.contains("inf"));
}

#[test]
fn nan_values_in_documents_are_skipped() {
    let mut v = parse(VIDEO);
    v["sessions"][0]["chunks"][3]["inter_arrival_ms"] = Value::Null;
    v["rtload"]["samples"][0]["ended_s"] = Value::Null;
    let html = render(&[("v.json", v)]);
    assert!(!html.contains("NaN") && !html.contains("inf\""));
    // Session 0 lost one cadence point: 11 + 11 + 11 - 1 dots.
    let cadence = html
        .split("data-chart=\"cadence\"")
        .nth(1)
        .and_then(|s| s.split("</svg>").next())
        .expect("cadence");
    assert_eq!(cadence.matches("mark dot").count(), 32);
}

#[test]
fn documents_are_classified() {
    assert_eq!(classify(&parse(VIDEO)), Ok(DocKind::Video));
    assert_eq!(classify(&parse(DUPLEX)), Ok(DocKind::Duplex));
    assert_eq!(classify(&parse(SWEEP)), Ok(DocKind::Sweep));
    // Any other rtload result is recognised by its metrics, never by a kind name.
    assert_eq!(
        classify(&json!({"rtload": {"workload": "anything", "metrics": {}}})),
        Ok(DocKind::Generic)
    );
    assert!(classify(&json!({"rtload": {"workload": "omniinteract"}})).is_err());
    assert!(classify(&json!([1, 2])).is_err_and(|e| e.contains("not a JSON object")));
    assert!(classify(&json!({"foo": 1})).is_err_and(|e| e.contains("foo")));
}

#[test]
fn video_report_has_the_three_chart_families() {
    let html = render(&[("q.json", parse(VIDEO))]);
    for kind in ["cadence", "steady-intervals", "ttfc", "session-timeline"] {
        assert_eq!(count_chart(&html, kind), 1, "{kind}");
    }
    assert!(html.contains(">deadline</text>"));
    assert!(html.contains("class=\"band\""));
    assert!(html.contains("<td>steady_interval_ms_mean</td>"));
    // Steady intervals: 5 per session (indexes 6..=10) → 15 values.
    assert!(html.contains("histogram of 15 value(s)"));
}

#[test]
fn failed_video_session_is_red_with_error_tooltip() {
    let html = render(&[("q.json", video_with_failure())]);
    assert_eq!(html.matches("class=\"mark span failed\"").count(), 1);
    assert!(html.contains("session 1 failed after"));
}

#[test]
fn duplex_report_has_timeline_and_one_histogram_per_distribution() {
    let html = render(&[("d.json", parse(DUPLEX))]);
    assert_eq!(count_chart(&html, "duplex-timeline"), 1);
    for kind in ["dist-ttft_ms", "dist-audio_ttfp_ms", "dist-e2el_ms"] {
        assert_eq!(count_chart(&html, kind), 1, "{kind}");
    }
    // tpot_ms is empty: a "no data" note, not an empty chart.
    assert_eq!(count_chart(&html, "dist-tpot_ms"), 0);
    assert!(html.contains("<p class=\"nodata\">no data</p><figcaption>tpot: histogram"));
    assert!(html.contains("failed: response.done reports failure for resp_2a"));
}

#[test]
fn sweep_report_highlights_capacity() {
    let html = render(&[("s.json", parse(SWEEP))]);
    assert_eq!(count_chart(&html, "sweep-headline"), 1);
    assert_eq!(count_chart(&html, "sweep-throughput"), 1);
    assert_eq!(html.matches("class=\"mark hl\"").count(), 2);
    assert_eq!(html.matches("class=\"mark fail\"").count(), 4);
    assert!(html.contains("capacity 4</text>"));
    let mut none = parse(SWEEP);
    none["sweep"]["capacity"] = Value::Null;
    let html = render(&[("s.json", none)]);
    assert!(html.contains("no point passed, so there is no capacity"));
    assert!(!html.contains("mark hl"));
}

#[test]
fn unknown_documents_get_a_section_but_do_not_fail_the_report() {
    let html = render(&[
        ("odd.json", json!({"hello": "world"})),
        ("q.json", parse(VIDEO)),
    ]);
    assert!(html.contains("This document was not recognized"));
    assert!(html.contains("hello"));
    assert_eq!(count_chart(&html, "cadence"), 1);
}

#[test]
fn fails_only_when_nothing_is_renderable() {
    assert!(matches!(render_html(&[]), Err(HtmlError::NoDocuments)));
    let err = render_html(&[
        ("a.json".into(), json!(3)),
        ("b.json".into(), json!({"x": 1})),
    ])
    .expect_err("fails");
    let msg = err.to_string();
    assert!(
        msg.starts_with("no document could be rendered: a.json: not a JSON object"),
        "{msg}"
    );
    assert!(msg.contains("b.json"));
}

#[test]
fn empty_documents_render_no_data_notes() {
    let html = render(&[
        ("v.json", json!({"benchmark": "lingbot_world_realtime"})),
        ("d.json", json!({"backend": "openai-realtime-duplex"})),
        ("s.json", json!({"sweep": {}})),
    ]);
    assert!(!html.contains("<svg"), "no empty charts");
    assert!(html.matches("<p class=\"nodata\">no data</p>").count() >= 6);
}

#[test]
fn malformed_documents_never_panic_or_print_non_finite_numbers() {
    let odd = [
        json!({"benchmark": "lingbot_world_realtime", "sessions": "x", "rtload": {"samples": 3}}),
        json!({"benchmark": "lingbot_world_realtime", "sessions": [{"chunks": [{"index": "a"}, {"index": 2, "inter_arrival_ms": 1e308}, {"index": 3, "inter_arrival_ms": -1e308}]}]}),
        json!({"backend": "openai-realtime-duplex", "rtload": {"timeline": [{"spans": [{"kind": 5}, {"start_s": 1.0, "end_s": "x"}]}, 7], "distributions": {"a": "b", "b_ms": [1, null, "x", 2]}}}),
        json!({"sweep": {"points": [{"value": "a"}, {"value": 1, "metrics": 3}, {"value": 2, "passed": "yes"}], "capacity": "x", "headline": 5}}),
        json!({"rtload": {"workload": "omniinteract", "metrics": {"a": "x", "b": null, "c": 1.5}}}),
    ];
    for doc in odd {
        let html = render(&[("odd.json", doc.clone())]);
        assert!(!html.contains("NaN") && !html.contains("inf\""), "{doc}");
    }
}

#[test]
fn output_is_deterministic_and_self_contained() {
    let docs = [
        ("q.json", parse(VIDEO)),
        ("d.json", parse(DUPLEX)),
        ("s.json", parse(SWEEP)),
    ];
    let a = render(&docs);
    let b = render(&docs);
    assert_eq!(a, b);
    for banned in ["http://", "https://", "<link", "src=", "@import", "url("] {
        let hits: Vec<&str> = a.matches(banned).collect();
        // The only URL allowed is the SVG namespace identifier.
        if banned == "http://" {
            assert_eq!(
                hits.len(),
                a.matches("xmlns=\"http://www.w3.org/2000/svg\"").count()
            );
        } else {
            assert!(hits.is_empty(), "found {banned}");
        }
    }
    // Every chart sits in a figure with a caption.
    assert_eq!(
        a.matches("<svg class=\"chart\"").count(),
        a.matches("<figure>").count()
    );
}

// ---- headless Chromium: prove every chart is laid out with visible marks ----

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

#[test]
fn chromium_draws_every_chart() {
    let Some(browser) = chromium_binary() else {
        panic!("install chromium (apt-get install chromium)");
    };
    let fixtures = [
        ("video_quickstart.json", parse(VIDEO)),
        ("video_failed.json", video_with_failure()),
        ("duplex_omniinteract.json", parse(DUPLEX)),
        ("sweep_concurrency.json", parse(SWEEP)),
    ];
    for (name, doc) in fixtures {
        let html = render(&[(name, doc)]);
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
        }
    }
}

#[test]
fn generic_result_gets_one_histogram_per_distribution() {
    let doc = json!({"rtload": {"metrics": {"ttft_ms.mean": 355.0},
        "distributions": {"ttft_ms": [350.0, 360.0], "finalization_ms": [100.0],
                          "itl_ms": [], "streaming_lag_ms": [-40.0, 10.0], "rtf": [1.05],
                          "wer": [0.0, 0.25]}},
        "endpoint": "ws://127.0.0.1:1/v1/realtime", "model": "m"});
    assert_eq!(classify(&doc), Ok(DocKind::Generic));
    let html = render(&[("t.json", doc)]);
    for kind in [
        "ttft_ms",
        "finalization_ms",
        "streaming_lag_ms",
        "rtf",
        "wer",
    ] {
        assert_eq!(count_chart(&html, &format!("dist-{kind}")), 1, "{kind}");
    }
    // No inter-arrival values: a "no data" note, never an empty chart.
    assert_eq!(count_chart(&html, "dist-itl_ms"), 0);
    assert!(html.contains("<p class=\"nodata\">no data</p><figcaption>itl: histogram"));
}
