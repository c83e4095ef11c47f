//! Finished sweeps: the capacity knee, reached and short points, table snapshots and the
//! sweep JSON.

use super::text::fail_reasons;
use super::*;

/// A reached point judged by one threshold, `ttft_ms.p99 < 1500`, which holds when
/// `passed` (measured as the point's `ttft_ms.p99`, else 100 or 2000).
fn point(value: f64, passed: bool, metrics: &[(&str, f64)]) -> PointResult {
    let metrics: BTreeMap<String, f64> = metrics.iter().map(|(k, v)| (k.to_string(), *v)).collect();
    let measured =
        metrics
            .get("ttft_ms.p99")
            .copied()
            .unwrap_or(if passed { 100.0 } else { 2000.0 });
    PointResult {
        value,
        metrics,
        passed,
        checks: vec![Check {
            metric: "ttft_ms.p99".into(),
            expr: "< 1500".into(),
            measured: Some(measured),
            passed,
        }],
        reached: true,
        ..PointResult::default()
    }
}

fn mc(values: &[f64]) -> Sweep {
    Sweep {
        param: SweepParam::MaxConcurrency,
        values: values.to_vec(),
        headline: Some("ttft_ms.p99".into()),
        samples_per_point: None,
    }
}

#[test]
fn capacity_is_the_knee() {
    let all = [
        point(1.0, true, &[]),
        point(2.0, true, &[]),
        point(4.0, true, &[]),
    ];
    assert_eq!(capacity(&all), Some(4.0));
    let none = [point(1.0, false, &[]), point(2.0, false, &[])];
    assert_eq!(capacity(&none), None);
    let pfp = [
        point(1.0, true, &[]),
        point(2.0, false, &[]),
        point(4.0, true, &[]),
    ];
    assert_eq!(capacity(&pfp), Some(1.0));
    let fp = [point(1.0, false, &[]), point(2.0, true, &[])];
    assert_eq!(capacity(&fp), None);
    let unordered = [
        point(4.0, false, &[]),
        point(1.0, true, &[]),
        point(2.0, true, &[]),
    ];
    assert_eq!(capacity(&unordered), Some(2.0));
    assert_eq!(capacity(&[]), None);
    let inf = [point(1.0, true, &[]), point(f64::INFINITY, true, &[])];
    assert_eq!(capacity(&inf), Some(f64::INFINITY));
}

fn three_points(third_passes: bool) -> Vec<PointResult> {
    vec![
        point(1.0, true, &[("ttft_ms.p99", 212.5), ("rtf.mean", 0.912)]),
        point(2.0, true, &[("ttft_ms.p99", 398.25), ("rtf.mean", 0.95)]),
        point(
            4.0,
            third_passes,
            &[("ttft_ms.p99", if third_passes { 1412.0 } else { 1612.0 })],
        ),
    ]
}

#[test]
fn table_snapshot_with_capacity() {
    let s = mc(&[1.0, 2.0, 4.0]);
    let got = render_table(&s, &three_points(false), None, &["ttft_ms.p99", "rtf.mean"]);
    let want = "\
max_concurrency  achieved  sessions/s  ttft_ms.p99  rtf.mean  result
1                       -           -       212.50     0.912    pass
2                       -           -       398.25     0.950    pass
4                       -           -      1612.00         -    FAIL
FAIL max_concurrency=4: ttft_ms.p99 = 1612.000 (< 1500)
capacity: max_concurrency = 2 (highest point whose thresholds all hold)
";
    assert_eq!(got, want);
}

#[test]
fn table_snapshot_none_and_knee_notes() {
    let s = mc(&[1.0, 2.0]);
    let none = [point(1.0, false, &[]), point(2.0, false, &[])];
    assert_eq!(
        render_table(&s, &none, None, &[]),
        "max_concurrency  achieved  sessions/s  result\n\
         1                       -           -    FAIL\n\
         2                       -           -    FAIL\n\
         FAIL max_concurrency=1: ttft_ms.p99 = 2000.000 (< 1500)\n\
         FAIL max_concurrency=2: ttft_ms.p99 = 2000.000 (< 1500)\n\
         capacity: none of the points held its thresholds\n"
    );
    let pfp = [
        point(1.0, true, &[]),
        point(2.0, false, &[]),
        point(4.0, true, &[]),
    ];
    assert_eq!(
        render_table(&s, &pfp, None, &[]),
        "max_concurrency  achieved  sessions/s  result\n\
         1                       -           -    pass\n\
         2                       -           -    FAIL\n\
         4                       -           -    pass\n\
         FAIL max_concurrency=2: ttft_ms.p99 = 2000.000 (< 1500)\n\
         capacity: max_concurrency = 1 (highest point whose thresholds all hold)\n\
         note: max_concurrency=4 passed, but max_concurrency=2 below it failed; capacity stops \
         at the first point that failed, fell short or was generator-bound\n"
    );
    let fp = [point(1.0, false, &[]), point(2.0, true, &[])];
    assert!(
        render_table(&s, &fp, None, &[]).contains(
            "capacity: none (the lowest point, max_concurrency=1, failed its thresholds)\n"
        )
    );
    assert!(render_table(&s, &[], None, &[]).ends_with("capacity: no points were run\n"));
}

/// A point's JSON as [`sweep_json`] writes it, with only `value`, `metrics`, `passed` and
/// one `ttft_ms.p99 < 1500` check set.
fn point_json(value: Value, metrics: Value, passed: bool, measured: Value) -> Value {
    json!({
        "value": value, "metrics": metrics, "passed": passed,
        "thresholds": [{"metric": "ttft_ms.p99", "expr": "< 1500", "measured": measured, "passed": passed}],
        "failed_samples": 0, "artifact_errors": 0,
        "achieved_concurrency": null, "achieved_request_rate": null, "sessions_per_s": null,
        "mean_sessions": null, "unit_rate": null, "lateness_p99_ms": null, "reached": true, "generator_bound": null,
    })
}

#[test]
fn json_has_the_chart_shape() {
    let s = mc(&[1.0, 2.0, 4.0]);
    let pts = three_points(true);
    let v = sweep_json(&s, &pts, None, capacity(&pts));
    let want = json!({
        "sweep": {
            "param": "max_concurrency",
            "headline": "ttft_ms.p99",
            "unit_rate": null,
            "points": [
                point_json(json!(1), json!({"rtf.mean": 0.912, "ttft_ms.p99": 212.5}), true, json!(212.5)),
                point_json(json!(2), json!({"rtf.mean": 0.95, "ttft_ms.p99": 398.25}), true, json!(398.25)),
                point_json(json!(4), json!({"ttft_ms.p99": 1412.0}), true, json!(1412.0)),
            ],
            "capacity": 4,
            "capacity_reason": null,
        },
        "rtload": {"metrics": {"capacity": 4}},
    });
    assert_eq!(v, want);
    assert!(v["sweep"]["points"][0]["value"].is_u64());
    let (_, back) = from_json(&v).expect("reads back");
    assert_eq!(back, pts);
}

#[test]
fn json_without_capacity_or_headline() {
    let r = Sweep {
        param: SweepParam::RequestRate,
        values: vec![2.5, f64::INFINITY],
        headline: None,
        samples_per_point: None,
    };
    let pts = [
        point(2.5, false, &[("x", f64::NAN)]),
        point(f64::INFINITY, false, &[]),
    ];
    let v = sweep_json(&r, &pts, None, capacity(&pts));
    let want = json!({
        "sweep": {
            "param": "request_rate",
            "headline": null,
            "unit_rate": null,
            "points": [
                point_json(json!(2.5), json!({"x": null}), false, json!(2000.0)),
                point_json(json!("inf"), json!({}), false, json!(2000.0)),
            ],
            "capacity": null,
            "capacity_reason": "none of the points held its thresholds",
        },
        "rtload": {"metrics": {}},
    });
    assert_eq!(v, want);
}

#[test]
fn reached_and_short_points() {
    let mc = SweepParam::MaxConcurrency;
    assert!(reached(mc, 4.0, 4, None, None));
    assert!(!reached(mc, 8.0, 3, None, None));
    let rr = SweepParam::RequestRate;
    assert!(reached(rr, f64::INFINITY, 1, None, None));
    assert!(reached(rr, 2.0, 1, Some(1.9), Some(2.0)));
    assert!(!reached(rr, 2.0, 1, Some(1.0), Some(2.0)));
    assert!(!reached(rr, 2.0, 1, None, None));
    // A short point is never the capacity, even when it passed.
    let mut pts = vec![
        point(1.0, true, &[]),
        point(2.0, true, &[]),
        point(4.0, true, &[]),
    ];
    pts[1].reached = false;
    assert_eq!(capacity(&pts), Some(1.0));
    let s = mc_sweep();
    let text = render_table(&s, &pts, None, &[]);
    assert!(text.contains("pass+short"), "{text}");
    assert!(
        text.contains("short: max_concurrency=2 did not reach the swept value"),
        "{text}"
    );
}

fn mc_sweep() -> Sweep {
    mc(&[1.0, 2.0, 4.0])
}

fn chunks() -> UnitRate {
    UnitRate {
        metric: "chunk_throughput".into(),
        unit: "chunks/s".into(),
    }
}

#[test]
fn unit_rate_is_read_from_the_declared_metric_only() {
    let m: BTreeMap<String, f64> = [("chunk_throughput".to_string(), 23.5)].into();
    assert_eq!(unit_rate_of(&m, Some(&chunks())), Some(23.5));
    assert_eq!(unit_rate_of(&m, None), None);
    assert_eq!(unit_rate_of(&BTreeMap::new(), Some(&chunks())), None);
    let nan: BTreeMap<String, f64> = [("chunk_throughput".to_string(), f64::NAN)].into();
    assert_eq!(unit_rate_of(&nan, Some(&chunks())), None);
}

#[test]
fn table_snapshot_with_the_unit_rate_column() {
    let s = mc(&[1.0, 2.0, 4.0]);
    let mut pts = three_points(false);
    for (p, (sps, ur)) in pts.iter_mut().zip([
        (Some(0.5), Some(12.0)),
        (Some(0.98), Some(23.52)),
        (Some(1.1), None),
    ]) {
        p.sessions_per_s = sps;
        p.unit_rate = ur;
    }
    let got = render_table(&s, &pts, Some("chunks/s"), &["ttft_ms.p99"]);
    let want = "\
max_concurrency  achieved  sessions/s  chunks/s  ttft_ms.p99  result
1                       -        0.50     12.00       212.50    pass
2                       -        0.98     23.52       398.25    pass
4                       -        1.10         -      1612.00    FAIL
FAIL max_concurrency=4: ttft_ms.p99 = 1612.000 (< 1500)
capacity: max_concurrency = 2 (highest point whose thresholds all hold)
";
    assert_eq!(got, want);
    // The JSON carries the label at sweep level and the value per point, and reads back.
    let v = sweep_json(&s, &pts, Some(&chunks()), capacity(&pts));
    assert_eq!(
        v["sweep"]["unit_rate"],
        json!({"metric": "chunk_throughput", "unit": "chunks/s"})
    );
    assert_eq!(v["sweep"]["points"][1]["unit_rate"], json!(23.52));
    assert!(v["sweep"]["points"][2]["unit_rate"].is_null());
    assert_eq!(unit_rate_from_json(&v), Some(chunks()));
    let (_, back) = from_json(&v).expect("reads back");
    let rates: Vec<Option<f64>> = back.iter().map(|p| p.unit_rate).collect();
    assert_eq!(rates, [Some(12.0), Some(23.52), None]);
    assert_eq!(unit_rate_from_json(&sweep_json(&s, &pts, None, None)), None);
}

#[test]
fn verdict_follows_the_exit_code_rule_and_counts_the_points() {
    let sw = mc(&[1.0, 2.0, 4.0]);
    let all = vec![
        point(1.0, true, &[]),
        point(2.0, true, &[]),
        point(4.0, true, &[]),
    ];
    assert_eq!(
        verdict(&sw, &all, false),
        (
            "passed",
            "3 points: 3 passed, 0 failed, 0 short of their value, 0 generator-bound; capacity \
             max_concurrency = 4"
                .to_string()
        )
    );
    let mut some = all.clone();
    some[2].passed = false;
    some[1].reached = false;
    assert_eq!(
        verdict(&sw, &some, false),
        (
            "failed",
            "3 points: 2 passed, 1 failed, 1 short of their value, 0 generator-bound; capacity \
             max_concurrency = 1"
                .to_string()
        )
    );
    assert_eq!(verdict(&sw, &all[..1], true).0, "interrupted");
}

fn check(metric: &str, expr: &str, measured: Option<f64>, passed: bool) -> Check {
    Check {
        metric: metric.into(),
        expr: expr.into(),
        measured,
        passed,
    }
}

#[test]
fn a_sweep_without_thresholds_claims_no_capacity() {
    // Throughput rising in a straight line and every point "passing": nothing judged the
    // points, so the last value tried is not a capacity.
    let s = mc(&[1.0, 2.0, 4.0]);
    let pts: Vec<PointResult> = [1.0, 2.0, 4.0]
        .iter()
        .map(|&v| PointResult {
            checks: Vec::new(),
            sessions_per_s: Some(0.5 * v),
            ..point(v, true, &[])
        })
        .collect();
    assert_eq!(capacity(&pts), None);
    let text = render_table(&s, &pts, None, &[]);
    assert!(
        text.ends_with(
            "capacity: no threshold set: no capacity (capacity is the highest point whose \
             [thresholds] all hold; set some to judge the points)\n"
        ),
        "{text}"
    );
    let v = sweep_json(&s, &pts, None, capacity(&pts));
    assert!(v["sweep"]["capacity"].is_null());
    let reason = v["sweep"]["capacity_reason"].as_str().unwrap();
    assert!(
        reason.starts_with("no threshold set: no capacity"),
        "{reason}"
    );
    assert!(v["rtload"]["metrics"].get("capacity").is_none());
    let (_, rest) = verdict(&s, &pts, false);
    assert!(rest.ends_with("; no threshold set: no capacity"), "{rest}");
}

#[test]
fn a_failing_point_names_each_broken_threshold_with_its_value() {
    let s = mc(&[1.0, 4.0]);
    let mut p = point(4.0, false, &[("audio_ttfp_ms.p99", 150.42)]);
    p.checks = vec![
        check("audio_ttfp_ms.p99", "< 150", Some(150.42), false),
        check("rtf.p99", "< 1", Some(0.5), true),
        check("ttft_ms.p99", "< 500", None, false),
    ];
    p.failed_samples = 2;
    let why = "audio_ttfp_ms.p99 = 150.420 (< 150); ttft_ms.p99 missing (< 500); \
               2 measured sample(s) failed";
    assert_eq!(fail_reasons(&p).join("; "), why);
    let pts = vec![point(1.0, true, &[]), p.clone()];
    let text = render_table(&s, &pts, None, &[]);
    assert!(
        text.contains(&format!("\nFAIL max_concurrency=4: {why}\n")),
        "{text}"
    );
    assert_eq!(
        progress_line(&s, 2, 2, 4.0, Some(&p)),
        format!("point 2 of 2: max_concurrency=4 FAIL: {why}")
    );
    assert_eq!(
        progress_line(&s, 1, 2, 1.0, None),
        "point 1 of 2: max_concurrency=1 …"
    );
    assert_eq!(
        progress_line(&s, 1, 2, 1.0, Some(&pts[0])),
        "point 1 of 2: max_concurrency=1 pass"
    );
    let v = sweep_json(&s, &pts, None, capacity(&pts));
    assert_eq!(
        v["sweep"]["points"][1]["thresholds"][0],
        json!({"metric": "audio_ttfp_ms.p99", "expr": "< 150", "measured": 150.42, "passed": false})
    );
    assert!(v["sweep"]["points"][1]["thresholds"][2]["measured"].is_null());
    assert_eq!(v["sweep"]["points"][1]["failed_samples"], 2);
    assert!(fail_reasons(&pts[0]).is_empty());
}

#[test]
fn every_judged_metric_gets_a_column() {
    let mut p = point(1.0, true, &[("ttft_ms.p99", 212.5), ("rtf.p99", 0.8)]);
    p.checks.push(check("rtf.p99", "< 1", Some(0.8), true));
    p.checks.push(check("failed", "< 1", Some(0.0), true));
    let catalogue = ["ttft_ms.p99".to_string(), "ttft_ms.mean".to_string()];
    let cols = table_columns(Some("ttft_ms.p99"), &catalogue, std::slice::from_ref(&p));
    assert_eq!(cols, ["ttft_ms.p99", "ttft_ms.mean", "rtf.p99", "failed"]);
    let cols: Vec<&str> = cols.iter().map(String::as_str).collect();
    let rows = table_rows(&mc(&[1.0]), &[p], None, &cols);
    assert_eq!(rows[0][5], "rtf.p99");
    assert_eq!(rows[1][5], "0.800");
    assert_eq!(
        table_columns(None, &catalogue, &[]),
        ["ttft_ms.p99", "ttft_ms.mean", "failed"]
    );
}

const BOUND: &str = "results may be generator-bound: send lateness p99 31.0 ms > 10 ms \
                     (spread the load over more cores or machines)";

#[test]
fn a_generator_bound_point_is_marked_and_never_the_capacity() {
    let s = mc(&[1.0, 2.0, 4.0]);
    let mut pts = three_points(true);
    pts[2].generator_bound = Some(BOUND.into());
    assert_eq!(capacity(&pts), Some(2.0));
    let text = render_table(&s, &pts, None, &[]);
    assert!(text.contains("pass+gen-bound\n"), "{text}");
    assert!(
        text.contains(&format!(
            "generator-bound max_concurrency=4: {BOUND}; such a point is never the capacity\n"
        )),
        "{text}"
    );
    assert!(
        progress_line(&s, 3, 3, 4.0, Some(&pts[2])).ends_with(&format!("pass+gen-bound ({BOUND})"))
    );
    let v = sweep_json(&s, &pts, None, capacity(&pts));
    assert_eq!(v["sweep"]["points"][2]["generator_bound"], BOUND);
    assert!(v["sweep"]["points"][1]["generator_bound"].is_null());
    assert!(verdict(&s, &pts, false).1.contains(", 1 generator-bound;"));
    // The lowest point bound: no capacity, and the reason says so.
    pts[0].generator_bound = Some(BOUND.into());
    assert_eq!(capacity(&pts), None);
    assert_eq!(
        no_capacity_reason(&s, &pts).as_deref(),
        Some("none (the lowest point, max_concurrency=1, was generator-bound)")
    );
}

/// One number, one source: the HTML table is drawn from `sweep.json` read back, so the
/// points read back must be the points the terminal table was drawn from, cell for cell.
#[test]
fn the_json_read_back_draws_the_terminal_s_table() {
    let s = mc(&[1.0, 2.0, 4.0]);
    let mut pts = three_points(false);
    pts[1].generator_bound = Some(BOUND.into());
    pts[1].sessions_per_s = Some(1.234_567);
    pts[2].failed_samples = 1;
    pts[2].checks.push(check("rtf.mean", "< 1", None, false));
    let cols = table_columns(s.headline.as_deref(), &[], &pts);
    let cols: Vec<&str> = cols.iter().map(String::as_str).collect();
    let v = sweep_json(&s, &pts, Some(&chunks()), capacity(&pts));
    let text = serde_json::to_string(&v).unwrap();
    let (back_sweep, back) = from_json(&serde_json::from_str(&text).unwrap()).unwrap();
    assert_eq!(back, pts);
    assert_eq!(
        table_rows(&back_sweep, &back, Some("chunks/s"), &cols),
        table_rows(&s, &pts, Some("chunks/s"), &cols)
    );
    assert_eq!(capacity_lines(&back_sweep, &back), capacity_lines(&s, &pts));
}
