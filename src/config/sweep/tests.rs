//! The sweep spec: the `--sweep` flag and the `[sweep]` table with positioned errors,
//! point labels and file stems, samples per point.

use std::path::Path;

use super::*;
use crate::util::scenario_error::ScenarioError;

/// The `[sweep]` table of scenario text `src` (named `p`), parsed as the loader does.
fn parse_table(p: &Path, src: &str) -> Result<Option<Sweep>, Vec<ScenarioError>> {
    let doc = crate::util::scenario_doc::ScenarioDoc::parse(p, src).map_err(|e| vec![e])?;
    super::parse_table(&doc.section("sweep"))
}

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
            "s.toml:4:1: [sweep] unknown field `step`, expected one of `param`, `values`, `headline`, `samples_per_point`"
        ]
    );
    assert_eq!(
        table_errs("name = \"x\"\nsweep = 3\n"),
        vec!["s.toml:2:9: `sweep` must be a table (got integer); write it as `[sweep]`"]
    );
    assert_eq!(
        table_errs("[sweep]\nparam = \"max_concurrency\"\nvalues = 4\n"),
        vec!["s.toml:3:10: [sweep] values: expected an array, got the integer `4`"]
    );
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
