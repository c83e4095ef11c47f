use super::*;

fn flag_err(s: &str) -> String {
    parse_flag(s).unwrap_err().to_string()
}

fn table_errs(src: &str) -> Vec<String> {
    parse_table(Path::new("s.toml"), src)
        .unwrap_err()
        .iter()
        .map(ToString::to_string)
        .collect()
}

fn point(value: f64, passed: bool, metrics: &[(&str, f64)]) -> PointResult {
    PointResult {
        value,
        metrics: metrics.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
        passed,
        achieved_concurrency: None,
        achieved_request_rate: None,
        sessions_per_s: None,
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
fn param_names_round_trip() {
    for p in SweepParam::ALL {
        assert_eq!(SweepParam::from_name(p.name()), Some(p));
    }
    assert_eq!(SweepParam::MaxConcurrency.to_string(), "max_concurrency");
    assert_eq!(SweepParam::from_name("rps"), None);
}

#[test]
fn flag_parses_concurrency_and_rates() {
    let s = parse_flag("max_concurrency=1,2,4,8").unwrap();
    assert_eq!(s.param, SweepParam::MaxConcurrency);
    assert_eq!(s.values, vec![1.0, 2.0, 4.0, 8.0]);
    assert_eq!(s.headline, None);
    let s = parse_flag("request_rate=1, 2.5 ,inf").unwrap();
    assert_eq!(s.param, SweepParam::RequestRate);
    assert_eq!(s.values, vec![1.0, 2.5, f64::INFINITY]);
    assert_eq!(parse_flag("max_concurrency=3").unwrap().values, vec![3.0]);
    assert_eq!(
        parse_flag("request_rate=0.5,INF").unwrap().values[1],
        f64::INFINITY
    );
}

#[test]
fn flag_errors_name_the_value_and_the_fix() {
    assert_eq!(
        flag_err("max_concurrency"),
        "--sweep: expected PARAM=V1,V2,... (got \"max_concurrency\"); use e.g. --sweep \
         max_concurrency=1,2,4,8"
    );
    assert_eq!(
        flag_err("rps=1,2"),
        "--sweep: unknown parameter \"rps\"; use max_concurrency or request_rate"
    );
    assert_eq!(
        flag_err("max_concurrency="),
        "--sweep: max_concurrency needs at least one value; use e.g. --sweep \
         max_concurrency=1,2,4,8"
    );
    assert_eq!(
        flag_err("max_concurrency=1,2.5"),
        "--sweep: max_concurrency value `2.5` is not an integer; use integers ≥ 1, e.g. 1,2,4,8"
    );
    assert_eq!(
        flag_err("max_concurrency=0,1"),
        "--sweep: max_concurrency value `0` must be ≥ 1; use integers ≥ 1, e.g. 1,2,4,8"
    );
    assert_eq!(
        flag_err("max_concurrency=inf"),
        "--sweep: max_concurrency value `inf` is not an integer; use integers ≥ 1, e.g. 1,2,4,8"
    );
    assert_eq!(
        flag_err("request_rate=1,fast"),
        "--sweep: request_rate value `fast` is not a number; use requests/s > 0 or inf, e.g. \
         1,2.5,inf"
    );
    assert_eq!(
        flag_err("request_rate=-1"),
        "--sweep: request_rate value `-1` must be > 0; use requests/s > 0 or inf, e.g. 1,2.5,inf"
    );
    assert_eq!(
        flag_err("request_rate=nan"),
        "--sweep: request_rate value `nan` must be > 0; use requests/s > 0 or inf, e.g. 1,2.5,inf"
    );
    assert_eq!(
        flag_err("max_concurrency=1,,2"),
        "--sweep: empty value in `1,,2`; separate values with single commas, e.g. \
         max_concurrency=1,2,4,8"
    );
    assert_eq!(
        flag_err("max_concurrency=1,4,2"),
        "--sweep: max_concurrency values must be strictly increasing (`2` follows `4`); list \
         each value once, in ascending order, e.g. 1,2,4,8"
    );
    assert_eq!(
        flag_err("request_rate=1,inf,inf"),
        "--sweep: request_rate values must be strictly increasing (`inf` follows `inf`); list \
         each value once, in ascending order, e.g. 1,2.5,inf"
    );
}

#[test]
fn table_absent_is_none_and_present_parses() {
    let p = Path::new("s.toml");
    assert_eq!(
        parse_table(p, "name = \"x\"\n[load]\nsamples = 1\n").unwrap(),
        None
    );
    let src = "name = \"x\"\n[sweep]\nparam = \"max_concurrency\"\nvalues = [1, 2, 4]\n\
               headline = \"ttft_ms.p99\"\n[load]\nsamples = 2\n";
    assert_eq!(
        parse_table(p, src).unwrap(),
        Some(Sweep {
            param: SweepParam::MaxConcurrency,
            values: vec![1.0, 2.0, 4.0],
            headline: Some("ttft_ms.p99".into()),
            samples_per_point: None,
        })
    );
    let src = "sweep = { param = \"request_rate\", values = [0.5, 2, inf, ] }\n";
    let s = parse_table(p, src).unwrap().unwrap();
    assert_eq!(s.values, vec![0.5, 2.0, f64::INFINITY]);
    let src = "[sweep]\nparam = \"request_rate\"\nvalues = [1, \"inf\"]\n";
    assert_eq!(
        parse_table(p, src).unwrap().unwrap().values[1],
        f64::INFINITY
    );
}

#[test]
fn table_errors_are_positioned() {
    assert_eq!(
        table_errs("name = \"x\"\n\n[sweep]\nparam = \"max_concurrency\"\nvalues = [1, 2.5, 0]\n"),
        vec![
            "s.toml:5:14: max_concurrency value `2.5` is not an integer; use integers ≥ 1, e.g. \
             `values = [1, 2, 4, 8]`",
            "s.toml:5:19: max_concurrency value `0` must be ≥ 1; use integers ≥ 1, e.g. \
             `values = [1, 2, 4, 8]`",
        ]
    );
    assert_eq!(
        table_errs("[sweep]\nparam = \"request_rate\"\nvalues = [1, 4, 2]\n"),
        vec![
            "s.toml:3:17: request_rate values must be strictly increasing (`2` follows `4`); \
             list each value once, in ascending order, e.g. `values = [1, 2.5, inf]`"
        ]
    );
    assert_eq!(
        table_errs("[sweep]\nparam = \"request_rate\"\nvalues = [1, \"fast\", -2]\n"),
        vec![
            "s.toml:3:14: request_rate value `\"fast\"` is not a number; use requests/s > 0 or \
             inf, e.g. `values = [1, 2.5, inf]`",
            "s.toml:3:22: request_rate value `-2` must be > 0; use requests/s > 0 or inf, e.g. \
             `values = [1, 2.5, inf]`",
        ]
    );
    assert_eq!(
        table_errs("name = \"x\"\n[sweep]\nparam = \"rps\"\nheadline = \"\"\n"),
        vec![
            "s.toml:3:9: unknown sweep param \"rps\"; use \"max_concurrency\" or \"request_rate\"",
            "s.toml:4:12: `headline` must name a metric; use e.g. `headline = \"ttft_ms.p99\"` \
             or leave it out",
            "s.toml:2:1: [sweep] needs `values`; add e.g. `values = [1, 2, 4, 8]`",
        ]
    );
    assert_eq!(
        table_errs("[sweep]\nvalues = []\n"),
        vec![
            "s.toml:1:1: [sweep] needs `param`; add `param = \"max_concurrency\"` or \
             `param = \"request_rate\"`"
        ]
    );
    assert_eq!(
        table_errs("[sweep]\nparam = \"max_concurrency\"\nvalues = []\n"),
        vec!["s.toml:3:10: `values` needs at least one value; use e.g. `values = [1, 2, 4, 8]`"]
    );
    assert_eq!(
        table_errs("[sweep]\nparam = \"max_concurrency\"\nvalues = [1]\nstep = 2\n"),
        vec![
            "s.toml:4:1: unknown field `step`, expected one of `param`, `values`, `headline`, `samples_per_point`"
        ]
    );
    assert_eq!(
        table_errs("name = \"x\"\nsweep = 3\n"),
        vec!["s.toml:2:9: `sweep` must be a table (got integer); write it as `[sweep]`"]
    );
    assert_eq!(
        table_errs("[sweep]\nparam = \"max_concurrency\"\nvalues = 4\n"),
        vec!["s.toml:3:10: invalid type: integer `4`, expected a sequence"]
    );
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

#[test]
fn labels_and_file_stems() {
    let s = mc(&[4.0]);
    assert_eq!(point_label(&s, 4.0), "max_concurrency=4");
    assert_eq!(point_file_stem(&s, 4.0), "max_concurrency_4");
    let r = Sweep {
        param: SweepParam::RequestRate,
        values: vec![2.5],
        headline: None,
        samples_per_point: None,
    };
    assert_eq!(point_label(&r, 2.5), "request_rate=2.5");
    assert_eq!(point_file_stem(&r, 2.5), "request_rate_2p5");
    assert_eq!(point_label(&r, f64::INFINITY), "request_rate=inf");
    assert_eq!(point_file_stem(&r, f64::INFINITY), "request_rate_inf");
    assert_eq!(point_label(&r, 1.0), "request_rate=1");
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
    let got = render_table(&s, &three_points(false), &["ttft_ms.p99", "rtf.mean"]);
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
        render_table(&s, &none, &[]),
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
        render_table(&s, &pfp, &[]),
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
        render_table(&s, &fp, &[]).contains(
            "capacity: none (the lowest point, max_concurrency=1, failed its thresholds)\n"
        )
    );
    assert!(render_table(&s, &[], &[]).ends_with("capacity: no points were run\n"));
}

#[test]
fn json_has_the_chart_shape() {
    let s = mc(&[1.0, 2.0, 4.0]);
    let pts = three_points(true);
    let v = sweep_json(&s, &pts, capacity(&pts));
    let want = json!({
        "sweep": {
            "param": "max_concurrency",
            "headline": "ttft_ms.p99",
            "points": [
                {"value": 1, "metrics": {"rtf.mean": 0.912, "ttft_ms.p99": 212.5}, "passed": true, "achieved_concurrency": null, "achieved_request_rate": null, "sessions_per_s": null, "lateness_p99_ms": null, "reached": true},
                {"value": 2, "metrics": {"rtf.mean": 0.95, "ttft_ms.p99": 398.25}, "passed": true, "achieved_concurrency": null, "achieved_request_rate": null, "sessions_per_s": null, "lateness_p99_ms": null, "reached": true},
                {"value": 4, "metrics": {"ttft_ms.p99": 1612.0}, "passed": true, "achieved_concurrency": null, "achieved_request_rate": null, "sessions_per_s": null, "lateness_p99_ms": null, "reached": true},
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
    let v = sweep_json(&r, &pts, capacity(&pts));
    let want = json!({
        "sweep": {
            "param": "request_rate",
            "headline": null,
            "points": [
                {"value": 2.5, "metrics": {"x": null}, "passed": false, "achieved_concurrency": null, "achieved_request_rate": null, "sessions_per_s": null, "lateness_p99_ms": null, "reached": true},
                {"value": "inf", "metrics": {}, "passed": false, "achieved_concurrency": null, "achieved_request_rate": null, "sessions_per_s": null, "lateness_p99_ms": null, "reached": true},
            ],
            "capacity": null,
        },
        "rtload": {"metrics": {}},
    });
    assert_eq!(v, want);
}

#[test]
fn columns_format_alike() {
    assert_eq!(
        fmt_column(&[Some(3.0), None, Some(12.0)]),
        vec!["3", "-", "12"]
    );
    assert_eq!(fmt_column(&[Some(0.5), Some(0.25)]), vec!["0.500", "0.250"]);
    assert_eq!(fmt_column(&[Some(0.5), Some(2.0)]), vec!["0.50", "2.00"]);
    assert_eq!(
        fmt_column(&[Some(f64::INFINITY), Some(1.0)]),
        vec!["inf", "1"]
    );
}

#[test]
fn samples_per_point_scales_concurrency_points_unless_turned_off() {
    let mut s = mc(&[1.0, 2.0, 8.0]);
    assert_eq!(s.point_samples(3, 1.0), 4);
    assert_eq!(s.point_samples(3, 8.0), 32);
    assert_eq!(s.point_samples(50, 8.0), 50);
    assert!(s.closed_loop());
    let lines = s.describe_points(3);
    assert_eq!(
        lines[2],
        "max_concurrency=8: 32 measured samples (scaled from 3: 4 per concurrency slot), \
         released at once (closed loop: the cap paces them)"
    );
    s.samples_per_point = Some(0);
    assert_eq!(s.point_samples(3, 8.0), 3);
    assert!(!s.closed_loop());
    assert!(s.describe_points(3)[2].ends_with("cannot reach it"));
    s.samples_per_point = Some(20);
    assert_eq!(s.point_samples(3, 8.0), 20);
    let r = Sweep {
        param: SweepParam::RequestRate,
        values: vec![2.0],
        headline: None,
        samples_per_point: None,
    };
    assert_eq!(r.point_samples(3, 2.0), 3);
    assert!(!r.closed_loop());
}

#[test]
fn samples_per_point_is_validated_at_load() {
    let ok = parse_table(
        Path::new("s.toml"),
        "[sweep]\nparam = \"max_concurrency\"\nvalues = [1, 2]\nsamples_per_point = 0\n",
    )
    .unwrap()
    .unwrap();
    assert_eq!(ok.samples_per_point, Some(0));
    for bad in ["-1", "2.5", "\"many\"", "99999999999"] {
        let errs = table_errs(&format!(
            "[sweep]\nparam = \"max_concurrency\"\nvalues = [1]\nsamples_per_point = {bad}\n"
        ));
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert!(
            errs[0].starts_with("s.toml:4:21:")
                && errs[0].contains(&format!("`samples_per_point` value `{bad}`")),
            "{errs:?}"
        );
    }
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
    let text = render_table(&s, &pts, &[]);
    assert!(text.contains("pass+short"), "{text}");
    assert!(
        text.contains("short: max_concurrency=2 did not reach the swept value"),
        "{text}"
    );
}

fn mc_sweep() -> Sweep {
    mc(&[1.0, 2.0, 4.0])
}
