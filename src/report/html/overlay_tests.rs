//! Page tests for comparisons and time series: comparable results overlaid (one line
//! per file, legend naming the file, per-file summaries kept), incomparable ones kept
//! apart, and the time-series panel with its notes when a log is missing or lacks a tag.

use serde_json::json;

use super::super::tests::{VIDEO, chart, count_chart, log_of, parse, run_with_log};
use super::super::{Input, IntervalLog, render};
use crate::util::histlog::Series;

fn page(inputs: &[Input]) -> String {
    render(inputs).expect("renders")
}

#[test]
fn comparable_results_are_overlaid_one_line_per_file() {
    let long = "results/candidate-with-a-rather-long-descriptive-name-2024-06-02.json";
    let html = page(&[
        run_with_log("a.json", 200, 0.2),
        run_with_log(long, 120, 1.0),
    ]);
    assert_eq!(html.matches("<section class=\"doc compare\"").count(), 1);
    assert!(html.contains("<a href=\"#cmp-0\">comparison: transcription</a> (2 results overlaid)"));
    // Percentile curves: one per file in one chart, the legend naming each file; the long
    // name shortened in the middle with the full name on hover.
    let ttft = chart(&html, "dist-ttft_ms");
    assert_eq!(ttft.matches("class=\"mark line\"").count(), 2);
    assert!(html.contains(&format!(
        "<li title=\"{long}\"><span class=\"sw s1\"></span>results/candidate-with-a…ve-name-2024-06-02.json</li>"
    )));
    // Three finalization values each: a dot plot with one row per file.
    let fin = chart(&html, "dist-finalization_ms");
    assert_eq!(fin.matches("<circle class=\"mark dot s0\"").count(), 3);
    assert_eq!(fin.matches("<circle class=\"mark dot s1\"").count(), 3);
    assert_eq!(fin.matches(">p99</text>").count(), 2);
    // Time series overlaid too, and each chart exactly once on the page.
    for kind in ["dist-ttft_ms", "ts-completions", "ts-ttft_ms"] {
        assert_eq!(count_chart(&html, kind), 1, "{kind}");
    }
    assert_eq!(
        chart(&html, "ts-completions")
            .matches("class=\"mark line\"")
            .count(),
        2
    );
    assert_eq!(
        chart(&html, "ts-ttft_ms")
            .matches("class=\"mark line dash\"")
            .count(),
        2
    );
    // The per-file sections keep their summaries and point to the comparison.
    assert_eq!(html.matches("verdict: <strong>passed</strong>").count(), 2);
    assert_eq!(
        html.matches("overlaid with the comparable results").count(),
        2
    );
    assert!(html.contains("<caption>Results compared</caption>"));
}

#[test]
fn results_of_different_kinds_keep_one_section_each() {
    let html = page(&[
        run_with_log("t.json", 50, 0.0),
        Input {
            name: "v.json".into(),
            doc: parse(VIDEO),
            log: IntervalLog::Absent,
        },
    ]);
    assert!(!html.contains("class=\"doc compare\""));
    assert!(!html.contains("overlaid with the comparable results"));
    assert_eq!(count_chart(&html, "dist-ttft_ms"), 1);
    assert_eq!(count_chart(&html, "dist-ttfc_ms"), 1);
    assert_eq!(count_chart(&html, "ts-completions"), 1);
}

#[test]
fn completions_are_zero_where_none_completed_and_latencies_break() {
    let html = page(&[run_with_log("t.json", 40, 1.0)]);
    let done = chart(&html, "ts-completions");
    // 40 values over 20 s, two a second, none in second 5: a true zero there.
    assert!(
        done.contains("<title>t.json: 0 /s at 5.5 s</title>"),
        "{done}"
    );
    assert!(done.contains("<title>t.json: 2 /s at 4.5 s</title>"));
    // The session durations, logged only in the .hlog, get their own percentile plot.
    assert!(html.contains("session_ms: 38 value(s)"));
    assert!(html.contains("from the .hlog histogram (3 significant digits)"));
    // The headline (ttft_ms.p99 → tag ttft_ms) per interval, p50 solid and p99 dashed.
    let ttft = chart(&html, "ts-ttft_ms");
    assert_eq!(ttft.matches("class=\"mark line\"").count(), 1);
    assert_eq!(ttft.matches("class=\"mark line dash\"").count(), 1);
}

#[test]
fn a_missing_or_incomplete_log_is_said_never_drawn_as_zero() {
    let mut absent = run_with_log("absent.json", 40, 0.0);
    absent.log = IntervalLog::Absent;
    let html = page(&[absent]);
    assert!(
        html.contains(
            "Time series: no interval log (.hlog) beside this result, so no time series."
        )
    );
    assert!(!html.contains("data-chart=\"ts-"));
    let mut broken = run_with_log("broken.json", 40, 0.0);
    broken.log = IntervalLog::Unreadable("broken.hlog: bad histogram".into());
    assert!(page(&[broken]).contains("its .hlog could not be read (broken.hlog: bad histogram)"));
    let mut empty = run_with_log("empty.json", 40, 0.0);
    empty.log = IntervalLog::Read(Vec::new());
    assert!(page(&[empty]).contains("its .hlog has no intervals"));
    // A log from before completions were logged, and without the headline's tag.
    let mut old = run_with_log("old.json", 40, 0.0);
    old.log = log_of(&[Series::micros("queue_wait_ms", vec![(0.0, 1.0)])]);
    let html = page(&[old]);
    assert!(html.contains("its .hlog has no completions (session_ms"));
    assert!(html.contains("no headline metric of this result has a histogram in its .hlog"));
    assert!(!html.contains("data-chart=\"ts-"));
}

#[test]
fn in_a_comparison_a_missing_log_is_named_and_the_other_drawn() {
    let mut b = run_with_log("b.json", 60, 0.0);
    b.log = IntervalLog::Absent;
    let html = page(&[run_with_log("a.json", 60, 0.0), b]);
    assert!(html.contains("Time series: b.json: no interval log (.hlog) beside this result"));
    assert_eq!(
        chart(&html, "ts-completions")
            .matches("class=\"mark line\"")
            .count(),
        1
    );
    // Its hlog-only distributions are missing from b.json, and the caption says so.
    assert!(html.contains("; not in b.json"));
}

#[test]
fn sweeps_are_never_overlaid() {
    let sweep = || Input {
        name: "s.json".into(),
        doc: json!({"sweep": {}}),
        log: IntervalLog::Absent,
    };
    let html = page(&[sweep(), sweep()]);
    assert!(!html.contains("class=\"doc compare\""));
}
