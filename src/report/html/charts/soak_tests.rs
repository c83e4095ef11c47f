//! The soak figures drawn from a `rtload.soak` block built by the one `Soak` type: every
//! dot is a value of the JSON, and a run within one interval draws nothing.

use serde_json::{Value, json};

use super::super::super::tests::dots;
use super::soak;
use crate::util::usage::{IntervalUsage, PhaseUsage};
use crate::workload::results::{Recorded, Stamp};
use crate::workload::soak::Soak;

fn doc() -> Value {
    let mut rec = Recorded::default();
    for (age, v) in [(5.0, 100.0), (15.0, 120.0), (16.0, 180.0), (25.0, 130.0)] {
        let stamp = Stamp {
            age_s: age,
            turn: None,
        };
        rec.push_stamped("response_ttfp_ms", 30.0, stamp, v);
    }
    let mib = 1 << 20;
    let reading = |t_s: f64, cpu: f64, rss: u64| IntervalUsage {
        t_s,
        cpu_s: Some(cpu),
        rss_bytes: Some(rss * mib),
        rss_max_bytes: Some((rss + 2) * mib),
    };
    let usage = PhaseUsage {
        start: crate::util::usage::UsageSnapshot {
            cpu_s: Some(1.0),
            ..Default::default()
        },
        series: vec![
            reading(10.0, 2.0, 40),
            reading(20.0, 2.5, 41),
            reading(30.0, 3.5, 41),
        ],
        ..PhaseUsage::default()
    };
    let soak = Soak::of(10.0, &usage, &rec, &[(30.0, false)], |_| 1);
    json!({"rtload": {"soak": soak.to_json()}})
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 5e-4
}

#[test]
fn every_dot_is_a_value_of_the_soak_block() {
    let doc = doc();
    let html = soak(&doc);
    let soak_json = &doc["rtload"]["soak"];
    let res = soak_json["resources"].as_array().unwrap();
    let rss = dots(&html, "RSS at the interval&#x27;s end");
    let rss = if rss.is_empty() {
        dots(&html, "RSS at the interval&#39;s end")
    } else {
        rss
    };
    let want: Vec<(f64, f64)> = (res.iter())
        .map(|r| (r["to_s"].as_f64().unwrap(), r["rss_mib"].as_f64().unwrap()))
        .collect();
    assert_eq!(rss, want, "{html}");
    let cpu = dots(&html, "CPU % of a core");
    assert_eq!(cpu.len(), 3);
    for (d, r) in cpu.iter().zip(res) {
        assert!(
            close(d.1, r["core_share"].as_f64().unwrap() * 100.0),
            "{d:?} {r}"
        );
    }
    let p99 = dots(&html, "response_ttfp_ms p99");
    let ages = soak_json["session_age"].as_array().unwrap();
    let want: Vec<(f64, f64)> = (ages.iter())
        .filter_map(|a| {
            let p = a["metrics"]["response_ttfp_ms"]["p99"].as_f64()?;
            Some((a["from_s"].as_f64().unwrap(), p))
        })
        .collect();
    assert_eq!(want.len(), 3);
    assert_eq!(p99.len(), want.len());
    for (d, w) in p99.iter().zip(&want) {
        assert!(close(d.0, w.0) && close(d.1, w.1), "{d:?} {w:?}");
    }
}

#[test]
fn a_run_within_one_interval_draws_nothing() {
    let one = json!({"rtload": {"soak": {"interval_s": 60.0, "resources": [{"to_s": 5.0}],
        "session_age": [{"from_s": 0.0, "metrics": {}}], "turns": []}}});
    assert_eq!(soak(&one), "");
    assert_eq!(soak(&json!({"rtload": {}})), "");
}
