//! Sweeps: against an embedded server configured to saturate, the capacity is the knee.

use rtload::scenario::SweepParam;

use crate::support::Fixture;

#[test]
fn sweep_over_concurrency_reports_the_knee() {
    // The server serves 2 sessions in real time; while 4 stream at once every interval
    // doubles (50 ms → 100 ms), which breaks the 75 ms threshold. The median is used so
    // an isolated scheduling hiccup on a loaded machine cannot flip a point.
    let fx = Fixture::new(
        r#"
name = "saturating"
[workload]
kind = "video-cadence"
num_chunks = 8
warmup_chunks = 2
[load]
samples = 4
[server.video]
first_chunk_ms = 20
chunk_interval_ms = 50
ramp_chunks = 0
saturate_above_sessions = 2
[thresholds]
"chunk_interval_ms.p50" = "< 75"
[sweep]
param = "max_concurrency"
values = [1, 2, 4]
"#,
    );
    let sc = fx.scenario();
    let sweep = sc.sweep().cloned().expect("[sweep] parsed");
    let out = fx.dir.path().join("sweep");
    let r = rtload::run::run_sweep(&sc, &sweep, &out, true).unwrap();
    let passed: Vec<bool> = r.points.iter().map(|p| p.passed).collect();
    assert_eq!(
        passed,
        [true, true, false],
        "{:?}",
        r.points
            .iter()
            .map(|p| p.metrics.get("chunk_interval_ms.p50"))
            .collect::<Vec<_>>()
    );
    assert_eq!(r.capacity, Some(2.0));
    for f in [
        "max_concurrency_1.json",
        "max_concurrency_2.json",
        "max_concurrency_4.json",
        "sweep.json",
        "sweep.html",
    ] {
        assert!(out.join(f).is_file(), "{f} missing");
    }
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("sweep.json")).unwrap()).unwrap();
    assert_eq!(doc["sweep"]["capacity"], 2);
    assert_eq!(doc["sweep"]["points"].as_array().unwrap().len(), 3);
    assert_unit_rate_column(&sc, &sweep, &r, &doc, &out);
}

/// The video workload's own unit (chunks/s) is in every point, the terminal table, the
/// sweep JSON and the HTML page: positive, and exactly 8 chunks per completed session.
fn assert_unit_rate_column(
    sc: &rtload::Scenario,
    sweep: &rtload::scenario::Sweep,
    r: &rtload::run::SweepRun,
    doc: &serde_json::Value,
    out: &std::path::Path,
) {
    assert_eq!(
        doc["sweep"]["unit_rate"],
        serde_json::json!({"metric": "chunk_throughput", "unit": "chunks/s"})
    );
    for (p, j) in r
        .points
        .iter()
        .zip(doc["sweep"]["points"].as_array().unwrap())
    {
        let rate = p.unit_rate.expect("every point has chunks/s");
        let sessions = p.sessions_per_s.expect("sessions/s");
        assert!(rate > 0.0 && rate < 1000.0, "{rate}");
        assert!((rate - 8.0 * sessions).abs() < 1e-9, "{rate} vs {sessions}");
        assert_eq!(j["unit_rate"].as_f64(), Some(rate));
    }
    let catalogue = sc.workload().catalogue();
    let unit = catalogue.unit_rate().map(|u| u.unit.as_str());
    let table = rtload::report::sweep_table(sweep, &r.points, unit, &[]);
    let header: Vec<&str> = table.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(
        header,
        [
            "max_concurrency",
            "achieved",
            "sessions/s",
            "chunks/s",
            "result"
        ]
    );
    let first: Vec<&str> = table.lines().nth(1).unwrap().split_whitespace().collect();
    assert!(first[3].parse::<f64>().is_ok_and(|v| v > 0.0), "{table}");
    let html = std::fs::read_to_string(out.join("sweep.html")).unwrap();
    assert!(html.contains("<th>sessions/s</th><th>chunks/s</th>"));
    assert!(html.contains("data-chart=\"sweep-unit-rate\""));
}

/// The quickstart swept over concurrency: by default each point gets enough samples and
/// a closed loop to reach and hold its concurrency; with scaling off, the points that fell
/// short are marked and can never be the capacity.
#[test]
fn quickstart_concurrency_sweep_reaches_every_point_or_marks_it_short() {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/video-quickstart.toml");
    let sc = rtload::scenario::load(&path, &Default::default()).expect("quickstart loads");
    let dir = tempfile::tempdir().unwrap();
    let read = |d: &std::path::Path| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(d.join("sweep.json")).unwrap()).unwrap()
    };
    let sweep = rtload::scenario::parse_sweep("max_concurrency=1,2,4,8").unwrap();
    let scaled = dir.path().join("scaled");
    rtload::run::run_sweep(&sc, &sweep, &scaled, true).unwrap();
    let doc = read(&scaled);
    for p in doc["sweep"]["points"].as_array().unwrap() {
        assert_eq!(p["achieved_concurrency"], p["value"], "{p}");
        assert_eq!(p["reached"], true, "{p}");
    }

    let mut off = sweep.clone();
    off.samples_per_point = Some(0);
    let short = dir.path().join("off");
    // A threshold every healthy point holds, so a capacity can be claimed at all (a
    // generator-bound point on a busy machine may still deny it).
    let judged = rtload::scenario::thresholds_in(&path, "[thresholds]\n\"failed\" = \"< 1\"\n")
        .expect("threshold parses");
    let sc = sc.to_builder().thresholds(judged).build();
    let r = rtload::run::run_sweep(&sc, &off, &short, true).unwrap();
    let doc = read(&short);
    for p in doc["sweep"]["points"].as_array().unwrap() {
        let reached = p["achieved_concurrency"] == p["value"];
        assert_eq!(p["reached"], reached, "{p}");
        if p["value"].as_u64().unwrap() > 3 {
            assert_eq!(p["reached"], false, "3 samples cannot reach {p}");
        }
    }
    assert!(r.capacity.is_none_or(|c| c <= 3.0), "{:?}", r.capacity);
}

#[test]
fn an_omniinteract_sweep_publishes_every_point_s_artifacts() {
    // The workload is prepared once for a whole sweep, its capture spool included, so the
    // second point spools into the same spool: it must still be open (it once was closed
    // by the first point's report, and every later point lost its output.wav).
    let fx = crate::duplex_support::duplex(&crate::duplex_support::Opts {
        samples: 3,
        max_concurrency: 1,
        ..Default::default()
    });
    let sc = fx.scenario();
    let sweep = rtload::scenario::Sweep {
        param: SweepParam::MaxConcurrency,
        values: vec![1.0, 2.0],
        headline: None,
        samples_per_point: Some(3),
    };
    let out = fx.dir.path().join("sweep");
    let r = rtload::run::run_sweep(&sc, &sweep, &out, true).unwrap();
    assert_eq!(r.points.len(), 2);
    for p in ["max_concurrency_1.json", "max_concurrency_2.json"] {
        let text = std::fs::read_to_string(out.join(p)).unwrap();
        assert!(!text.contains("spool"), "{p} names the spool: {text}");
        let doc = rtload::report::parse_result(&text).unwrap();
        assert_eq!(doc["completed"], 3, "{p}");
    }
    let wavs = crate::cli::walk(&crate::duplex_support::out_dir(&fx))
        .into_iter()
        .filter(|f| f.file_name().is_some_and(|n| n == "output.wav"))
        .count();
    assert!(wavs >= 3, "every case has its output.wav: {wavs}");
    drop(sc);
}

/// A real `rtload run --sweep` against the embedded server: a line on stderr as each
/// point starts and one with its verdict as it ends (before the results are written),
/// each failing point naming its broken threshold and the measured value, a column for
/// the judged metric that is no headline metric, and one number per figure: the terminal
/// table, `sweep.json` and `sweep.html` agree cell for cell.
#[test]
fn a_sweep_run_reports_each_point_live_and_names_what_broke() {
    // An interval median under 0.5 ms cannot hold at 5 ms intervals: every point fails.
    let fx = crate::support::video(
        4,
        1,
        "[thresholds]\n\"chunk_interval_ms.p50\" = \"< 0.5\"\n\"chunk_interval_ms.max\" = \"< 100000\"\n\"good\" = \">= 0\"\n",
    );
    let dir = fx.dir.path().join("sweep");
    let out = crate::support::rtload()
        .arg("run")
        .arg(&fx.path)
        .args(["--sweep", "max_concurrency=1,2", "--sweep-dir"])
        .arg(&dir)
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    );
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("sweep.json")).unwrap()).unwrap();
    let points = doc["sweep"]["points"].as_array().unwrap();
    // The measured values as sweep.json holds them, formatted as the threshold lines do.
    let why: Vec<String> = points
        .iter()
        .map(|p| {
            let t = &p["thresholds"][0];
            assert_eq!(t["metric"], "chunk_interval_ms.p50");
            assert_eq!(t["passed"], false);
            assert_eq!(t["measured"], p["metrics"]["chunk_interval_ms.p50"]);
            format!(
                "chunk_interval_ms.p50 = {:.3} (< 0.5)",
                t["measured"].as_f64().unwrap()
            )
        })
        .collect();
    let progress: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("point ") || l.starts_with("wrote "))
        .collect();
    // A point the busy machine made generator-bound also says so (`FAIL+gen-bound`, and
    // the reason after what broke).
    let (v1, v2) = (
        "point 1 of 2: max_concurrency=1",
        "point 2 of 2: max_concurrency=2",
    );
    assert_eq!(progress[0], format!("{v1} …"), "{stderr}");
    assert!(progress[1].starts_with(&format!("{v1} FAIL")), "{stderr}");
    assert!(progress[1].contains(&format!(": {}", why[0])), "{stderr}");
    assert_eq!(progress[2], format!("{v2} …"), "{stderr}");
    assert!(progress[3].starts_with(&format!("{v2} FAIL")), "{stderr}");
    assert!(progress[3].contains(&format!(": {}", why[1])), "{stderr}");
    assert!(progress[4].starts_with("wrote "), "{stderr}");
    for (v, w) in ["1", "2"].iter().zip(&why) {
        assert!(
            stdout.contains(&format!("\nFAIL max_concurrency={v}: {w}\n")),
            "{stdout}"
        );
    }
    assert!(stdout.contains("capacity: none of the points held its thresholds\n"));
    assert!(doc["sweep"]["capacity"].is_null());
    let html = std::fs::read_to_string(dir.join("sweep.html")).unwrap();
    assert!(html.contains(&why[1].replace('<', "&lt;")), "{html}");
    let terminal = terminal_rows(&stdout);
    assert!(
        terminal[0].contains(&"chunk_interval_ms.max".to_string()),
        "{stdout}"
    );
    assert_eq!(terminal, html_rows(&html), "{stdout}");
    // The table's judged column shows the very value sweep.json holds.
    let col = terminal[0]
        .iter()
        .position(|c| c == "chunk_interval_ms.max")
        .unwrap();
    for (row, p) in terminal[1..].iter().zip(points) {
        let json = p["metrics"]["chunk_interval_ms.max"].as_f64().unwrap();
        let shown: f64 = row[col].parse().unwrap();
        assert!((shown - json).abs() <= 0.005 + 1e-9, "{shown} vs {json}");
    }
    // An outcome class judged by a threshold is a column too, from the run's own counts
    // (no `[slo]`: every completed session is good), the value its threshold judged.
    let good = terminal[0]
        .iter()
        .position(|c| c == "good")
        .expect("a good column");
    for (row, p) in terminal[1..].iter().zip(points) {
        let n = p["metrics"]["good"].as_f64().unwrap();
        assert_eq!(Some(n), p["metrics"]["completed"].as_f64(), "{p}");
        assert_eq!(p["thresholds"][2]["measured"].as_f64(), Some(n), "{p}");
        assert_eq!(row[good].parse::<f64>().unwrap(), n, "{row:?}");
    }
}

/// The sweep table's rows as the terminal prints them (header first, up to the first line
/// under the table).
fn terminal_rows(stdout: &str) -> Vec<Vec<String>> {
    stdout
        .lines()
        .skip_while(|l| !l.starts_with("max_concurrency "))
        .take_while(|l| !l.starts_with("FAIL ") && !l.starts_with("capacity:"))
        .map(|l| l.split_whitespace().map(str::to_string).collect())
        .collect()
}

/// The cells of the HTML page's sweep table, header first.
fn html_rows(html: &str) -> Vec<Vec<String>> {
    let start = html.find("<caption>Sweep points</caption>").expect("table");
    let table = &html[start..start + html[start..].find("</table>").unwrap()];
    table
        .split("<tr")
        .skip(1)
        .map(|row| {
            row.split(['<', '>'])
                .collect::<Vec<_>>()
                .windows(2)
                .filter(|w| w[0].starts_with("td") || w[0].starts_with("th"))
                .map(|w| w[1].to_string())
                .collect()
        })
        .collect()
}

/// Without `[thresholds]` a sweep claims no capacity however well its points went, and
/// `--quiet` keeps the per-point lines off stderr.
#[test]
fn a_sweep_without_thresholds_claims_no_capacity_and_quiet_keeps_stderr_still() {
    let fx = crate::support::video(4, 1, "");
    let dir = fx.dir.path().join("sweep");
    let out = crate::support::rtload()
        .arg("run")
        .arg(&fx.path)
        .args(["--quiet", "--sweep", "max_concurrency=1,2", "--sweep-dir"])
        .arg(&dir)
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    );
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    assert!(
        stdout.contains("capacity: no threshold set: no capacity"),
        "{stdout}"
    );
    assert!(!stderr.contains("point 1 of 2"), "{stderr}");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("sweep.json")).unwrap()).unwrap();
    assert!(doc["sweep"]["capacity"].is_null());
    assert!(
        doc["sweep"]["capacity_reason"]
            .as_str()
            .unwrap()
            .starts_with("no threshold set: no capacity")
    );
    let html = std::fs::read_to_string(dir.join("sweep.html")).unwrap();
    assert!(html.contains("capacity: no threshold set: no capacity"));
}

/// A request-rate sweep shows, beside each offered rate, the mean sessions in flight it
/// produced (Little's L): the same figure in the point's own result, in `sweep.json` and
/// in the terminal table's `mean sessions` column.
#[test]
fn a_rate_sweep_shows_the_mean_sessions_each_rate_produced() {
    let fx = crate::support::video(
        6,
        8,
        "chunk_interval_ms = 40\n[sweep]\nparam = \"request_rate\"\nvalues = [4, 40]\n",
    );
    let sc = fx.scenario();
    let sweep = sc.sweep().cloned().expect("[sweep] parsed");
    let out = fx.dir.path().join("sweep");
    let r = rtload::run::run_sweep(&sc, &sweep, &out, true).unwrap();
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("sweep.json")).unwrap()).unwrap();
    let table = rtload::report::sweep_table(&sweep, &r.points, None, &[]);
    let rows: Vec<Vec<&str>> = table
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(
        rows[0][..3],
        ["request_rate", "achieved", "mean"],
        "{table}"
    );
    let mut means = Vec::new();
    for (k, p) in r.points.iter().enumerate() {
        let mean = p.mean_sessions.expect("a mean of the point's sessions");
        // Each point's own result, written first and in value order.
        let own = rtload::report::read_result(&r.files[k]).unwrap();
        assert_eq!(
            own["rtload"]["achieved"]["mean_sessions"].as_f64(),
            Some(mean)
        );
        assert_eq!(
            doc["sweep"]["points"][k]["mean_sessions"].as_f64(),
            Some(mean)
        );
        let cell: f64 = rows[k + 1][2].parse().unwrap();
        assert!((cell - mean).abs() < 0.01, "{cell} vs {mean}\n{table}");
        means.push(mean);
    }
    // Ten times the offered rate keeps more sessions in flight at once.
    assert!(means[1] > means[0], "{means:?}");
}
