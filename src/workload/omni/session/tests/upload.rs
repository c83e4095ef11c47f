//! The upload: appends on their absolute schedule with their frames, the tail rule and
//! the model unit it reads, and the pacing modes.

use super::*;

#[test]
fn appends_follow_the_absolute_schedule_with_frames_and_tail() {
    let mut h = H::with(settings(), media(1, false), false);
    let fx = h.ev(0.1, json!({"type": "session.created"}));
    assert_eq!(fx.outbound[0].intended, Some(h.at(0.1)));
    assert_eq!(fx.wake_at, Some(h.at(0.3)));
    // Woken late: both due appends go out, each with its own intended time.
    let fx = h.wake(0.55);
    let intended: Vec<_> = fx.outbound.iter().map(|m| m.intended).collect();
    assert_eq!(intended, [Some(h.at(0.3)), Some(h.at(0.5))]);
    let msgs = sent(&fx);
    assert_eq!(
        msgs[1]["video_frames"],
        json!(["frame0"]),
        "frame 0 rides append #3 (end 600 ms)"
    );
    assert!(msgs[0].get("video_frames").is_none());
    h.wake(0.7);
    let last = sent(&h.wake(0.9));
    assert_eq!(
        (
            last[0]["duration_ms"].as_u64(),
            last[0]["audio_end_ms"].as_u64()
        ),
        (Some(199), Some(999))
    );
    let fx = h.wake(0.9);
    assert!(
        fx.outbound.is_empty(),
        "commit waits for the end of the last append"
    );
    assert_eq!(
        fx.wake_at,
        Some(h.t0 + Duration::from_millis(100) + Duration::from_nanos(999_937_500))
    );
    let o = h.output();
    assert!((o.pacing_max_lag_s - 0.25).abs() < 1e-9);
    assert!((o.pacing_mean_lag_s - 0.3 / 5.0).abs() < 1e-9);
}

#[test]
fn tail_rule_reads_the_announced_chunk_period() {
    let mut h = H::with(settings(), media(1, true), false);
    let created =
        json!({"type": "session.created", "session": {"capabilities": {"chunk_period_ms": 300}}});
    h.ev(0.0, created);
    for k in 1..=5 {
        h.wake(0.2 * f64::from(k));
    }
    let o = h.output();
    assert_eq!(
        o.input_audio_chunks, 5,
        "32000 bytes is no multiple of 9600: nothing trimmed"
    );
    assert_eq!(o.input_video_frames, 0, "missing frames are skipped");
}

#[test]
fn the_tail_rule_reads_the_period_session_created_announces() {
    // 0.9 s of PCM: a multiple of a 300 ms unit (9600 bytes), not of the default 1 s.
    let m = |len: usize| PreparedMedia {
        pcm: Bytes::from(vec![0u8; len]),
        frames: Arc::from(Vec::<Option<Arc<str>>>::new()),
        duration_s: 0.9,
    };
    let last_append = |created: Value| {
        let mut h = H::with(settings(), m(28_800), false);
        let mut sent = sent(&h.ev(0.0, created));
        for k in 1..=5 {
            sent.extend(sent_of(&h.wake(0.2 * f64::from(k))));
        }
        sent.into_iter()
            .rev()
            .find(|m| m["type"] == "input_audio_buffer.append")
            .unwrap()
    };
    let announced =
        json!({"type": "session.created", "session": {"capabilities": {"chunk_period_ms": 300}}});
    let last = last_append(announced);
    assert_eq!(
        (last["audio_end_ms"].as_u64(), last["duration_ms"].as_u64()),
        (Some(899), Some(99)),
        "the last sample is dropped: the upload ends 2 bytes short of a whole unit"
    );
    let last = last_append(json!({"type": "session.created"}));
    assert_eq!(
        last["audio_end_ms"].as_u64(),
        Some(900),
        "1 s unit: nothing dropped"
    );
}

#[test]
fn speed_and_saturate_modes() {
    let mut cfg = settings();
    cfg.pacing = PacingMode::Speed(2.0);
    let mut h = H::new(cfg);
    assert_eq!(
        h.ev(0.0, json!({"type": "session.created"})).wake_at,
        Some(h.at(0.1))
    );
    let mut cfg = settings();
    cfg.pacing = PacingMode::Saturate;
    let mut h = H::new(cfg);
    let fx = h.ev(0.0, json!({"type": "session.created"}));
    assert_eq!(fx.outbound.len(), 1);
    assert_eq!(fx.outbound[0].intended, None);
    assert_eq!(fx.wake_at, Some(h.at(0.0)), "next append immediately");
    let mut all = Vec::new();
    for _ in 0..6 {
        all.extend(sent(&h.wake(0.0)));
    }
    assert_eq!(types(&all).last(), Some(&"input_audio_buffer.commit"));
    assert_eq!(h.s.phase(), Phase::Completing);
    let o = h.output();
    assert_eq!(
        (o.input_audio_chunks, o.pacing_max_lag_s, o.pacing),
        (5, 0.0, PacingMode::Saturate)
    );
}
