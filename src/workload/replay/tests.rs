//! The replay plan and session, without sockets: pairs and offsets from recorded events,
//! sends at open + offset with that intended time, latency from the intended send to the
//! first reply of the recorded type, the end rules.

use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use super::plan::{Plan, RecordedEvent, RecordedSession, What, sanitize};
use super::session::ReplaySession;
use super::workload::scenario_text;
use crate::workload::{ByteString, Effects, FailureKind, Inbound, Outbound, Session};

fn out(t_s: f64, intended_s: Option<f64>, ty: &str) -> RecordedEvent {
    let text = format!("{{\"type\":\"{ty}\"}}");
    RecordedEvent {
        t_s,
        intended_s,
        from_client: true,
        what: What::Message {
            label: ty.into(),
            payload: Some(Outbound::Text(ByteString::from(text))),
        },
    }
}

fn inb(t_s: f64, ty: &str) -> RecordedEvent {
    RecordedEvent {
        t_s,
        intended_s: None,
        from_client: false,
        what: What::Message {
            label: ty.into(),
            payload: None,
        },
    }
}

fn open(t_s: f64) -> RecordedEvent {
    RecordedEvent {
        t_s,
        intended_s: None,
        from_client: true,
        what: What::Open,
    }
}

/// open at 10 s; `created`; `update` (reactive); `append` scheduled twice, 200 ms apart
/// (the first written late, before a reply); `delta`; `commit`; `done`.
fn session() -> RecordedSession {
    RecordedSession {
        name: "sessions/0.jsonl".into(),
        events: vec![
            open(10.0),
            inb(10.001, "session.created"),
            out(10.002, None, "session.update"),
            out(10.004, Some(10.001), "input_audio_buffer.append"),
            out(10.203, Some(10.201), "input_audio_buffer.append"),
            inb(10.350, "transcription.delta"),
            out(10.400, None, "input_audio_buffer.commit"),
            inb(10.500, "transcription.done"),
        ],
    }
}

#[test]
fn pairs_are_the_last_request_before_each_first_reply() {
    let plan = Plan::build(&[session()]).unwrap();
    let metrics: Vec<&str> = plan.pairs.iter().map(|p| p.metric.as_str()).collect();
    assert_eq!(
        metrics,
        [
            "replay_input_audio_buffer_append_to_transcription_delta_ms",
            "replay_input_audio_buffer_commit_to_transcription_done_ms"
        ]
    );
    assert_eq!(
        plan.replies,
        [
            "session.created",
            "transcription.delta",
            "transcription.done"
        ]
    );
    let s = &plan.sessions[0];
    let ms: Vec<u128> = s.sends.iter().map(|x| x.offset.as_micros()).collect();
    // Scheduled messages at their intended time, never before the one ahead of them.
    assert_eq!(ms, [2000, 2000, 201_000, 400_000]);
    let expects: Vec<Option<usize>> = s.sends.iter().map(|x| x.expects).collect();
    assert_eq!(expects, [None, None, Some(0), Some(1)]);
    assert_eq!(s.duration, Duration::from_millis(500));
}

#[test]
fn names_are_sanitized_and_never_collide() {
    assert_eq!(
        sanitize("response.output_audio.delta"),
        "response_output_audio_delta"
    );
    assert_eq!(sanitize("..."), "untyped");
    let mut s = session();
    s.events.push(out(10.6, None, "input-audio-buffer.commit"));
    s.events.push(inb(10.7, "transcription.done"));
    let plan = Plan::build(&[s]).unwrap();
    assert_eq!(
        plan.pairs[2].metric,
        "replay_input_audio_buffer_commit_to_transcription_done_2_ms"
    );
}

#[test]
fn a_recording_whose_sessions_never_opened_is_an_error() {
    let mut s = session();
    s.events.remove(0);
    let err = Plan::build(&[s]).unwrap_err();
    assert!(err.contains("--record DIR"), "{err}");
}

fn text(ty: &str) -> Inbound {
    Inbound::Text(ByteString::from(format!("{{\"type\":\"{ty}\",\"x\":1}}")))
}

fn replay(grace_ms: u64) -> ReplaySession {
    let plan = Plan::build(&[session()]).unwrap();
    let pairs: Arc<[_]> = plan.pairs.clone().into();
    let s = Arc::clone(&plan.sessions[0]);
    ReplaySession::new(s, pairs, Duration::from_millis(grace_ms))
}

#[test]
fn sends_at_open_plus_offset_and_measures_from_the_intended_send() {
    let t0 = Instant::now();
    let ms = |m: u64| t0 + Duration::from_millis(m);
    let mut s = replay(1000);
    let mut fx = Effects::default();
    s.on_open(t0, &mut fx);
    assert!(fx.outbound.is_empty());
    assert_eq!(fx.wake_at, Some(ms(2)));
    let mut fx = Effects::default();
    s.on_wake(ms(3), &mut fx);
    let intended: Vec<_> = fx.outbound.iter().map(|o| o.intended).collect();
    assert_eq!(
        intended,
        [Some(ms(2)), Some(ms(2))],
        "both due, each at its time"
    );
    assert_eq!(fx.wake_at, Some(ms(201)));
    s.on_wake(ms(201), &mut Effects::default());
    // The second append expects the delta; the first expects nothing.
    s.on_inbound(
        text("transcription.delta"),
        ms(351),
        &mut Effects::default(),
    );
    s.on_wake(ms(400), &mut Effects::default());
    let mut fx = Effects::default();
    s.on_inbound(text("transcription.done"), ms(480), &mut fx);
    assert!(fx.finish.is_none(), "the recorded session lasted 500 ms");
    assert_eq!(fx.wake_at, Some(ms(500)));
    let mut fx = Effects::default();
    s.on_wake(ms(500), &mut fx);
    assert!(matches!(fx.finish, Some(Ok(()))));
    let v = s.into_output();
    let delta = &v.latencies["replay_input_audio_buffer_append_to_transcription_delta_ms"];
    assert!((delta[0] - 150.0).abs() < 1e-6, "{delta:?}");
    let done = &v.latencies["replay_input_audio_buffer_commit_to_transcription_done_ms"];
    assert!((done[0] - 80.0).abs() < 1e-6, "{done:?}");
    assert_eq!(v.replies["transcription.delta"], 1);
    assert_eq!(v.missing, 0);
}

#[test]
fn a_missing_reply_fails_after_the_grace_and_is_counted() {
    let t0 = Instant::now();
    let ms = |m: u64| t0 + Duration::from_millis(m);
    let mut s = replay(100);
    s.on_open(t0, &mut Effects::default());
    for t in [2, 201, 400] {
        s.on_wake(ms(t), &mut Effects::default());
    }
    // The delta answers the append; nothing answers the commit.
    s.on_inbound(
        text("transcription.delta"),
        ms(380),
        &mut Effects::default(),
    );
    let mut fx = Effects::default();
    s.on_wake(ms(500), &mut fx);
    assert!(fx.finish.is_none());
    assert_eq!(fx.wake_at, Some(ms(600)));
    let mut fx = Effects::default();
    s.on_wake(ms(600), &mut fx);
    let err = fx.finish.unwrap().unwrap_err();
    assert_eq!(err.kind, FailureKind::Timeout);
    assert!(
        err.message
            .contains("1 `transcription.done` after `input_audio_buffer.commit`"),
        "{}",
        err.message
    );
    let v = s.into_output();
    assert_eq!(v.missing, 1);
    assert!(
        !v.latencies
            .contains_key("replay_input_audio_buffer_commit_to_transcription_done_ms")
    );
}

#[test]
fn a_server_close_before_the_end_fails_naming_what_was_left() {
    let t0 = Instant::now();
    let mut s = replay(100);
    s.on_open(t0, &mut Effects::default());
    let mut fx = Effects::default();
    s.on_closed(t0, Some("1011 busy".into()), &mut fx);
    let err = fx.finish.unwrap().unwrap_err();
    assert_eq!(err.kind, FailureKind::ClosedEarly);
    assert!(
        err.message.contains("1011 busy")
            && err.message.contains("4 recorded client messages unsent")
    );
    assert_eq!(
        s.into_output().missing,
        2,
        "the unsent messages' replies are missing"
    );
}

#[test]
fn the_in_memory_scenario_keeps_the_recorded_arrivals_and_concurrency() {
    let recorded = "name = \"t\"\n[workload]\nkind = \"x\"\n[load]\nsamples = 4\n\
max_concurrency = 2\nrequest_rate = 3.5\nseed = 7\nduration_s = 60\n";
    let text = scenario_text(std::path::Path::new("/r/rec"), Some(recorded), None);
    let doc: toml::Table = toml::from_str(&text).unwrap();
    assert_eq!(doc["name"].as_str(), Some("replay-t"));
    assert_eq!(doc["workload"]["recording"].as_str(), Some("/r/rec"));
    let load = doc["load"].as_table().unwrap();
    let keys: Vec<&str> = load.keys().map(String::as_str).collect();
    assert_eq!(keys, ["max_concurrency", "request_rate", "seed"]);
}

#[test]
fn the_in_memory_scenario_takes_the_runs_effective_load_over_the_files() {
    let recorded = "name = \"t\"\n[workload]\nkind = \"x\"\n[load]\nmax_concurrency = 1\n";
    // `--max-concurrency 3 --request-rate inf` given when recording.
    let effective = serde_json::json!({"max_concurrency": 3, "request_rate": "inf"});
    let text = scenario_text(
        std::path::Path::new("/r/rec"),
        Some(recorded),
        Some(&effective),
    );
    let doc: toml::Table = toml::from_str(&text).unwrap();
    assert_eq!(doc["load"]["max_concurrency"].as_integer(), Some(3));
    assert_eq!(doc["load"]["request_rate"].as_str(), Some("inf"));
}
