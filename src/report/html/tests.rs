//! Tests of the HTML report: primitives (escaping, ticks, non-finite handling), document
//! recognition, determinism, and the fixtures the other test files share (the
//! headless-Chromium check is in `chromium_tests.rs`, comparisons and time series in
//! `overlay_tests.rs`).

use serde_json::{Value, json};

use super::{DocKind, HtmlError, Input, IntervalLog, classify, render_html};
use crate::util::histlog::{Series, read_intervals, write_interval_log};

pub(super) const VIDEO: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/results/video_quickstart.json"
));
pub(super) const DUPLEX: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/results/duplex_omniinteract.json"
));
pub(super) const SWEEP: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/results/sweep_concurrency.json"
));

pub(super) fn parse(s: &str) -> Value {
    serde_json::from_str(s).expect("fixture is valid JSON")
}

pub(super) fn render_docs(docs: &[(&str, Value)]) -> String {
    let docs: Vec<(String, Value)> = docs
        .iter()
        .map(|(n, v)| (n.to_string(), v.clone()))
        .collect();
    render_html(&docs).expect("renders")
}

/// `doc` with the blocks today's runner adds: the verdict, thresholds with measured
/// values, sample counts, headline metrics with percentiles, generator resources.
pub(super) fn with_verdict(mut doc: Value, verdict: &str) -> Value {
    let passed = verdict == "passed";
    let rt = &mut doc["rtload"];
    rt["verdict"] = json!(verdict);
    rt["thresholds"] = json!([
        {"metric": "ttfc_ms.p99", "expr": "< 1000", "measured": 412.5, "passed": true},
        {"metric": "failed", "expr": "== 0", "measured": if passed { 0 } else { 1 }, "passed": passed},
    ]);
    rt["sample_counts"] = json!({"measured": 3, "completed": if passed { 3 } else { 2 },
        "failed": if passed { 0 } else { 1 }, "cancelled": 0, "warmup": 1});
    rt["failures_by_kind"] = json!(if passed {
        json!({})
    } else {
        json!({"closed": 1})
    });
    rt["headline_metrics"] = json!(["ttfc_ms.mean", "slo_attainment"]);
    for (k, v) in [
        ("ttfc_ms.p50", 300.0),
        ("ttfc_ms.p90", 380.0),
        ("ttfc_ms.p99", 412.5),
        ("ttfc_ms.max", 415.0),
        ("ttfc_ms.mean", 320.0),
        ("slo_attainment", 0.98),
    ] {
        rt["metrics"][k] = json!(v);
    }
    rt["resources"] = json!({"cpu_s": 0.09, "peak_rss_mib": 26.5});
    doc
}

/// The video fixture with session 1 failed (as the engine reports a failed sample).
pub(super) fn video_with_failure() -> Value {
    let mut v = with_verdict(parse(VIDEO), "failed");
    v["rtload"]["samples"][1]["error"] =
        json!("server closed the stream: <1011> \"overloaded\" & gone");
    v["rtload"]["samples"][1]["ended_s"] = json!(2.1);
    v
}

/// Number of `<svg class="chart" data-chart="KIND"` occurrences.
pub(super) fn count_chart(html: &str, kind: &str) -> usize {
    html.matches(&format!("<svg class=\"chart\" data-chart=\"{kind}\""))
        .count()
}

/// The `<svg>` of the chart `kind` (up to its closing tag).
pub(super) fn chart<'a>(html: &'a str, kind: &str) -> &'a str {
    html.split(&format!("data-chart=\"{kind}\""))
        .nth(1)
        .and_then(|s| s.split("</svg>").next())
        .unwrap_or_else(|| panic!("no chart {kind}"))
}

/// `series` written by the real interval-log writer and read back, as `rtload report`
/// finds it beside a result.
pub(super) fn log_of(series: &[Series]) -> IntervalLog {
    let mut buf = Vec::new();
    write_interval_log(&mut buf, 1_700_000_000.0, 1.0, series).expect("writes");
    IntervalLog::Read(read_intervals(&buf).expect("reads"))
}

/// A transcription-like result of `n` TTFT values over a 20 s run (each `slope` ms slower
/// than the one before) and 3 finalization values, with its interval log: TTFT and a
/// completion per value, none in second 5, plus the generator's queue wait.
pub(super) fn run_with_log(name: &str, n: usize, slope: f64) -> Input {
    let ttft: Vec<(f64, f64)> = (0..n)
        .map(|i| (i as f64 * 20.0 / n as f64, 100.0 + slope * i as f64))
        .collect();
    let done: Vec<(f64, f64)> = ttft
        .iter()
        .filter(|(t, _)| !(5.0..6.0).contains(t))
        .map(|&(t, v)| (t, v * 10.0))
        .collect();
    let doc = json!({"rtload": {"workload": "transcription", "verdict": "passed",
        "sample_counts": {"measured": n, "completed": n, "failed": 0},
        "headline_metrics": ["ttft_ms.p99", "wer"],
        "metrics": {"ttft_ms.p99": 100.0 + slope * n as f64, "wer": 0.1},
        "distributions": {
            "ttft_ms": ttft.iter().map(|p| p.1).collect::<Vec<f64>>(),
            "finalization_ms": [40.0, 45.0, 90.0]}}});
    let log = log_of(&[
        Series::micros("ttft_ms", ttft.clone()),
        Series::micros("queue_wait_ms", vec![(0.0, 0.5), (1.0, 2.0)]),
        Series::micros("session_ms", done),
    ]);
    Input {
        name: name.into(),
        doc,
        log,
    }
}

#[test]
fn text_from_documents_is_escaped() {
    let html = render_docs(&[("<b>evil</b>.json", video_with_failure())]);
    assert!(html.contains("&lt;b&gt;evil&lt;/b&gt;.json"));
    assert!(!html.contains("<b>evil</b>"));
    assert!(html.contains("&lt;1011&gt; &quot;overloaded&quot; &amp; gone"));
}

#[test]
fn nan_values_in_documents_are_skipped() {
    let mut v = parse(VIDEO);
    v["sessions"][0]["chunks"][3]["inter_arrival_ms"] = Value::Null;
    v["rtload"]["samples"][0]["ended_s"] = Value::Null;
    let html = render_docs(&[("v.json", v)]);
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
    assert!(classify(&json!({"rtload": {"workload": "some-duplex-kind"}})).is_err());
    assert!(classify(&json!([1, 2])).is_err_and(|e| e.contains("not a JSON object")));
    assert!(classify(&json!({"foo": 1})).is_err_and(|e| e.contains("foo")));
}

#[test]
fn video_report_has_cadence_timeline_and_dot_plots() {
    let html = render_docs(&[("q.json", parse(VIDEO))]);
    for kind in [
        "cadence",
        "dist-steady_interval_ms",
        "dist-ttfc_ms",
        "session-timeline",
    ] {
        assert_eq!(count_chart(&html, kind), 1, "{kind}");
    }
    assert!(html.contains(">deadline</text>"));
    assert!(html.contains("class=\"band\""));
    assert!(html.contains("<td>steady_interval_ms_mean</td>"));
    // Steady intervals: 5 per session (indexes 6..=10) → 15 values, too few for a
    // curve: a dot each, and the p50/p90/p99 marks.
    assert!(html.contains("steady inter-arrival interval: 15 value(s)"));
    let steady = chart(&html, "dist-steady_interval_ms");
    assert_eq!(steady.matches("<circle class=\"mark dot").count(), 15);
    for m in ["p50", "p90", "p99"] {
        assert!(steady.contains(&format!(">{m}</text>")), "{m}");
    }
    assert!(!steady.contains("mark line"));
}

#[test]
fn failed_video_session_is_red_with_error_tooltip() {
    let html = render_docs(&[("q.json", video_with_failure())]);
    assert_eq!(html.matches("class=\"mark span failed\"").count(), 1);
    assert!(html.contains("session 1 failed after"));
}

#[test]
fn duplex_report_has_timeline_and_one_plot_per_distribution() {
    let html = render_docs(&[("d.json", parse(DUPLEX))]);
    assert_eq!(count_chart(&html, "duplex-timeline"), 1);
    for kind in ["dist-ttft_ms", "dist-audio_ttfp_ms", "dist-e2el_ms"] {
        assert_eq!(count_chart(&html, kind), 1, "{kind}");
    }
    // tpot_ms is empty: a "no data" note, not an empty chart.
    assert_eq!(count_chart(&html, "dist-tpot_ms"), 0);
    assert!(
        html.contains("<p class=\"nodata\">no data</p><figcaption>tpot: no values</figcaption>")
    );
    assert!(html.contains("failed: response.done reports failure for resp_2a"));
}

#[test]
fn sweep_report_highlights_capacity() {
    let html = render_docs(&[("s.json", parse(SWEEP))]);
    for kind in [
        "sweep-throughput",
        "sweep-unit-rate",
        "sweep-headline",
        "sweep-failures",
        "sweep-lateness",
        "sweep-tput-latency",
    ] {
        assert_eq!(count_chart(&html, kind), 1, "{kind}");
    }
    // The knee on every line: throughput (sessions/s), the unit rate (audio s/s), ttft
    // p99, failed, lateness, and the throughput-vs-latency curve.
    assert_eq!(html.matches("class=\"mark hl\"").count(), 6);
    // Two failed points on each of those five lines, plus two on the curve.
    assert_eq!(html.matches("class=\"mark fail\"").count(), 12);
    assert!(html.contains("capacity 4</text>"));
    // The verdict opens the section (as `run` decided it: two points failed), then the
    // table with the terminal's columns, then the charts.
    let verdict_at = html
        .find("verdict: <strong>failed</strong> — 5 points: 3 passed, 2 failed, 0 short of their value; capacity max_concurrency = 4")
        .expect("verdict");
    let table_at = html.find("<caption>Sweep points</caption>").expect("table");
    assert!(verdict_at < table_at && table_at < html.find("<svg").expect("chart"));
    assert!(html.contains("<th>max_concurrency</th><th>achieved</th><th>sessions/s</th><th>audio s/s</th><th>ttft_ms.p99</th><th>failed</th><th>result</th>"), "{html}");
    assert!(
        html.contains("<td>4</td><td>4</td><td>1.32</td><td>7.35</td>"),
        "{html}"
    );
    assert!(html.contains("Achieved throughput in the workload&#39;s unit, audio s/s"));
    let mut none = parse(SWEEP);
    none["sweep"]["capacity"] = Value::Null;
    none["sweep"]["points"][0]["passed"] = json!(false);
    let html = render_docs(&[("s.json", none)]);
    assert!(html.contains("no point passed and reached its value, so there is no capacity"));
    assert!(html.contains("2 passed, 3 failed, 0 short of their value; no capacity"));
    assert!(!html.contains("mark hl"));
}

#[test]
fn sweep_without_a_unit_rate_has_no_unit_column_and_a_missing_point_shows_a_dash() {
    let mut doc = parse(SWEEP);
    doc["sweep"]["points"][1]["unit_rate"] = Value::Null;
    let html = render_docs(&[("s.json", doc.clone())]);
    assert!(
        html.contains("<td>2</td><td>2</td><td>0.71</td><td>-</td>"),
        "{html}"
    );
    doc["sweep"]["unit_rate"] = Value::Null;
    let html = render_docs(&[("s.json", doc)]);
    assert_eq!(count_chart(&html, "sweep-unit-rate"), 0);
    assert!(html.contains("<th>sessions/s</th><th>ttft_ms.p99</th>"));
}

#[test]
fn result_sections_open_with_verdict_thresholds_and_percentiles() {
    let html = render_docs(&[("q.json", with_verdict(parse(VIDEO), "passed"))]);
    let first_chart = html.find("<svg").expect("charts");
    let verdict = html
        .find("verdict: <strong>passed</strong>")
        .expect("verdict");
    let thresholds = html
        .find("<caption>Thresholds</caption>")
        .expect("thresholds");
    let headline = html
        .find("<caption>Headline metrics</caption>")
        .expect("headline");
    assert!(verdict < thresholds && thresholds < headline && headline < first_chart);
    assert!(html.contains("<tr><td>ttfc_ms</td><td></td><td>300</td><td>380</td><td>412.50</td><td>415</td><td>–</td></tr>"), "{html}");
    // A ratio without percentiles shows its one value.
    assert!(html.contains(
        "<td>slo_attainment</td><td></td><td>–</td><td>–</td><td>–</td><td>–</td><td>0.9800</td>"
    ));
    assert!(html.contains("<caption>Generator health</caption>"));
    assert!(!html.contains("generator-bound"));
    let failed = render_docs(&[("f.json", video_with_failure())]);
    assert!(failed.contains("verdict: <strong>failed</strong> — 3 measured: 2 completed, 1 failed (closed: 1); 1 warm-up"));
    assert!(failed.contains("<td class=\"fail\">FAIL</td>"));
    let mut late = with_verdict(parse(VIDEO), "passed");
    late["rtload"]["send_lateness"]["p99_ms"] = json!(25.0);
    let html = render_docs(&[("l.json", late)]);
    assert!(html.contains("Results may be generator-bound: send lateness p99 is 25.0 ms"));
}

#[test]
fn sweep_point_that_fell_short_is_marked_and_never_the_capacity() {
    let mut doc = parse(SWEEP);
    doc["sweep"]["points"][2]["reached"] = json!(false);
    doc["sweep"]["points"][2]["achieved_concurrency"] = json!(3);
    let html = render_docs(&[("s.json", doc)]);
    assert!(
        html.contains("<tr class=\"short\"><td>4</td><td>3</td>"),
        "{html}"
    );
    assert!(html.contains("pass+short"));
    assert!(html.contains("capacity: max_concurrency = 2"));
    assert!(
        html.contains("3 passed, 2 failed, 1 short of their value; capacity max_concurrency = 2")
    );
    assert!(html.contains("short: max_concurrency=4 did not reach the swept value"));
}

#[test]
fn unknown_documents_get_a_section_but_do_not_fail_the_report() {
    let html = render_docs(&[
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
    let html = render_docs(&[
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
        json!({"rtload": {"workload": "some-duplex-kind", "metrics": {"a": "x", "b": null, "c": 1.5}}}),
    ];
    for doc in odd {
        let html = render_docs(&[("odd.json", doc.clone())]);
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
    let a = render_docs(&docs);
    let b = render_docs(&docs);
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

#[test]
fn generic_result_gets_one_plot_per_distribution() {
    let doc = json!({"rtload": {"metrics": {"ttft_ms.mean": 355.0},
        "distributions": {"ttft_ms": [350.0, 360.0], "finalization_ms": [100.0],
                          "itl_ms": [], "streaming_lag_ms": [-40.0, 10.0], "rtf": [1.05],
                          "wer": [0.0, 0.25]}},
        "endpoint": "ws://127.0.0.1:1/v1/realtime", "model": "m"});
    assert_eq!(classify(&doc), Ok(DocKind::Generic));
    let html = render_docs(&[("t.json", doc)]);
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
    assert!(
        html.contains("<p class=\"nodata\">no data</p><figcaption>itl: no values</figcaption>")
    );
}

#[path = "chromium_tests.rs"]
mod chromium;

#[test]
fn headline_table_fills_percentiles_from_median_and_raw_values() {
    // Duplex results report `median`/`p99` (vllm bench names) and keep the raw values:
    // p50 is the median, p99 the reported one, p90 and max come from the raw values.
    let doc = json!({"rtload": {"workload": "some-duplex-kind", "verdict": "passed",
        "headline_metrics": ["ttft_ms.p99"],
        "metrics": {"ttft_ms.median": 101.076, "ttft_ms.p99": 101.39},
        "distributions": {"ttft_ms": [101.076, 101.398, 101.075]}}});
    let html = super::summary::summary(&doc);
    let row = html.split("<td>ttft_ms</td>").nth(1).expect("ttft row");
    let row = &row[..row.find("</tr>").unwrap()];
    // p90 of [101.075, 101.076, 101.398] = 101.076 + 0.8 · 0.322 = 101.3336.
    assert!(
        row.contains("<td>101.08</td><td>101.33</td><td>101.39</td><td>101.40</td>"),
        "{row}"
    );
}
