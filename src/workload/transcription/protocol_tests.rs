//! The transcription state machine driven by hand-made times: message order, pacing,
//! recorded times, and every failure path.

use super::*;

fn settings(pacing: PacingMode) -> Arc<Settings> {
    Arc::new(Settings {
        model: "m".into(),
        sample_rate: 16_000,
        chunk_ms: 200,
        pacing,
        created_timeout_s: 5.0,
        done_timeout_s: 10.0,
    })
}

/// 0.5 s of audio: appends of 6400, 6400, 3200 bytes.
fn core(pacing: PacingMode) -> TranscriptionCore {
    TranscriptionCore::new(settings(pacing), Bytes::from(vec![0u8; 16_000]))
}

fn ms(t0: Instant, ms: u64) -> Instant {
    t0 + Duration::from_millis(ms)
}

fn types(a: &Actions) -> Vec<String> {
    a.send
        .iter()
        .map(|(m, _)| {
            let v: Value = serde_json::from_str(m).unwrap();
            let t = v["type"].as_str().unwrap().to_owned();
            match v.get("final") {
                Some(f) => format!("{t}:{f}"),
                None => t,
            }
        })
        .collect()
}

#[test]
fn realtime_session_sends_in_order_on_schedule_and_records_times() {
    let t0 = Instant::now();
    let mut c = core(PacingMode::Realtime);
    let a = c.on_open(t0);
    assert_eq!(a.wake, Some(ms(t0, 5000)));
    assert!(a.send.is_empty());
    let a = c.on_text(
        r#"{"type":"session.created","id":"s","created":1}"#,
        ms(t0, 10),
    );
    assert_eq!(
        types(&a),
        [
            "session.update",
            "input_audio_buffer.commit:false",
            "input_audio_buffer.append"
        ]
    );
    assert_eq!(a.send[0].0, r#"{"model":"m","type":"session.update"}"#);
    assert_eq!(a.send[2].1, Some(ms(t0, 10)));
    assert_eq!(a.wake, Some(ms(t0, 210)));
    // Woken 5 ms late: the second append keeps its intended time.
    let a = c.on_wake(ms(t0, 215));
    assert_eq!(types(&a), ["input_audio_buffer.append"]);
    assert_eq!(a.send[0].1, Some(ms(t0, 210)));
    let b = c.on_text(
        r#"{"type":"transcription.delta","delta":"hello"}"#,
        ms(t0, 300),
    );
    assert_eq!(b, Actions::default());
    let a = c.on_wake(ms(t0, 410));
    assert_eq!(types(&a), ["input_audio_buffer.append"]);
    assert_eq!(a.wake, Some(ms(t0, 510)));
    let a = c.on_wake(ms(t0, 510));
    assert_eq!(types(&a), ["input_audio_buffer.commit:true"]);
    assert_eq!(a.send[0].1, Some(ms(t0, 510)));
    assert_eq!(a.wake, Some(ms(t0, 10_510)));
    assert_eq!(c.phase(), Phase::Finalizing);
    let a = c.on_text(
        r#"{"type":"transcription.done","text":"hello world","usage":{"prompt_tokens":7,"completion_tokens":2,"total_tokens":9}}"#,
        ms(t0, 700),
    );
    assert_eq!(a.finish, Some(Ok(())));
    let r = c.into_record();
    assert_eq!(r.created_s, Some(0.01));
    assert_eq!(r.first_audio_s, Some(0.01));
    assert_eq!(r.final_commit_s, Some(0.51));
    assert_eq!(r.done_s, Some(0.7));
    assert_eq!(r.appends, 3);
    assert_eq!(r.audio_s, 0.5);
    assert!((r.pacing_max_lag_s - 0.005).abs() < 1e-9);
    // The delta at 300 ms came after two appends: the audio sent so far ends at 0.4 s of
    // media, i.e. at 10 + 400 ms on the pacing clock.
    assert_eq!(r.deltas.len(), 1);
    assert_eq!(r.deltas[0].front_s, Some(0.41));
    assert_eq!(r.text.as_deref(), Some("hello world"));
    let u = r.usage.unwrap();
    assert_eq!(
        (u.prompt_tokens, u.completion_tokens, u.total_tokens),
        (Some(7), Some(2), Some(9))
    );
}

#[test]
fn append_carries_base64_pcm_of_one_chunk() {
    let t0 = Instant::now();
    let pcm: Vec<u8> = (0..16_000u32).map(|i| (i % 251) as u8).collect();
    let mut c = TranscriptionCore::new(settings(PacingMode::Realtime), Bytes::from(pcm.clone()));
    c.on_open(t0);
    let a = c.on_text(r#"{"type":"session.created"}"#, t0);
    let v: Value = serde_json::from_str(&a.send[2].0).unwrap();
    let audio = base64::engine::general_purpose::STANDARD
        .decode(v["audio"].as_str().unwrap())
        .unwrap();
    assert_eq!(audio, pcm[..6400]);
    assert_eq!(v.as_object().unwrap().len(), 2);
}

#[test]
fn speed_factor_halves_the_schedule() {
    let t0 = Instant::now();
    let mut c = core(PacingMode::Speed(2.0));
    c.on_open(t0);
    let a = c.on_text(r#"{"type":"session.created"}"#, t0);
    assert_eq!(a.wake, Some(ms(t0, 100)));
}

#[test]
fn saturate_sends_one_append_per_round_without_schedule() {
    let t0 = Instant::now();
    let mut c = core(PacingMode::Saturate);
    c.on_open(t0);
    let a = c.on_text(r#"{"type":"session.created"}"#, t0);
    assert_eq!(a.send.len(), 3);
    assert_eq!(a.send[2].1, None);
    assert_eq!(a.wake, Some(t0));
    let a = c.on_wake(ms(t0, 1));
    assert_eq!(types(&a), ["input_audio_buffer.append"]);
    let a = c.on_wake(ms(t0, 2));
    assert_eq!(types(&a), ["input_audio_buffer.append"]);
    let a = c.on_wake(ms(t0, 3));
    assert_eq!(types(&a), ["input_audio_buffer.commit:true"]);
    assert_eq!(a.send[0].1, None);
    assert_eq!(c.record().final_commit_s, Some(0.003));
    assert_eq!(c.record().first_audio_s, Some(0.0));
}

#[test]
fn error_event_fails_with_code_meaning_and_message() {
    let t0 = Instant::now();
    let mut c = core(PacingMode::Realtime);
    c.on_open(t0);
    let a = c.on_text(
        r#"{"type":"error","error":"bad base64","code":"invalid_audio"}"#,
        t0,
    );
    let msg = a.finish.unwrap().unwrap_err().1;
    assert!(msg.starts_with("server error invalid_audio"), "{msg}");
    assert!(msg.ends_with(": bad base64"), "{msg}");
    assert_eq!(c.record().error_code.as_deref(), Some("invalid_audio"));
    // Nothing after the outcome changes it.
    assert_eq!(
        c.on_text(r#"{"type":"transcription.done","text":""}"#, t0),
        Actions::default()
    );
}

#[test]
fn error_shapes_are_read() {
    let (c, m) = error_fields(&json!({"type":"error","error":{"message":"x","code":"y"}}));
    assert_eq!((c.as_deref(), m.as_str()), (Some("y"), "x"));
    let (c, m) = error_fields(&json!({"type":"error","message":"z"}));
    assert_eq!((c, m.as_str()), (None, "z"));
    assert_eq!(error_message(None, "z"), "server error: z");
    assert_eq!(error_message(Some("weird"), "z"), "server error weird: z");
}

#[test]
fn garbage_json_fails_naming_what_came() {
    let t0 = Instant::now();
    let mut c = core(PacingMode::Realtime);
    c.on_open(t0);
    let a = c.on_text("not json {", t0);
    let msg = a.finish.unwrap().unwrap_err().1;
    assert!(msg.starts_with("invalid JSON from the server"), "{msg}");
    assert!(msg.contains("\"not json {\""), "{msg}");
}

#[test]
fn timeouts_fail_with_their_message() {
    let t0 = Instant::now();
    let mut c = core(PacingMode::Realtime);
    c.on_open(t0);
    assert_eq!(c.on_wake(ms(t0, 4999)).wake, Some(ms(t0, 5000)));
    let msg = c.on_wake(ms(t0, 5000)).finish.unwrap().unwrap_err().1;
    assert_eq!(msg, "no session.created within 5 s of connecting");

    let mut c = core(PacingMode::Saturate);
    c.on_open(t0);
    c.on_text(r#"{"type":"session.created"}"#, t0);
    for i in 1..=3 {
        c.on_wake(ms(t0, i));
    }
    assert_eq!(c.phase(), Phase::Finalizing);
    assert!(c.on_wake(ms(t0, 5000)).finish.is_none());
    let msg = c.on_wake(ms(t0, 10_003)).finish.unwrap().unwrap_err().1;
    assert_eq!(msg, "no transcription.done within 10 s of the final commit");
}

#[test]
fn early_close_and_early_done_fail() {
    let t0 = Instant::now();
    let mut c = core(PacingMode::Realtime);
    c.on_open(t0);
    c.on_text(r#"{"type":"session.created"}"#, t0);
    let msg = c.on_closed(Some("bye")).finish.unwrap().unwrap_err().1;
    assert_eq!(
        msg,
        "the server closed the WebSocket before transcription.done: bye"
    );

    let mut c = core(PacingMode::Realtime);
    c.on_open(t0);
    c.on_text(r#"{"type":"session.created"}"#, t0);
    let a = c.on_text(r#"{"type":"transcription.done","text":"x"}"#, t0);
    let msg = a.finish.unwrap().unwrap_err().1;
    assert_eq!(
        msg,
        "transcription.done arrived before the final commit was sent"
    );
}

#[test]
fn empty_audio_commits_at_once() {
    let t0 = Instant::now();
    let mut c = TranscriptionCore::new(settings(PacingMode::Realtime), Bytes::new());
    c.on_open(t0);
    let a = c.on_text(r#"{"type":"session.created"}"#, t0);
    assert_eq!(
        types(&a),
        [
            "session.update",
            "input_audio_buffer.commit:false",
            "input_audio_buffer.commit:true"
        ]
    );
    assert_eq!(c.record().first_audio_s, None);
}

#[test]
fn chunk_bytes_and_media_time_follow_the_rate() {
    let mut s = (*settings(PacingMode::Realtime)).clone();
    assert_eq!(s.chunk_bytes(), 6400);
    s.sample_rate = 24_000;
    s.chunk_ms = 100;
    assert_eq!(s.chunk_bytes(), 4800);
    assert_eq!(s.media_time(48_000), Duration::from_secs(1));
}

#[test]
fn each_failure_has_its_cause() {
    let t0 = Instant::now();
    let cause = |f: &dyn Fn(&mut TranscriptionCore) -> Actions| {
        let mut c = core(PacingMode::Realtime);
        c.on_open(t0);
        f(&mut c).finish.unwrap().unwrap_err().0
    };
    assert_eq!(
        cause(&|c| c.on_text(r#"{"type":"error","error":"x"}"#, t0)),
        Cause::ServerError
    );
    assert_eq!(cause(&|c| c.on_text("}{", t0)), Cause::Protocol);
    assert_eq!(cause(&|c| c.on_closed(None)), Cause::ClosedEarly);
    assert_eq!(cause(&|c| c.on_wake(ms(t0, 5000))), Cause::Timeout);
}
