//! Unit tests of the pure duplex-session core: inbound validation (spec §1.2 shapes and
//! the §1.4 append vectors), response scripting and pacing, commit/decision logic,
//! acks, and every fault switch's effect on the event stream.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::json;

use super::events::{ORPHAN_RESPONSE_ID, UNKNOWN_RESPONSE_ID, tone_pcm};
use super::inbound::{Ack, Append, validate_append};
use super::*;
use crate::server::config::DuplexFaults;

const JPEG: [u8; 4] = [0xFF, 0xD8, 0xFF, 0xE0];

fn update_event() -> Value {
    json!({"type": "session.update", "session": {
        "model": "openbmb/MiniCPM-o-4_5", "modalities": ["audio", "text"],
        "input_audio_format": "pcm16", "output_audio_format": "pcm16",
        "turn_detection": null, "overlap_policy": "listen_only",
        "playback_commit_policy": "ack_only",
        "extra_body": {"auto_response": true, "minicpmo45_native_duplex": true,
                       "force_listen_count": 0},
        "ref_audio": format!("data:audio/wav;base64,{}", STANDARD.encode(b"RIFF....WAVE")),
        "session_id": "omniinteract:s:bench-0:1", "idle_timeout_s": 900.0}})
}

fn append_event(bytes: usize, end: u64, frames: usize) -> Value {
    let mut event = json!({"type": "input_audio_buffer.append",
        "audio": STANDARD.encode(vec![0u8; bytes]), "input_audio_format": "pcm16",
        "sample_rate_hz": 16000, "duration_ms": bytes as u64 * 1000 / 32000,
        "audio_end_ms": end * 1000 / 32000});
    if frames > 0 {
        event["video_frames"] = json!(vec![STANDARD.encode(JPEG); frames]);
    }
    event
}

fn fast() -> DuplexServerConfig {
    DuplexServerConfig {
        respond_every_s: 0.2,
        audio_deltas: 3,
        delta_ms: 20,
        rtf: 0.1,
        first_response_delay_ms: 30.0,
        ..DuplexServerConfig::default()
    }
}

fn plan_with(cfg: DuplexServerConfig) -> DuplexPlan {
    let info = validate_update(&update_event()).unwrap();
    DuplexPlan::new(cfg, 7, info, None, 300.0)
}

fn ms(v: u64) -> Duration {
    Duration::from_millis(v)
}

/// Every remaining timeline action, with its due offset.
fn drain(plan: &mut DuplexPlan) -> Vec<(Duration, Action)> {
    let mut out = Vec::new();
    while let Some(due) = plan.next_due() {
        out.push((due, plan.pop_due(Duration::MAX).unwrap()));
    }
    out
}

fn types(actions: &[Action]) -> Vec<String> {
    actions
        .iter()
        .map(|a| match a {
            Action::Send(v) => v["type"].as_str().unwrap_or("?").to_string(),
            Action::Close => "close".to_string(),
        })
        .collect()
}

fn sent(actions: &[(Duration, Action)]) -> Vec<Action> {
    actions.iter().map(|(_, a)| a.clone()).collect()
}

fn event(action: &Action) -> &Value {
    match action {
        Action::Send(v) => v,
        Action::Close => panic!("expected an event"),
    }
}

/// One session: two 0.2 s appends (the second one trimmed by a sample), commit, then
/// the rest of the timeline. Returns every action in the order the loop would send it.
fn run_session(cfg: DuplexServerConfig) -> Vec<Action> {
    let mut plan = plan_with(cfg);
    let mut out = plan.start();
    let commit = json!({"type": "input_audio_buffer.commit", "final": true});
    for (kind, event, at) in [
        (
            "input_audio_buffer.append",
            append_event(6400, 6400, 1),
            ms(200),
        ),
        (
            "input_audio_buffer.append",
            append_event(6398, 12798, 0),
            ms(400),
        ),
        ("input_audio_buffer.commit", commit, ms(400)),
    ] {
        out.extend(plan.on_event(kind, &event, at));
    }
    out.extend(sent(&drain(&mut plan)));
    out
}

/// The events of `actions` of this type.
fn of_type<'a>(actions: &'a [Action], kind: &str) -> Vec<&'a Value> {
    actions
        .iter()
        .map(event)
        .filter(|e| e["type"] == kind)
        .collect()
}

#[test]
fn update_of_spec_1_2_is_accepted() {
    let info = validate_update(&update_event()).unwrap();
    assert_eq!(info.model, "openbmb/MiniCPM-o-4_5");
    assert_eq!(info.session_id.as_deref(), Some("omniinteract:s:bench-0:1"));
    assert_eq!(info.idle_timeout_s, Some(900.0));
}

#[test]
fn bad_updates_are_named() {
    let cases: [(&str, Value, &str); 9] = [
        (
            "/session",
            json!(null),
            "session.update needs a \"session\" object",
        ),
        (
            "/session/model",
            json!(""),
            "session.model must be a non-empty string",
        ),
        (
            "/session/input_audio_format",
            json!("opus"),
            "session.input_audio_format must be \"pcm16\", got \"opus\"",
        ),
        (
            "/session/output_audio_format",
            json!(null),
            "session.output_audio_format must be \"pcm16\", got null",
        ),
        (
            "/session/modalities",
            json!(["text"]),
            "session.modalities must be a list of strings containing \"audio\"",
        ),
        (
            "/session/turn_detection",
            json!({"type": "semantic_vad"}),
            "session.turn_detection must be null or an object with type='server_vad'",
        ),
        (
            // Server VAD with the seed's listen_only policy: vLLM-Omni's conflict.
            "/session/turn_detection",
            json!({"type": "server_vad"}),
            "overlap_policy='listen_only' conflicts with turn_detection; expected 'barge_in_on_speech'",
        ),
        (
            "/session/ref_audio",
            json!("data:audio/wav;base64,@@"),
            "session.ref_audio is not valid base64",
        ),
        (
            "/session/idle_timeout_s",
            json!(0),
            "session.idle_timeout_s must be a number of seconds in (0, 1e9], got 0",
        ),
    ];
    for (pointer, value, message) in cases {
        let mut event = update_event();
        *event.pointer_mut(pointer).unwrap() = value;
        let err = validate_update(&event).unwrap_err();
        assert!(err.starts_with(message), "{pointer}: {err}");
    }
}

#[test]
fn appends_of_the_worked_example_of_spec_1_4_validate() {
    // 10.0 s video: 319998 bytes = 49 x 6400 + 6398; frames on appends #3, #8, … #48.
    let mut total = 0u64;
    let mut frames = 0;
    for i in 1..=50u64 {
        let bytes = if i == 50 { 6398 } else { 6400 };
        let with_frame = usize::from(i % 5 == 3);
        let event = append_event(bytes, total + bytes as u64, with_frame);
        let append = validate_append(&event, total).unwrap();
        assert_eq!(
            append,
            Append {
                bytes: bytes as u64,
                frames: with_frame
            }
        );
        total += append.bytes;
        frames += append.frames;
        if i == 50 {
            assert_eq!(
                (
                    event["duration_ms"].as_u64(),
                    event["audio_end_ms"].as_u64()
                ),
                (Some(199), Some(9999))
            );
        }
    }
    assert_eq!((total, frames), (319_998, 10));
}

/// A valid append with one field replaced (JSON pointer, value) and the start of the
/// error message the server must give for it.
fn bad_append_cases() -> [(&'static str, Value, &'static str); 10] {
    [
        ("/audio", json!("@@@@"), "audio is not valid base64"),
        (
            "/audio",
            json!(STANDARD.encode([1u8, 2, 3])),
            "audio is not PCM16 aligned: 3 bytes",
        ),
        ("/audio", json!(""), "audio is empty"),
        (
            "/sample_rate_hz",
            json!(24000),
            "sample_rate_hz must be 16000, got 24000",
        ),
        (
            "/input_audio_format",
            json!("opus"),
            "input_audio_format must be \"pcm16\", got \"opus\"",
        ),
        (
            "/duration_ms",
            json!(199),
            "duration_ms 199 does not match the 6400 audio bytes of this append (expected 200)",
        ),
        (
            "/audio_end_ms",
            json!(400),
            "audio_end_ms 400 does not match the 6400 audio bytes received so far (expected 200)",
        ),
        (
            "/video_frames",
            json!([]),
            "video_frames must be a non-empty list",
        ),
        (
            "/video_frames/0",
            json!(STANDARD.encode([0x89u8, b'P', b'N', b'G'])),
            "video_frames[0] is not a JPEG (does not start with the FF D8 SOI marker)",
        ),
        (
            "/video_frames/0",
            json!("not base64!"),
            "video_frames[0] is not valid base64",
        ),
    ]
}

#[test]
fn bad_appends_are_named() {
    let ok = append_event(6400, 6400, 1);
    for (pointer, value, message) in bad_append_cases() {
        let mut event = ok.clone();
        *event.pointer_mut(pointer).unwrap() = value;
        let err = validate_append(&event, 0).unwrap_err();
        assert!(
            err.starts_with(&format!("input_audio_buffer.append: {message}")),
            "{pointer}: {err}"
        );
    }
    let mut missing = ok.clone();
    missing.as_object_mut().unwrap().remove("sample_rate_hz");
    assert!(
        validate_append(&missing, 0)
            .unwrap_err()
            .contains("sample_rate_hz must be 16000, got null")
    );
}

#[test]
fn acks_are_parsed_and_checked() {
    let ack = json!({"type": "playback.ack", "response_id": "r1", "item_id": "item_r1", "played_ms": 100, "committed_ms": 100});
    assert_eq!(
        parse_ack(&ack),
        Ok(Ack {
            response_id: "r1".into(),
            played_ms: 100
        })
    );
    for (key, value) in [
        ("item_id", json!("item_r2")),
        ("played_ms", json!(-1)),
        ("committed_ms", json!(101)),
        ("response_id", json!(5)),
    ] {
        let mut bad = ack.clone();
        bad[key] = value;
        assert!(parse_ack(&bad).is_err(), "{key}");
    }
}

#[test]
fn normal_session_event_order_ids_and_pacing() {
    let mut plan = plan_with(fast());
    let start = plan.start();
    assert_eq!(types(&start), ["session.created"]);
    let created = event(&start[0]);
    assert_eq!(created["session"]["capabilities"]["chunk_period_ms"], 1000);
    assert_eq!(created["session"]["id"], "omniinteract:s:bench-0:1");
    // response.created goes out with the triggering append.
    let now = plan.on_event(
        "input_audio_buffer.append",
        &append_event(6400, 6400, 1),
        ms(200),
    );
    let mut timeline = vec![(ms(200), now[0].clone())];
    assert_eq!(now.len(), 1);
    timeline.extend(drain(&mut plan));
    let kinds = types(&sent(&timeline));
    assert_eq!(
        kinds,
        [
            "response.created",
            "response.audio_transcript.delta",
            "response.audio.delta",
            "response.audio_transcript.delta",
            "response.audio.delta",
            "response.audio_transcript.delta",
            "response.audio.delta",
            "response.done"
        ]
    );
    // First delta 30 ms after the trigger, each 20 ms delta 2 ms (rtf 0.1) after the previous.
    let dues: Vec<Duration> = timeline.iter().map(|(d, _)| *d).collect();
    for (i, due) in [(1, 230), (2, 230), (4, 232), (6, 234), (7, 234)] {
        assert!(
            dues[i].abs_diff(ms(due)) < Duration::from_micros(10),
            "{i}: {:?}",
            dues[i]
        );
    }
    let id = "resp_7_0";
    assert_eq!(event(&timeline[0].1)["response"]["id"], id);
    let words: String = [1, 3, 5]
        .iter()
        .map(|&i| event(&timeline[i].1)["delta"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(words, "hello from the");
    for (k, i) in [2, 4, 6].into_iter().enumerate() {
        let audio = event(&timeline[i].1);
        assert_eq!(audio["response_id"], id);
        assert_eq!(
            (audio["format"].as_str(), audio["sample_rate_hz"].as_u64()),
            (Some("pcm16"), Some(24000))
        );
        assert_eq!(audio["metadata"]["audio_duration_ms"], 20 * (k as u64 + 1));
        let pcm = STANDARD.decode(audio["delta"].as_str().unwrap()).unwrap();
        assert_eq!(pcm.len(), 960);
        assert_eq!(audio.get("vllm_omni").is_some(), k == 2);
    }
    let stage0 = &event(&timeline[6].1)["vllm_omni"]["stage_metrics"]["0"];
    assert_eq!(stage0["num_tokens_out"], 3);
    assert_eq!(stage0["vllm_itls_ms"].as_array().unwrap().len(), 2);
    assert_eq!(
        *event(&timeline[7].1),
        json!({"type": "response.done", "response": {"id": id, "status": "completed"}})
    );
}

#[test]
fn trimmed_final_input_is_decided_at_commit() {
    let out = run_session(fast());
    let kinds = types(&out);
    // The tail append (2 bytes short of 0.4 s) triggers nothing; the commit at 400 ms
    // comes after the first response ended (234 ms): no deferral, final response at once.
    assert_eq!(kinds[..2], ["session.created", "response.created"]);
    assert_eq!(
        kinds[8..11],
        [
            "response.done",
            "input_audio_buffer.committed",
            "response.created"
        ]
    );
    assert_eq!(
        *event(&out[9]),
        json!({"type": "input_audio_buffer.committed", "audio_end_ms": 399})
    );
    let created = of_type(&out, "response.created");
    assert_eq!(created.len(), 2);
    assert_eq!(created[1]["response"]["id"], "resp_7_1");
    assert_eq!(kinds.len(), 18);
    assert_eq!(kinds.last().map(String::as_str), Some("response.done"));
}

#[test]
fn commit_during_a_response_is_deferred() {
    let mut plan = plan_with(fast());
    plan.start();
    plan.on_event(
        "input_audio_buffer.append",
        &append_event(6400, 6400, 0),
        ms(200),
    );
    let commit = json!({"type": "input_audio_buffer.commit", "final": true});
    let out = plan.on_event("input_audio_buffer.commit", &commit, ms(201));
    assert_eq!(event(&out[0])["overlap_deferred"], true);
    let timeline = drain(&mut plan);
    let done: Vec<(Duration, &Value)> = timeline
        .iter()
        .map(|(d, a)| (*d, event(a)))
        .filter(|(_, e)| e["type"] == "response.done")
        .collect();
    assert_eq!(done.len(), 2);
    let final_created = timeline
        .iter()
        .find(|(_, a)| event(a)["type"] == "response.created")
        .unwrap();
    // The final response starts when the in-flight one ends, not at the commit.
    assert_eq!(final_created.0, done[0].0);

    let mut cfg = fast();
    cfg.deferred_commit = false;
    let mut plan = plan_with(cfg);
    plan.start();
    plan.on_event(
        "input_audio_buffer.append",
        &append_event(6400, 6400, 0),
        ms(200),
    );
    let out = plan.on_event("input_audio_buffer.commit", &commit, ms(201));
    assert!(event(&out[0]).get("overlap_deferred").is_none());
    assert_eq!(
        types(&sent(&drain(&mut plan)))
            .iter()
            .filter(|t| *t == "response.done")
            .count(),
        2
    );
}

#[test]
fn listen_decisions_and_buffering_notifications() {
    let listen = |b: bool| json!({"type": "response.listen", "response": {"metadata": {"model_listen": true, "buffering": b}}});
    let cfg = DuplexServerConfig {
        respond_every_s: 10.0,
        listen_every_s: 0.2,
        final_decision: FinalDecision::Listen,
        ..fast()
    };
    let out = run_session(cfg);
    assert_eq!(
        out[1..],
        [
            Action::Send(listen(false)),
            Action::Send(json!({"type": "input_audio_buffer.committed", "audio_end_ms": 399})),
            Action::Send(listen(false)),
        ]
    );

    let cfg = DuplexServerConfig {
        respond_every_s: 10.0,
        buffering_listens: true,
        ..fast()
    };
    let out = run_session(cfg);
    assert_eq!(
        types(&out)[..6],
        [
            "session.created",
            "response.listen",
            "response.listen",
            "input_audio_buffer.committed",
            "response.listen",
            "response.created"
        ]
    );
    for i in [1, 2, 4] {
        assert_eq!(out[i], Action::Send(listen(true)));
    }
}

mod append_text;
mod faults;
mod load;
mod misuse;
