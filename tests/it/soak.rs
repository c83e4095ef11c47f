//! Soak end to end, as a user runs it: `[load] duration_s` holds OmniInteract sessions
//! (turns until one ends at or after it) against the embedded server, and the run's
//! series — RSS and CPU per interval, metrics by session age and by turn — are in the
//! JSON result and in the terminal block, the same figures from the same values.

use serde_json::Value;

use crate::duplex_support::{Opts, duplex, require_ffmpeg};

const HOLD_S: f64 = 3.0;

fn num(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("a number: {v}"))
}

#[test]
fn held_sessions_speak_until_their_duration_and_the_series_agree_everywhere() {
    require_ffmpeg();
    let fx = duplex(&Opts {
        duration_ms: 1000,
        samples: 2,
        max_concurrency: 2,
        workload: "turn_gap_ms = 200\n",
        server: "turns = \"commit\"\nfinal_decision = \"respond\"\n",
        load: "duration_s = 3\nseries_interval_s = 1\n",
        ..Opts::default()
    });
    let check = crate::support::rtload()
        .arg("check")
        .arg(&fx.path)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&check.stdout);
    assert!(said.contains("each session held 3 s"), "{said}");
    let json = fx.dir.path().join("r.json");
    let out = crate::support::rtload()
        .arg("run")
        .arg(&fx.path)
        .arg("--output-json")
        .arg(&json)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc = rtload::report::read_result(&json).unwrap();
    let rt = &doc["rtload"];

    // Each session spoke turns until one ended at or after 3 s of session age.
    for row in rt["samples"].as_array().unwrap() {
        let turns = row["turns"].as_array().unwrap();
        let ends: Vec<f64> = turns.iter().map(|t| num(&t["speech_end_s"])).collect();
        assert!(ends.len() >= 2, "{row}");
        assert!(*ends.last().unwrap() >= HOLD_S, "{ends:?}");
        assert!(
            ends[..ends.len() - 1].iter().all(|e| *e < HOLD_S),
            "{ends:?}"
        );
    }

    let soak = &rt["soak"];
    assert_eq!(soak["interval_s"], 1.0);
    let ages = soak["session_age"].as_array().unwrap();
    assert!(ages.len() >= 4, "sessions of at least 3 s: {soak}");
    assert!(
        ages.iter()
            .all(|a| a["sessions"] == 2 || num(&a["from_s"]) >= HOLD_S)
    );
    let res = soak["resources"].as_array().unwrap();
    assert!(res.len() >= 3, "{soak}");
    assert!(
        res.iter()
            .all(|r| r["rss_mib"].as_f64().is_some_and(|m| m > 0.0))
    );

    // One source: every stamped value is in exactly one age slice and one turn.
    for metric in [
        "response_ttfp_ms",
        "turn_first_audio_ms",
        "audio_stall_count",
    ] {
        let recorded = rt["distributions"][metric].as_array().unwrap().len();
        let count = |slices: &Value| -> u64 {
            (slices.as_array().unwrap().iter())
                .filter_map(|s| s["metrics"][metric]["count"].as_u64())
                .sum()
        };
        assert!(recorded > 2, "{metric}");
        assert_eq!(count(&soak["session_age"]) as usize, recorded, "{metric}");
        assert_eq!(count(&soak["turns"]) as usize, recorded, "{metric}");
    }

    // The terminal block shows the JSON's figures.
    let line = |head: &str| -> Vec<String> {
        (text.lines().find(|l| l.starts_with(head)))
            .unwrap_or_else(|| panic!("no {head} in\n{text}"))
            .split_whitespace()
            .skip(head.split_whitespace().count())
            .map(String::from)
            .collect()
    };
    let shown = line("response_ttfp_ms p99:");
    for (k, cell) in shown.iter().take(5).enumerate() {
        let p99 = ages[k]["metrics"]["response_ttfp_ms"]["p99"].as_f64();
        assert_eq!(
            *cell,
            p99.map_or("-".into(), |v| format!("{v:.3}")),
            "slice {k}"
        );
    }
    let open: Vec<String> = ages
        .iter()
        .take(5)
        .map(|a| a["sessions"].to_string())
        .collect();
    assert_eq!(line("Sessions open:")[..open.len()], open[..]);
    let rss: Vec<String> = (res.iter().take(5))
        .map(|r| format!("{:.1}", num(&r["rss_mib"])))
        .collect();
    assert_eq!(line("RSS at the end (MiB):")[..rss.len()], rss[..]);

    // The HTML report draws the same series (its dots are checked against the JSON in
    // the chart's unit tests).
    let html = fx.dir.path().join("r.html");
    let out = crate::support::rtload()
        .args(["report", "--html"])
        .arg(&html)
        .arg(&json)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let page = std::fs::read_to_string(&html).unwrap();
    for chart in ["soak-rss", "soak-cpu", "soak-age-response_ttfp_ms"] {
        assert!(
            page.contains(&format!("data-chart=\"{chart}\"")),
            "no {chart}"
        );
    }
}
