//! Tests of the duplex session state machine: scripted inbound events and wake-ups with
//! chosen times, no sockets, no clocks.

use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use bytes::Bytes;
use serde_json::json;
use tokio::time::Instant;

use super::*;
use crate::workload::omni::pacing::PacingMode;
use crate::workload::omni::playback::{SegmentPcm, decode_segments};
use crate::workload::omni::upload::CaseUpload;
use crate::workload::spool::Spool;

fn settings() -> DuplexSettings {
    let mut s = DuplexSettings::new("m", Arc::from("data:audio/wav;base64,UklGRg=="));
    s.extra_body.insert("force_listen_count".into(), json!(3));
    s.extra_body.insert("temperature".into(), json!(0.5));
    s
}

/// `secs` whole seconds of PCM with one frame per second (frame 0 missing when `gap`).
fn media(secs: usize, gap: bool) -> PreparedMedia {
    let frames: Vec<Option<Arc<str>>> = (0..secs)
        .map(|k| (!(gap && k == 0)).then(|| Arc::from(format!("frame{k}").as_str())))
        .collect();
    PreparedMedia {
        pcm: Bytes::from(vec![0u8; secs * 32_000]),
        frames: Arc::from(frames),
        duration_s: secs as f64,
    }
}

fn b64_pcm(samples: usize, value: u8) -> String {
    base64::engine::general_purpose::STANDARD.encode(vec![value; samples * 2])
}

struct H {
    s: DuplexSession,
    t0: Instant,
    /// `(response_id, played_ms)` of every `playback.ack` the session sent through
    /// [`H::ev`] and [`H::wake`], in order.
    acks: Vec<(String, u64)>,
}

impl H {
    fn new(cfg: DuplexSettings) -> Self {
        Self::with(cfg, media(1, false), false)
    }
    fn with(cfg: DuplexSettings, m: PreparedMedia, capture: bool) -> Self {
        Self::spooled(cfg, m, capture, None)
    }
    /// A session that spills to `spool` (PCM and events) when it captures.
    fn spooled(
        cfg: DuplexSettings,
        m: PreparedMedia,
        capture: bool,
        spool: Option<&Spool>,
    ) -> Self {
        let t0 = Instant::now();
        let short = Duration::from_secs_f64(cfg.timeout_s.min(20.0));
        let m = Arc::new(CaseUpload::new(&m));
        let mut s = DuplexSession::new(Arc::new(cfg), m, "omniinteract:1q1a:r-0:1".into(), capture);
        if let Some(spool) = spool {
            s = s.with_spool(spool.session(), spool.session());
        }
        let mut fx = Effects::default();
        s.on_open(t0, &mut fx);
        assert_eq!(fx.outbound.len(), 1);
        assert_eq!(fx.wake_at, Some(t0 + short));
        Self {
            s,
            t0,
            acks: Vec::new(),
        }
    }
    fn at(&self, secs: f64) -> Instant {
        self.t0 + Duration::from_secs_f64(secs)
    }
    fn ev(&mut self, secs: f64, v: Value) -> Effects {
        let mut fx = Effects::default();
        self.s
            .on_inbound(Inbound::Text(v.to_string().into()), self.at(secs), &mut fx);
        self.note_acks(&fx);
        fx
    }
    fn wake(&mut self, secs: f64) -> Effects {
        let mut fx = Effects::default();
        self.s.on_wake(self.at(secs), &mut fx);
        self.note_acks(&fx);
        fx
    }
    fn note_acks(&mut self, fx: &Effects) {
        for m in sent(fx).iter().filter(|m| m["type"] == "playback.ack") {
            let id = m["response_id"].as_str().unwrap().to_owned();
            assert_eq!(m["item_id"], format!("item_{id}"));
            assert_eq!(m["committed_ms"], m["played_ms"]);
            self.acks.push((id, m["played_ms"].as_u64().unwrap()));
        }
    }
    /// `session.created` at 0.1 s, then the 1 s upload (5 appends) and the commit at its
    /// scheduled time.
    fn stream_all(&mut self) -> Vec<Value> {
        let mut sent = sent(&self.ev(0.1, json!({"type": "session.created", "session": {}})));
        for k in 1..=4 {
            sent.extend(sent_of(&self.wake(0.1 + 0.2 * f64::from(k))));
        }
        sent.extend(sent_of(&self.wake(1.1)));
        assert_eq!(self.s.phase(), Phase::Completing);
        sent
    }
    fn response(&mut self, secs: f64, id: &str, text: &str) {
        self.ev(
            secs,
            json!({"type": "response.created", "response": {"id": id}}),
        );
        self.ev(
            secs + 0.1,
            json!({"type": "response.audio.delta", "response_id": id,
            "delta": b64_pcm(2400, 1), "format": "pcm16", "sample_rate_hz": 24000}),
        );
        self.ev(
            secs + 0.15,
            json!({"type": "response.audio_transcript.delta", "response_id": id, "delta": text}),
        );
    }
    /// The session's output with its transcripts rebuilt from its events, as the
    /// report does (a spilled log leaves them empty here).
    fn output(self) -> DuplexOutput {
        let mut o = self.s.into_output();
        fill_texts(&mut o.responses, &o.events);
        o
    }
}

fn sent_of(fx: &Effects) -> Vec<Value> {
    sent(fx)
}

fn sent(fx: &Effects) -> Vec<Value> {
    fx.outbound
        .iter()
        .map(|m| match &m.msg {
            Outbound::Text(t) => serde_json::from_str(t).unwrap(),
            Outbound::Binary(_) => panic!("binary outbound"),
        })
        .collect()
}

fn types(msgs: &[Value]) -> Vec<&str> {
    msgs.iter().map(|m| m["type"].as_str().unwrap()).collect()
}

#[track_caller]
fn assert_failed(fx: &Effects, expected: &str) {
    match &fx.finish {
        Some(Err(f)) => assert_eq!(f.message, expected),
        other => panic!("expected failure {expected:?}, got {other:?}"),
    }
}

#[track_caller]
fn assert_ok(fx: &Effects) {
    assert!(
        matches!(fx.finish, Some(Ok(()))),
        "expected success, got {:?}",
        fx.finish
    );
}

#[test]
fn session_update_payload() {
    let cfg = settings();
    let v: Value = serde_json::from_str(&cfg.session_update("sid")).unwrap();
    assert_eq!(v["type"], "session.update");
    let s = &v["session"];
    assert_eq!(s["model"], "m");
    assert_eq!(s["modalities"], json!(["audio", "text"]));
    assert_eq!(
        (
            s["input_audio_format"].as_str(),
            s["output_audio_format"].as_str()
        ),
        (Some("pcm16"), Some("pcm16"))
    );
    assert!(s["turn_detection"].is_null() && s.get("turn_detection").is_some());
    assert_eq!(
        (
            s["overlap_policy"].as_str(),
            s["playback_commit_policy"].as_str()
        ),
        (Some("listen_only"), Some("ack_only"))
    );
    assert_eq!(
        s["extra_body"],
        json!({"temperature": 0.5, "auto_response": true, "minicpmo45_native_duplex": true, "force_listen_count": 0})
    );
    // Server VAD (barge-in, server-VAD turns): as vLLM-Omni requires it.
    let vad = DuplexSettings {
        server_vad: true,
        ..cfg.clone()
    };
    let v: Value = serde_json::from_str(&vad.session_update("sid")).unwrap();
    assert_eq!(
        v["session"]["turn_detection"],
        json!({"type": "server_vad"})
    );
    assert_eq!(v["session"]["overlap_policy"], "barge_in_on_speech");
    assert_eq!(s["ref_audio"], "data:audio/wav;base64,UklGRg==");
    assert_eq!(s["session_id"], "sid");
    assert_eq!(s["idle_timeout_s"].as_f64(), Some(900.0));
}

#[test]
fn happy_path_with_a_response() {
    let mut h = H::new(settings());
    let up = h.stream_all();
    assert_eq!(
        types(&up),
        [
            ["input_audio_buffer.append"; 5].as_slice(),
            &["input_audio_buffer.commit"]
        ]
        .concat()
    );
    assert_eq!(
        up[5],
        json!({"type": "input_audio_buffer.commit", "final": true})
    );
    h.ev(1.2, json!({"type": "input_audio_buffer.committed"}));
    h.response(1.3, "r1", "Hi");
    let fx = h.ev(
        1.5,
        json!({"type": "response.done", "response": {"id": "r1", "status": "completed"}}),
    );
    let acks = sent(&fx);
    assert_eq!(
        acks,
        [
            json!({"type": "playback.ack", "response_id": "r1", "item_id": "item_r1", "played_ms": 100, "committed_ms": 100})
        ]
    );
    assert_eq!(
        fx.outbound[0].intended,
        Some(h.at(1.5)),
        "due when the last sample played"
    );
    assert_eq!(
        fx.wake_at,
        Some(h.at(3.5)),
        "settle deadline: last event + 2 s"
    );
    assert!(h.wake(3.4).outbound.is_empty());
    let fx = h.wake(3.5);
    assert_eq!(sent(&fx), [json!({"type": "session.close"})]);
    assert_eq!(h.s.phase(), Phase::Closing);
    assert_eq!(fx.wake_at, Some(h.at(23.5)));
    assert_ok(&h.ev(3.6, json!({"type": "session.closed"})));
    assert_eq!(h.s.phase(), Phase::Done);
    assert_eq!(h.acks, [("r1".to_owned(), 100)], "one ack, sent once");
    let o = h.output();
    assert!(o.success && o.error.is_none());
    assert!((o.latency_s - 3.6).abs() < 1e-9);
    assert_eq!((o.input_audio_chunks, o.input_video_frames), (5, 1));
    assert!((o.stream_start_s.unwrap() - 0.1).abs() < 1e-9);
    assert_eq!(o.audio_bytes, 4800);
    assert_eq!(
        o.responses,
        [ResponseRecord {
            response_id: "r1".into(),
            text: "Hi".into(),
            done: true,
            ..Default::default()
        }]
    );
    assert_eq!(o.events.len(), 7);
    let (at, audio) = &o.events[3];
    assert!((at - 1.4).abs() < 1e-9);
    assert!(audio.get("delta").is_none() && audio["audio_bytes"] == 4800);
    assert_eq!(audio["_client_received_at_s"].as_f64(), Some(*at));
    assert_eq!(o.segments.len(), 1);
    assert!(o.segments[0].pcm.is_empty(), "no PCM without capture");
    assert!(o.artifact_warnings.is_empty());
}

#[test]
fn listen_only_session_succeeds_unless_a_response_is_required() {
    for require in [false, true] {
        let mut cfg = settings();
        cfg.require_response = require;
        let mut h = H::new(cfg);
        h.stream_all();
        h.ev(1.2, json!({"type": "input_audio_buffer.committed"}));
        h.ev(1.3, json!({"type": "response.listen", "response": {"metadata": {"model_listen": true, "buffering": true}}}));
        assert!(
            h.wake(3.3).outbound.is_empty(),
            "a buffering notification is no decision"
        );
        let fx = h.ev(
            3.4,
            json!({"type": "response.listen", "response": {"metadata": {"model_listen": true}}}),
        );
        assert_eq!(fx.wake_at, Some(h.at(5.4)));
        assert_eq!(types(&sent(&h.wake(5.4))), ["session.close"]);
        let fx = h.ev(5.5, json!({"type": "session.closed"}));
        if require {
            assert_failed(
                &fx,
                "OmniInteract E2E requires a response with audio and transcript",
            );
        } else {
            assert_ok(&fx);
            assert!(h.output().responses.is_empty());
        }
    }
}

#[test]
fn require_response_accepts_a_complete_output() {
    let mut cfg = settings();
    cfg.require_response = true;
    // The response plays 1.3 s after the stream started: inside a 2 s horizon.
    let mut h = H::with(
        cfg,
        PreparedMedia {
            duration_s: 1.5,
            ..media(1, false)
        },
        false,
    );
    h.stream_all();
    h.ev(1.2, json!({"type": "input_audio_buffer.committed"}));
    h.response(1.3, "r1", " Hello ");
    h.ev(
        1.5,
        json!({"type": "response.done", "response_id": "r1", "status": "completed"}),
    );
    h.wake(3.5);
    assert_ok(&h.ev(3.6, json!({"type": "session.closed"})));
}

#[test]
fn settle_restarts_on_every_new_event() {
    let mut h = H::new(settings());
    h.stream_all();
    h.ev(1.2, json!({"type": "input_audio_buffer.committed"}));
    h.ev(
        1.3,
        json!({"type": "response.listen", "metadata": {"model_listen": true}}),
    );
    let fx = h.ev(2.0, json!({"type": "rate_limits.updated"}));
    assert_eq!(fx.wake_at, Some(h.at(4.0)));
    assert!(h.wake(3.3).outbound.is_empty());
}

#[test]
fn deferred_commit_waits_for_prior_responses() {
    let mut h = H::new(settings());
    h.stream_all();
    h.ev(
        1.15,
        json!({"type": "response.created", "response": {"id": "r0"}}),
    );
    h.ev(
        1.2,
        json!({"type": "input_audio_buffer.committed", "event": {"overlap_deferred": true}}),
    );
    h.ev(
        1.3,
        json!({"type": "response.done", "response": {"id": "r0", "status": "completed"}}),
    );
    let fx = h.wake(3.3);
    assert!(
        fx.outbound.is_empty(),
        "the prior response's done is not the decision"
    );
    assert_eq!(
        fx.wake_at,
        Some(h.at(1.1 + 900.0)),
        "only the completion timeout is pending"
    );
    h.ev(
        3.4,
        json!({"type": "response.created", "response": {"id": "r1"}}),
    );
    h.ev(
        3.5,
        json!({"type": "response.done", "response": {"id": "r1", "status": "completed"}}),
    );
    assert_eq!(types(&sent(&h.wake(5.5))), ["session.close"]);
}

#[test]
fn cancelled_done_is_not_a_decision() {
    let mut h = H::new(settings());
    h.stream_all();
    h.ev(1.2, json!({"type": "input_audio_buffer.committed"}));
    h.ev(
        1.3,
        json!({"type": "response.created", "response": {"id": "r1"}}),
    );
    h.ev(
        1.4,
        json!({"type": "response.done", "response": {"id": "r1", "status": "cancelled"}}),
    );
    assert!(h.wake(3.4).outbound.is_empty());
}

#[test]
fn playback_acks_are_woken_for_during_streaming() {
    let mut h = H::new(settings());
    h.ev(0.1, json!({"type": "session.created"}));
    h.ev(
        0.15,
        json!({"type": "response.created", "response": {"id": "r1"}}),
    );
    h.ev(
        0.16,
        json!({"type": "response.audio.delta", "response_id": "r1", "delta": b64_pcm(2400, 1),
        "format": "pcm16", "sample_rate_hz": 24000}),
    );
    let fx = h.ev(0.2, json!({"type": "response.done", "response_id": "r1"}));
    assert!(fx.outbound.is_empty());
    assert_eq!(
        fx.wake_at,
        Some(h.at(0.26)),
        "ack due before the next append"
    );
    let fx = h.wake(0.26);
    assert_eq!(types(&sent(&fx)), ["playback.ack"]);
    assert_eq!(fx.outbound[0].intended, Some(h.at(0.26)));
    assert_eq!(fx.wake_at, Some(h.at(0.3)));
}

#[test]
fn drain_acks_everything_at_clock_end() {
    let mut h = H::new(settings());
    h.stream_all();
    h.ev(1.2, json!({"type": "input_audio_buffer.committed"}));
    h.ev(
        1.3,
        json!({"type": "response.created", "response": {"id": "r1"}}),
    );
    h.ev(
        1.4,
        json!({"type": "response.audio.delta", "response_id": "r1", "delta": b64_pcm(24_000 * 3, 1),
        "format": "pcm16", "sample_rate_hz": 24000}),
    );
    let fx = h.ev(1.5, json!({"type": "response.done", "response_id": "r1"}));
    assert_eq!(
        fx.wake_at,
        Some(h.at(3.5)),
        "settle comes before the ack at 4.4 s"
    );
    let fx = h.wake(3.5);
    let msgs = sent(&fx);
    assert_eq!(types(&msgs), ["playback.ack", "session.close"]);
    assert_eq!(msgs[0]["played_ms"], 3000);
    assert_eq!(fx.outbound[0].intended, None);
}

#[test]
fn incremental_acks_option() {
    let mut cfg = settings();
    cfg.incremental_acks = true;
    let mut h = H::new(cfg);
    h.ev(0.1, json!({"type": "session.created"}));
    h.ev(
        0.15,
        json!({"type": "response.created", "response": {"id": "r1"}}),
    );
    let fx = h.ev(
        0.2,
        json!({"type": "response.audio.delta", "response_id": "r1", "delta": b64_pcm(24_000, 1),
        "format": "pcm16", "sample_rate_hz": 24000}),
    );
    let msgs = sent(&fx);
    assert_eq!(
        (msgs[0]["type"].as_str(), msgs[0]["played_ms"].as_u64()),
        (Some("playback.ack"), Some(0))
    );
    assert_eq!(
        fx.wake_at,
        Some(h.at(0.3)),
        "next append before the 200 ms step at 0.4 s"
    );
    let fx = h.wake(0.4);
    let acks: Vec<u64> = sent(&fx)
        .iter()
        .filter(|m| m["type"] == "playback.ack")
        .map(|m| m["played_ms"].as_u64().unwrap())
        .collect();
    assert_eq!(acks, [200]);
}

#[test]
fn ledger_errors_surface_once_committed() {
    let mut h = H::new(settings());
    h.ev(0.1, json!({"type": "session.created"}));
    h.ev(
        0.15,
        json!({"type": "response.created", "response": {"id": "r1"}}),
    );
    assert!(
        h.ev(
            0.16,
            json!({"type": "response.created", "response": {"id": "r1"}})
        )
        .finish
        .is_none()
    );
    for k in 1..=4 {
        h.wake(0.1 + 0.2 * f64::from(k));
    }
    h.wake(1.1);
    let fx = h.ev(1.2, json!({"type": "input_audio_buffer.committed"}));
    assert_failed(&fx, "duplicate response.created for r1");
    assert_eq!(
        types(&sent(&fx)),
        ["session.close"],
        "best-effort close on failure"
    );
}

#[test]
fn invalid_audio_fails_immediately() {
    let mut h = H::new(settings());
    h.ev(0.1, json!({"type": "session.created"}));
    let fx = h.ev(0.2, json!({"type": "response.audio.delta", "response_id": "r1", "delta": "AAAAAA==", "format": "wav"}));
    assert_failed(&fx, "OmniInteract output must be pcm16");
    assert_eq!(types(&sent(&fx)), ["session.close"]);
}

mod caps;
mod close;
mod spill;
mod upload;

/// An error event that arrives while the session is still configuring, then a close:
/// the failure carries the server's own text, not only the close.
#[test]
fn an_error_before_the_close_is_the_reason_given() {
    let mut h = H::new(settings());
    h.ev(
        0.05,
        json!({"type": "error", "message": "the model is overloaded"}),
    );
    let mut fx = Effects::default();
    h.s.on_closed(h.at(0.06), Some("1011".into()), &mut fx);
    match &fx.finish {
        Some(Err(f)) => {
            assert_eq!(f.kind, FailureKind::ServerError);
            assert!(
                f.message.starts_with("Realtime WebSocket closed before the requested event arrived (the server closed with 1011 (internal error)); the server had sent an error: ")
                    && f.message.contains("the model is overloaded"),
                "{}",
                f.message
            );
        }
        other => panic!("{other:?}"),
    }
}
