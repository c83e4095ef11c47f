//! Measured sessions spill to the run's spool: the event log and the playback segments
//! (played ones while the session runs, the rest when it ends) read back the same as a
//! session that kept everything in memory.

use super::*;
use crate::workload::omni::playback::Segment;

/// `spilled`'s segments, read back from `spool` (flushed), equal `kept`'s field by
/// field, their PCM too; returns how many batches were spilled.
fn assert_same_segments(spilled: &DuplexOutput, kept: &DuplexOutput, spool: &Spool) -> usize {
    assert!(spilled.segments.is_empty() && kept.segments_spooled.is_empty());
    let mut segs = Vec::new();
    for span in &spilled.segments_spooled {
        segs.extend(decode_segments(&spool.load(*span).unwrap()).unwrap());
    }
    assert_eq!(segs.len(), kept.segments.len());
    for (s, k) in segs.iter().zip(&kept.segments) {
        let fields = |s: &Segment| {
            (
                s.response_id.clone(),
                s.start_s,
                s.end_s,
                s.samples,
                s.first_nonzero,
            )
        };
        assert_eq!(fields(s), fields(k));
        let (SegmentPcm::Spooled(pcm), SegmentPcm::Memory(want)) = (&s.pcm, &k.pcm) else {
            panic!("{:?} {:?}", s.pcm, k.pcm)
        };
        assert!(!want.is_empty());
        assert_eq!(&spool.load(*pcm).unwrap(), want);
    }
    spilled.segments_spooled.len()
}

#[test]
fn measured_sessions_spill_their_events_and_read_back_the_same() {
    let script = |h: &mut H| {
        h.stream_all();
        h.ev(1.2, json!({"type": "input_audio_buffer.committed"}));
        h.response(1.3, "r1", "Hi");
        h.ev(
            1.5,
            json!({"type": "response.done", "response": {"id": "r1", "status": "completed"}}),
        );
    };
    let mut kept = H::with(settings(), media(1, false), true);
    assert_eq!(kept.s.headline_so_far_ms(), None, "before any response");
    script(&mut kept);
    // The progress line's value so far is the one the session ends with.
    let so_far = kept.s.headline_so_far_ms();
    let kept = kept.output();
    assert_eq!(so_far, kept.mean_ttfp_ms);
    assert_eq!(kept.events.len(), 6);
    assert!(kept.events_spooled.is_none());

    let tmp = tempfile::tempdir().unwrap();
    let spool = Spool::create(tmp.path()).unwrap();
    let mut spilled = H::spooled(settings(), media(1, false), true, Some(&spool));
    script(&mut spilled);
    let spilled = spilled.output();
    assert!(spilled.events.is_empty(), "nothing kept in memory");
    spool.flush();
    let span = spilled.events_spooled.expect("spilled");
    let back = events::decode(&spool.load(span).unwrap()).unwrap();
    assert_eq!(back, kept.events);
    // The playback segments too: the same records, their PCM in the spool.
    assert_eq!(assert_same_segments(&spilled, &kept, &spool), 1);
    // The progress headline needs no events: computed live, equal either way.
    assert_eq!(spilled.mean_ttfp_ms, kept.mean_ttfp_ms);
    assert!(kept.mean_ttfp_ms.is_some_and(|t| (t - 100.0).abs() < 1e-6));
}

/// A long answer: 300 deltas of 0.1 s, each arriving as the previous one ends, with a
/// wake-up after each; a barge-in clear halfway. Returns the most segments the clock
/// held at once.
fn long_answer(h: &mut H) -> usize {
    h.stream_all();
    h.ev(1.2, json!({"type": "input_audio_buffer.committed"}));
    h.ev(
        1.25,
        json!({"type": "response.created", "response": {"id": "r1"}}),
    );
    let mut held = 0;
    for k in 0..300 {
        let t = 1.3 + 0.1 * f64::from(k);
        // Every other delta is silent.
        h.ev(
            t,
            json!({"type": "response.audio.delta", "response_id": "r1",
            "delta": b64_pcm(2400, (k % 2) as u8), "format": "pcm16", "sample_rate_hz": 24000}),
        );
        if k == 150 {
            h.ev(
                t + 0.05,
                json!({"type": "output_audio_buffer.cleared", "response_id": "r1"}),
            );
        }
        h.wake(t + 0.06);
        held = held.max(h.s.resp.clock.segments().len());
    }
    h.ev(
        31.4,
        json!({"type": "response.audio_transcript.delta", "response_id": "r1", "delta": "Hi"}),
    );
    h.ev(
        31.5,
        json!({"type": "response.done", "response": {"id": "r1", "status": "completed"}}),
    );
    held
}

#[test]
fn a_long_answer_spills_its_played_segments_while_the_session_runs() {
    for incremental in [false, true] {
        let mut cfg = settings();
        cfg.incremental_acks = incremental;
        let mut kept = H::with(cfg.clone(), media(1, false), true);
        assert_eq!(
            long_answer(&mut kept),
            300,
            "nothing retires without a spool"
        );
        let tmp = tempfile::tempdir().unwrap();
        let spool = Spool::create(tmp.path()).unwrap();
        let mut spilled = H::spooled(cfg, media(1, false), true, Some(&spool));
        let held = long_answer(&mut spilled);
        assert!(held <= 2 * RETIRE_BATCH, "held {held} segments at once");
        // Retiring changed no answer: the same acks, verdict and segments.
        assert!(kept.acks.len() > usize::from(incremental) * 100);
        assert_eq!(spilled.acks, kept.acks);
        let (kept, spilled) = (kept.output(), spilled.output());
        assert_eq!(
            (spilled.success, &spilled.error),
            (kept.success, &kept.error)
        );
        spool.flush();
        let batches = assert_same_segments(&spilled, &kept, &spool);
        assert!(batches > 3, "{batches} batches");
    }
}

#[test]
fn a_long_session_keeps_per_response_records_only_for_its_window() {
    // 300 responses, one a second, every third without audio (it never has a TTFP):
    // the playback clock and the live TTFP keep records for the responses the session
    // still holds, not for all it ever had, and the mean is the one the report computes.
    let tmp = tempfile::tempdir().unwrap();
    let spool = Spool::create(tmp.path()).unwrap();
    let mut h = H::spooled(settings(), media(1, false), true, Some(&spool));
    h.stream_all();
    let mut most = (0, 0);
    for k in 0..300u32 {
        let (t, id) = (2.0 + f64::from(k), format!("r{k}"));
        if k % 3 == 0 {
            h.ev(
                t,
                json!({"type": "response.created", "response": {"id": id}}),
            );
            h.ev(
                t + 0.15,
                json!({"type": "response.audio_transcript.delta", "response_id": id, "delta": "Hi"}),
            );
        } else {
            h.response(t, &id, "Hi");
        }
        h.ev(
            t + 0.3,
            json!({"type": "response.done", "response": {"id": id, "status": "completed"}}),
        );
        h.wake(t + 0.6);
        most.0 = most.0.max(h.s.resp.clock.slots_held());
        most.1 = most.1.max(h.s.events.ttfp_records_kept());
    }
    // A response's slot goes once it left the window and its audio retired: segments
    // retire RETIRE_BATCH at a time, and two responses in three have one.
    let window = super::super::responses::RESPONSE_WINDOW;
    assert!(
        most.0 <= window + RETIRE_BATCH * 3 / 2 + 1,
        "the clock held {} slots",
        most.0
    );
    assert!(
        most.1 <= 2 * window + 2,
        "the live TTFP kept {} records",
        most.1
    );
    let so_far = h.s.headline_so_far_ms();
    let out = h.output();
    assert_eq!(so_far, out.mean_ttfp_ms);
    spool.flush();
    let events = events::decode(&spool.load(out.events_spooled.unwrap()).unwrap()).unwrap();
    let start = out.stream_start_s.unwrap();
    let rows = crate::workload::omni::metrics::response_rows(&events, start, None);
    let want = crate::workload::omni::metrics::session_summary(&rows, None).mean_ttfp_ms;
    assert_eq!(out.mean_ttfp_ms.map(f64::to_bits), want.map(f64::to_bits));
    assert!(want.is_some_and(|t| (t - 100.0).abs() < 1e-6), "{want:?}");
}
