use super::*;

#[test]
fn generator_bound_names_each_reason_and_stays_silent_otherwise() {
    assert_eq!(generator_bound(Some(4.9), Some(0.5), 5.0), None);
    assert_eq!(generator_bound(None, None, 5.0), None);
    let late = generator_bound(Some(7.26), Some(0.5), 5.0).unwrap();
    assert_eq!(
        late,
        "results may be generator-bound: send lateness p99 7.3 ms > 5 ms \
         (spread the load over more cores or machines)"
    );
    let both = generator_bound(Some(12.0), Some(0.95), 2.5).unwrap();
    assert!(both.contains("p99 12.0 ms > 2.5 ms; the generator used 95% of a core"));
    let busy = generator_bound(None, Some(0.9), 5.0).unwrap();
    assert!(busy.contains("90% of a core") && !busy.contains("lateness"));
}

#[test]
fn block_counts_generator_work_and_leaves_missing_values_absent() {
    let run: RunRecord = RunRecord {
        samples: Vec::new(),
        duration_s: 0.0,
        endpoint: String::new(),
        load: None,
        interrupted: false,
        measured_indices: None,
    };
    let b = generator_block(&run, &BTreeMap::new(), &PhaseUsage::default());
    assert!(b["resources"]["cpu_s"].is_null());
    assert!(b["resources"]["rss_per_session_kib"].is_null());
    assert!(b["resources"]["cpu_us_per_session_s"].is_null());
    let mut doc = json!({"rtload": {"metrics": {}}});
    merge_into(&mut doc, b);
    assert!(doc["rtload"]["metrics"].is_object() && doc["rtload"]["resources"].is_object());
}

#[test]
fn peak_in_flight_counts_overlaps_not_touches() {
    assert_eq!(peak_in_flight([]), 0);
    assert_eq!(peak_in_flight([(0.0, 1.0), (1.0, 2.0)]), 1);
    assert_eq!(peak_in_flight([(0.0, 3.0), (1.0, 2.0), (1.5, 4.0)]), 3);
    assert_eq!(peak_in_flight([(0.0, 1.0), (0.0, 1.0), (2.0, 3.0)]), 2);
}

#[test]
fn verdict_line_words() {
    let mut k = BTreeMap::new();
    assert_eq!(
        verdict_line(true, false, 3, &k, 1, (0, 0)),
        "verdict: passed — 3 completed, 0 failed, 1 warm-up"
    );
    k.insert("timeout".to_string(), 1);
    assert_eq!(
        verdict_line(false, false, 3, &k, 0, (1, 2)),
        "verdict: FAILED — 2 completed, 1 failed (timeout: 1), 0 warm-up; 1 of 2 thresholds failed"
    );
    assert!(verdict_line(false, true, 3, &k, 0, (0, 0)).starts_with("verdict: INTERRUPTED"));
}

#[test]
fn mean_in_flight_is_summed_lengths_over_the_window() {
    // Two sessions of 4 s and one of 2 s over the 8 s from the first start to the last
    // end: 10 / 8 sessions in flight on average (the peak is 2).
    let spans = [(0.0, 4.0), (2.0, 6.0), (6.0, 8.0)];
    assert_eq!(super::mean_in_flight(spans), Some(1.25));
    assert_eq!(super::peak_in_flight(spans), 2);
    assert_eq!(super::mean_in_flight([]), None, "missing, never zero");
    assert_eq!(super::mean_in_flight([(1.0, 1.0)]), None);
}

#[test]
fn the_stats_table_prints_what_the_scripted_and_replay_tables_printed() {
    use crate::util::stats::Summary;
    let sum = Summary::of(&[1.0, 2.0, 4.0], &[50.0, 90.0, 99.0]);
    let rows = [
        ("ttft_ms (ms)".to_string(), sum.clone()),
        ("none".to_string(), None),
    ];
    let old = |name: &str, s: &Option<Summary>| {
        let cell = |f: &dyn Fn(&Summary) -> Option<f64>| {
            s.as_ref()
                .and_then(f)
                .map_or("-".to_string(), |x| format!("{x:.2}"))
        };
        format!(
            "{:<24} {:>6} {:>10} {:>10} {:>10} {:>10} {:>10}\n",
            name,
            s.as_ref().map_or(0, |s| s.count),
            cell(&|s| Some(s.mean)),
            cell(&|s| s.percentile(50.0)),
            cell(&|s| s.percentile(90.0)),
            cell(&|s| s.percentile(99.0)),
            cell(&|s| Some(s.max)),
        )
    };
    let head = format!(
        "{:<24} {:>6} {:>10} {:>10} {:>10} {:>10} {:>10}\n",
        "metric", "n", "mean", "p50", "p90", "p99", "max"
    );
    let want = head + &old("ttft_ms (ms)", &sum) + &old("none", &None);
    assert_eq!(stats_table(24, "metric", &[50.0, 90.0, 99.0], rows), want);
    let replay = stats_table(48, "pair (ms)", &[50.0, 99.0], []);
    let head = format!(
        "{:<48} {:>6} {:>10} {:>10} {:>10} {:>10}\n",
        "pair (ms)", "n", "mean", "p50", "p99", "max"
    );
    assert_eq!(replay, head);
}
