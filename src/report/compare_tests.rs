//! `compare`: directions, `--max-regression` percentages, regressions in the worse
//! direction only, the rendered table, and which catalogue decides.

use super::*;
use crate::workload::catalogue::Family;

fn map(pairs: &[(&str, f64)]) -> BTreeMap<String, f64> {
    pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
}

/// Families of this test's made-up metrics (`a_ms`, …), declared like a workload would.
const TEST_FAMILIES: [Family; 4] = [
    Family::new("a_ms", "ms", Direction::Lower, "test latency"),
    Family::new("gone_ms", "ms", Direction::Lower, "test latency"),
    Family::new("new_ms", "ms", Direction::Lower, "test latency"),
    Family::new("lateness_ms", "ms", Direction::Lower, "test lateness"),
];

/// The catalogue of the shipped workloads (and the test's own metrics) over `names`.
fn cat_of(names: &[&str]) -> Catalogue {
    let mut families: Vec<Family> = crate::config::registry::registry()
        .iter()
        .flat_map(|k| k.families.iter().cloned())
        .collect();
    families.extend_from_slice(&TEST_FAMILIES);
    let aliases: Vec<(&str, &str)> = crate::config::registry::registry()
        .iter()
        .flat_map(|k| k.aliases.iter().copied())
        .collect();
    Catalogue::reading(names, &families, &[], &aliases)
}

/// The catalogue over every name either map holds.
fn cat(a: &BTreeMap<String, f64>, b: &BTreeMap<String, f64>) -> Catalogue {
    let names: Vec<&str> = a.keys().chain(b.keys()).map(String::as_str).collect();
    cat_of(&names)
}

#[track_caller]
fn check_direction(names: &[&str], want: Better) {
    let c = cat_of(names);
    for name in names {
        assert_eq!(direction(&c, name), want, "{name}");
    }
}

/// The shipped workloads' catalogues give every metric they report its direction.
#[test]
fn direction_table() {
    check_direction(
        &[
            "ttft_ms.p99",
            "ttft_ms.mean",
            "tpot_ms.p99",
            "itl_ms.p50",
            "e2el_ms.max",
            "ttfc_ms.mean",
            "ttfc_ms_mean",
            "audio_ttfp_ms.p99",
            "chunk_interval_ms.p99",
            "interval_steady.p99_ms",
            "steady_interval_ms_spread",
            "audio_rtf.mean",
            "video_rtf.steady",
            "video_rtf_worst",
            "steady_video_rtf",
            "failed",
            "playback.underrun_count",
            "underrun_count",
            "stall_ms.total",
            "slo_violations",
            "pacing_max_lag_ms.max",
            "duration_s",
            "audio_underrun_s.mean",
        ],
        Better::Lower,
    );
    check_direction(
        &[
            "request_throughput",
            "output_throughput",
            "audio_throughput",
            "request_goodput",
            "slo_attainment",
            "completed",
        ],
        Better::Higher,
    );
    check_direction(
        &[
            "sessions",
            "chunks_received",
            "total_frames",
            "chunk_deadline_ms",
            "ttft_ms.count",
            "audio_rtf.count",
            "interval_all.count",
            // One session's reference keys with no flat metric of their own (results
            // since the results model carry them only in the reference-shaped JSON).
            "video_rtfx",
            "frames_per_second",
            "warmup_chunks",
            "audio_duration_s.mean",
            "max_concurrent_requests",
            "playback.buffer_chunks",
            // Undeclared names are never a score: nothing guesses from the name.
            "something_else",
            "made_up_latency_ms",
        ],
        Better::Neither,
    );
}

#[test]
fn percentages_parse() {
    for (text, want) in [
        ("10%", 10.0),
        ("10", 10.0),
        ("0.5%", 0.5),
        (" 2.5 % ", 2.5),
        ("0", 0.0),
        ("1e1%", 10.0),
    ] {
        let got = parse_percent(text).unwrap_or_else(|e| panic!("{text:?}: {e}"));
        assert!((got - want).abs() < 1e-12, "{text:?} -> {got}");
    }
}

#[test]
fn bad_percentages_are_errors() {
    for (text, why) in [
        ("-5%", "must not be negative"),
        ("-0.1", "must not be negative"),
        ("", "no number"),
        ("%", "no number"),
        ("ten%", "not a number"),
        ("10%%", "not a number"),
        ("inf", "not a finite number"),
        ("NaN%", "not a finite number"),
    ] {
        let err = parse_percent(text).unwrap_err().to_string();
        assert_eq!(
            err,
            format!("invalid percentage {text:?}: {why}; use e.g. 10% or 0.5%")
        );
    }
}

/// One metric from `base` to `new` under `bound`: did it regress?
#[track_caller]
fn check_regressed(metric: &str, base: f64, new: f64, bound: Option<f64>, want: bool) {
    let (b, n) = (map(&[(metric, base)]), map(&[(metric, new)]));
    let cmp = compare(&b, &n, bound, &cat(&b, &n));
    assert_eq!(
        cmp.rows[0].regressed, want,
        "{metric}: {base} -> {new} @ {bound:?}"
    );
    assert_eq!(cmp.regressions().len(), usize::from(want));
}

#[test]
fn regression_in_the_worse_direction_only() {
    // lower is better
    check_regressed("ttft_ms.p99", 100.0, 111.0, Some(10.0), true);
    check_regressed("ttft_ms.p99", 100.0, 110.0, Some(10.0), false); // exactly at the bound
    check_regressed("ttft_ms.p99", 100.0, 50.0, Some(10.0), false); // improvement
    check_regressed("ttft_ms.p99", 0.3, 0.33, Some(10.0), false); // float noise at the bound
    check_regressed("ttft_ms.p99", 0.3, 0.3301, Some(10.0), true);
    // higher is better
    check_regressed("request_throughput", 100.0, 89.0, Some(10.0), true);
    check_regressed("request_throughput", 100.0, 90.0, Some(10.0), false);
    check_regressed("request_throughput", 100.0, 200.0, Some(10.0), false);
    check_regressed("slo_attainment", 1.0, 0.5, Some(0.0), true);
    // neither never regresses
    check_regressed("sessions", 10.0, 1.0, Some(0.0), false);
    check_regressed("total_frames", 10.0, 1000.0, Some(0.0), false);
    // no bound: nothing regresses
    check_regressed("ttft_ms.p99", 100.0, 1000.0, None, false);
    // zero bound: any worsening
    check_regressed("ttft_ms.p99", 100.0, 100.001, Some(0.0), true);
    check_regressed("ttft_ms.p99", 100.0, 100.0, Some(0.0), false);
    // negative base: relative to |base|
    check_regressed("lateness_ms.min", -10.0, -8.0, Some(10.0), true);
    check_regressed("lateness_ms.min", -10.0, -9.0, Some(10.0), false);
}

#[test]
fn zero_base_regresses_on_any_real_worsening() {
    check_regressed("failed", 0.0, 1.0, Some(1000.0), true);
    check_regressed("failed", 0.0, 1e-13, Some(10.0), false);
    check_regressed("failed", 0.0, 0.0, Some(10.0), false);
    check_regressed("completed", 0.0, 5.0, Some(10.0), false);
    check_regressed("ttft_ms.p99", 0.0, f64::NAN, Some(10.0), false);
}

#[test]
fn rows_cover_the_union_and_a_scored_metric_new_lost_regresses() {
    let base = map(&[("a_ms", 1.0), ("failed", 0.0), ("gone_ms", 5.0)]);
    let new = map(&[("a_ms", 2.0), ("failed", 0.0), ("new_ms", 7.0)]);
    let cmp = compare(&base, &new, Some(10.0), &cat(&base, &new));
    let rows: Vec<(&str, Presence, bool)> = cmp
        .rows
        .iter()
        .map(|r| (r.metric.as_str(), r.presence, r.regressed))
        .collect();
    assert_eq!(
        rows,
        [
            ("a_ms", Presence::Both, true),
            ("failed", Presence::Both, false),
            ("gone_ms", Presence::Removed, true),
            ("new_ms", Presence::Added, false),
        ]
    );
    assert_eq!(cmp.rows[0].delta, Some(1.0));
    assert_eq!(cmp.rows[0].delta_pct, Some(100.0));
    assert_eq!(cmp.rows[1].delta_pct, Some(0.0));
    assert_eq!((cmp.rows[2].new, cmp.rows[2].delta), (None, None));
    assert_eq!(cmp.regressions().len(), 2);
    // Without a bound nothing regresses; a metric with no direction never does.
    assert!(
        compare(&base, &new, None, &cat(&base, &new))
            .regressions()
            .is_empty()
    );
}

/// A NEW result whose every metric is NaN, ±Infinity or null fails a bounded compare.
#[test]
fn a_new_result_of_nans_fails_the_compare() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, body: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, body).unwrap();
        p
    };
    let base = write(
        "b.json",
        r#"{"rtload": {"metrics": {"a_ms.p99": 10.0, "failed": 0}}}"#,
    );
    let new = write(
        "n.json",
        r#"{"rtload": {"metrics": {"a_ms.p99": NaN, "failed": Infinity}}}"#,
    );
    let (b, n) = (load_metrics(&base).unwrap(), load_metrics(&new).unwrap());
    assert!(n.is_empty(), "{n:?}");
    let cmp = compare(&b, &n, Some(10.0), &cat(&b, &n));
    let lost: Vec<&str> = cmp
        .regressions()
        .iter()
        .map(|r| r.metric.as_str())
        .collect();
    assert_eq!(lost, ["a_ms.p99", "failed"]);
    assert!(render(&cmp).contains("MISSING (regressed)"));
}

#[test]
fn render_snapshot() {
    let base = map(&[
        ("ttft_ms.p99", 500.0),
        ("request_throughput", 12.5),
        ("failed", 0.0),
        ("sessions", 8.0),
        ("gone_ms", 1.0),
    ]);
    let new = map(&[
        ("ttft_ms.p99", 612.4),
        ("request_throughput", 12.0),
        ("failed", 2.0),
        ("sessions", 8.0),
        ("video_rtf.steady", 0.8),
    ]);
    let text = render(&compare(&base, &new, Some(10.0), &cat(&base, &new)));
    let want = "\
metric                 base      new     delta   delta%  better
failed                0.000    2.000    +2.000        -  lower   REGRESSED
gone_ms               1.000        -         -        -  lower   MISSING (regressed)
request_throughput   12.500   12.000    -0.500   -4.00%  higher
sessions              8.000    8.000     0.000    0.00%  -
ttft_ms.p99         500.000  612.400  +112.400  +22.48%  lower   REGRESSED
video_rtf.steady          -    0.800         -        -  lower   added
3 metrics regressed past 10%
";
    assert_eq!(text, want, "\n{text}");
    let one = render(&compare(&base, &new, Some(2.5), &cat(&base, &new)));
    assert!(one.ends_with("4 metrics regressed past 2.5%\n"), "{one}");
    let (b, n) = (map(&[("a_ms", 1.0)]), map(&[("a_ms", 9.0)]));
    let none = render(&compare(&b, &n, None, &cat(&b, &n)));
    assert_eq!(
        none,
        "metric   base    new   delta    delta%  better\n\
         a_ms    1.000  9.000  +8.000  +800.00%  lower\n\
         1 metric compared; no bound given (use --max-regression 10% to fail on regressions)\n"
    );
}

#[test]
fn load_metrics_reads_rtload_metrics() {
    let dir = tempfile::tempdir().unwrap();
    let ok = dir.path().join("ok.json");
    std::fs::write(
        &ok,
        r#"{"benchmark":"x","rtload":{"metrics":{"ttft_ms.p99":612.4,"failed":0,"nan":null}}}"#,
    )
    .unwrap();
    assert_eq!(
        load_metrics(&ok).unwrap(),
        map(&[("ttft_ms.p99", 612.4), ("failed", 0.0)])
    );

    let other = dir.path().join("other.json");
    std::fs::write(&other, r#"{"metrics":{"a":1}}"#).unwrap();
    let err = load_metrics(&other).unwrap_err().to_string();
    assert_eq!(
        err,
        format!(
            "not an rtload result (no rtload.metrics): {}",
            other.display()
        )
    );

    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, r#"{"rtload":{"metrics":{"a":"fast"}}}"#).unwrap();
    let err = load_metrics(&bad).unwrap_err().to_string();
    assert_eq!(
        err,
        format!(
            "{}: rtload.metrics.a must be a number (got \"fast\")",
            bad.display()
        )
    );

    let junk = dir.path().join("junk.json");
    std::fs::write(&junk, "{not json").unwrap();
    assert!(matches!(
        load_metrics(&junk),
        Err(CompareError::Json { .. })
    ));
    let absent = dir.path().join("absent.json");
    let err = load_metrics(&absent).unwrap_err();
    assert!(matches!(err, CompareError::Read { .. }), "{err}");
    assert!(err.to_string().starts_with("cannot read "), "{err}");
}

#[test]
fn the_files_own_catalogue_decides_and_old_files_fall_back_to_the_kind_tables() {
    let dir = tempfile::tempdir().unwrap();
    let own = dir.path().join("own.json");
    std::fs::write(
        &own,
        r#"{"rtload":{"metrics":{"echo_rtt_ms.p99":3.0,"ttft_ms.p99":1.0},
            "metrics_catalogue":[{"name":"echo_rtt_ms.p99","unit":"ms","direction":"lower","headline":true,"description":"x"},
                                 {"name":"ttft_ms.p99","unit":"ms","direction":"higher","headline":false,"description":"odd on purpose"}]}}"#,
    )
    .unwrap();
    let (_, c) = load_result(&own).unwrap();
    let c = c.expect("catalogue");
    assert_eq!(direction(&c, "echo_rtt_ms.p99"), Better::Lower);
    assert_eq!(
        direction(&c, "ttft_ms.p99"),
        Better::Higher,
        "the file wins"
    );
    assert_eq!(c.headline(), ["echo_rtt_ms.p99".to_string()]);

    // No catalogue: the shipped kind whose families declare every metric supplies it.
    let old = dir.path().join("old.json");
    std::fs::write(
        &old,
        r#"{"rtload":{"metrics":{"ttfc_ms.mean":3.0,"slo_attainment":1}}}"#,
    )
    .unwrap();
    let c = load_result(&old).unwrap().1.expect("fallback");
    assert_eq!(direction(&c, "slo_attainment"), Better::Higher);
    // Unknown metrics and no catalogue: no catalogue at all (nothing guessed).
    let odd = dir.path().join("odd.json");
    std::fs::write(&odd, r#"{"rtload":{"metrics":{"zz_ms":3.0}}}"#).unwrap();
    assert_eq!(load_result(&odd).unwrap().1, None);
}
