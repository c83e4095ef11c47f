//! Closing, error events, timeouts, transport failures and the later event names.

use super::*;

/// A session that has committed, decided (LISTEN) and sent `session.close` at 3.3 s.
fn closing_session() -> H {
    let mut h = H::new(settings());
    h.stream_all();
    h.ev(1.2, json!({"type": "input_audio_buffer.committed"}));
    h.ev(
        1.3,
        json!({"type": "response.listen", "metadata": {"model_listen": true}}),
    );
    assert_eq!(types(&sent(&h.wake(3.3))), ["session.close"]);
    h
}

#[test]
fn audio_for_an_uncreated_response_fails_as_it_arrives() {
    // §1.7: audio deltas are checked during ingestion.
    let audio = json!({"type": "response.audio.delta", "response_id": "r9", "delta": "AAAAAA==",
        "format": "pcm16", "sample_rate_hz": 24000});
    let mut h = closing_session();
    assert_failed(
        &h.ev(3.35, audio),
        "response audio has no matching response.created",
    );
}

#[test]
fn output_checks_after_close() {
    let cases = [
        (
            json!({"type": "response.text.delta", "delta": "x"}),
            "response transcript has no matching response.created",
        ),
        (
            json!({"type": "response.text.delta", "response_id": "r7", "delta": ""}),
            "response transcript has no matching response.created",
        ),
        (
            json!({"type": "response.created", "response_id": "late"}),
            "unfinished response_ids: ['late']",
        ),
    ];
    for (extra, msg) in cases {
        let mut h = closing_session();
        assert!(h.ev(3.35, extra).finish.is_none(), "{msg}");
        assert_failed(&h.ev(3.4, json!({"type": "session.closed"})), msg);
    }
}

#[test]
fn error_events_fail_or_warn() {
    let mut h = H::new(settings());
    h.ev(0.1, json!({"type": "session.created"}));
    let fx = h.ev(
        0.2,
        json!({"type": "error", "error": {"code": "playback_ack_too_late"}}),
    );
    assert!(fx.finish.is_none());
    // The reference is uploading: it sees the error only in its completion wait.
    let fx = h.ev(0.25, json!({"type": "error", "error": {"message": "bad"}}));
    assert!(fx.finish.is_none());
    for k in 1..=4 {
        assert!(h.wake(0.1 + 0.2 * f64::from(k)).finish.is_none());
    }
    let fx = h.wake(1.1);
    assert_failed(&fx, "{'error': {'message': 'bad'}, 'type': 'error'}");
    let msgs = sent(&fx);
    let t = types(&msgs);
    assert!(t.contains(&"input_audio_buffer.commit"), "{t:?}");
    assert_eq!(t.last(), Some(&"session.close"));
    let o = h.output();
    assert_eq!(
        o.artifact_warnings,
        ["server warning: playback_ack_too_late"]
    );
    assert_eq!(
        o.error.as_deref(),
        Some("{'error': {'message': 'bad'}, 'type': 'error'}")
    );
    assert_eq!(o.events.len(), 3, "the failing event is kept");
}

#[test]
fn server_ending_the_session_early_fails() {
    let mut h = H::new(settings());
    h.stream_all();
    assert_failed(
        &h.ev(1.2, json!({"type": "session.expired", "reason": "idle"})),
        "session.expired: idle",
    );
    // While configuring the reference waits only for session.created: the close that
    // follows is the failure.
    let mut h = H::new(settings());
    assert!(
        h.ev(0.05, json!({"type": "session.closed"}))
            .finish
            .is_none()
    );
    let mut fx = Effects::default();
    h.s.on_closed(h.at(0.06), Some("1000".into()), &mut fx);
    assert_failed(
        &fx,
        "Realtime WebSocket closed before the requested event arrived (the server closed with 1000 (OK))",
    );
}

#[test]
fn server_ending_the_session_while_uploading_reads_like_the_reference() {
    // Expired then closed mid-upload: the reference's next send raises the `websockets`
    // ConnectionClosed, whose text is its failure message (issue 11 item 12).
    let mut h = H::new(settings());
    h.ev(0.1, json!({"type": "session.created"}));
    let expired = json!({"type": "session.expired", "reason": "injected_fault"});
    assert!(h.ev(0.6, expired.clone()).finish.is_none());
    let mut fx = Effects::default();
    h.s.on_closed(h.at(0.61), Some("1000".into()), &mut fx);
    assert_failed(
        &fx,
        "received 1000 (OK); then sent 1000 (OK) (the server closed the WebSocket while the case's audio was still streaming)",
    );

    // A connection that just ends (no close frame).
    let mut h = H::new(settings());
    h.ev(0.1, json!({"type": "session.created"}));
    let mut fx = Effects::default();
    h.s.on_closed(h.at(0.5), None, &mut fx);
    assert_failed(
        &fx,
        "no close frame received or sent (the server closed the WebSocket while the case's audio was still streaming)",
    );

    // Expired but left open: the completion wait reports it right after the commit.
    let mut h = H::new(settings());
    h.ev(0.1, json!({"type": "session.created"}));
    assert!(h.ev(0.6, expired).finish.is_none());
    for k in 1..=4 {
        assert!(h.wake(0.1 + 0.2 * f64::from(k)).finish.is_none());
    }
    assert_failed(&h.wake(1.1), "session.expired: injected_fault");
}

#[test]
fn error_event_text_keeps_the_servers_key_order() {
    let mut h = H::new(settings());
    h.stream_all();
    let raw = r#"{"type":"error","error":{"type":"server_error","message":"boom","code":null}}"#;
    let mut fx = Effects::default();
    h.s.on_inbound(Inbound::Text(raw.into()), h.at(1.2), &mut fx);
    assert_failed(
        &fx,
        "{'type': 'error', 'error': {'type': 'server_error', 'message': 'boom', 'code': None}}",
    );
}

#[test]
fn session_closed_after_close_needs_no_reason() {
    for (reason, expect) in [
        (json!(null), None),
        (json!("client_close"), None),
        (
            json!("server_error"),
            Some("Unexpected session.closed: server_error"),
        ),
    ] {
        let mut h = closing_session();
        let fx = h.ev(3.4, json!({"type": "session.closed", "reason": reason}));
        match expect {
            None => assert_ok(&fx),
            Some(msg) => assert_failed(&fx, msg),
        }
        assert!(fx.outbound.is_empty(), "no second close after ours");
    }
}

#[test]
fn timeouts() {
    let mut h = H::new(settings());
    assert_failed(&h.wake(20.0), "Timed out waiting for session.created");

    let mut cfg = settings();
    cfg.timeout_s = 1.0;
    let mut h = H::new(cfg);
    h.ev(0.0, json!({"type": "session.created"}));
    assert_failed(
        &h.wake(1.9999375),
        "Realtime upload timed out after 1.99994s",
    );

    let mut h = H::new(settings());
    h.stream_all();
    h.ev(1.2, json!({"type": "input_audio_buffer.committed"}));
    h.ev(
        1.3,
        json!({"type": "response.created", "response": {"id": "r2"}}),
    );
    h.ev(
        1.3,
        json!({"type": "response.created", "response": {"id": "r1"}}),
    );
    let fx = h.wake(901.1);
    assert_failed(
        &fx,
        "Timed out waiting for committed input and stable responses; unfinished response_ids=['r1', 'r2']",
    );
    assert_eq!(types(&sent(&fx)), ["session.close"]);

    let mut h = H::new(settings());
    h.stream_all();
    assert_failed(
        &h.wake(901.1),
        "Timed out waiting for committed input and stable responses",
    );

    let mut h = closing_session();
    let fx = h.wake(23.3);
    assert_failed(&fx, "Timed out waiting for session.closed");
    assert!(fx.outbound.is_empty());
}

#[test]
fn transport_close_and_bad_frames() {
    let mut h = H::new(settings());
    let mut fx = Effects::default();
    h.s.on_inbound(
        Inbound::Binary(Bytes::from_static(b"\x00")),
        h.at(0.01),
        &mut fx,
    );
    h.ev(0.02, json!([1, 2]));
    assert!(fx.finish.is_none());
    let mut fx = Effects::default();
    h.s.on_closed(h.at(0.5), Some("1006".into()), &mut fx);
    assert_failed(
        &fx,
        "Realtime WebSocket closed before the requested event arrived (the server closed with 1006 (abnormal closure [internal]))",
    );
    assert!(
        h.output().events.is_empty(),
        "binary and non-object frames are not events"
    );

    let mut h = H::new(settings());
    let mut fx = Effects::default();
    h.s.on_inbound(Inbound::Text("{oops".into()), h.at(0.01), &mut fx);
    assert_failed(
        &fx,
        "Realtime WebSocket reader failed: server sent malformed JSON (key must be a string at line 1 column 2): \"{oops\"",
    );
}

#[test]
fn aliases_capture_and_barge_in() {
    let mut h = H::with(settings(), media(1, false), true);
    h.stream_all();
    h.ev(1.2, json!({"type": "input_audio_buffer.committed"}));
    h.ev(
        1.3,
        json!({"type": "response.created", "response": {"id": "r1"}}),
    );
    let fx = h.ev(1.4, json!({"type": "response.output_audio.delta", "response_id": "r1", "delta": b64_pcm(24_000, 3)}));
    assert_eq!(fx.media.len(), 1);
    assert!((fx.media[0].duration_s - 1.0).abs() < 1e-12);
    h.ev(1.45, json!({"type": "response.output_audio_transcript.delta", "response_id": "r1", "delta": "Hel"}));
    h.ev(1.46, json!({"type": "response.output_audio_transcript.delta", "response_id": "r1", "delta": "lo"}));
    h.ev(
        1.65,
        json!({"type": "output_audio_buffer.cleared", "response_id": "r1"}),
    );
    h.ev(
        1.7,
        json!({"type": "response.done", "response_id": "r1", "status": "cancelled"}),
    );
    h.ev(
        1.8,
        json!({"type": "response.listen", "metadata": {"model_listen": true}}),
    );
    h.wake(3.8);
    assert_ok(&h.ev(3.9, json!({"type": "session.closed"})));
    assert_eq!(h.acks[0], ("r1".to_owned(), 250));
    let o = h.output();
    assert_eq!(
        o.responses[0],
        ResponseRecord {
            response_id: "r1".into(),
            text: "Hello".into(),
            done: true,
            cancelled: true,
            audio_cleared: true
        }
    );
    assert_eq!(o.ineligible_reasons, ["cleared_response"]);
    assert_eq!(o.audio_bytes, 48_000, "ingested bytes, before the clear");
    assert_eq!(o.segments[0].samples, 6_000);
    assert_eq!(
        o.segments[0].pcm.len(),
        12_000,
        "captured PCM, truncated by the clear"
    );
    assert_eq!(
        o.artifact_warnings,
        [
            "response.output_audio.delta omitted format; assumed pcm16",
            "response.output_audio.delta omitted sample_rate_hz; assumed 24000",
        ]
    );
}
