//! The scenario-author / load-tester / CI surface end to end, as a user runs the binary:
//! `check` (snapshot-tested error lists and the resolved plan), `suite` (summary table,
//! JUnit XML, exit codes), `compare`, `report --html`, sweeps and `schema`. Every run
//! targets the embedded server on 127.0.0.1 with tiny video scenarios (or the shipped
//! ones, copied into a temp dir so their artifacts land there).

use crate::support::rtload;
use std::path::{Path, PathBuf};
use std::process::Output;

use crate::cli::walk;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn invalid_dir() -> PathBuf {
    root().join("tests/data/scenarios/invalid")
}

/// Run `rtload ARGS` in `cwd`.
fn run_in(cwd: &Path, args: &[&str]) -> Output {
    rtload()
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("run rtload")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Assert the exit code, showing both streams when it differs.
#[track_caller]
fn assert_exit(o: &Output, code: i32) {
    assert_eq!(
        o.status.code(),
        Some(code),
        "stdout:\n{}\nstderr:\n{}",
        stdout(o),
        stderr(o)
    );
}

/// A tiny video scenario against the embedded server: `chunks` chunks, 2 samples at
/// concurrency 2, 20 ms to the first chunk then one every 5 ms. `extra` is appended
/// (further tables such as `[thresholds]` or `[sweep]`).
fn tiny_video(name: &str, chunks: u32, extra: &str) -> String {
    format!(
        r#"name = "{name}"
[workload]
kind = "video-cadence"
num_chunks = {chunks}
warmup_chunks = 1
first_chunk_timeout = 30.0
chunk_timeout = 30.0
[load]
samples = 2
max_concurrency = 2
[server.video]
first_chunk_ms = 20
chunk_interval_ms = 5
ramp_chunks = 0
{extra}"#
    )
}

/// Copy the shipped `scenarios/` (with `data/`, without run outputs) into `dir`.
fn copy_scenarios(dir: &Path) -> PathBuf {
    let src = root().join("scenarios");
    let dst = dir.join("scenarios");
    for file in walk(&src) {
        let rel = file.strip_prefix(&src).unwrap();
        let top = rel.components().next().unwrap().as_os_str();
        let shipped = rel.components().count() == 1 || top == "data";
        if shipped {
            let to = dst.join(rel);
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            std::fs::copy(&file, &to).unwrap();
        }
    }
    dst
}

fn shipped_scenario_names() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(root().join("scenarios"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert!(names.len() >= 4, "shipped scenarios: {names:?}");
    names
}

// ---------------------------------------------------------------------------------------
// rtload check

/// `rtload check FIXTURE` with cwd = the fixture's directory; stderr with the fixture's
/// absolute path replaced by `<FILE>` and its directory by `<DIR>`.
fn check_fixture(toml: &Path) -> (Output, String) {
    let dir = toml.parent().unwrap();
    let o = run_in(dir, &["check", toml.to_str().unwrap()]);
    let text = stderr(&o)
        .replace(toml.to_str().unwrap(), "<FILE>")
        .replace(dir.to_str().unwrap(), "<DIR>");
    (o, text)
}

fn invalid_fixtures() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(invalid_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    v.sort();
    v
}

/// Snapshot test: every `tests/data/scenarios/invalid/X.toml` has an `X.expected` holding
/// the exact stderr of `rtload check X.toml` (exit code 2), with the fixture's path
/// normalized to `<FILE>` and its directory to `<DIR>`.
///
/// After an intended message change, regenerate the snapshots instead of comparing:
///
/// ```text
/// UPDATE_SNAPSHOTS=1 cargo test --test it surface::check_invalid_fixtures_match_snapshots
/// ```
///
/// then review `git diff tests/data/scenarios/invalid` before committing. A new fixture
/// without an `.expected` fails until it is generated the same way.
#[test]
fn check_invalid_fixtures_match_snapshots() {
    let update = std::env::var_os("UPDATE_SNAPSHOTS").is_some_and(|v| v == "1");
    let fixtures = invalid_fixtures();
    assert!(fixtures.len() >= 15, "fixtures: {fixtures:?}");
    let mut mismatches = Vec::new();
    for toml in &fixtures {
        let (o, got) = check_fixture(toml);
        let name = toml.file_name().unwrap().to_string_lossy();
        if o.status.code() != Some(2) {
            mismatches.push(format!("{name}: exit {:?}, expected 2\n{got}", o.status));
            continue;
        }
        if !stdout(&o).is_empty() {
            mismatches.push(format!("{name}: printed a plan:\n{}", stdout(&o)));
        }
        let expected_path = toml.with_extension("expected");
        if update {
            std::fs::write(&expected_path, &got).unwrap();
            continue;
        }
        match std::fs::read_to_string(&expected_path) {
            Ok(want) if want == got => {}
            Ok(want) => mismatches.push(format!(
                "{name}: stderr differs from {}\n--- expected\n{want}--- got\n{got}",
                expected_path.display()
            )),
            Err(e) => mismatches.push(format!(
                "{name}: no snapshot {} ({e}); run with UPDATE_SNAPSHOTS=1\n--- got\n{got}",
                expected_path.display()
            )),
        }
    }
    // A snapshot whose fixture is gone is stale.
    for e in std::fs::read_dir(invalid_dir()).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "expected") && !p.with_extension("toml").exists() {
            mismatches.push(format!("stale snapshot without fixture: {}", p.display()));
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n\n"));
}

/// What each fixture must report, independent of the snapshot's exact wording: one
/// `error:` line per entry, at `<FILE>:POS: ` (or `<FILE>: ` where the problem has no
/// single position), each containing the needles (the bad value and the fix).
#[test]
fn check_lists_every_error_with_position_value_and_fix() {
    type Want = (&'static str, &'static [&'static str]);
    let cases: &[(&str, &[Want])] = &[
        ("toml_syntax", &[("4:8", &["string values must be quoted"])]),
        (
            "unknown_top_level_key",
            &[("5:2", &["unknown field `loads`", "`load`"])],
        ),
        (
            "unknown_workload_key",
            &[("4:1", &["unknown field `num_chunk`", "`num_chunks`"])],
        ),
        (
            "unknown_workload_kind",
            &[("3:8", &["\"video-cadense\"", "\"video-cadence\""])],
        ),
        (
            "load_bad_values",
            &[
                ("6:11", &["`samples`", "(got -1)", "`samples = 1`"]),
                (
                    "7:19",
                    &["`max_concurrency`", "(got 0)", "`max_concurrency = 1`"],
                ),
                ("8:14", &["`burstiness`", "(got \"x\")", "\"inf\""]),
            ],
        ),
        (
            "load_bad_rates",
            &[
                ("6:16", &["request_rate", "(got -1)", "e.g. 2.0"]),
                ("7:14", &["burstiness", "(got 0)", "use 1.0"]),
            ],
        ),
        (
            "load_ramp_up_without_end",
            &[("7:20", &["`ramp_up_end_rps`"])],
        ),
        (
            "load_ramp_up_with_request_rate",
            &[("7:16", &["request_rate (4)", "remove request_rate"])],
        ),
        (
            "video_bad_values",
            &[
                ("5:14", &["`target_fps`", "(got -1)", "`target_fps = 16`"]),
                (
                    "6:9",
                    &["`width`", "(got 100)", "`width = 96`", "`width = 112`"],
                ),
                ("7:18", &["\"spin\"", "\"forward\", \"hold\", \"orbit\""]),
            ],
        ),
        (
            "omni_without_dataset_path",
            &[("", &["needs `dataset_path`", "rtload dataset synth"])],
        ),
        (
            "omni_missing_ref_audio",
            &[(
                "5:13",
                &[
                    "`ref_audio`",
                    "<DIR>/no-such-voice.wav",
                    "rtload dataset synth",
                ],
            )],
        ),
        (
            "omni_missing_paths",
            &[
                ("4:16", &["<DIR>/no-such-dataset", "rtload dataset synth"]),
                ("5:13", &["<DIR>/no-such-voice.wav", "rtload dataset synth"]),
            ],
        ),
        (
            "thresholds_unknown_metric",
            &[(
                "7:1",
                &[
                    "`chunk_intreval_ms.p99`",
                    "did you mean",
                    "`chunk_interval_ms.p99`",
                ],
            )],
        ),
        (
            "thresholds_malformed_expression",
            &[(
                "6:18",
                &["\"about 500\"", "`ttfc_ms.mean`", "e.g. \"< 500\""],
            )],
        ),
        (
            "sweep_errors",
            &[
                ("6:9", &["\"concurrency\"", "\"max_concurrency\""]),
                ("8:12", &["`headline`", "e.g."]),
            ],
        ),
        (
            "sweep_bad_values",
            &[
                (
                    "7:14",
                    &["`1.5`", "not an integer", "`values = [1, 2, 4, 8]`"],
                ),
                ("7:19", &["`0`", "must be ≥ 1"]),
            ],
        ),
        (
            "several_sections",
            &[
                ("5:14", &["`target_fps`", "(got 0)"]),
                ("7:19", &["`max_concurrency`", "(got 0)"]),
                ("9:18", &["\"< fast\"", "`fast` is not a number"]),
                ("13:11", &["request_rate value `0`", "must be > 0"]),
            ],
        ),
    ];
    let mut problems = Vec::new();
    for (fixture, wants) in cases {
        let toml = invalid_dir().join(format!("{fixture}.toml"));
        let (o, text) = check_fixture(&toml);
        if o.status.code() != Some(2) {
            problems.push(format!("{fixture}: exit {:?}\n{text}", o.status));
            continue;
        }
        let lines: Vec<&str> = text.lines().collect();
        if lines.len() != wants.len() {
            problems.push(format!(
                "{fixture}: {} error lines, expected {}:\n{text}",
                lines.len(),
                wants.len()
            ));
        }
        for (pos, needles) in *wants {
            let prefix = if pos.is_empty() {
                "error: <FILE>: ".to_string()
            } else {
                format!("error: <FILE>:{pos}: ")
            };
            let hit = lines
                .iter()
                .any(|l| l.starts_with(&prefix) && needles.iter().all(|n| l.contains(n)));
            if !hit {
                problems.push(format!(
                    "{fixture}: no line `{prefix}...` containing {needles:?}:\n{text}"
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

#[test]
fn check_accepts_the_shipped_scenarios_and_prints_each_resolved_plan() {
    let tmp = tempfile::tempdir().unwrap();
    copy_scenarios(tmp.path());
    let names = shipped_scenario_names();
    let mut args = vec!["check".to_string()];
    args.extend(names.iter().map(|n| format!("scenarios/{n}")));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = run_in(tmp.path(), &args);
    assert_exit(&o, 0);
    let out = stdout(&o);
    // One block per scenario: an unindented `name (path)` line, then indented rows.
    let mut blocks: Vec<(String, Vec<String>)> = Vec::new();
    for line in out.lines() {
        if line.starts_with(' ') {
            blocks
                .last_mut()
                .expect(&out)
                .1
                .push(line.trim().to_string());
        } else {
            blocks.push((line.to_string(), Vec::new()));
        }
    }
    assert_eq!(blocks.len(), names.len(), "{out}");
    for ((head, rows), file) in blocks.iter().zip(&names) {
        assert!(head.ends_with(&format!("(scenarios/{file})")), "{head}");
        for key in ["target", "workload", "samples", "concurrency", "arrivals"] {
            assert!(
                rows.iter().any(|r| r.starts_with(&format!("{key} "))),
                "{file}: no `{key}` row:\n{out}"
            );
        }
        let row = |key: &str| rows.iter().find(|r| r.starts_with(key)).unwrap().clone();
        assert!(row("target").contains("embedded reference server"), "{out}");
        assert!(row("samples").contains("measured"), "{out}");
    }
    // The video quickstart's plan, as its file says.
    let vq = &blocks[names
        .iter()
        .position(|n| n == "video-quickstart.toml")
        .unwrap()]
    .1;
    let has = |s: &str| vq.iter().any(|r| r.contains(s));
    assert!(has("video-cadence"), "{vq:?}");
    assert!(has("3 measured + 1 warm-up"), "{vq:?}");
    assert!(has("poisson 4.0 rps"), "{vq:?}");
}

// ---------------------------------------------------------------------------------------
// rtload suite

/// The `<testcase ...>...</testcase>` elements of a JUnit file, in order.
fn testcases(xml: &str) -> Vec<&str> {
    xml.split("<testcase ")
        .skip(1)
        .map(|s| s.split("</testcase>").next().unwrap())
        .collect()
}

#[test]
fn suite_runs_the_shipped_scenarios_and_writes_junit() {
    let tmp = tempfile::tempdir().unwrap();
    copy_scenarios(tmp.path());
    let junit = tmp.path().join("out.xml");
    let o = run_in(
        tmp.path(),
        &[
            "suite",
            "scenarios",
            "--junit",
            junit.to_str().unwrap(),
            "--quiet",
        ],
    );
    assert_exit(&o, 0);
    let table = stdout(&o);
    let names = shipped_scenario_names();
    for n in &names {
        let stem = n.trim_end_matches(".toml");
        assert!(
            table
                .lines()
                .any(|l| l.starts_with(&format!("{stem} ")) && l.contains(" pass ")),
            "no passing row for {stem}:\n{table}"
        );
    }
    assert!(
        table.contains(&format!(
            "totals: {} scenarios ({} passed, 0 failed, 0 errors)",
            names.len(),
            names.len()
        )),
        "{table}"
    );
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.starts_with("<?xml"), "{xml}");
    assert!(
        xml.contains(&format!(
            "<testsuites name=\"rtload\" tests=\"{}\" failures=\"0\" errors=\"0\"",
            names.len()
        )),
        "{xml}"
    );
    let cases = testcases(&xml);
    assert_eq!(cases.len(), names.len(), "{xml}");
    for n in &names {
        let stem = n.trim_end_matches(".toml");
        assert!(
            cases
                .iter()
                .any(|c| c.contains(&format!("classname=\"rtload.{stem}\""))),
            "{stem} missing:\n{xml}"
        );
    }
    assert!(
        !xml.contains("<failure") && !xml.contains("<error"),
        "{xml}"
    );
}

#[test]
fn suite_with_a_breached_threshold_exits_1_and_junit_names_it() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("suite");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("a_pass.toml"), tiny_video("passes", 4, "")).unwrap();
    std::fs::write(
        dir.join("b_breach.toml"),
        tiny_video(
            "breaches",
            4,
            "[thresholds]\n\"chunk_interval_ms.p99\" = \"< 0.001\"\n\"ttfc_ms.mean\" = \"< 60000\"\n",
        ),
    )
    .unwrap();
    let junit = tmp.path().join("out.xml");
    let o = run_in(
        tmp.path(),
        &["suite", "suite", "--junit", junit.to_str().unwrap(), "-q"],
    );
    assert_exit(&o, 1);
    let table = stdout(&o);
    assert!(
        table
            .lines()
            .any(|l| l.starts_with("passes ") && l.contains(" pass ")),
        "{table}"
    );
    assert!(
        table
            .lines()
            .any(|l| l.starts_with("breaches ") && l.contains(" FAIL ")),
        "{table}"
    );
    assert!(table.contains("1 thresholds breached"), "{table}");
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(
        xml.contains("tests=\"2\" failures=\"1\" errors=\"0\""),
        "{xml}"
    );
    let cases = testcases(&xml);
    assert_eq!(cases.len(), 2, "{xml}");
    assert!(!cases[0].contains("<failure"), "{xml}");
    let failing = cases[1];
    assert!(failing.contains("classname=\"rtload.b_breach\""), "{xml}");
    // message="chunk_interval_ms.p99 &lt; 0.001: measured 7.853"
    let msg = failing
        .split("<failure message=\"")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .unwrap_or_else(|| panic!("no <failure message=...>:\n{xml}"));
    let measured: f64 = msg
        .strip_prefix("chunk_interval_ms.p99 &lt; 0.001: measured ")
        .unwrap_or_else(|| panic!("failure message does not name the threshold: {msg}"))
        .parse()
        .unwrap_or_else(|e| panic!("measured value in {msg}: {e}"));
    assert!(measured > 0.001 && measured < 60_000.0, "{msg}");
    // The threshold that held is not reported as a failure.
    assert!(!msg.contains("ttfc_ms.mean"), "{msg}");
}

#[test]
fn suite_with_a_config_error_exits_2_and_junit_has_an_error_testcase() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("suite");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("a_pass.toml"), tiny_video("passes", 3, "")).unwrap();
    std::fs::write(
        dir.join("b_broken.toml"),
        "name = \"broken\"\n[workload]\nkind = \"video-cadence\"\nnum_chunks = 3\n[load]\nmax_concurrency = 0\n",
    )
    .unwrap();
    let junit = tmp.path().join("out.xml");
    let o = run_in(
        tmp.path(),
        &["suite", "suite", "--junit", junit.to_str().unwrap(), "-q"],
    );
    assert_exit(&o, 2);
    let table = stdout(&o);
    assert!(
        table
            .lines()
            .any(|l| l.starts_with("passes ") && l.contains(" pass ")),
        "the suite goes on after an error:\n{table}"
    );
    assert!(
        table
            .lines()
            .any(|l| l.starts_with("b_broken ") && l.contains(" ERROR ")),
        "{table}"
    );
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(
        xml.contains("tests=\"2\" failures=\"0\" errors=\"1\""),
        "{xml}"
    );
    let cases = testcases(&xml);
    assert_eq!(cases.len(), 2, "{xml}");
    assert!(!cases[0].contains("<error") && !cases[0].contains("<failure"));
    assert!(cases[1].contains("classname=\"rtload.b_broken\""), "{xml}");
    assert!(
        cases[1].contains("<error message=\"")
            && cases[1].contains("b_broken.toml:6:19: `max_concurrency` must be ≥ 1 (got 0)"),
        "{xml}"
    );
}

// ---------------------------------------------------------------------------------------
// rtload compare / report

/// Run the tiny video scenario in `dir` with `--output-json dir/NAME`.
fn tiny_result(dir: &Path, name: &str) -> PathBuf {
    let sc = dir.join(format!("{name}.toml"));
    std::fs::write(&sc, tiny_video(name, 4, "")).unwrap();
    let json = dir.join(format!("{name}.json"));
    let o = run_in(
        dir,
        &[
            "run",
            sc.to_str().unwrap(),
            "--output-json",
            json.to_str().unwrap(),
            "-q",
        ],
    );
    assert_exit(&o, 0);
    json
}

#[test]
fn compare_two_runs_then_a_crafted_regression() {
    let tmp = tempfile::tempdir().unwrap();
    let a = tiny_result(tmp.path(), "a");
    let b = tiny_result(tmp.path(), "b");
    let (a_s, b_s) = (a.to_str().unwrap(), b.to_str().unwrap());

    let o = run_in(tmp.path(), &["compare", a_s, b_s]);
    assert_exit(&o, 0);
    let table = stdout(&o);
    let header: Vec<&str> = table.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(
        header,
        ["metric", "base", "new", "delta", "delta%", "better"],
        "{table}"
    );
    for m in ["ttfc_ms.mean", "chunk_interval_ms.p99", "slo_attainment"] {
        assert!(
            table.lines().any(|l| l.starts_with(&format!("{m} "))),
            "{m}:\n{table}"
        );
    }

    // With a bound, compare against an identical copy: two live runs may legitimately
    // differ from an exact-zero baseline (0 → 1 underrun is a regression at any bound),
    // which would make this check depend on the machine's load.
    let same = tmp.path().join("a-copy.json");
    std::fs::copy(&a, &same).unwrap();
    let o = run_in(
        tmp.path(),
        &[
            "compare",
            a_s,
            same.to_str().unwrap(),
            "--max-regression",
            "1000%",
        ],
    );
    assert_exit(&o, 0);
    assert!(
        stdout(&o).contains("0 metrics regressed past 1000%"),
        "{}",
        stdout(&o)
    );

    // b2 = a with ttfc_ms.mean tripled: exactly that metric regresses past 10%.
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&a).unwrap()).unwrap();
    let m = &mut doc["rtload"]["metrics"]["ttfc_ms.mean"];
    *m = serde_json::json!(m.as_f64().expect("ttfc_ms.mean in a.json") * 3.0);
    let b2 = tmp.path().join("b2.json");
    std::fs::write(&b2, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    let o = run_in(
        tmp.path(),
        &[
            "compare",
            a_s,
            b2.to_str().unwrap(),
            "--max-regression",
            "10%",
        ],
    );
    assert_exit(&o, 1);
    let table = stdout(&o);
    let regressed: Vec<&str> = table.lines().filter(|l| l.contains("REGRESSED")).collect();
    assert_eq!(regressed.len(), 1, "{table}");
    assert!(regressed[0].starts_with("ttfc_ms.mean "), "{table}");
    assert!(regressed[0].contains("+200.00%"), "{table}");
    assert!(table.contains("1 metric regressed past 10%"), "{table}");
}

#[test]
fn compare_rejects_a_file_without_rtload_metrics() {
    let tmp = tempfile::tempdir().unwrap();
    let good = tmp.path().join("good.json");
    std::fs::write(&good, r#"{"rtload": {"metrics": {"ttfc_ms.mean": 1.0}}}"#).unwrap();
    let bare = tmp.path().join("vllm.json");
    std::fs::write(&bare, r#"{"metrics": {"ttfc_ms.mean": 1.0}, "rtload": {}}"#).unwrap();
    for (base, new) in [(&bare, &good), (&good, &bare)] {
        let o = run_in(
            tmp.path(),
            &["compare", base.to_str().unwrap(), new.to_str().unwrap()],
        );
        assert_exit(&o, 2);
        let err = stderr(&o);
        assert!(
            err.contains(&format!(
                "error: not an rtload result (no rtload.metrics): {}",
                bare.display()
            )),
            "{err}"
        );
        assert!(stdout(&o).is_empty(), "{}", stdout(&o));
    }
}

/// The HTML loads nothing from elsewhere (the only URL is the SVG namespace) and has
/// at least one chart.
#[track_caller]
fn assert_self_contained_with_charts(html: &str) {
    assert!(
        html.contains("<html") || html.starts_with("<!DOCTYPE"),
        "not HTML"
    );
    assert!(!html.contains("https://"), "https reference in report");
    let xmlns = "xmlns=\"http://www.w3.org/2000/svg\"";
    assert_eq!(
        html.matches("http://").count(),
        html.matches(xmlns).count(),
        "an http:// reference other than the SVG namespace"
    );
    for banned in ["<link", "<script src", "@import", "<img src=\"http"] {
        assert!(!html.contains(banned), "{banned} in report");
    }
    assert!(html.contains("<svg class=\"chart\""), "no chart in report");
}

fn report(dir: &Path, results: &[&Path]) -> String {
    let out = dir.join("report.html");
    let mut args = vec!["report".to_string()];
    args.extend(results.iter().map(|p| p.display().to_string()));
    args.extend(["--html".to_string(), out.display().to_string()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = run_in(dir, &args);
    assert_exit(&o, 0);
    std::fs::read_to_string(out).unwrap()
}

#[test]
fn report_renders_a_video_result_as_self_contained_html() {
    let tmp = tempfile::tempdir().unwrap();
    let a = tiny_result(tmp.path(), "a");
    let html = report(tmp.path(), &[&a]);
    assert_self_contained_with_charts(&html);
}

#[test]
fn report_overlays_two_runs_and_draws_their_hlog_over_time() {
    let tmp = tempfile::tempdir().unwrap();
    let a = tiny_result(tmp.path(), "a");
    let b = tiny_result(tmp.path(), "b");
    let html = report(tmp.path(), &[&a, &b]);
    assert_self_contained_with_charts(&html);
    // Same workload kind: one comparison section, every distribution and the time
    // series overlaid (one curve or dot row per file), the per-file summaries kept.
    assert_eq!(html.matches("<section class=\"doc compare\"").count(), 1);
    for kind in ["dist-ttfc_ms", "ts-completions", "ts-ttfc_ms"] {
        assert_eq!(
            html.matches(&format!("data-chart=\"{kind}\"")).count(),
            1,
            "{kind}"
        );
    }
    assert_eq!(html.matches("verdict: <strong>passed</strong>").count(), 2);
    // Without its .hlog, a result's time series is left out with a note, never zero.
    std::fs::remove_file(b.with_extension("hlog")).unwrap();
    let html = report(tmp.path(), &[&b]);
    assert!(
        html.contains("Time series: no interval log (.hlog) beside this result"),
        "{html}"
    );
    assert!(!html.contains("data-chart=\"ts-"));
}

#[test]
fn report_renders_a_duplex_result_with_bare_nans() {
    let tmp = tempfile::tempdir().unwrap();
    copy_scenarios(tmp.path());
    let q = tmp.path().join("quickstart.json");
    let o = run_in(
        tmp.path(),
        &[
            "run",
            "scenarios/quickstart.toml",
            "--output-json",
            q.to_str().unwrap(),
            "-q",
        ],
    );
    assert_exit(&o, 0);
    let text = std::fs::read_to_string(&q).unwrap();
    // vllm style: Python's bare NaN, which strict JSON rejects.
    assert!(text.contains(": NaN"), "no bare NaN in the duplex result");
    assert!(serde_json::from_str::<serde_json::Value>(&text).is_err());
    let html = report(tmp.path(), &[&q]);
    assert_self_contained_with_charts(&html);
}

// ---------------------------------------------------------------------------------------
// sweeps

/// The files, table and capacity line of a `max_concurrency = 1, 2` sweep of a passing
/// scenario, and the HTML of its sweep.json.
#[track_caller]
fn assert_sweep_outputs(o: &Output, dir: &Path) {
    assert_exit(o, 0);
    for f in [
        "max_concurrency_1.json",
        "max_concurrency_2.json",
        "sweep.json",
        "sweep.html",
    ] {
        assert!(dir.join(f).is_file(), "{f} missing in {}", dir.display());
    }
    let table = stdout(o);
    let lines: Vec<&str> = table.lines().collect();
    assert!(lines[0].starts_with("max_concurrency "), "{table}");
    for v in ["1", "2"] {
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with(&format!("{v} ")) && l.trim_end().ends_with("pass")),
            "no passing row for {v}:\n{table}"
        );
    }
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("capacity: max_concurrency = 2")),
        "{table}"
    );
    for point in ["max_concurrency_1.json", "max_concurrency_2.json"] {
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join(point)).unwrap()).unwrap();
        assert!(
            v["rtload"]["metrics"]["ttfc_ms.mean"].is_number(),
            "{point}"
        );
    }
    let sweep: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("sweep.json")).unwrap()).unwrap();
    assert_eq!(sweep["sweep"]["param"], "max_concurrency");
    assert_eq!(sweep["sweep"]["capacity"], 2);
    assert_eq!(sweep["sweep"]["points"].as_array().map(Vec::len), Some(2));
    assert_self_contained_with_charts(&std::fs::read_to_string(dir.join("sweep.html")).unwrap());
    let html = report(dir, &[&dir.join("sweep.json")]);
    assert_self_contained_with_charts(&html);
}

/// A threshold every healthy point holds: no sample failed.
const HOLDS: &str = "[thresholds]\n\"failed\" = \"< 1\"\n";

#[test]
fn sweep_flag_writes_points_summary_and_capacity() {
    let tmp = tempfile::tempdir().unwrap();
    let sc = tmp.path().join("v.toml");
    // A capacity is claimed only for points thresholds judged.
    std::fs::write(&sc, tiny_video("v", 4, HOLDS)).unwrap();
    let sw = tmp.path().join("sw");
    let o = run_in(
        tmp.path(),
        &[
            "run",
            sc.to_str().unwrap(),
            "--sweep",
            "max_concurrency=1,2",
            "--sweep-dir",
            sw.to_str().unwrap(),
            "-q",
        ],
    );
    assert_sweep_outputs(&o, &sw);
}

#[test]
fn sweep_table_in_the_scenario_works_the_same() {
    let tmp = tempfile::tempdir().unwrap();
    let sc = tmp.path().join("v.toml");
    std::fs::write(
        &sc,
        tiny_video(
            "v",
            4,
            &format!("{HOLDS}[sweep]\nparam = \"max_concurrency\"\nvalues = [1, 2]\n"),
        ),
    )
    .unwrap();
    let sw = tmp.path().join("sw");
    let o = run_in(
        tmp.path(),
        &[
            "run",
            sc.to_str().unwrap(),
            "--sweep-dir",
            sw.to_str().unwrap(),
            "-q",
        ],
    );
    assert_sweep_outputs(&o, &sw);
}

// ---------------------------------------------------------------------------------------
// rtload schema

#[test]
fn schema_is_json_describing_the_workload_table() {
    let o = run_in(root(), &["schema"]);
    assert_exit(&o, 0);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("schema is JSON");
    assert!(v["properties"]["workload"].is_object(), "{v:#}");
    for key in ["load", "thresholds", "sweep"] {
        assert!(v["properties"][key].is_object(), "no properties.{key}");
    }
}
