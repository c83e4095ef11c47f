//! Fault switches of the duplex behaviour core.

use super::*;

fn with_faults(f: impl FnOnce(&mut DuplexFaults)) -> DuplexServerConfig {
    let mut cfg = fast();
    f(&mut cfg.faults);
    cfg
}

/// The first response's events of a run with these faults.
fn first_response(f: impl FnOnce(&mut DuplexFaults)) -> Vec<Value> {
    run_session(with_faults(f))
        .iter()
        .map(event)
        .filter(|e| {
            e["type"]
                .as_str()
                .is_some_and(|t| t.starts_with("response."))
        })
        .cloned()
        .take_while(|e| !(e["type"] == "response.created" && e["response"]["id"] == "resp_7_1"))
        .collect()
}

#[test]
fn ledger_faults_shape_the_first_response() {
    let ev = first_response(|f| f.missing_response_id = true);
    assert_eq!(
        ev[0],
        json!({"type": "response.created", "response": {"status": "in_progress"}})
    );
    let ev = first_response(|f| f.duplicate_created = true);
    assert_eq!(
        (ev[0]["type"].clone(), ev[1].clone()),
        (json!("response.created"), ev[0].clone())
    );
    let ev = first_response(|f| f.done_without_created = true);
    assert_eq!(
        ev[0],
        json!({"type": "response.done", "response": {"id": ORPHAN_RESPONSE_ID, "status": "completed"}})
    );
    let ev = first_response(|f| f.duplicate_done = true);
    assert_eq!(ev[ev.len() - 1], ev[ev.len() - 2]);
    for (status, faults) in [
        (
            "failed",
            DuplexFaults {
                failed_response: true,
                ..DuplexFaults::default()
            },
        ),
        (
            "cancelled",
            DuplexFaults {
                cancelled_response: true,
                ..DuplexFaults::default()
            },
        ),
    ] {
        let ev = first_response(|f| *f = faults);
        let done = &ev[ev.len() - 1]["response"];
        assert_eq!(
            (
                done["status"].as_str(),
                done["status_details"]["type"].as_str()
            ),
            (Some(status), Some(status))
        );
    }
}

#[test]
fn wire_faults_touch_the_first_audio_delta() {
    let first_audio = |f: fn(&mut DuplexFaults)| {
        first_response(f)
            .into_iter()
            .find(|e| e["type"] == "response.audio.delta")
            .unwrap()
    };
    assert_eq!(
        first_audio(|f| f.audio_wrong_format = true)["format"],
        "opus"
    );
    assert_eq!(
        first_audio(|f| f.audio_wrong_rate = true)["sample_rate_hz"],
        16000
    );
    assert!(
        STANDARD
            .decode(
                first_audio(|f| f.audio_bad_base64 = true)["delta"]
                    .as_str()
                    .unwrap()
            )
            .is_err()
    );
    assert_eq!(
        STANDARD
            .decode(
                first_audio(|f| f.audio_odd_length = true)["delta"]
                    .as_str()
                    .unwrap()
            )
            .unwrap()
            .len(),
        959
    );
    assert_eq!(
        first_audio(|f| f.audio_unknown_response = true)["response_id"],
        UNKNOWN_RESPONSE_ID
    );
    let ev = first_response(|f| f.transcript_unknown_response = true);
    assert_eq!(ev[1]["response_id"], UNKNOWN_RESPONSE_ID);
    assert_eq!(ev[1]["type"], "response.audio_transcript.delta");
    let out = run_session(with_faults(|f| {
        f.omit_format = true;
        f.omit_sample_rate = true;
    }));
    let audio = of_type(&out, "response.audio.delta");
    assert_eq!(audio.len(), 6);
    assert!(
        audio
            .iter()
            .all(|e| e.get("format").is_none() && e.get("sample_rate_hz").is_none())
    );
    // Later deltas and responses are clean.
    let ev = first_response(|f| f.audio_wrong_format = true);
    assert_eq!(ev.iter().filter(|e| e["format"] == "pcm16").count(), 2);
}

#[test]
fn session_and_commit_faults() {
    let mut plan = plan_with(with_faults(|f| f.error_on_update = Some("busy".into())));
    assert_eq!(
        plan.start(),
        [
            Action::Send(json!({"type": "error", "message": "busy"})),
            Action::Close
        ]
    );
    let mut plan = plan_with(with_faults(|f| f.no_session_created = true));
    assert!(plan.start().is_empty());

    let mut plan = plan_with(with_faults(|f| {
        f.error_event_after_s = Some(0.5);
        f.expire_after_s = Some(1.0);
        f.close_mid_session_after_s = Some(2.0);
    }));
    plan.start();
    let timeline = drain(&mut plan);
    assert_eq!(
        timeline,
        [
            (
                ms(500),
                Action::Send(error_event("injected fault: error event after 0.5 s"))
            ),
            (
                ms(1000),
                Action::Send(json!({"type": "session.expired", "reason": "injected_fault"}))
            ),
            (ms(1000), Action::Close),
            (ms(2000), Action::Close),
        ]
    );

    let out = run_session(with_faults(|f| f.never_commit_ack = true));
    assert!(of_type(&out, "input_audio_buffer.committed").is_empty());
    assert_eq!(of_type(&out, "response.created").len(), 2);
    let out = run_session(with_faults(|f| f.no_final_decision = true));
    assert_eq!(of_type(&out, "input_audio_buffer.committed").len(), 1);
    assert_eq!(of_type(&out, "response.created").len(), 1);
    assert_eq!(
        types(&out).last().map(String::as_str),
        Some("input_audio_buffer.committed")
    );

    let mut plan = plan_with(with_faults(|f| {
        f.close_with_reason = Some("server_shutdown".into())
    }));
    let out = plan.on_event("session.close", &json!({"type": "session.close"}), ms(1));
    assert_eq!(
        out,
        [
            Action::Send(json!({"type": "session.closed", "reason": "server_shutdown"})),
            Action::Close
        ]
    );
}

#[test]
fn faults_select_sessions_and_points_advance() {
    let faults = DuplexFaults {
        duplicate_done: true,
        only_sessions: vec![2],
        ..DuplexFaults::default()
    };
    assert!(faults.for_session(2).duplicate_done);
    assert!(!faults.for_session(0).duplicate_done);
    assert_eq!(next_point(6400, 6400, 6400), 12800);
    assert_eq!(next_point(6400, 6400, 20000), 25600);
    assert_eq!(seconds(f64::NAN), Duration::ZERO);
    assert_eq!(seconds(-1.0), Duration::ZERO);
    assert_eq!(seconds(f64::INFINITY), Duration::from_secs(1_000_000_000));
}

#[test]
fn tone_is_pcm16_at_24_khz_and_not_silent() {
    let pcm = tone_pcm(440.0, 200);
    assert_eq!(pcm.len(), 4800 * 2);
    assert!(
        pcm.chunks(2)
            .any(|s| i16::from_le_bytes([s[0], s[1]]).abs() > 5000)
    );
}

#[test]
fn final_commit_drops_responses_not_yet_created() {
    // Each 0.2 s append triggers a response lasting 30 + 2 + 2 ms; three appends at once
    // queue responses 1 and 2 behind response 0.
    let mut plan = plan_with(fast());
    plan.start();
    let mut out = Vec::new();
    for i in 1..=3u64 {
        out.extend(plan.on_event(
            "input_audio_buffer.append",
            &append_event(6400, 6400 * i, 0),
            ms(200),
        ));
    }
    assert_eq!(types(&out), ["response.created"]);
    let commit = json!({"type": "input_audio_buffer.commit", "final": true});
    let answer = plan.on_event("input_audio_buffer.commit", &commit, ms(201));
    assert_eq!(event(&answer[0])["overlap_deferred"], true);
    out.extend(answer);
    out.extend(sent(&drain(&mut plan)));
    let ids: Vec<&Value> = of_type(&out, "response.created")
        .iter()
        .map(|e| &e["response"]["id"])
        .collect();
    assert_eq!(ids, [&json!("resp_7_0"), &json!("resp_7_3")]);
    assert_eq!(of_type(&out, "response.done").len(), 2);
    let ack = json!({"type": "playback.ack", "response_id": "resp_7_1", "played_ms": 0});
    assert!(
        event(&plan.on_event("playback.ack", &ack, ms(900))[0])["message"]
            .as_str()
            .unwrap()
            .contains("unknown response_id")
    );
}
