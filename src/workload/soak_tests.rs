//! The soak on hand-made values: slices by session age and by turn, resource rows from
//! interval readings, and the terminal block reading the same slices as the JSON.

use super::*;
use crate::util::usage::{IntervalUsage, UsageSnapshot};
use crate::workload::results::Stamp;

fn stamp(age_s: f64, turn: u32) -> Stamp {
    Stamp {
        age_s,
        turn: Some(turn),
    }
}

fn recorded() -> Recorded {
    let mut rec = Recorded::default();
    // Two sessions; a turn every ~4 s; the second minute's replies are slower.
    for (age, turn, v) in [
        (1.0, 0, 100.0),
        (5.0, 1, 110.0),
        (61.0, 15, 300.0),
        (65.0, 16, 320.0),
    ] {
        rec.push_stamped("ttfp_ms", 70.0, stamp(age, turn), v);
        rec.push_stamped("ttfp_ms", 70.0, stamp(age + 0.5, turn), v + 1.0);
    }
    rec.push("unstamped_ms", 70.0, 5.0);
    rec
}

#[test]
fn values_fall_in_the_slice_of_their_session_age_and_their_turn() {
    let spans = [(70.0, false), (30.0, true), (130.0, false)];
    let soak = Soak::of(60.0, &PhaseUsage::default(), &recorded(), &spans, |_| 0);
    let ages: Vec<(f64, usize, usize)> = (soak.by_age.iter())
        .map(|s| (s.from_s, s.sessions, s.failed))
        .collect();
    // Every session is open at age 0; one failed at 30 s; the oldest reached 130 s.
    assert_eq!(ages, [(0.0, 3, 1), (60.0, 2, 0), (120.0, 1, 0)]);
    let first = &soak.by_age[0].metrics["ttfp_ms"];
    assert_eq!((first.count, first.max), (4, 111.0));
    assert_eq!(soak.by_age[1].metrics["ttfp_ms"].min, 300.0);
    assert!(soak.by_age[2].metrics.is_empty(), "no value, no statistics");
    assert!(!soak.by_age[0].metrics.contains_key("unstamped_ms"));
    let turns: Vec<u64> = soak.by_turn.iter().map(|s| s.from_s as u64).collect();
    assert_eq!(turns, [0, 1, 15, 16]);
    assert_eq!(soak.by_turn[2].metrics["ttfp_ms"].mean, 300.5);
}

#[test]
fn resource_rows_take_each_intervals_cpu_and_rss() {
    let mib = 1 << 20;
    let usage = PhaseUsage {
        start: UsageSnapshot {
            cpu_s: Some(10.0),
            ..UsageSnapshot::default()
        },
        series: vec![
            IntervalUsage {
                t_s: 60.0,
                cpu_s: Some(16.0),
                rss_bytes: Some(100 * mib),
                rss_max_bytes: Some(120 * mib),
            },
            IntervalUsage {
                t_s: 90.0,
                cpu_s: Some(19.0),
                rss_bytes: None,
                rss_max_bytes: Some(101 * mib),
            },
        ],
        ..PhaseUsage::default()
    };
    let soak = Soak::of(60.0, &usage, &Recorded::default(), &[], |t| t as usize);
    let r = &soak.resources;
    assert_eq!((r[0].from_s, r[0].to_s, r[0].cpu_s), (0.0, 60.0, Some(6.0)));
    assert_eq!((r[0].rss_mib, r[0].rss_max_mib), (Some(100.0), Some(120.0)));
    assert_eq!(core_share(&r[1]), Some(0.1), "3 CPU s over 30 s");
    assert_eq!(
        (r[1].rss_mib, r[1].sessions),
        (None, 90),
        "missing, never zero"
    );
    let j = soak.to_json();
    assert_eq!(j["resources"][1]["rss_mib"], serde_json::Value::Null);
    assert_eq!(j["resources"][0]["core_share"], 0.1);
}

#[test]
fn the_terminal_block_shows_the_json_figures() {
    let spans = [(70.0, false), (130.0, false)];
    let soak = Soak::of(60.0, &PhaseUsage::default(), &recorded(), &spans, |_| 0);
    let text = soak.text();
    let j = soak.to_json();
    let line = |head: &str| {
        text.lines()
            .find(|l| l.starts_with(head))
            .unwrap_or_else(|| panic!("no {head} in\n{text}"))
            .to_string()
    };
    let p99 = |k: usize| j["session_age"][k]["metrics"]["ttfp_ms"]["p99"].as_f64();
    let cells: Vec<String> = line("ttfp_ms p99:")
        .split_whitespace()
        .skip(2)
        .map(String::from)
        .collect();
    assert_eq!(cells[0], format!("{:.3}", p99(0).unwrap()));
    assert_eq!(cells[1], format!("{:.3}", p99(1).unwrap()));
    assert_eq!(cells[2], "-");
    assert!(
        line("Sessions open:").ends_with(" 2         2         1"),
        "{text}"
    );
}

#[test]
fn a_long_series_shows_both_ends() {
    let spans: Vec<(f64, bool)> = vec![(60.0 * 20.0, false)];
    let soak = Soak::of(
        60.0,
        &PhaseUsage::default(),
        &Recorded::default(),
        &spans,
        |_| 0,
    );
    assert_eq!(soak.by_age.len(), 21);
    let text = soak.text();
    let ages = text.lines().find(|l| l.starts_with("Session age")).unwrap();
    let cells: Vec<&str> = ages.split_whitespace().skip(5).collect();
    assert_eq!(
        cells,
        [
            "0", "60", "120", "180", "240", "…", "960", "1020", "1080", "1140", "1200"
        ]
    );
    assert_eq!(soak.to_json()["session_age"].as_array().unwrap().len(), 21);
}
