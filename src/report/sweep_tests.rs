//! Finished sweeps: the capacity knee, reached and short points, table snapshots and the
//! sweep JSON.

use super::*;

fn point(value: f64, passed: bool, metrics: &[(&str, f64)]) -> PointResult {
    PointResult {
        value,
        metrics: metrics.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
        passed,
        achieved_concurrency: None,
        achieved_request_rate: None,
        sessions_per_s: None,
        unit_rate: None,
        lateness_p99_ms: None,
        reached: true,
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
        point(4.0, third_passes, &[("ttft_ms.p99", 1612.0)]),
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
         capacity: max_concurrency = 1 (highest point whose thresholds all hold)\n\
         note: max_concurrency=4 passed, but max_concurrency=2 below it failed; capacity stops \
         at the first failing point\n"
    );
    let fp = [point(1.0, false, &[]), point(2.0, true, &[])];
    assert!(
        render_table(&s, &fp, None, &[]).contains(
            "capacity: none (the lowest point, max_concurrency=1, failed its thresholds)\n"
        )
    );
    assert!(render_table(&s, &[], None, &[]).ends_with("capacity: no points were run\n"));
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
                {"value": 1, "metrics": {"rtf.mean": 0.912, "ttft_ms.p99": 212.5}, "passed": true, "achieved_concurrency": null, "achieved_request_rate": null, "sessions_per_s": null, "unit_rate": null, "lateness_p99_ms": null, "reached": true},
                {"value": 2, "metrics": {"rtf.mean": 0.95, "ttft_ms.p99": 398.25}, "passed": true, "achieved_concurrency": null, "achieved_request_rate": null, "sessions_per_s": null, "unit_rate": null, "lateness_p99_ms": null, "reached": true},
                {"value": 4, "metrics": {"ttft_ms.p99": 1612.0}, "passed": true, "achieved_concurrency": null, "achieved_request_rate": null, "sessions_per_s": null, "unit_rate": null, "lateness_p99_ms": null, "reached": true},
            ],
            "capacity": 4,
        },
        "rtload": {"metrics": {"capacity": 4}},
    });
    assert_eq!(v, want);
    assert!(v["sweep"]["points"][0]["value"].is_u64());
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
                {"value": 2.5, "metrics": {"x": null}, "passed": false, "achieved_concurrency": null, "achieved_request_rate": null, "sessions_per_s": null, "unit_rate": null, "lateness_p99_ms": null, "reached": true},
                {"value": "inf", "metrics": {}, "passed": false, "achieved_concurrency": null, "achieved_request_rate": null, "sessions_per_s": null, "unit_rate": null, "lateness_p99_ms": null, "reached": true},
            ],
            "capacity": null,
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
            "3 points: 3 passed, 0 failed, 0 short of their value; capacity max_concurrency = 4"
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
            "3 points: 2 passed, 1 failed, 1 short of their value; capacity max_concurrency = 1"
                .to_string()
        )
    );
    assert_eq!(verdict(&sw, &all[..1], true).0, "interrupted");
}
