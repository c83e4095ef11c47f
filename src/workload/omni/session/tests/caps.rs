//! A session's caps (`max_events_per_session`, `max_audio_bytes_per_session`): the
//! message or delta past one fails that session, naming the cap and the key to raise.

use super::*;

/// A server flooding one session fails that session at its event limit, with the
/// reason, instead of growing its event log without bound.
#[test]
fn a_session_past_its_event_limit_fails_saying_why() {
    let mut cfg = settings();
    cfg.max_events = 5;
    let mut h = H::new(cfg);
    h.stream_all();
    let mut last = Effects::default();
    for k in 0..10 {
        last = h.ev(
            1.2 + f64::from(k) * 0.01,
            json!({"type": "rate_limits.updated"}),
        );
        if last.finish.is_some() {
            break;
        }
    }
    assert_failed(
        &last,
        "the server sent more than 5 events in one session: rtload keeps every event of a \
         session for its artifacts, so it stops here (the other sessions go on); raise \
         `[workload] max_events_per_session` if the server really sends this many",
    );
    assert!(h.s.events.len() <= 5);
}

/// A server streaming more output audio than the session's cap fails that session as
/// the delta past it arrives, naming the cap and the key to raise.
#[test]
fn a_session_past_its_audio_cap_fails_saying_why() {
    let mut cfg = settings();
    // 2,400 samples of PCM16 per delta = 4,800 bytes: the third delta passes 10,000.
    cfg.max_audio_bytes = 10_000;
    let mut h = H::new(cfg);
    h.stream_all();
    h.ev(
        1.1,
        json!({"type": "response.created", "response": {"id": "r1"}}),
    );
    let mut outcomes = Vec::new();
    for k in 0..3 {
        let fx = h.ev(
            1.2 + f64::from(k) * 0.01,
            json!({"type": "response.audio.delta", "response_id": "r1", "delta": b64_pcm(2400, 1)}),
        );
        outcomes.push(fx.finish.is_some());
        if k == 2 {
            assert_failed(
                &fx,
                "the server sent more than 10000 bytes of output audio in one session (14400 so \
                 far): rtload spools a measured session's audio for its output.wav, so it stops \
                 here (the other sessions go on); raise `[workload] max_audio_bytes_per_session` \
                 if the server really sends this much",
            );
        }
    }
    assert_eq!(
        outcomes,
        [false, false, true],
        "only the delta past the cap ends it"
    );
}
