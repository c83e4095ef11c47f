//! Worked vectors of the playback simulation.

use super::*;

fn units(stream: u64, arrivals: &[f64], duration_s: f64) -> Vec<PlayUnit> {
    arrivals
        .iter()
        .enumerate()
        .map(|(i, &arrival_s)| PlayUnit {
            stream,
            index: i as u64,
            arrival_s,
            duration_s,
        })
        .collect()
}

fn close(a: f64, b: f64) {
    assert!((a - b).abs() < 1e-9, "{a} != {b}");
}

/// Spec §5.3.5 first vector: gaps [1.0,0.5,0.5,2.0,0.5], 16 fps (9 then 12 frames),
/// buffer 1 → one underrun at chunk 3 of 937.5 ms, span 4.5 s. Playback starts at 1.0;
/// chunk 3 arrives at 4.0 while the cursor is at 1.0 + 4·0.75 − 0.1875 = 3.0625, so the
/// player ran dry 2.0625 s after it started.
#[test]
fn matches_reference_simulation_vector() {
    let mut u = units(0, &[1.0, 1.5, 2.0, 4.0, 4.5], 0.75);
    u[0].duration_s = 9.0 / 16.0;
    let s = simulate(&u, PlaybackConfig::default());
    let p = &s.streams[0];
    assert_eq!(p.stall_count, 1);
    assert_eq!(p.first_stall_index, Some(3));
    close(p.total_stall_s, 0.9375);
    close(p.playback_span_s, 4.5);
    close(p.time_to_first_stall_s.unwrap(), 2.0625);
    assert!(p.buffer_filled);
}

#[test]
fn unit_buffer_delays_start() {
    let mut u = units(0, &[1.0, 1.5, 2.0, 3.4, 3.6, 3.8], 0.75);
    u[0].duration_s = 9.0 / 16.0;
    let cfg = PlaybackConfig {
        buffer_units: 3,
        prebuffer_s: 0.0,
    };
    let p = &simulate(&u, cfg).streams[0];
    close(p.start_s, 2.0);
    assert_eq!(p.stall_count, 0);
    assert_eq!(p.time_to_first_stall_s, None);
}

/// Audio arriving at half real time: 125 ms deltas every 250 ms from t = 1.0.
/// Without a prebuffer the player runs dry before every delta after the first (4 stalls
/// of 125 ms, the first 125 ms in). A 250 ms prebuffer starts at 1.25 (two deltas
/// landed): delta 2 lands exactly as the cursor reaches 1.5, delta 3 (1.75) finds the
/// cursor at 1.625: 2 stalls of 125 ms, the first 375 ms in.
#[test]
fn slow_audio_stalls_and_prebuffer_hides_some() {
    let u = units(0, &[1.0, 1.25, 1.5, 1.75, 2.0], 0.125);
    let p = &simulate(&u, PlaybackConfig::default()).streams[0];
    assert_eq!(p.stall_count, 4);
    close(p.total_stall_s, 0.5);
    close(p.time_to_first_stall_s.unwrap(), 0.125);
    let cfg = PlaybackConfig {
        buffer_units: 1,
        prebuffer_s: 0.25,
    };
    let p = &simulate(&u, cfg).streams[0];
    close(p.start_s, 1.25);
    assert_eq!(p.stall_count, 2);
    close(p.total_stall_s, 0.25);
    close(p.time_to_first_stall_s.unwrap(), 0.375);
}

/// A stream shorter than its prebuffer starts at its last unit and never stalls.
#[test]
fn short_stream_plays_once_complete() {
    let u = units(0, &[1.0, 1.5], 0.1);
    let cfg = PlaybackConfig {
        buffer_units: 1,
        prebuffer_s: 1.0,
    };
    let p = &simulate(&u, cfg).streams[0];
    assert!(!p.buffer_filled);
    close(p.start_s, 1.5);
    assert_eq!(p.stall_count, 0);
    close(p.playback_span_s, 0.2);
}

/// Real-time or faster audio never stalls; streams play serially, so a response that
/// arrives while the previous one still plays waits for it (not a stall).
#[test]
fn streams_play_one_after_another() {
    let mut u = units(0, &[0.0, 0.1, 0.2], 0.5);
    u.extend(units(1, &[0.3, 0.4], 0.5));
    let s = simulate(&u, PlaybackConfig::default());
    assert_eq!(s.streams.len(), 2);
    assert_eq!(s.stall_count(), 0);
    close(s.streams[1].start_s, 1.5);
    close(s.streams[1].playback_span_s, 1.0);
}

#[test]
fn order_is_by_stream_then_index_not_arrival() {
    let mut u = units(0, &[1.0, 2.0], 0.5);
    u.swap(0, 1);
    let p = &simulate(&u, PlaybackConfig::default()).streams[0];
    close(p.start_s, 1.0);
    assert_eq!(p.stall_count, 1);
    close(p.total_stall_s, 0.5);
    assert!(simulate(&[], PlaybackConfig::default()).streams.is_empty());
}

/// Media a listener could not replay in its place is said in the run's warnings, with
/// how much and in how many sessions; none, no note.
#[test]
fn units_past_the_replay_window_are_a_note() {
    let played = |units_past_window| PlaybackSummary {
        streams: Vec::new(),
        units_past_window,
        spilled: None,
    };
    assert_eq!(past_window_note(&[played(0), played(0)]), None);
    let note = past_window_note(&[played(3), played(0), played(4)]).unwrap();
    assert!(
        note.starts_with("7 media unit(s) in 2 session(s) arrived behind"),
        "{note}"
    );
}

/// The JSON a sample's playback is published as says how many units were not played
/// when some were, and is unchanged (no key) when every unit was.
#[test]
fn units_past_the_window_reach_the_json_only_when_there_are_some() {
    let json = |units_past_window| {
        serde_json::to_value(PlaybackSummary {
            streams: Vec::new(),
            units_past_window,
            spilled: None,
        })
        .unwrap()
    };
    assert_eq!(json(0), serde_json::json!({"streams": []}));
    assert_eq!(json(5)["units_past_window"], 5);
}
