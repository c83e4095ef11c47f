//! `[thresholds]` parsing and evaluation: operators, number forms, key flattening,
//! positioned errors with close-match suggestions.

use super::*;
use crate::util::scenario_doc::ScenarioDoc;
use std::path::Path;

const P: &str = "s.toml";

fn parse_src(src: &str) -> Result<Vec<Threshold>, Vec<String>> {
    let doc = ScenarioDoc::parse(Path::new(P), src).map_err(|e| vec![e.to_string()])?;
    parse(&doc.section("thresholds")).map_err(|es| es.iter().map(ToString::to_string).collect())
}

/// [`super::check_names`] on scenario text `src` (named `p`).
fn check_names(
    p: &Path,
    src: &str,
    ts: &[Threshold],
    known: &[&str],
) -> Result<(), Vec<ScenarioError>> {
    let doc = ScenarioDoc::parse(p, src).map_err(|e| vec![e])?;
    super::check_names(&doc.section("thresholds"), ts, known)
}

/// Parse a one-entry table and check the op, bound and normalized expression.
#[track_caller]
fn check_expr(expr: &str, op: Op, bound: f64, normalized: &str) {
    let src = format!("[thresholds]\nm = {expr:?}\n");
    let got = parse_src(&src).unwrap_or_else(|e| panic!("{expr:?}: {e:?}"));
    assert_eq!(got.len(), 1);
    assert_eq!(
        (got[0].op, got[0].expr.as_str()),
        (op, normalized),
        "{expr:?}"
    );
    assert!(
        (got[0].bound - bound).abs() < 1e-12,
        "{expr:?}: {}",
        got[0].bound
    );
}

/// Parse a one-entry table whose expression is bad and check the full error text.
#[track_caller]
fn check_bad(expr: &str, why: &str) {
    let src = format!("[thresholds]\nm = {expr:?}\n");
    let errs = parse_src(&src).unwrap_err();
    assert_eq!(
        errs,
        [format!(
            "s.toml:2:5: bad threshold {expr:?} for `m`: {why}; {FORM}"
        )]
    );
}

#[test]
fn every_operator_parses() {
    check_expr("< 500", Op::Lt, 500.0, "< 500");
    check_expr("<= 1.0", Op::Le, 1.0, "<= 1.0");
    check_expr("> 2", Op::Gt, 2.0, "> 2");
    check_expr(">= 0.95", Op::Ge, 0.95, ">= 0.95");
    check_expr("== 0", Op::Eq, 0.0, "== 0");
    check_expr("!= 3", Op::Ne, 3.0, "!= 3");
}

#[test]
fn spacing_and_number_forms() {
    check_expr("<500", Op::Lt, 500.0, "< 500");
    check_expr("  <=   1  ", Op::Le, 1.0, "<= 1");
    check_expr("\t>=\t-2.5", Op::Ge, -2.5, ">= -2.5");
    check_expr("< 1e3", Op::Lt, 1000.0, "< 1e3");
    check_expr("< 2.5E-2", Op::Lt, 0.025, "< 2.5E-2");
    check_expr("> +4", Op::Gt, 4.0, "> +4");
    check_expr("< .5", Op::Lt, 0.5, "< .5");
}

#[test]
fn bad_expressions_name_the_value_and_the_form() {
    check_bad("", "the expression is empty");
    check_bad("   ", "the expression is empty");
    check_bad("500", "it does not start with a comparison operator");
    check_bad("= 5", "it does not start with a comparison operator");
    check_bad("=< 5", "it does not start with a comparison operator");
    check_bad("p99 < 500", "it does not start with a comparison operator");
    check_bad("<", "no number after `<`");
    check_bad("<= ", "no number after `<=`");
    check_bad("< 500ms", "`500ms` is not a number");
    check_bad("<< 5", "`< 5` is not a number");
    check_bad("< 1 2", "`1 2` is not a number");
    check_bad("< inf", "the bound `inf` is not a finite number");
    check_bad("== NaN", "the bound `NaN` is not a finite number");
}

#[test]
fn absent_or_empty_table_is_no_thresholds() {
    assert_eq!(parse_src("name = \"x\"\n[load]\nsamples = 3\n"), Ok(vec![]));
    assert_eq!(parse_src("[thresholds]\n"), Ok(vec![]));
}

#[test]
fn quoted_dotted_and_subtable_keys_flatten_in_file_order() {
    let src = "name = \"x\"\n[thresholds]\n\"ttft_ms.p99\" = \"< 500\"\naudio_rtf.mean = \"<= 1.0\"\n\
               failed = \"== 0\"\n[thresholds.video_rtf]\nsteady = \"< 1\"\n";
    let got = parse_src(src).unwrap();
    let names: Vec<(&str, &str)> = got
        .iter()
        .map(|t| (t.metric.as_str(), t.expr.as_str()))
        .collect();
    assert_eq!(
        names,
        [
            ("ttft_ms.p99", "< 500"),
            ("audio_rtf.mean", "<= 1.0"),
            ("failed", "== 0"),
            ("video_rtf.steady", "< 1"),
        ]
    );
}

#[test]
fn all_errors_are_collected_with_positions() {
    let src = "[thresholds]\n\"ttft_ms.p99\" = \"500\"\nfailed = 0\nok = \"< 1\"\n  x.y = \"<< 2\"\nz = [1]\n";
    let errs = parse_src(src).unwrap_err();
    assert_eq!(
        errs,
        [
            format!(
                "s.toml:2:17: bad threshold \"500\" for `ttft_ms.p99`: it does not start with a \
                 comparison operator; {FORM}"
            ),
            format!("s.toml:3:10: threshold for `failed` must be a quoted string (got 0); {FORM}"),
            format!("s.toml:5:9: bad threshold \"<< 2\" for `x.y`: `< 2` is not a number; {FORM}"),
            format!("s.toml:6:5: threshold for `z` must be a quoted string (got [1]); {FORM}"),
        ]
    );
}

#[test]
fn non_table_thresholds_and_datetimes_are_positioned() {
    let errs = parse_src("thresholds = \"< 5\"\n").unwrap_err();
    assert_eq!(
        errs,
        [
            "s.toml:1:14: `thresholds` must be a table; write it as `[thresholds]` with lines like \
          \"ttft_ms.p99\" = \"< 500\""
        ]
    );
    let errs = parse_src("[thresholds]\nwhen = 1979-05-27\n").unwrap_err();
    assert_eq!(
        errs,
        [format!(
            "s.toml:2:8: threshold values must be quoted strings (got 1979-05-27); {FORM}"
        )]
    );
}

#[test]
fn duplicate_names_via_quoted_and_dotted_keys() {
    let errs = parse_src("[thresholds]\n\"a.b\" = \"< 1\"\na.b = \"< 2\"\n").unwrap_err();
    assert_eq!(
        errs,
        ["s.toml:3:1: duplicate threshold for `a.b` (first set on line 2); keep one"]
    );
}

#[test]
fn toml_syntax_errors_are_positioned() {
    let errs = parse_src("[thresholds]\nm = \"< 1\n").unwrap_err();
    assert_eq!(errs.len(), 1);
    assert!(errs[0].starts_with("s.toml:2:"), "{errs:?}");
}

const KNOWN: [&str; 9] = [
    "ttft_ms.p99",
    "ttft_ms.mean",
    "tpot_ms.p99",
    "ttfc_ms.mean",
    "audio_rtf.mean",
    "video_rtf.steady",
    "failed",
    "completed",
    "slo_attainment",
];

#[track_caller]
fn check_close(name: &str, want: &[&str]) {
    assert_eq!(close_matches(name, &KNOWN), want, "{name}");
}

#[test]
fn close_matches_by_distance_prefix_and_segments() {
    check_close("ttft.p99", &["ttft_ms.p99"]);
    check_close(
        "ttft_ms.p95",
        &["ttft_ms.p99", "tpot_ms.p99", "ttft_ms.mean"],
    );
    check_close("fialed", &["failed"]);
    check_close("FAILED", &["failed"]);
    check_close("audio_rtf", &["audio_rtf.mean"]);
    check_close("video_rtf.stedy", &["video_rtf.steady"]);
    check_close("slo", &["slo_attainment"]);
    check_close("bogus_metric", &[]);
}

#[test]
fn unknown_names_are_errors_at_the_key() {
    let src = "[thresholds]\n\"ttft.p99\" = \"< 500\"\nfailed = \"== 0\"\n  bogus.x = \"> 1\"\n";
    let ts = parse_src(src).unwrap();
    let errs: Vec<String> = check_names(Path::new(P), src, &ts, &KNOWN)
        .unwrap_err()
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        errs,
        [
            "s.toml:2:1: unknown metric `ttft.p99` in [thresholds]; did you mean `ttft_ms.p99`?",
            "s.toml:4:3: unknown metric `bogus.x` in [thresholds]; known metrics include \
             `audio_rtf.mean`, `completed`, `failed`, `slo_attainment`, `tpot_ms.p99`, \
             `ttfc_ms.mean` and 3 more",
        ]
    );
    assert_eq!(check_names(Path::new(P), src, &ts[1..2], &KNOWN), Ok(()));
}

#[test]
fn unknown_name_in_subtable_points_at_its_own_key() {
    let src = "[thresholds.ttft_ms]\np95 = \"< 1\"\n";
    let ts = parse_src(src).unwrap();
    let errs = check_names(Path::new(P), src, &ts, &KNOWN).unwrap_err();
    assert_eq!(
        errs[0].to_string(),
        "s.toml:2:1: unknown metric `ttft_ms.p95` in [thresholds]; did you mean one of \
         `ttft_ms.p99`, `tpot_ms.p99`, `ttft_ms.mean`?"
    );
}

#[test]
fn unknown_name_with_no_known_metrics() {
    let ts = parse_src("[thresholds]\nx = \"< 1\"\n").unwrap();
    let errs = check_names(Path::new(P), "[thresholds]\nx = \"< 1\"\n", &ts, &[]).unwrap_err();
    assert_eq!(
        errs[0].to_string(),
        "s.toml:2:1: unknown metric `x` in [thresholds]; this workload reports none"
    );
}

fn t(metric: &str, op: Op, bound: f64) -> Threshold {
    Threshold {
        metric: metric.into(),
        op,
        bound,
        expr: format!("{op} {bound}"),
    }
}

#[track_caller]
fn check_eval(op: Op, bound: f64, measured: Option<f64>, passed: bool) {
    let mut metrics = BTreeMap::new();
    if let Some(m) = measured {
        metrics.insert("m".to_string(), m);
    }
    let v = evaluate(&[t("m", op, bound)], &metrics);
    assert_eq!(v[0].passed, passed, "{measured:?} {op} {bound}");
    assert_eq!(v[0].measured.map(f64::to_bits), measured.map(f64::to_bits));
}

#[test]
fn evaluation_of_every_operator_at_and_around_the_bound() {
    for (op, below, at, above) in [
        (Op::Lt, true, false, false),
        (Op::Le, true, true, false),
        (Op::Gt, false, false, true),
        (Op::Ge, false, true, true),
        (Op::Eq, false, true, false),
        (Op::Ne, true, false, true),
    ] {
        check_eval(op, 1.0, Some(0.5), below);
        check_eval(op, 1.0, Some(1.0), at);
        check_eval(op, 1.0, Some(1.5), above);
    }
}

#[test]
fn missing_and_nan_always_fail() {
    for op in [Op::Lt, Op::Le, Op::Gt, Op::Ge, Op::Eq, Op::Ne] {
        check_eval(op, 0.0, None, false);
        check_eval(op, 0.0, Some(f64::NAN), false);
    }
}

#[test]
fn render_snapshot() {
    let ts = [
        t("ttft_ms.p99", Op::Lt, 500.0),
        t("failed", Op::Eq, 0.0),
        t("audio_rtf.mean", Op::Le, 1.0),
        t("x", Op::Lt, 1.0),
    ];
    let metrics = BTreeMap::from([
        ("ttft_ms.p99".to_string(), 612.4),
        ("failed".to_string(), 0.0),
        ("x".to_string(), 0.00001234),
    ]);
    let text = render(&evaluate(&ts, &metrics));
    assert_eq!(
        text,
        "FAIL  ttft_ms.p99 < 500    measured 612.400\n\
         PASS  failed == 0          measured 0.000\n\
         FAIL  audio_rtf.mean <= 1  missing: no samples\n\
         PASS  x < 1                measured 1.234e-5\n"
    );
    let one = render(&evaluate(&ts[..1], &metrics));
    assert_eq!(one, "FAIL  ttft_ms.p99 < 500  measured 612.400\n");
    assert_eq!(render(&[]), "");
}
