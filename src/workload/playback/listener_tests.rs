//! The listener fed unit by unit is the batch simulation: after every unit, on any input
//! (reordered, repeated, empty streams of buffering), its summary equals
//! [`simulate`](super::super::simulate) over the units so far, to the bit.

use proptest::prelude::*;

use super::super::{PlayUnit, PlaybackConfig, simulate};
use super::Listener;

fn unit(stream: u64, index: u64, arrival_s: f64, duration_s: f64) -> PlayUnit {
    PlayUnit {
        stream,
        index,
        arrival_s,
        duration_s,
    }
}

/// Units in receipt order: streams and indices mostly ascending (as servers send them),
/// sometimes not; arrivals mostly ascending, durations often equal, sometimes negative.
fn units() -> impl Strategy<Value = Vec<PlayUnit>> {
    proptest::collection::vec(
        (
            prop_oneof![8 => Just(0u64), 2 => Just(1u64), 1 => 0..4u64],
            prop_oneof![6 => Just(1u64), 2 => Just(0u64), 1 => 0..50u64],
            prop_oneof![6 => 0.0..0.3f64, 1 => -0.5..0.0f64],
            prop_oneof![4 => Just(0.02), 2 => 0.0..0.5f64, 1 => -0.1..0.1f64],
        ),
        0..120,
    )
    .prop_map(|raw| {
        let (mut stream, mut index, mut at) = (0, 0, 0.0);
        raw.into_iter()
            .map(|(ds, di, dt, d)| {
                // Mostly: the next unit of this stream, or the first of the next one.
                if ds == 1 {
                    (stream, index) = (stream + 1, 0);
                } else if ds > 1 {
                    stream = ds; // anywhere, earlier streams included
                }
                index = if di == 1 { index + 1 } else { di };
                at += dt;
                unit(stream, index, at, d)
            })
            .collect()
    })
}

fn configs() -> impl Strategy<Value = PlaybackConfig> {
    (
        prop_oneof![Just(1u32), 1..5u32],
        prop_oneof![Just(0.0), 0.0..0.5f64],
    )
        .prop_map(|(buffer_units, prebuffer_s)| PlaybackConfig {
            buffer_units,
            prebuffer_s,
        })
}

proptest! {
    #[test]
    fn equals_the_batch_simulation_after_every_unit(us in units(), cfg in configs()) {
        let mut live = Listener::new(cfg);
        for (i, u) in us.iter().enumerate() {
            live.push(*u);
            prop_assert_eq!(live.summary(), simulate(&us[..=i], cfg));
        }
        prop_assert_eq!(live.finish(), simulate(&us, cfg));
    }

    #[test]
    fn equals_the_batch_simulation_asked_only_at_the_end(us in units(), cfg in configs()) {
        let mut live = Listener::new(cfg);
        for u in &us {
            live.push(*u);
        }
        prop_assert_eq!(live.units(), us.len());
        prop_assert_eq!(live.finish(), simulate(&us, cfg));
    }

    /// Once everything has played, a stream has been heard for all of its media; before
    /// that, what was heard only grows.
    #[test]
    fn heard_grows_to_the_whole_stream(us in units(), cfg in configs()) {
        let mut live = Listener::new(cfg);
        for u in &us {
            live.push(*u);
        }
        let last = us.iter().map(|u| u.arrival_s).fold(0.0, f64::max);
        // A stream whose start buffer has not filled yet has not started playing.
        for s in live.summary().streams.into_iter().filter(|s| s.buffer_filled) {
            let whole: f64 = us.iter().filter(|u| u.stream == s.stream).map(|u| u.duration_s.max(0.0)).sum();
            let end = s.start_s + s.playback_span_s;
            prop_assert!((live.heard_s(s.stream, end.max(last)) - whole).abs() < 1e-9);
            let mut before = 0.0;
            for k in 0..=10 {
                let t = last + (end - last).max(0.0) * f64::from(k) / 10.0;
                let h = live.heard_s(s.stream, t);
                prop_assert!(h + 1e-12 >= before, "{} then {}", before, h);
                before = h;
            }
        }
    }
}

/// Spec §5.3.5's first vector, asked while it arrives: before chunk 3 lands the viewer
/// has not stalled yet; chunk 3's late arrival is the one stall, 937.5 ms.
#[test]
fn the_reference_vector_while_it_arrives() {
    let arrivals = [1.0, 1.5, 2.0, 4.0, 4.5];
    let mut live = Listener::new(PlaybackConfig::default());
    let mut stalls = Vec::new();
    for (i, at) in arrivals.into_iter().enumerate() {
        let d = if i == 0 { 9.0 / 16.0 } else { 0.75 };
        live.push(unit(0, i as u64, at, d));
        stalls.push(live.summary().stall_count());
    }
    assert_eq!(stalls, [0, 0, 0, 1, 1]);
    let s = live.finish();
    assert!((s.streams[0].total_stall_s - 0.9375).abs() < 1e-12);
}

/// What a listener had heard when something happened: 125 ms deltas every 250 ms from
/// t = 1.0 stall before each delta after the first; at 1.6 s the third delta (landed at
/// 1.5) has played 0.1 s of its 0.125, after 0.25 s of the first two.
#[test]
fn heard_at_an_instant() {
    let mut live = Listener::new(PlaybackConfig::default());
    for (i, at) in [1.0, 1.25, 1.5].into_iter().enumerate() {
        live.push(unit(7, i as u64, at, 0.125));
    }
    assert!((live.heard_s(7, 1.6) - 0.35).abs() < 1e-12);
    assert!((live.heard_s(7, 9.0) - 0.375).abs() < 1e-12);
    assert_eq!(live.heard_s(8, 9.0), 0.0, "a stream that never arrived");
}

/// A delta of an earlier response arriving after a later one began: the listener replays
/// in stream order, as the batch does, and goes on playing in order afterwards.
#[test]
fn a_reordered_unit_is_replayed_in_order() {
    let us = [
        unit(0, 0, 0.0, 0.5),
        unit(1, 0, 0.1, 0.5),
        unit(0, 0, 0.2, 0.5),
        unit(1, 0, 0.3, 0.5),
        unit(2, 0, 5.0, 0.5),
    ];
    let mut live = Listener::new(PlaybackConfig::default());
    for u in us {
        live.push(u);
    }
    let s = live.finish();
    assert_eq!(s, simulate(&us, PlaybackConfig::default()));
    assert_eq!(s.streams.len(), 3);
    assert_eq!(s.streams[1].start_s, 1.0);
}

#[test]
fn closed_streams_keep_24_bytes_unless_they_stalled_and_come_back_unchanged() {
    assert_eq!(std::mem::size_of::<super::closed::Plain>(), 24);
    // Stream 0 plays through; stream 1 stalls (its second unit lands late); stream 2
    // plays through; stream 3 is still open.
    let mut l = Listener::new(PlaybackConfig::default());
    for u in [
        unit(0, 0, 0.0, 0.2),
        unit(0, 0, 0.1, 0.2),
        unit(1, 0, 0.5, 0.1),
        unit(1, 0, 0.9, 0.1),
        unit(2, 0, 1.0, 0.3),
        unit(3, 0, 2.0, 0.1),
    ] {
        l.push(u);
    }
    assert_eq!(l.done.plain.len(), 3);
    let other: Vec<usize> = l.done.other.iter().map(|(at, _)| *at).collect();
    assert_eq!(
        other,
        [1],
        "only the stream that stalled keeps its whole record"
    );
    let want = simulate(
        &[
            unit(0, 0, 0.0, 0.2),
            unit(0, 0, 0.1, 0.2),
            unit(1, 0, 0.5, 0.1),
            unit(1, 0, 0.9, 0.1),
            unit(2, 0, 1.0, 0.3),
            unit(3, 0, 2.0, 0.1),
        ],
        PlaybackConfig::default(),
    );
    assert_eq!(l.finish(), want);
}

#[test]
fn a_stream_numbered_past_32_bits_keeps_its_whole_record_and_comes_back_unchanged() {
    let big = u64::from(u32::MAX) + 7;
    let us = [
        unit(1, 0, 0.0, 0.2),
        unit(big, 0, 0.5, 0.2),
        unit(big + 1, 0, 1.0, 0.2),
    ];
    let mut l = Listener::new(PlaybackConfig::default());
    for u in us {
        l.push(u);
    }
    l.close_open();
    let other: Vec<usize> = l.done.other.iter().map(|(at, _)| *at).collect();
    assert_eq!(
        other,
        [1, 2],
        "the numbers that do not fit keep their records"
    );
    assert_eq!(l.finish(), simulate(&us, PlaybackConfig::default()));
}

/// The window's rule, stated on its own: units are kept in generations of `window`; when
/// the newer one fills, the kept units are put in play order and the older generation's
/// worth leaves; a unit below the largest key that left is not played.
fn kept_by_window(us: &[PlayUnit], window: usize) -> (Vec<PlayUnit>, u64) {
    let key = |u: &PlayUnit| (u.stream, u.index);
    let (mut kept, mut dropped) = (Vec::new(), 0);
    let (mut older, mut newer): (Vec<PlayUnit>, Vec<PlayUnit>) = (Vec::new(), Vec::new());
    let mut floor: Option<(u64, u64)> = None;
    for u in us {
        if floor.is_some_and(|f| key(u) < f) {
            dropped += 1;
            continue;
        }
        kept.push(*u);
        newer.push(*u);
        if newer.len() >= window {
            let mut all = std::mem::take(&mut older);
            all.append(&mut newer);
            all.sort_by_key(key);
            let left = all.len() - window;
            floor = floor.max(all[..left].iter().map(key).max());
            older = all.split_off(left);
        }
    }
    (kept, dropped)
}

proptest! {
    #[test]
    fn a_small_window_plays_the_batch_of_the_units_it_kept(
        us in units(),
        cfg in configs(),
        window in 1..8usize,
    ) {
        let (kept, dropped) = kept_by_window(&us, window);
        let mut live = Listener::with_window(cfg, window);
        for (i, u) in us.iter().enumerate() {
            live.push(*u);
            let (so_far, _) = kept_by_window(&us[..=i], window);
            prop_assert_eq!(live.summary().streams, simulate(&so_far, cfg).streams);
            prop_assert!(live.units() < 2 * window);
        }
        let mut want = simulate(&kept, cfg);
        want.units_past_window = dropped;
        prop_assert_eq!(live.finish(), want);
    }
}

/// A held session's media in order: the listener keeps fewer than two windows of units
/// however long it is held, and its summary is still the batch's over every unit.
#[test]
fn a_long_session_keeps_at_most_two_windows_of_units() {
    let cfg = PlaybackConfig {
        buffer_units: 2,
        prebuffer_s: 0.1,
    };
    let mut live = Listener::new(cfg);
    let mut all = Vec::new();
    for i in 0..20_000u64 {
        let u = unit(i / 12, i % 12, i as f64 * 0.08, 0.1);
        live.push(u);
        all.push(u);
        assert!(live.units() < 2 * super::REPLAY_WINDOW_UNITS);
    }
    assert_eq!(live.finish(), simulate(&all, cfg));
}

/// A straggler one stream behind is replayed in its place; one behind the whole window
/// is counted and not played.
#[test]
fn a_unit_behind_the_whole_window_is_counted_not_played() {
    let cfg = PlaybackConfig::default();
    let mut live = Listener::with_window(cfg, 2);
    let on_time = [
        unit(0, 0, 0.0, 0.5),
        unit(1, 0, 0.1, 0.5),
        unit(2, 0, 0.2, 0.5),
        unit(3, 0, 0.3, 0.5),
        unit(4, 0, 0.4, 0.5),
    ];
    for u in on_time {
        live.push(u);
    }
    live.push(unit(3, 1, 0.5, 0.5)); // in the window: replayed
    live.push(unit(0, 1, 0.6, 0.5)); // behind it
    let mut kept = on_time.to_vec();
    kept.push(unit(3, 1, 0.5, 0.5));
    let s = live.finish();
    assert_eq!(s.units_past_window, 1);
    assert_eq!(s.streams, simulate(&kept, cfg).streams);
    assert_eq!(s.streams[3].units, 2);
}

/// Letting the settled streams go keeps the listener's closed records within the window;
/// the streams let go, then the summary's, are every stream of the batch simulation.
#[test]
fn streams_let_go_and_those_kept_are_the_whole_summary() {
    let cfg = PlaybackConfig::default();
    let mut live = Listener::with_window(cfg, 8);
    let (mut all, mut gone) = (Vec::new(), Vec::new());
    for i in 0..3_000u64 {
        // Two units a stream; now and then one of the stream before lands late.
        let (stream, at) = (i / 2, i as f64 * 0.05);
        let u = if i % 97 == 5 {
            unit(stream - 1, 7, at, 0.04)
        } else {
            unit(stream, i % 2, at, 0.06)
        };
        live.push(u);
        all.push(u);
        live.let_go(|s| gone.push(s.clone()));
        assert!(
            live.done.plain.len() <= 16,
            "{} kept",
            live.done.plain.len()
        );
    }
    let s = live.finish();
    assert_eq!(s.units_past_window, 0);
    gone.extend(s.streams);
    assert_eq!(gone, simulate(&all, cfg).streams);
}
