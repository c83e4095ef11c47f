//! Misused commits and appends, fatal appends, playback acks.

use super::*;

#[test]
fn commit_and_append_misuse_are_errors() {
    let mut plan = plan_with(fast());
    plan.start();
    let out = plan.on_event(
        "input_audio_buffer.commit",
        &json!({"type": "input_audio_buffer.commit"}),
        ms(1),
    );
    assert!(
        event(&out[0])["message"]
            .as_str()
            .unwrap()
            .contains("\"final\": true")
    );
    let commit = json!({"type": "input_audio_buffer.commit", "final": true});
    assert_eq!(
        types(&plan.on_event("input_audio_buffer.commit", &commit, ms(2))),
        ["input_audio_buffer.committed", "response.created"]
    );
    assert_eq!(
        types(&plan.on_event("input_audio_buffer.commit", &commit, ms(3))),
        ["error"]
    );
    assert_eq!(
        types(&plan.on_event(
            "input_audio_buffer.append",
            &append_event(6400, 6400, 0),
            ms(4)
        )),
        ["error"]
    );
    assert_eq!(
        types(&plan.on_event("session.update", &update_event(), ms(5))),
        ["error"]
    );
    let out = plan.on_event("response.create", &json!({}), ms(6));
    assert_eq!(
        event(&out[0])["message"],
        "unknown event type 'response.create'"
    );
}

#[test]
fn bad_append_is_fatal_only_with_the_switch() {
    let bad = json!({"type": "input_audio_buffer.append", "audio": "@@", "input_audio_format": "pcm16", "sample_rate_hz": 16000});
    let mut plan = plan_with(fast());
    assert_eq!(
        types(&plan.on_event("input_audio_buffer.append", &bad, ms(1))),
        ["error"]
    );
    let mut cfg = fast();
    cfg.faults.fatal_append_errors = true;
    let mut plan = plan_with(cfg);
    assert_eq!(
        types(&plan.on_event("input_audio_buffer.append", &bad, ms(1))),
        ["error", "close"]
    );
}

#[test]
fn acks_are_recorded_and_required_when_asked() {
    let close = json!({"type": "session.close"});
    let ack = |played: u64| json!({"type": "playback.ack", "response_id": "resp_7_0", "item_id": "item_resp_7_0", "played_ms": played, "committed_ms": played});
    for (acked, require, expected) in [
        (None, false, vec!["session.closed", "close"]),
        (None, true, vec!["error", "session.closed", "close"]),
        (Some(40), true, vec!["error", "session.closed", "close"]),
        (Some(60), true, vec!["session.closed", "close"]),
    ] {
        let mut plan = plan_with(DuplexServerConfig {
            require_acks: require,
            ..fast()
        });
        plan.start();
        plan.on_event(
            "input_audio_buffer.append",
            &append_event(6400, 6400, 0),
            ms(200),
        );
        drain(&mut plan);
        if let Some(played) = acked {
            assert!(
                plan.on_event("playback.ack", &ack(played), ms(300))
                    .is_empty()
            );
        }
        let out = plan.on_event("session.close", &close, ms(400));
        assert_eq!(types(&out), expected, "{acked:?} {require}");
        if expected[0] == "error" {
            assert!(
                event(&out[0])["message"]
                    .as_str()
                    .unwrap()
                    .starts_with("missing completion playback.ack for resp_7_0")
            );
        }
        assert_eq!(
            *event(&out[out.len() - 2]),
            json!({"type": "session.closed"})
        );
    }
    let mut plan = plan_with(fast());
    assert!(
        event(&plan.on_event("playback.ack", &ack(0), ms(1))[0])["message"]
            .as_str()
            .unwrap()
            .contains("unknown response_id resp_7_0")
    );
    plan.on_event(
        "input_audio_buffer.append",
        &append_event(6400, 6400, 0),
        ms(200),
    );
    drain(&mut plan);
    assert!(
        event(&plan.on_event("playback.ack", &ack(61), ms(300))[0])["message"]
            .as_str()
            .unwrap()
            .contains("exceeds the 60 ms")
    );
}
