//! Serial playback clock and acknowledger vectors (spec §1.6).

use super::*;

fn pcm(samples: usize) -> Vec<u8> {
    vec![1u8; samples * 2]
}

fn acks(c: &mut PlaybackClock, now: f64) -> Vec<(String, u64)> {
    c.acks(now)
        .into_iter()
        .map(|a| (a.response_id.to_string(), a.played_ms))
        .collect()
}

#[test]
fn seed_ack_vector() {
    let mut c = PlaybackClock::new(false);
    c.ingest("r1", &pcm(2400), 10.0, false);
    c.complete("r1", 10.01);
    assert!(acks(&mut c, 10.05).is_empty());
    assert_eq!(c.next_due(), Some(10.1));
    assert_eq!(acks(&mut c, 10.1), [("r1".to_string(), 100)]);
    assert!(acks(&mut c, 20.0).is_empty(), "never acked twice");
    assert_eq!(c.next_due(), None);
}

#[test]
fn seed_acks_need_completion_and_audio() {
    let mut c = PlaybackClock::new(false);
    c.ingest("r1", &pcm(2400), 10.0, false);
    assert!(acks(&mut c, 11.0).is_empty(), "not done yet");
    c.complete("r2", 10.5);
    assert!(acks(&mut c, 11.0).is_empty(), "no audio, no ack");
    c.complete("r1", 11.0);
    assert_eq!(acks(&mut c, 11.0), [("r1".to_string(), 100)]);
}

#[test]
fn serialization_example() {
    let mut c = PlaybackClock::new(false);
    assert_eq!(c.ingest("r1", &pcm(24_000), 10.0, true), 24_000);
    assert_eq!(c.ingest("r1", &pcm(12_000), 10.2, false), 12_000);
    let segs = c.segments();
    let s = &segs[0];
    assert_eq!((s.start_s, s.end_s, s.samples), (10.0, 11.0, 24_000));
    assert_eq!(s.pcm.len(), 48_000);
    let s = &segs[1];
    assert_eq!((s.start_s, s.end_s), (11.0, 11.5));
    assert!(s.pcm.is_empty(), "bytes only when kept");
    assert_eq!(c.end_s(), 11.5);
    assert_eq!(c.total_samples("r1"), 36_000);
    c.complete("r1", 10.3);
    assert_eq!(
        c.drain().iter().map(|a| a.played_ms).collect::<Vec<_>>(),
        [1500]
    );
}

#[test]
fn incremental_ack_vector() {
    let mut c = PlaybackClock::new(true);
    c.ingest("r1", &pcm(24_000), 10.0, false);
    c.complete("r1", 10.0);
    assert_eq!(acks(&mut c, 10.05), [("r1".to_string(), 50)]);
    assert!(acks(&mut c, 10.1).is_empty());
    let due = c.next_due().unwrap();
    assert!(
        (due - 10.25).abs() < 1e-9,
        "next step at 250 ms played: {due}"
    );
    assert_eq!(acks(&mut c, 10.3), [("r1".to_string(), 300)]);
    assert_eq!(acks(&mut c, 11.0), [("r1".to_string(), 1000)]);
    assert!(acks(&mut c, 12.0).is_empty());
    assert_eq!(c.next_due(), None);
}

#[test]
fn incremental_checkpoint_is_immediate_and_drain_sends_total() {
    let mut c = PlaybackClock::new(true);
    c.ingest("r1", &pcm(2_400 * 3), 5.0, false);
    assert_eq!(c.next_due(), Some(5.0));
    assert_eq!(acks(&mut c, 5.0), [("r1".to_string(), 0)]);
    c.complete("r1", 5.1);
    let drained: Vec<_> = c.drain().into_iter().map(|a| a.played_ms).collect();
    assert_eq!(drained, [300]);
}

#[test]
fn barge_in_truncates_unplayed_audio() {
    let mut c = PlaybackClock::new(false);
    c.ingest("r1", &pcm(24_000), 10.0, true);
    c.ingest("r2", &pcm(2_400), 10.1, true);
    let lost = c.clear(Some("r1"), 10.25);
    assert_eq!(lost.len(), 1);
    assert_eq!((&*lost[0].0, lost[0].1), ("r1", 18_000));
    assert_eq!(c.total_samples("r1"), 6_000);
    let s = &c.segments()[0];
    assert_eq!((s.samples, s.pcm.len()), (6_000, 12_000));
    assert!((s.end_s - 10.25).abs() < 1e-9);
    assert!(
        (c.end_s() - 11.1).abs() < 1e-9,
        "r2 stays where it was queued"
    );
    assert!(c.clear(Some("r1"), 10.3).is_empty(), "nothing left to lose");
    c.complete("r1", 10.3);
    assert_eq!(acks(&mut c, 10.3), [("r1".to_string(), 250)]);
    let lost = c.clear(None, 10.0);
    assert_eq!(lost.iter().map(|l| l.1).sum::<u64>(), 6_000 + 2_400);
    assert!(c.into_segments().is_empty());
}

#[test]
fn audible_within_horizon() {
    let mut c = PlaybackClock::new(false);
    let mut quiet_then_loud = vec![0u8; 4_800];
    quiet_then_loud.extend_from_slice(&[0, 1]);
    c.ingest("r1", &quiet_then_loud, 10.95, false);
    // Starts 0.95 s into a 1 s horizon: offset 45600, 2400 writable bytes, all silent.
    assert!(!c.audible_in_horizon("r1", 10.0, 1.0));
    assert!(c.audible_in_horizon("r1", 10.0, 2.0));
    c.ingest("r2", &[0, 0, 5, 0], 10.0, false);
    assert!(
        !c.audible_in_horizon("r2", 10.0, 1.0),
        "queued after r1, past the horizon"
    );
    assert!(!c.audible_in_horizon("r3", 10.0, 1.0));
}

#[test]
fn barge_in_truncates_a_spooled_segment_to_what_played() {
    let tmp = tempfile::tempdir().unwrap();
    let spool = crate::workload::spool::Spool::create(tmp.path()).unwrap();
    let mut file = spool.session();
    let bytes: Vec<u8> = (0..24_000u32 * 2).map(|i| (i % 251) as u8).collect();
    let mut c = PlaybackClock::new(false);
    let span = file.append(&bytes);
    c.ingest_kept(0, &"r1".into(), &bytes, 0.0, SegmentPcm::Spooled(span));
    assert_eq!(c.segments()[0].pcm.len(), 48_000);
    // Cleared 0.25 s in: 6,000 samples played.
    c.clear(None, 0.25);
    let seg = &c.segments()[0];
    assert_eq!((seg.samples, seg.pcm.len()), (6_000, 12_000));
    let SegmentPcm::Spooled(kept) = seg.pcm else {
        panic!("still spooled: {:?}", seg.pcm);
    };
    spool.flush();
    assert_eq!(spool.load(kept).unwrap(), bytes[..12_000]);
}

#[test]
fn the_clock_keeps_48_bytes_per_audio_delta() {
    // A long session holds one of these per received delta (the public Segment is
    // twice the size and is built only on the way out).
    assert!(std::mem::size_of::<super::segment::Seg>() <= 48);
    // What goes in comes back out whole: response, times, samples, kept bytes.
    let mut c = PlaybackClock::new(false);
    let mut quiet_then_loud = vec![0u8; 10];
    quiet_then_loud.extend_from_slice(&pcm(2_395));
    c.ingest("r1", &quiet_then_loud, 1.0, true);
    let segs = c.segments();
    let s = &segs[0];
    assert_eq!(&*s.response_id, "r1");
    assert_eq!((s.start_s, s.end_s, s.samples), (1.0, 1.1, 2_400));
    assert_eq!(s.first_nonzero, Some(5));
    assert_eq!(s.pcm, SegmentPcm::Memory(quiet_then_loud.into()));
}

#[test]
fn spilled_segments_read_back_exactly() {
    let mut c = PlaybackClock::new(false);
    let span = |offset| Span {
        file: 7,
        offset,
        len: 4_800,
    };
    c.ingest_kept(
        0,
        &"r1".into(),
        &pcm(2_400),
        0.1 + 0.2,
        SegmentPcm::Spooled(span(0)),
    );
    c.ingest("r2 ✓", &vec![0u8; 4_800], 0.35, false);
    c.ingest_kept(
        0,
        &"r1".into(),
        &pcm(2_400),
        0.4,
        SegmentPcm::Spooled(span(4_800)),
    );
    c.clear(Some("r1"), 0.45);
    let segs = c.segments();
    assert_eq!(segs.len(), 3);
    assert_eq!(segs[1].first_nonzero, None);
    let bytes = encode_segments(&segs).expect("no PCM in memory");
    assert_eq!(decode_segments(&bytes).unwrap(), segs);
    assert_eq!(decode_segments(&encode_segments(&[]).unwrap()).unwrap(), []);
    // Damage is named, never read as other numbers.
    let want = "spooled playback segments are damaged";
    assert_eq!(
        decode_segments(&bytes[..bytes.len() - 1]).unwrap_err(),
        want
    );
    let mut longer = bytes.clone();
    longer.push(0);
    assert_eq!(decode_segments(&longer).unwrap_err(), want);
    // PCM held in memory cannot be spilled.
    c.ingest("r3", &pcm(10), 1.0, true);
    assert!(encode_segments(&c.segments()).is_none());
}

/// One step of a random session for the clock (times only move forward).
#[derive(Debug, Clone)]
enum Step {
    Audio {
        resp: usize,
        samples: usize,
        dt: f64,
    },
    Done {
        resp: usize,
        dt: f64,
    },
    Clear {
        resp: Option<usize>,
        dt: f64,
    },
    Tick {
        dt: f64,
    },
}

fn step() -> impl proptest::strategy::Strategy<Value = Step> {
    use proptest::prelude::*;
    let dt = 0.0..0.4f64;
    prop_oneof![
        (0..6usize, 1..6_000usize, dt.clone()).prop_map(|(resp, samples, dt)| Step::Audio {
            resp,
            samples,
            dt
        }),
        (0..6usize, dt.clone()).prop_map(|(resp, dt)| Step::Done { resp, dt }),
        (proptest::option::of(0..6usize), dt.clone())
            .prop_map(|(resp, dt)| Step::Clear { resp, dt }),
        dt.prop_map(|dt| Step::Tick { dt }),
    ]
}

proptest::proptest! {
    /// Acks and wake-ups look only at the responses that can still ack: at every step
    /// they equal what looking at every response gives (the clock as it was).
    #[test]
    fn settled_responses_never_ack_again(
        incremental in proptest::bool::ANY,
        steps in proptest::collection::vec(step(), 1..120),
    ) {
        let mut c = PlaybackClock::new(incremental);
        let mut now = 0.0;
        for s in steps {
            let id = |r: usize| format!("r{r}");
            match s {
                Step::Audio { resp, samples, dt } => {
                    now += dt;
                    c.ingest(&id(resp), &pcm(samples), now, false);
                }
                Step::Done { resp, dt } => {
                    now += dt;
                    c.complete(&id(resp), now);
                }
                Step::Clear { resp, dt } => {
                    now += dt;
                    c.clear(resp.map(id).as_deref(), now);
                }
                Step::Tick { dt } => now += dt,
            }
            let mut all = c.clone();
            all.active = (0..all.resps.len() as u32).collect();
            proptest::prop_assert_eq!(c.next_due(), all.next_due());
            proptest::prop_assert_eq!(c.acks(now), all.acks(now));
        }
        let mut all = c.clone();
        all.active = (0..all.resps.len() as u32).collect();
        proptest::prop_assert_eq!(c.drain(), all.drain());
    }
}

proptest::proptest! {
    /// Retiring played segments changes no answer: at every step the acks and wake-ups
    /// equal those of a clock that keeps every segment, and at the end so do the drain,
    /// the audibility checks, the totals and the segments (retired ones first).
    #[test]
    fn retiring_played_segments_changes_no_answer(
        incremental in proptest::bool::ANY,
        steps in proptest::collection::vec((step(), 0..3usize, 1..4usize), 1..160),
        (stream_start, duration) in (0.0..2.0f64, 0.5..12.0f64),
    ) {
        let mut c = PlaybackClock::new(incremental);
        c.set_horizon(stream_start, duration);
        let mut all = c.clone();
        let mut retired = Vec::new();
        let mut now = 0.0;
        let mut offset = 0;
        for (s, quiet, batch) in steps {
            let id = |r: usize| format!("r{r}");
            match s {
                Step::Audio { resp, samples, dt } => {
                    now += dt;
                    // Some deltas open with silence, some are silent throughout.
                    let mut bytes = vec![0u8; samples.min(quiet * 1_000) * 2];
                    bytes.resize(samples * 2, u8::from(quiet != 2));
                    let kept = || SegmentPcm::Spooled(Span { file: 1, offset, len: bytes.len() as u64 });
                    let r: Arc<str> = id(resp).into();
                    // The session's index of the id: sparse, so slots are skipped too.
                    c.ingest_kept(resp as u32 * 2, &r, &bytes, now, kept());
                    all.ingest_kept(resp as u32 * 2, &r, &bytes, now, kept());
                    offset += bytes.len() as u64;
                }
                Step::Done { resp, dt } => {
                    now += dt;
                    c.complete_at(resp as u32 * 2, &id(resp).into(), now);
                    all.complete_at(resp as u32 * 2, &id(resp).into(), now);
                }
                Step::Clear { resp, dt } => {
                    now += dt;
                    proptest::prop_assert_eq!(
                        c.clear(resp.map(id).as_deref(), now),
                        all.clear(resp.map(id).as_deref(), now)
                    );
                }
                Step::Tick { dt } => now += dt,
            }
            proptest::prop_assert_eq!(c.next_due(), all.next_due());
            proptest::prop_assert_eq!(c.acks(now), all.acks(now));
            proptest::prop_assert_eq!(c.end_s(), all.end_s());
            retired.extend(c.retire(now, batch));
            // Each response's held segments, walked from its first, are exactly those
            // the clock holds for it.
            for k in [&c, &all] {
                for i in 0..k.resps.len() {
                    let want: Vec<u32> = (k.base..)
                        .zip(&k.segments)
                        .filter(|(_, s)| s.resp as usize == i)
                        .map(|(pos, _)| pos)
                        .collect();
                    proptest::prop_assert_eq!(k.held(i).collect::<Vec<_>>(), want);
                }
            }
        }
        proptest::prop_assert_eq!(c.drain(), all.drain());
        for r in (0..6).map(|r| format!("r{r}")) {
            let heard = |k: &PlaybackClock| k.audible_in_horizon(&r, stream_start, duration);
            proptest::prop_assert_eq!(heard(&c), heard(&all));
            proptest::prop_assert_eq!(c.total_samples(&r), all.total_samples(&r));
        }
        let ids = |k: &PlaybackClock| k.responses_with_audio().map(String::from).collect::<Vec<_>>();
        proptest::prop_assert_eq!(ids(&c), ids(&all));
        retired.extend(c.into_segments());
        proptest::prop_assert_eq!(retired, all.into_segments());
    }
}

proptest::proptest! {
    /// A settled response's full record gives way to its few numbers, and a late event
    /// thaws it back exactly: at every step the acks, wake-ups, clears, retired segments
    /// and played/kept figures equal those of a clock that keeps every record, and so do
    /// the drain, the audibility checks and the responses with audio at the end.
    #[test]
    fn freezing_settled_responses_changes_no_answer(
        incremental in proptest::bool::ANY,
        steps in proptest::collection::vec((step(), 1..4usize), 1..200),
        (stream_start, duration) in (0.0..2.0f64, 0.5..12.0f64),
    ) {
        let mut c = PlaybackClock::new(incremental);
        let mut all = PlaybackClock::keeping_all(incremental);
        c.set_horizon(stream_start, duration);
        all.set_horizon(stream_start, duration);
        let (mut now, mut offset) = (0.0, 0);
        for (s, batch) in steps {
            let id = |r: usize| format!("r{r}");
            match s {
                Step::Audio { resp, samples, dt } => {
                    now += dt;
                    let bytes = vec![u8::from(resp % 3 != 0); samples * 2];
                    let kept = || SegmentPcm::Spooled(Span { file: 1, offset, len: bytes.len() as u64 });
                    for k in [&mut c, &mut all] {
                        k.ingest_named(resp as u32 * 2, &id(resp), &bytes, now, kept());
                    }
                    offset += bytes.len() as u64;
                }
                Step::Done { resp, dt } => {
                    now += dt;
                    c.complete_named(resp as u32 * 2, &id(resp), now);
                    all.complete_named(resp as u32 * 2, &id(resp), now);
                }
                Step::Clear { resp, dt } => {
                    now += dt;
                    let r = resp.map(id);
                    proptest::prop_assert_eq!(c.clear(r.as_deref(), now), all.clear(r.as_deref(), now));
                }
                Step::Tick { dt } => now += dt,
            }
            proptest::prop_assert_eq!(c.next_due(), all.next_due());
            proptest::prop_assert_eq!(c.acks(now), all.acks(now));
            proptest::prop_assert_eq!(c.retire(now, batch), all.retire(now, batch));
            for ix in 0..12 {
                proptest::prop_assert_eq!(c.played_ms(ix, now), all.played_ms(ix, now));
                proptest::prop_assert_eq!(c.kept_ms(ix), all.kept_ms(ix));
            }
            // Every response the clock touched is either in play or settled.
            let (live, settled) = c.live_and_settled();
            proptest::prop_assert_eq!(live + settled, all.live_and_settled().0);
        }
        proptest::prop_assert_eq!(c.drain(), all.drain());
        for ix in 0..12 {
            let heard = |k: &PlaybackClock| k.audible_in_horizon_at(ix, stream_start, duration);
            proptest::prop_assert_eq!(heard(&c), heard(&all));
        }
        let with_audio = |k: &PlaybackClock| k.responses_with_audio_at().collect::<Vec<_>>();
        proptest::prop_assert_eq!(with_audio(&c), with_audio(&all));
        proptest::prop_assert_eq!(c.into_segments(), all.into_segments());
    }
}

#[test]
fn a_long_session_keeps_full_records_only_for_responses_in_play() {
    // One response a second, 0.3 s of audio each, spooled, acked and retired as a
    // session does: each one settles once acked and retired.
    let (mut c, mut all) = (PlaybackClock::new(false), PlaybackClock::keeping_all(false));
    for k in [&mut c, &mut all] {
        k.set_horizon(0.0, 1000.0);
    }
    let n = 500u32;
    let mut acked = Vec::new();
    for r in 0..n {
        let t = f64::from(r);
        let kept = SegmentPcm::Spooled(Span {
            file: 1,
            offset: u64::from(r) * 14_400,
            len: 14_400,
        });
        for k in [&mut c, &mut all] {
            k.ingest_named(r, &format!("r{r}"), &pcm(7_200), t, kept.clone());
            k.complete_named(r, &format!("r{r}"), t + 0.1);
        }
        let a = c.acks(t + 0.9);
        assert_eq!(a, all.acks(t + 0.9));
        acked.extend(a);
        assert_eq!(c.retire(t + 0.9, 1), all.retire(t + 0.9, 1));
    }
    assert_eq!(acked.len(), n as usize, "each acked once");
    // Counted exactly: every response settled, none in play.
    assert_eq!(c.live_and_settled(), (0, n as usize));
    assert_eq!(all.live_and_settled(), (n as usize, 0));
    assert_eq!(std::mem::size_of::<super::frozen::Slot>(), 16);
    // A late delta for a long-settled response thaws it: it plays and acks again, to
    // the same figures as a clock that kept its record.
    let kept = SegmentPcm::Spooled(Span {
        file: 1,
        offset: 0,
        len: 4_800,
    });
    for k in [&mut c, &mut all] {
        k.ingest_named(3, "r3", &pcm(2_400), 600.0, kept.clone());
    }
    assert_eq!(c.live_and_settled(), (1, n as usize - 1));
    assert_eq!(c.played_ms(3, 600.05), all.played_ms(3, 600.05));
    assert_eq!(c.kept_ms(3), 400.0);
    assert_eq!(c.drain(), all.drain());
    assert_eq!(acks(&mut c, 700.0), acks(&mut all, 700.0));
    assert_eq!(c.into_segments(), all.into_segments());
}

#[test]
fn a_let_go_response_leaves_the_clock_once_it_is_settled() {
    // Two responses of 0.1 s each, played one after the other; the session lets both
    // go while they still play: each slot stays until its ack is sent and its audio
    // retired, then goes, first to last.
    let mut c = PlaybackClock::new(false);
    c.set_horizon(0.0, 100.0);
    for id in ["r0", "r1"] {
        c.ingest(id, &pcm(2_400), 0.0, false);
        c.complete(id, 0.0);
    }
    c.let_go_below(2);
    assert_eq!((c.slots_held(), c.live_and_settled()), (2, (2, 0)));
    assert_eq!(acks(&mut c, 0.15), [("r0".to_string(), 100)]);
    c.retire(0.15, 1);
    assert_eq!((c.slots_held(), c.live_and_settled()), (1, (1, 0)));
    assert_eq!(acks(&mut c, 0.25), [("r1".to_string(), 100)]);
    c.retire(0.25, 1);
    assert_eq!(c.slots_held(), 0);
    // The next response takes the next index and is answered as any other.
    c.ingest_named(2, "r2", &pcm(2_400), 1.0, SegmentPcm::default());
    assert_eq!(c.slots_held(), 1);
    assert_eq!(c.responses_with_audio_at().collect::<Vec<_>>(), [2]);
    assert_eq!((c.played_ms(2, 1.05), c.kept_ms(2)), (50.0, 100.0));
    assert!(c.audible_in_horizon_at(2, 0.0, 100.0));
    // A slot the session has not let go of stays, settled or not.
    assert_eq!(acks(&mut c, 1.2), Vec::<(String, u64)>::new());
    c.complete_named(2, "r2", 1.2);
    assert_eq!(acks(&mut c, 1.2), [("r2".to_string(), 100)]);
    c.retire(1.2, 1);
    assert_eq!((c.slots_held(), c.live_and_settled()), (1, (0, 1)));
}

/// What the session sent before [`Ack::message`]: the message built as a `Value` tree.
fn ack_by_value(id: &str, played_ms: u64) -> String {
    serde_json::json!({"type": "playback.ack", "response_id": id,
        "item_id": format!("item_{id}"), "played_ms": played_ms,
        "committed_ms": played_ms})
    .to_string()
}

#[test]
fn the_ack_message_is_the_value_tree_s_bytes() {
    for (id, ms) in [
        ("resp_0_1", 0),
        ("", 1),
        ("r\"q\\u\n\t\u{1}\u{7f}é💥", 100),
        ("resp", u64::MAX),
    ] {
        let ack = Ack {
            response_id: id.into(),
            played_ms: ms,
            due_s: 0.1,
        };
        assert_eq!(&*ack.message(), ack_by_value(id, ms), "{id:?} {ms}");
    }
}

proptest::proptest! {
    /// Any id (escapes, control characters, any Unicode) and any count.
    #[test]
    fn any_ack_message_is_the_value_tree_s_bytes(id in ".{0,40}", ms in proptest::prelude::any::<u64>()) {
        let ack = Ack { response_id: id.as_str().into(), played_ms: ms, due_s: 1.5 };
        proptest::prop_assert_eq!(&*ack.message(), ack_by_value(&id, ms));
    }
}

#[test]
fn a_settled_response_whose_numbers_pass_32_bits_stays_in_play() {
    let settled = |total: u64, acked_ms: u64| Resp {
        id: Some("r".into()),
        total,
        acked_ms: Some(acked_ms),
        retired: retire::Retired {
            any: true,
            samples: total,
            ..retire::Retired::default()
        },
        ..Resp::default()
    };
    let fits = u64::from(u32::MAX) - 1;
    let frozen = frozen::Frozen::of(&settled(fits, fits), 0.0).expect("fits in 32 bits");
    let back = frozen.thaw(None);
    assert_eq!((back.total, back.acked_ms), (fits, Some(fits)));
    for (total, acked_ms) in [(fits + 2, 1), (1, fits + 1), (1, fits + 2)] {
        let r = settled(total, acked_ms);
        assert!(
            frozen::Frozen::of(&r, 0.0).is_none(),
            "{total} samples, acked at {acked_ms} ms"
        );
    }
}
