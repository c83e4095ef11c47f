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
