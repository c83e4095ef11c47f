//! Worked vectors of spec §5.3.2, §5.3.5 and §5.3.6, plus error and JSON-shape checks.

use super::*;

const TOL: f64 = 1e-6;

/// Records from a gap list: the first gap is the TTFC, arrivals are cumulative sums,
/// frames are 9 then 12s, inter-arrival is the gap (chunk 0: the TTFC), 1000 bytes each.
fn records(gaps: &[f64]) -> Vec<ChunkRecord> {
    let mut t = 0.0;
    gaps.iter()
        .enumerate()
        .map(|(i, gap)| {
            t += gap;
            ChunkRecord {
                index: i as u64,
                arrival_s: t,
                inter_arrival_s: *gap,
                byte_length: 1000,
                num_frames: if i == 0 { 9 } else { 12 },
            }
        })
        .collect()
}

fn gaps(head: &[f64], repeat: f64, times: usize) -> Vec<f64> {
    let mut v = head.to_vec();
    v.extend(std::iter::repeat_n(repeat, times));
    v
}

fn cfg(fps: f64, warmup: u32) -> MetricsConfig {
    MetricsConfig {
        fps,
        warmup_chunks: warmup,
        slo_ms: None,
        buffer_chunks: 1,
    }
}

#[track_caller]
fn close(got: f64, want: f64) {
    assert!((got - want).abs() < TOL, "got {got}, want {want}");
}

fn steady(m: &SessionMetrics) -> &IntervalSummary {
    m.interval_steady.as_ref().expect("steady block")
}

fn all(m: &SessionMetrics) -> &IntervalSummary {
    m.interval_all.as_ref().expect("all block")
}

#[test]
fn summary_vector_and_empty() {
    let s = interval_summary(&[0.010, 0.020, 0.030, 0.040]).unwrap();
    assert_eq!(s.count, 4.0);
    close(s.mean_ms, 25.0);
    close(s.median_ms, 25.0);
    close(s.std_ms, 12.909944);
    close(s.min_ms, 10.0);
    close(s.p90_ms, 37.0);
    close(s.p95_ms, 38.5);
    close(s.p99_ms, 39.7);
    close(s.max_ms, 40.0);
    let one = interval_summary(&[0.005]).unwrap();
    close(one.p99_ms, 5.0);
    assert_eq!(one.std_ms, 0.0);
    assert_eq!(interval_summary(&[]), None);
}

#[test]
fn vector_one_playback_and_warmup_zero() {
    let recs = records(&[1.0, 0.5, 0.5, 2.0, 0.5]);
    let arrivals: Vec<f64> = recs.iter().map(|r| r.arrival_s).collect();
    assert_eq!(arrivals, vec![1.0, 1.5, 2.0, 4.0, 4.5]);
    let p = simulate_playback(&recs, 16.0, 1).unwrap();
    assert_eq!(p.underrun_count, 1);
    assert_eq!(p.first_underrun_chunk, Some(3));
    close(p.total_stall_ms, 937.5);
    close(p.playback_span_s, 4.5);
    close(p.stall_ratio, 0.208333);
    assert_eq!(p.buffer_chunks, 1);

    let m = compute_metrics(&recs, &cfg(16.0, 0), None, None).unwrap();
    let s = steady(&m);
    assert_eq!(s.count, 3.0);
    assert_eq!(m.steady_chunks, 3);
    close(s.mean_ms, 1000.0);
    close(s.median_ms, 500.0);
    close(s.std_ms, 866.025404);
    close(m.slo_attainment.unwrap(), 2.0 / 3.0);
    assert_eq!(m.slo_violations, Some(1));
    close(m.steady_video_rtf.unwrap(), 4.0 / 3.0);
    assert_eq!(m.total_frames, 57);
    close(m.video_seconds, 3.5625);
    close(m.wall_seconds, 4.5);
    close(m.video_rtf, 1.263158);
    let a = all(&m);
    assert_eq!(a.count, 4.0);
    close(a.mean_ms, 875.0);
    close(a.p90_ms, 1550.0);
    close(a.p99_ms, 1955.0);
    assert_eq!(m.playback, p);
    assert_eq!(m.ttfc_ms, None);
}

#[test]
fn vector_two_buffer_depth() {
    let recs = records(&[1.0, 0.5, 0.5, 1.4, 0.2, 0.2]);
    let p1 = simulate_playback(&recs, 16.0, 1).unwrap();
    assert_eq!(p1.underrun_count, 1);
    close(p1.total_stall_ms, 337.5);
    let p3 = simulate_playback(&recs, 16.0, 3).unwrap();
    assert_eq!(p3.underrun_count, 0);
    assert_eq!(p3.first_underrun_chunk, None);
    close(p3.total_stall_ms, 0.0);
    // Start = arrival of chunk 2 = 2.0; end = 2.0 + 69/16.
    close(p3.playback_span_s, 69.0 / 16.0);
}

#[test]
fn vector_three_warmup_one() {
    let recs = records(&[1.0, 0.5, 0.6, 0.7, 0.8]);
    let m = compute_metrics(&recs, &cfg(16.0, 1), None, None).unwrap();
    let s = steady(&m);
    assert_eq!(s.count, 3.0);
    close(s.mean_ms, 600.0);
    close(s.std_ms, 100.0);
    close(s.p90_ms, 680.0);
    close(s.p95_ms, 690.0);
    close(s.p99_ms, 698.0);
    close(m.steady_video_rtf.unwrap(), 0.8);
    close(m.steady_video_rtfx.unwrap(), 1.25);
    close(m.slo_attainment.unwrap(), 1.0);
    assert_eq!(m.slo_violations, Some(0));
    close(m.video_rtf, 3.6 / 3.5625);
    close(m.video_rtf, 1.010526);
    let a = all(&m);
    close(a.mean_ms, 650.0);
    close(a.std_ms, 129.099445);
    close(a.p90_ms, 770.0);
    assert_eq!(m.playback.underrun_count, 0);
}

#[test]
fn vector_four_fps_basis() {
    let recs = records(&gaps(&[1.0], 1.357, 15));
    let m12 = compute_metrics(&recs, &cfg(12.0, 6), None, None).unwrap();
    assert_eq!(m12.steady_chunks, 9);
    assert_eq!(steady(&m12).count, 9.0);
    close(m12.chunk_deadline_ms, 1000.0);
    close(m12.steady_video_rtf.unwrap(), 1.357);
    close(m12.slo_attainment.unwrap(), 0.0);
    assert_eq!(m12.slo_violations, Some(9));
    assert_eq!(m12.total_frames, 189);
    close(m12.video_seconds, 15.75);
    close(m12.wall_seconds, 21.355);
    close(m12.video_rtf, 1.355873);

    let m16 = compute_metrics(&recs, &cfg(16.0, 6), None, None).unwrap();
    close(m16.chunk_deadline_ms, 750.0);
    close(m16.video_rtf, 1.807831);
    close(m16.video_rtf / m12.video_rtf, 16.0 / 12.0);
}

#[test]
fn vector_five_session_wall() {
    let m = compute_metrics(&records(&[1.0, 2.5]), &cfg(12.0, 6), None, Some(3.5)).unwrap();
    close(m.video_seconds, 1.75);
    close(m.wall_seconds, 3.5);
    close(m.video_rtf, 2.0);
    close(m.video_rtfx, 0.5);
    close(m.frames_per_second, 6.0);
    let fast = compute_metrics(&records(&[0.4, 0.475]), &cfg(12.0, 6), None, Some(0.875));
    close(fast.unwrap().video_rtf, 0.5);
}

#[test]
fn vector_six_eight_chunks() {
    let recs = records(&gaps(&[1.0], 0.5, 7));
    let m = compute_metrics(&recs, &cfg(16.0, 6), Some(1.0), Some(5.8125)).unwrap();
    assert_eq!(m.total_frames, 93);
    close(m.video_seconds, 5.8125);
    close(m.video_rtf, 1.0);
    close(m.chunk_deadline_ms, 750.0);
    close(m.ttfc_ms.unwrap(), 1000.0);
}

#[test]
fn vector_seven_terminal_excluded() {
    let mut g = gaps(&[1.0], 0.1, 5);
    g.extend([1.2, 0.8, 0.1]);
    let m = compute_metrics(&records(&g), &cfg(12.0, 6), None, None).unwrap();
    assert_eq!(m.steady_chunks, 2);
    close(steady(&m).mean_ms, 1000.0);
    close(m.steady_video_rtf.unwrap(), 1.0);
    close(m.slo_attainment.unwrap(), 0.5);
    assert_eq!(all(&m).count, 8.0);
    assert_eq!(m.total_frames, 105);
    close(m.wall_seconds, 3.6);
}

#[test]
fn vector_eight_steady_not_reached() {
    let m = compute_metrics(&records(&[1.0; 7]), &cfg(16.0, 6), None, None).unwrap();
    assert!(!m.steady_state_reached);
    assert_eq!(m.steady_chunks, 0);
    assert_eq!(m.interval_steady, None);
    let json = serde_json::to_value(&m).unwrap();
    let obj = json.as_object().unwrap();
    for key in [
        "steady_video_rtf",
        "steady_video_rtfx",
        "slo_attainment",
        "slo_violations",
        "ttfc_ms",
    ] {
        assert!(!obj.contains_key(key), "{key} must be absent");
    }
    assert_eq!(json["interval_steady"], serde_json::json!({}));
    assert_eq!(json["interval_all"]["count"], serde_json::json!(6.0));
}

#[test]
fn aggregate_single_adds_sessions() {
    let m = compute_metrics(&records(&[1.0, 0.5, 0.6]), &cfg(16.0, 1), Some(1.0), None).unwrap();
    let agg = aggregate(std::slice::from_ref(&m)).unwrap();
    let json = serde_json::to_value(&agg).unwrap();
    let mut expected = serde_json::to_value(&m).unwrap();
    expected["sessions"] = serde_json::json!(1);
    assert_eq!(json, expected);
    let back: AggregateMetrics = serde_json::from_value(json).unwrap();
    assert_eq!(back, agg);
}

fn with_steady(intervals: &[f64], slo_ms: Option<f64>) -> SessionMetrics {
    // Warm-up 1 and a terminal chunk: steady intervals are exactly `intervals`.
    let mut g = vec![1.0];
    g.extend_from_slice(intervals);
    g.push(0.1);
    let c = MetricsConfig {
        slo_ms,
        ..cfg(16.0, 1)
    };
    compute_metrics(&records(&g), &c, Some(1.0), None).unwrap()
}

#[test]
fn aggregate_spread_vector() {
    let a = with_steady(&[0.6; 3], None);
    let b = with_steady(&[0.9; 3], None);
    let AggregateMetrics::Multi(m) = aggregate(&[a, b]).unwrap() else {
        panic!("expected multi");
    };
    close(m.steady_interval_ms_mean.unwrap(), 750.0);
    close(m.steady_interval_ms_spread.unwrap(), 300.0);
    assert_eq!(m.sessions, 2);
}

#[test]
fn aggregate_pooled_vector() {
    let a = with_steady(&[0.5], Some(700.0));
    let b = with_steady(&[0.9; 3], Some(700.0));
    let agg = aggregate(&[a.clone(), b.clone()]).unwrap();
    let AggregateMetrics::Multi(m) = &agg else {
        panic!("expected multi");
    };
    close(m.steady_interval_ms_mean.unwrap(), 800.0);
    close(m.chunk_deadline_ms, 700.0);
    assert_eq!(m.chunks_received, a.chunks_received + b.chunks_received);
    assert_eq!(m.total_frames, a.total_frames + b.total_frames);
    close(m.video_rtf_mean, (a.video_rtf + b.video_rtf) / 2.0);
    close(m.video_rtf_best, a.video_rtf.min(b.video_rtf));
    close(m.video_rtf_worst, a.video_rtf.max(b.video_rtf));
    close(m.ttfc_ms_mean.unwrap(), 1000.0);
    let json = serde_json::to_value(&agg).unwrap();
    let keys: Vec<&String> = json.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "chunk_deadline_ms",
            "chunks_received",
            "sessions",
            "steady_interval_ms_mean",
            "steady_interval_ms_spread",
            "total_frames",
            "ttfc_ms_max",
            "ttfc_ms_mean",
            "underrun_count",
            "video_rtf_best",
            "video_rtf_mean",
            "video_rtf_worst",
            "video_seconds",
            "wall_seconds",
        ]
    );
    let back: AggregateMetrics = serde_json::from_value(json).unwrap();
    assert_eq!(back, agg);
}

#[test]
fn aggregate_nulls_without_ttfc_or_steady() {
    let m = compute_metrics(&records(&[1.0; 3]), &cfg(16.0, 6), None, None).unwrap();
    let agg = aggregate(&[m.clone(), m]).unwrap();
    let json = serde_json::to_value(&agg).unwrap();
    for key in [
        "ttfc_ms_mean",
        "ttfc_ms_max",
        "steady_interval_ms_mean",
        "steady_interval_ms_spread",
    ] {
        assert_eq!(json[key], serde_json::Value::Null, "{key}");
    }
}

#[test]
fn aggregate_errors() {
    assert_eq!(aggregate(&[]), Err(MetricsError::NoSessions));
    let a = with_steady(&[0.5], Some(700.0));
    let b = with_steady(&[0.5], None);
    let err = aggregate(&[a, b]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "Cannot aggregate sessions with different chunk deadlines."
    );
}

#[test]
fn compute_and_playback_errors() {
    assert_eq!(
        compute_metrics(&[], &cfg(16.0, 6), None, None),
        Err(MetricsError::NoRecords)
    );
    let recs = records(&[1.0, 0.5]);
    let err = simulate_playback(&recs, 16.0, 3).unwrap_err();
    assert_eq!(
        err.to_string(),
        "buffer_chunks=3 exceeds the 2 chunks received."
    );
    let big = MetricsConfig {
        buffer_chunks: 3,
        ..cfg(16.0, 0)
    };
    assert_eq!(
        compute_metrics(&recs, &big, None, None),
        Err(MetricsError::BufferExceedsChunks {
            buffer: 3,
            received: 2
        })
    );
    assert_eq!(
        simulate_playback(&recs, 16.0, 0),
        Err(MetricsError::ZeroBuffer)
    );
    assert_eq!(
        simulate_playback(&recs, 0.0, 1),
        Err(MetricsError::NonPositiveFps(0.0))
    );
    assert!(compute_metrics(&recs, &cfg(-1.0, 0), None, None).is_err());
    let empty = simulate_playback(&[], 16.0, 4).unwrap();
    assert_eq!(empty.underrun_count, 0);
    assert_eq!(empty.playback_span_s, 0.0);
}

#[test]
fn records_are_taken_in_index_order() {
    let mut recs = records(&[1.0, 0.5, 0.5, 2.0, 0.5]);
    let sorted = compute_metrics(&recs, &cfg(16.0, 0), None, None).unwrap();
    recs.reverse();
    let shuffled = compute_metrics(&recs, &cfg(16.0, 0), None, None).unwrap();
    assert_eq!(sorted, shuffled);
}

#[test]
fn flat_metrics_names() {
    let m = compute_metrics(&records(&[1.0, 0.5, 0.6]), &cfg(16.0, 1), Some(1.0), None).unwrap();
    let flat = flat_metrics(&aggregate(std::slice::from_ref(&m)).unwrap());
    for key in [
        "video_rtf",
        "steady_video_rtf",
        "slo_attainment",
        "ttfc_ms",
        "interval_steady.p99_ms",
        "interval_all.mean_ms",
        "playback.underrun_count",
        "playback.buffer_chunks",
        "chunk_deadline_ms",
        "sessions",
        "steady_state_reached",
    ] {
        assert!(flat.contains_key(key), "missing {key}");
    }
    assert!(!flat.contains_key("playback.first_underrun_chunk"));
    close(flat["sessions"], 1.0);
    close(flat["ttfc_ms"], 1000.0);

    let none = compute_metrics(&records(&[1.0; 3]), &cfg(16.0, 6), None, None).unwrap();
    let flat = flat_metrics(&aggregate(&[none.clone(), none]).unwrap());
    assert!(flat.contains_key("video_rtf_mean"));
    assert!(!flat.contains_key("ttfc_ms_mean"));
    assert!(!flat.contains_key("steady_interval_ms_mean"));
    close(flat["sessions"], 2.0);
}

#[test]
fn chunk_output_uses_milliseconds() {
    let r = &records(&[1.0, 0.25])[1];
    let json = serde_json::to_value(ChunkOutput::from(r)).unwrap();
    assert_eq!(json["inter_arrival_ms"], serde_json::json!(250.0));
    assert_eq!(json["arrival_s"], serde_json::json!(1.25));
}

#[test]
fn session_json_keys_match_reference() {
    let m = compute_metrics(
        &records(&[1.0, 0.5, 0.6]),
        &cfg(16.0, 1),
        Some(1.0),
        Some(2.5),
    )
    .unwrap();
    let json = serde_json::to_value(&m).unwrap();
    let keys: Vec<&String> = json.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "chunk_deadline_ms",
            "chunks_received",
            "frames_per_second",
            "interval_all",
            "interval_steady",
            "playback",
            "slo_attainment",
            "slo_violations",
            "steady_chunks",
            "steady_state_reached",
            "steady_video_rtf",
            "steady_video_rtfx",
            "total_bytes",
            "total_frames",
            "ttfc_ms",
            "video_rtf",
            "video_rtfx",
            "video_seconds",
            "wall_seconds",
            "warmup_chunks",
        ]
    );
    let playback: Vec<&String> = json["playback"].as_object().unwrap().keys().collect();
    assert_eq!(
        playback,
        [
            "buffer_chunks",
            "first_underrun_chunk",
            "playback_span_s",
            "stall_ratio",
            "total_stall_ms",
            "underrun_count",
        ]
    );
    assert_eq!(
        json["playback"]["first_underrun_chunk"],
        serde_json::Value::Null
    );
    let steady: Vec<&String> = json["interval_steady"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(
        steady,
        [
            "count",
            "max_ms",
            "mean_ms",
            "median_ms",
            "min_ms",
            "p90_ms",
            "p95_ms",
            "p99_ms",
            "std_ms"
        ]
    );
    assert_eq!(json["chunks_received"], serde_json::json!(3));
    let back: SessionMetrics = serde_json::from_value(json).unwrap();
    assert_eq!(back, m);
}

#[test]
fn the_catalogue_declares_every_reported_name() {
    use crate::workload::catalogue::Direction;
    let cat = crate::workload::video::names::catalogue();
    cat.check(crate::workload::video::names::FAMILIES)
        .expect("every video metric declared");
    assert_eq!(cat.direction("ttfc_ms.p99"), Direction::Lower);
    assert_eq!(cat.direction("slo_attainment"), Direction::Higher);
    assert_eq!(cat.headline()[0], "ttfc_ms.mean");
}
