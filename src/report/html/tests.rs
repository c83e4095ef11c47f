//! Tests of the HTML report: document recognition, the sections every result gets (its
//! summary from the result's own numbers, its errors, its declared charts), determinism,
//! and the fixtures the other test files share (the headless-Chromium check is in
//! `chromium_tests.rs`, comparisons and time series in `overlay_tests.rs`, the errors
//! table and axes in `errors_tests.rs`).
//!
//! The fixtures are real results written by `rtload run` (a video run and a failed
//! transcription run of this version, a duplex result from before `rtload.charts`); the
//! page is drawn from what each declares, so nothing here names a workload.

use serde_json::{Value, json};

use super::{DocKind, HtmlError, Input, IntervalLog, classify, render_html};
use crate::util::histlog::{Series, read_intervals, write_interval_log};

pub(super) const VIDEO: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/results/video_quickstart.json"
));
pub(super) const VIDEO_LEGACY: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/results/video_legacy.json"
));
pub(super) const DUPLEX: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/results/duplex_omniinteract.json"
));
pub(super) const TRANSCRIPTION_FAILED: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/results/transcription_failed.json"
));
pub(super) const SWEEP: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/results/sweep_concurrency.json"
));
/// `capacity.json` of a real search against the embedded server (`max_sessions = 6`,
/// threshold `ttfc_ms.p99 < 2000`).
pub(super) const CAPACITY: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/results/capacity_search.json"
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

/// The video run with session 1 failed, as the runner writes a failure: its timeline
/// row, `rtload.failures`, the counts and the verdict.
pub(super) fn video_with_failure() -> Value {
    let mut v = parse(VIDEO);
    let msg = "server closed the stream: <1011> \"overloaded\" & gone";
    let rt = &mut v["rtload"];
    rt["timeline"][1]["error"] = json!(msg);
    rt["timeline"][1]["end_s"] = json!(2.1);
    rt["failures"] = json!({"count": 1, "by_kind": {"closed": 1},
        "sessions": [{"session": 1, "kind": "closed", "message": msg}]});
    rt["failures_by_kind"] = json!({"closed": 1});
    rt["verdict"] = json!("failed");
    rt["sample_counts"] =
        json!({"measured": 3, "completed": 2, "failed": 1, "cancelled": 0, "warmup": 1});
    rt["thresholds"] = json!([
        {"metric": "failed", "expr": "== 0", "measured": 1, "passed": false},
    ]);
    v
}

/// Number of `<svg class="chart" data-chart="KIND"` occurrences.
/// The `(x, y)` of every `<title>NAME (x, y)</title>` dot of `svg`, in drawing order.
pub(super) fn dots(svg: &str, name: &str) -> Vec<(f64, f64)> {
    svg.split(&format!("<title>{name} ("))
        .skip(1)
        .map(|s| {
            let inner = s.split(")</title>").next().unwrap();
            let (x, y) = inner.split_once(", ").unwrap();
            (x.parse().unwrap(), y.parse().unwrap())
        })
        .collect()
}

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

/// The caption of the figure holding chart `kind`.
pub(super) fn caption<'a>(html: &'a str, kind: &str) -> &'a str {
    html.split(&format!("data-chart=\"{kind}\""))
        .nth(1)
        .and_then(|s| s.split("<figcaption>").nth(1))
        .and_then(|s| s.split("</figcaption>").next())
        .unwrap_or_else(|| panic!("no caption of {kind}"))
}

/// `series` written by the real interval-log writer and read back, as `rtload report`
/// finds it beside a result.
pub(super) fn log_of(series: &[Series]) -> IntervalLog {
    let mut buf = Vec::new();
    write_interval_log(&mut buf, 1_700_000_000.0, 1.0, series).expect("writes");
    IntervalLog::Read(read_intervals(&buf).expect("reads"))
}

/// A result of `n` TTFT values over a 20 s run (each `slope` ms slower than the one
/// before) and 3 finalization values, with its interval log: TTFT and a completion per
/// value, none in second 5, plus the generator's queue wait.
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
    v["rtload"]["session_series"][0]["points"][3] = json!([4.0, null]);
    v["rtload"]["timeline"][0]["end_s"] = Value::Null;
    let html = render_docs(&[("v.json", v)]);
    assert!(!html.contains("NaN") && !html.contains("inf\""));
    // Session 0 lost one cadence point: 11 + 11 + 11 - 1 dots.
    assert_eq!(
        chart(&html, "chunk_cadence").matches("mark dot").count(),
        32
    );
}

#[test]
fn documents_are_classified_by_generic_blocks_only() {
    assert_eq!(classify(&parse(VIDEO)), Ok(DocKind::Run));
    assert_eq!(classify(&parse(DUPLEX)), Ok(DocKind::Run));
    assert_eq!(classify(&parse(SWEEP)), Ok(DocKind::Sweep));
    assert_eq!(
        classify(&json!({"rtload": {"workload": "anything", "metrics": {}}})),
        Ok(DocKind::Run)
    );
    // A workload's own marker alone is no rtload result.
    let marker = parse(VIDEO)["benchmark"].clone();
    assert!(classify(&json!({"benchmark": marker})).is_err());
    assert!(classify(&json!({"rtload": {"workload": "some-duplex-kind"}})).is_err());
    assert!(classify(&json!([1, 2])).is_err_and(|e| e.contains("not a JSON object")));
    assert!(classify(&json!({"foo": 1})).is_err_and(|e| e.contains("foo")));
}

#[test]
fn a_result_draws_the_charts_it_declares_in_order() {
    let doc = parse(VIDEO);
    let html = render_docs(&[("q.json", doc.clone())]);
    let ids: Vec<&str> = doc["rtload"]["charts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    let mut at = 0;
    for id in &ids {
        let kind = if doc["rtload"]["charts"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["id"] == *id && c["kind"] == "distribution")
        {
            format!("dist-{id}")
        } else {
            id.to_string()
        };
        assert_eq!(count_chart(&html, &kind), 1, "{kind}");
        let pos = html.find(&format!("data-chart=\"{kind}\"")).expect("chart");
        assert!(pos > at, "{kind} out of declared order");
        at = pos;
    }
    // The series: one line per session, the reference at the metric's value, the band.
    let cadence = chart(&html, "chunk_cadence");
    assert_eq!(cadence.matches("class=\"mark line\"").count(), 3);
    assert!(cadence.contains(">deadline</text>") && cadence.contains("class=\"band\""));
    assert!(caption(&html, "chunk_cadence").contains("deadline 750 ms (chunk_deadline_ms)"));
    // The distribution the headline's chunk_interval_ms.p99 is read from: the same 15
    // values (steady only), a dot each with the p50/p90/p99 marks, the origin said.
    let steady = chart(&html, "dist-chunk_interval_ms");
    assert_eq!(steady.matches("<circle class=\"mark dot").count(), 15);
    for m in ["p50", "p90", "p99"] {
        assert!(steady.contains(&format!(">{m}</text>")), "{m}");
    }
    let cap = caption(&html, "dist-chunk_interval_ms");
    assert!(cap.starts_with("chunk_interval_ms: 15 value(s)"), "{cap}");
    assert!(cap.contains("measured from → to: a steady chunk"), "{cap}");
    assert!(cap.contains("deadline 750 ms is off-scale"), "{cap}");
    // The timeline: a row per session, its queue wait declared as a kind.
    let tl = chart(&html, "timeline");
    assert_eq!(tl.matches("class=\"mark span extent\"").count(), 3);
    assert_eq!(tl.matches("class=\"mark span k0\"").count(), 3);
    assert!(tl.contains(">session 2</text>"));
}

#[test]
fn a_failed_session_is_red_and_its_error_is_in_a_table_not_a_tooltip() {
    let html = render_docs(&[("q.json", video_with_failure())]);
    assert_eq!(html.matches("class=\"mark span failed\"").count(), 1);
    assert!(html.contains("session 1 failed after"));
    let table = html
        .split("<table class=\"errors\">")
        .nth(1)
        .and_then(|t| t.split("</table>").next())
        .expect("errors table");
    assert!(table.contains("<caption>Errors: 1 failed session(s)</caption>"));
    assert!(table.contains(
        "<tr><td>closed</td><td>1</td><td>session 1</td><td><pre class=\"err\">server closed the stream: &lt;1011&gt;"
    ));
}

#[test]
fn a_result_written_before_charts_gets_its_kinds_charts_from_the_registry() {
    let html = render_docs(&[("d.json", parse(DUPLEX))]);
    let tl = chart(&html, "timeline");
    // Its spans on the lanes the kind declares; "audio" (declared no more) as other.
    assert!(tl.contains("class=\"mark span k1\""), "input");
    assert!(tl.contains("class=\"mark span k3\""), "response");
    assert!(tl.contains("class=\"mark span kx\""), "other");
    assert!(html.contains("other (a span kind the chart does not declare)"));
    for kind in ["dist-ttft_ms", "dist-audio_ttfp_ms", "dist-e2el_ms"] {
        assert_eq!(count_chart(&html, kind), 1, "{kind}");
    }
    // tpot_ms is empty: a "no data" note, not an empty chart.
    assert_eq!(count_chart(&html, "dist-tpot_ms"), 0);
    assert!(
        html.contains("<p class=\"nodata\">no data</p><figcaption>tpot_ms: no values</figcaption>")
    );
    assert!(html.contains("failed after"));
    // An old result of no registered kind: its distributions (none here) and its table.
    let old = render_docs(&[("v.json", parse(VIDEO_LEGACY))]);
    assert!(old.contains("<td>steady_interval_ms_mean</td>"));
    assert!(!old.contains("<svg"));
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
        .find("verdict: <strong>failed</strong> — 5 points: 3 passed, 2 failed, 0 short of their value, 0 generator-bound; capacity max_concurrency = 4")
        .expect("verdict");
    let table_at = html.find("<caption>Sweep points</caption>").expect("table");
    assert!(verdict_at < table_at && table_at < html.find("<svg").expect("chart"));
    assert!(html.contains("<th>max_concurrency</th><th>achieved</th><th>sessions/s</th><th>audio s/s</th><th>ttft_ms.p99</th><th>failed</th><th>result</th>"), "{html}");
    assert!(
        html.contains("<td>4</td><td>4</td><td>1.32</td><td>7.35</td>"),
        "{html}"
    );
    assert!(html.contains("Achieved throughput in the workload&#39;s unit, audio s/s"));
    // Each failing point names its broken threshold and the measured value.
    assert!(html.contains("FAIL max_concurrency=8: ttft_ms.p99 = 612.900 (&lt; 500)\n"));
    assert!(html.contains("FAIL max_concurrency=16: ttft_ms.p99 = 1480.200 (&lt; 500)\n"));
    let mut none = parse(SWEEP);
    none["sweep"]["capacity"] = Value::Null;
    none["sweep"]["points"][0]["passed"] = json!(false);
    let html = render_docs(&[("s.json", none)]);
    assert!(html.contains(
        "no capacity: none (the lowest point, max_concurrency=1, failed its thresholds)"
    ));
    assert!(
        html.contains("2 passed, 3 failed, 0 short of their value, 0 generator-bound; no capacity")
    );
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
fn result_sections_open_with_verdict_thresholds_and_the_results_own_numbers() {
    let doc = parse(VIDEO);
    let html = render_docs(&[("q.json", doc.clone())]);
    let first_chart = html.find("<svg").expect("charts");
    let verdict = html
        .find("verdict: <strong>passed</strong>")
        .expect("verdict");
    let headline = html
        .find("<caption>Headline metrics</caption>")
        .expect("headline");
    assert!(html.contains("<p class=\"nodata\">no thresholds set</p>"));
    assert!(verdict < headline && headline < first_chart);
    // Each headline value is the rtload.metrics value, with its distribution's
    // percentiles (also rtload.metrics values) and the events it is measured between.
    let m = &doc["rtload"]["metrics"];
    let v = |k: &str| super::metrics::value(m[k].as_f64().unwrap());
    assert!(html.contains(&format!(
        "<tr><td>chunk_interval_ms.p99</td><td>ms</td><td class=\"origin\">a steady chunk&#39;s predecessor received → the chunk received (warm-up, first and terminal chunks excluded)</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"value\">{}</td></tr>",
        v("chunk_interval_ms.p50"), v("chunk_interval_ms.p90"), v("chunk_interval_ms.p99"),
        v("chunk_interval_ms.max"), v("chunk_interval_ms.p99")
    )), "{html}");
    // A ratio without percentiles shows its one value.
    assert!(
        html.contains("<td>–</td><td>–</td><td>–</td><td>–</td><td class=\"value\">1</td></tr>")
    );
    // The generator: peak concurrency and the start rate are rtload.achieved's (a burst
    // has no rate); no banner, since the run itself found nothing.
    assert!(html.contains("<tr><td>peak concurrent sessions</td><td></td><td>3</td></tr>"));
    assert!(html.contains("— (a burst: the starts spanned under a second)"));
    assert!(!html.contains("generator-bound"));
    let failed = render_docs(&[("f.json", video_with_failure())]);
    assert!(failed.contains("verdict: <strong>failed</strong> — 3 measured: 2 completed, 1 failed (closed: 1); 1 warm-up"));
    assert!(failed.contains("<td class=\"fail\">FAIL</td>"));
}

#[test]
fn the_generator_bound_banner_is_the_runs_own_verdict() {
    // High lateness the run did not call generator-bound (its threshold was higher): no
    // banner; the report never re-judges with a threshold of its own.
    let mut late = parse(VIDEO);
    late["rtload"]["send_lateness"]["p99_ms"] = json!(25.0);
    assert!(!render_docs(&[("l.json", late.clone())]).contains("generator-bound"));
    let msg = "results may be generator-bound: send lateness p99 25.0 ms > 20 ms (spread the load over more cores or machines)";
    late["rtload"]["generator_bound"] = json!(msg);
    let html = render_docs(&[("l.json", late)]);
    assert!(html.contains("<p class=\"banner\">Results may be generator-bound: send lateness p99 25.0 ms &gt; 20 ms (spread"));
}

#[test]
fn the_metrics_table_says_where_each_measurement_starts_and_ends() {
    let html = render_docs(&[("t.json", parse(TRANSCRIPTION_FAILED))]);
    assert!(html.contains(
        "<th>metric</th><th>unit</th><th>better</th><th>measured from → to</th><th>value</th>"
    ));
    assert!(html.contains("<td>ttft_ms.p99</td><td>ms</td><td>lower</td><td class=\"origin\">first input_audio_buffer.append&#39;s intended send → first non-empty transcription.delta received</td>"), "{html}");
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
        html.contains("3 passed, 2 failed, 1 short of their value, 0 generator-bound; capacity max_concurrency = 2")
    );
    assert!(html.contains("short: max_concurrency=4 did not reach the swept value"));
}

#[test]
fn sweep_point_the_generator_bound_is_marked_and_never_the_capacity() {
    let mut doc = parse(SWEEP);
    let why = "results may be generator-bound: send lateness p99 31.0 ms > 10 ms";
    doc["sweep"]["points"][2]["generator_bound"] = json!(why);
    let html = render_docs(&[("s.json", doc)]);
    assert!(
        html.contains("<tr class=\"short bound\"><td>4</td>"),
        "{html}"
    );
    assert!(html.contains("pass+gen-bound"));
    let shown = why.replace('>', "&gt;");
    assert!(html.contains(&format!("generator-bound max_concurrency=4: {shown}")));
    assert!(html.contains("capacity: max_concurrency = 2"));
    assert!(html.contains("1 generator-bound; capacity max_concurrency = 2"));
}

#[test]
fn sweep_without_thresholds_claims_no_capacity() {
    let mut doc = parse(SWEEP);
    for p in doc["sweep"]["points"].as_array_mut().unwrap() {
        p["thresholds"] = json!([]);
        p["passed"] = json!(true);
    }
    let html = render_docs(&[("s.json", doc)]);
    assert!(
        html.contains("capacity: no threshold set: no capacity"),
        "{html}"
    );
    assert!(html.contains("5 passed, 0 failed, 0 short of their value, 0 generator-bound; no threshold set: no capacity"));
    assert!(!html.contains("mark hl"));
    assert!(!html.contains("predates per-point thresholds"));
    // A file written before points recorded their thresholds: what that run claimed.
    let mut old = parse(SWEEP);
    for p in old["sweep"]["points"].as_array_mut().unwrap() {
        p.as_object_mut().unwrap().remove("thresholds");
    }
    let html = render_docs(&[("s.json", old)]);
    assert!(html.contains("predates per-point thresholds, so no capacity is claimed here; the run that wrote it claimed capacity 4."));
}

#[test]
fn unknown_documents_get_a_section_but_do_not_fail_the_report() {
    let html = render_docs(&[
        ("odd.json", json!({"hello": "world"})),
        ("q.json", parse(VIDEO)),
    ]);
    assert!(html.contains("This document was not recognized"));
    assert!(html.contains("hello"));
    assert_eq!(count_chart(&html, "chunk_cadence"), 1);
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
    let mut empty = parse(VIDEO);
    for k in ["session_series", "timeline", "distributions"] {
        empty["rtload"][k] = json!(null);
    }
    let html = render_docs(&[("v.json", empty), ("s.json", json!({"sweep": {}}))]);
    assert!(!html.contains("<svg"), "no empty charts");
    assert!(html.matches("<p class=\"nodata\">no data</p>").count() >= 8);
    assert!(html.contains("this result has no rtload.session_series rows of chunk_cadence"));
}

#[test]
fn malformed_documents_never_panic_or_print_non_finite_numbers() {
    let mut charts = parse(VIDEO);
    charts["rtload"]["charts"][0] = json!({"id": 3, "kind": "nope"});
    let odd = [
        json!({"rtload": {"metrics": {}, "session_series": "x", "timeline": 3}}),
        json!({"rtload": {"metrics": {}, "charts": [{"id": "s", "title": "t", "kind": "session_series", "series": "a", "x": {"label": "x"}, "y": {"label": "y"}}],
            "session_series": [{"series": "a", "points": [["a", 1], [2, 1e308], [3, -1e308], 7]}, 5]}}),
        json!({"rtload": {"metrics": {}, "timeline": [{"spans": [{"kind": 5}, {"start_s": 1.0, "end_s": "x"}]}, 7], "distributions": {"a": "b", "b_ms": [1, null, "x", 2]}}}),
        json!({"sweep": {"points": [{"value": "a"}, {"value": 1, "metrics": 3}, {"value": 2, "passed": "yes"}], "capacity": "x", "headline": 5}}),
        json!({"rtload": {"workload": "some-duplex-kind", "metrics": {"a": "x", "b": null, "c": 1.5}}}),
        json!({"rtload": {"metrics": {}, "failures": {"sessions": [{"session": "x"}, 4], "by_kind": 3}, "warnings": [1, "w"]}}),
        charts,
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
        ("t.json", parse(TRANSCRIPTION_FAILED)),
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
fn a_result_without_a_catalogue_gets_one_plot_per_distribution() {
    let doc = json!({"rtload": {"metrics": {"ttft_ms.mean": 355.0},
        "distributions": {"ttft_ms": [350.0, 360.0], "finalization_ms": [100.0],
                          "itl_ms": [], "streaming_lag_ms": [-40.0, 10.0], "rtf": [1.05],
                          "wer": [0.0, 0.0]}},
        "endpoint": "ws://127.0.0.1:1/v1/realtime", "model": "m"});
    assert_eq!(classify(&doc), Ok(DocKind::Run));
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
        html.contains("<p class=\"nodata\">no data</p><figcaption>itl_ms: no values</figcaption>")
    );
    // Every WER is 0: an axis from 0 to 1, never −1 to 1.
    let wer = chart(&html, "dist-wer");
    assert!(
        wer.contains(">0</text>") && wer.contains(">1</text>"),
        "{wer}"
    );
    assert!(!wer.contains(">-"), "{wer}");
}

#[path = "chromium_tests.rs"]
mod chromium;

#[path = "errors_tests.rs"]
mod errors;
