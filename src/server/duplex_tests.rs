//! End-to-end tests of the duplex endpoint `/v1/realtime` over real sockets (127.0.0.1,
//! port 0) with `awc` as the client. Assertions are on event order and content only,
//! never on wall-clock durations; every test is bounded by a generous timeout.

use std::net::SocketAddr;
use std::time::Duration;

use awc::ws::{CloseCode, Frame, Message};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use futures_util::{SinkExt as _, StreamExt as _};
use serde_json::{Value, json};

use super::*;
use crate::server::config::{DuplexFaults, DuplexServerConfig, FinalDecision};

const SAFETY_NET: Duration = Duration::from_secs(20);
const JPEG: [u8; 4] = [0xFF, 0xD8, 0xFF, 0xE0];

use super::test_client::{Ev, connect_duplex as connect};

fn update_event(idle_timeout_s: Option<f64>) -> Value {
    let mut event = json!({"type": "session.update", "session": {
        "model": "m", "modalities": ["audio", "text"],
        "input_audio_format": "pcm16", "output_audio_format": "pcm16",
        "turn_detection": null, "overlap_policy": "listen_only",
        "playback_commit_policy": "ack_only",
        "extra_body": {"auto_response": true, "minicpmo45_native_duplex": true,
                       "force_listen_count": 0},
        "ref_audio": "data:audio/wav;base64,UklGRg==",
        "session_id": "omniinteract:sub:bench-0:1"}});
    if let Some(s) = idle_timeout_s {
        event["session"]["idle_timeout_s"] = json!(s);
    }
    event
}

/// A 16 kHz PCM16 append of `bytes` (cumulative end `end`), with `frames` JPEGs.
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

fn commit_event() -> Value {
    json!({"type": "input_audio_buffer.commit", "final": true})
}

fn fast_cfg() -> ServerConfig {
    ServerConfig {
        duplex: DuplexServerConfig {
            chunk_period_ms: 200,
            respond_every_s: 0.2,
            audio_deltas: 3,
            delta_ms: 20,
            rtf: 0.1,
            first_response_delay_ms: 5.0,
            ..DuplexServerConfig::default()
        },
        shutdown_timeout_s: 1,
        ..ServerConfig::default()
    }
}

fn with_faults(f: impl FnOnce(&mut DuplexFaults)) -> ServerConfig {
    let mut cfg = fast_cfg();
    f(&mut cfg.duplex.faults);
    cfg
}

fn local() -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], 0))
}

async fn bounded<F: Future<Output = ()>>(f: F) {
    tokio::time::timeout(SAFETY_NET, f)
        .await
        .expect("test exceeded its safety-net timeout");
}

fn kinds(events: &[Ev]) -> Vec<String> {
    events.iter().map(Ev::kind).collect()
}

fn is_done_of(ev: &Ev, id: &str) -> bool {
    ev.kind() == "response.done" && ev.json()["response"]["id"] == id
}

/// Waits for the final response (`resp_<ordinal>_1`) to end.
fn final_done(ordinal: u64) -> impl Fn(&[Ev]) -> bool {
    let id = format!("resp_{ordinal}_1");
    move |seen: &[Ev]| seen.iter().any(|e| is_done_of(e, &id))
}

/// One scripted session on `addr`: update, a 0.2 s append with a frame (triggers
/// response 0), the trimmed 0.2 s tail, the final commit; reads until `until`, then
/// `session.close` and the rest. Returns every event.
async fn scripted(addr: SocketAddr, until: impl Fn(&[Ev]) -> bool) -> Vec<Ev> {
    let mut client = connect(addr).await;
    client.send(update_event(None)).await;
    client.send(append_event(6400, 6400, 1)).await;
    client.send(append_event(6398, 12798, 0)).await;
    client.send(commit_event()).await;
    let mut seen = Vec::new();
    client.read_until(&mut seen, until).await;
    if !matches!(seen.last(), Some(Ev::Close(_) | Ev::End)) {
        client.send(json!({"type": "session.close"})).await;
        seen.extend(client.rest().await);
    }
    seen
}

/// Starts a server with `cfg`, runs [`scripted`] once.
async fn fault_run(cfg: ServerConfig, until: impl Fn(&[Ev]) -> bool) -> Vec<Ev> {
    let server = EmbeddedServer::start(local(), cfg).expect("server starts");
    let events = scripted(server.addr(), until).await;
    server.stop();
    events
}

#[actix_rt::test]
async fn normal_session_with_acks() {
    bounded(async {
        let mut cfg = fast_cfg();
        cfg.duplex.require_acks = true;
        let server = EmbeddedServer::start(local(), cfg).expect("server starts");
        assert_eq!(server.duplex_url(), format!("ws://{}/v1/realtime", server.addr()));
        let mut client = connect(server.addr()).await;
        client.send(update_event(None)).await;
        let created = client.next().await;
        assert_eq!(
            created.bare(),
            json!({"type": "session.created", "session": {
                "id": "omniinteract:sub:bench-0:1", "model": "m", "idle_timeout_s": 300.0,
                "input_audio_format": "pcm16", "output_audio_format": "pcm16",
                "capabilities": {"chunk_period_ms": 200}}})
        );
        client.send(append_event(6400, 6400, 1)).await;
        let mut seen = vec![created];
        client.read_until(&mut seen, |s| s.iter().any(|e| is_done_of(e, "resp_0_0"))).await;
        let first: Vec<String> = kinds(&seen[1..]);
        assert_eq!(first, ["response.created", "response.audio_transcript.delta", "response.audio.delta",
            "response.audio_transcript.delta", "response.audio.delta",
            "response.audio_transcript.delta", "response.audio.delta", "response.done"]);
        assert_eq!(seen[1].json()["response"]["id"], "resp_0_0");
        let audio: Vec<&Value> = seen.iter().map(Ev::json).filter(|e| e["type"] == "response.audio.delta").collect();
        for (k, a) in audio.iter().enumerate() {
            assert_eq!(a["response_id"], "resp_0_0");
            assert_eq!((a["format"].as_str(), a["sample_rate_hz"].as_u64()), (Some("pcm16"), Some(24000)));
            assert_eq!(a["metadata"]["audio_duration_ms"], 20 * (k as u64 + 1));
            assert_eq!(STANDARD.decode(a["delta"].as_str().unwrap()).unwrap().len(), 960);
        }
        let stage0 = &audio[2]["vllm_omni"]["stage_metrics"]["0"];
        assert_eq!(stage0["num_tokens_out"], 3);
        assert!(stage0["vllm_ttft_ms"].is_f64() && stage0["vllm_tpot_ms"].is_f64());
        assert_eq!(seen[8].json()["response"]["status"], "completed");
        client.send(json!({"type": "playback.ack", "response_id": "resp_0_0", "item_id": "item_resp_0_0", "played_ms": 60, "committed_ms": 60})).await;
        client.send(append_event(6398, 12798, 0)).await;
        client.send(commit_event()).await;
        client.read_until(&mut seen, final_done(0)).await;
        let tail = &seen[9..];
        assert_eq!(tail[0].bare(), json!({"type": "input_audio_buffer.committed", "audio_end_ms": 399}));
        assert_eq!(tail[1].json()["response"]["id"], "resp_0_1");
        assert_eq!(tail.len(), 9);
        client.send(json!({"type": "playback.ack", "response_id": "resp_0_1", "item_id": "item_resp_0_1", "played_ms": 60, "committed_ms": 60})).await;
        client.send(json!({"type": "session.close"})).await;
        let end = client.rest().await;
        assert_eq!(end.len(), 2, "{end:?}");
        assert_eq!(end[0].bare(), json!({"type": "session.closed"}));
        assert_eq!(end[1], Ev::Close(Some(CloseCode::Normal.into())));
        seen.push(end[0].clone());
        let stamps: Vec<f64> = seen.iter().map(|e| e.json()["server_sent_at_s"].as_f64().expect("stamped")).collect();
        assert!(stamps.windows(2).all(|w| w[0] <= w[1]), "{stamps:?}");
        drop(client);
        server.stop();
    })
    .await;
}

#[actix_rt::test]
async fn bad_events_get_errors_and_the_session_stays_open() {
    bounded(async {
        let server = EmbeddedServer::start(local(), fast_cfg()).expect("server starts");
        let mut client = connect(server.addr()).await;
        assert_eq!(client.error_for(append_event(6400, 6400, 0)).await,
            "'input_audio_buffer.append' before session.update: send session.update first");
        let mut bad_update = update_event(None);
        bad_update["session"]["input_audio_format"] = json!("opus");
        assert_eq!(client.error_for(bad_update).await, "session.input_audio_format must be \"pcm16\", got \"opus\"");
        client.send(update_event(None)).await;
        assert_eq!(client.next().await.kind(), "session.created");
        let ok = append_event(6400, 6400, 1);
        for (pointer, value, expected) in [
            ("/audio", json!("not base64!"), "input_audio_buffer.append: audio is not valid base64"),
            ("/audio", json!(STANDARD.encode([0u8; 3])), "input_audio_buffer.append: audio is not PCM16 aligned: 3 bytes (odd length)"),
            ("/sample_rate_hz", json!(24000), "input_audio_buffer.append: sample_rate_hz must be 16000, got 24000"),
            ("/input_audio_format", json!("g711_ulaw"), "input_audio_buffer.append: input_audio_format must be \"pcm16\", got \"g711_ulaw\""),
            ("/video_frames/0", json!(STANDARD.encode(b"GIF89a")), "input_audio_buffer.append: video_frames[0] is not a JPEG (does not start with the FF D8 SOI marker)"),
            ("/video_frames/0", json!("%%%"), "input_audio_buffer.append: video_frames[0] is not valid base64"),
        ] {
            let mut event = ok.clone();
            *event.pointer_mut(pointer).unwrap() = value;
            let got = client.error_for(event).await;
            assert!(got.starts_with(expected), "{got}");
        }
        assert_eq!(client.error_for(json!({"type": "playback.ack", "response_id": "nope", "played_ms": 1})).await,
            "playback.ack for unknown response_id nope");
        assert_eq!(client.error_for(json!({"type": "response.create"})).await, "unknown event type 'response.create'");
        assert!(client.error_for(json!("not an object")).await.contains("\"type\""));
        // Rejected appends added no audio: this valid one is the first 0.2 s and triggers a response.
        client.send(ok).await;
        let ev = client.next().await;
        assert_eq!(ev.json()["response"]["id"], "resp_0_0");
        drop(client);
        server.stop();
    })
    .await;
}

#[actix_rt::test]
async fn bad_append_closes_with_the_fatal_switch() {
    bounded(async {
        let server = EmbeddedServer::start(local(), with_faults(|f| f.fatal_append_errors = true))
            .expect("server starts");
        let mut client = connect(server.addr()).await;
        client.send(update_event(None)).await;
        assert_eq!(client.next().await.kind(), "session.created");
        let mut bad = append_event(6400, 6400, 0);
        bad["sample_rate_hz"] = json!(8000);
        client.send(bad).await;
        assert_eq!(kinds(&client.rest().await), ["error", "close"]);
        drop(client);
        server.stop();
    })
    .await;
}

#[actix_rt::test]
async fn idle_sessions_expire() {
    bounded(async {
        // Before session.update, and after one without idle_timeout_s: the server's timeout.
        let mut cfg = fast_cfg();
        cfg.idle_timeout_s = 0.05;
        let server = EmbeddedServer::start(local(), cfg).expect("server starts");
        for update in [false, true] {
            let mut client = connect(server.addr()).await;
            if update {
                client.send(update_event(None)).await;
                assert_eq!(client.next().await.kind(), "session.created");
            }
            let events = client.rest().await;
            assert_eq!(
                events[0].bare(),
                json!({"type": "session.expired", "reason": "idle_timeout"})
            );
            let Ev::Close(Some(reason)) = &events[1] else {
                panic!("{events:?}")
            };
            assert_eq!(reason.code, CloseCode::Normal);
        }
        server.stop();
        // The update's idle_timeout_s wins over the server's (300 s here).
        let server = EmbeddedServer::start(local(), fast_cfg()).expect("server starts");
        let mut client = connect(server.addr()).await;
        client.send(update_event(Some(0.05))).await;
        assert_eq!(
            client.next().await.json()["session"]["idle_timeout_s"],
            0.05
        );
        assert_eq!(kinds(&client.rest().await), ["session.expired", "close"]);
        drop(client);
        server.stop();
    })
    .await;
}

#[actix_rt::test]
async fn session_lifecycle_faults() {
    bounded(async {
        let server = EmbeddedServer::start(
            local(),
            with_faults(|f| f.error_on_update = Some("busy".into())),
        )
        .expect("server starts");
        let mut client = connect(server.addr()).await;
        client.send(update_event(None)).await;
        let events = client.rest().await;
        assert_eq!(
            events[0].bare(),
            json!({"type": "error", "message": "busy"})
        );
        assert_eq!(events[1], Ev::Close(Some(CloseCode::Normal.into())));
        drop(client);
        server.stop();

        for (cfg, expected) in [
            (
                with_faults(|f| f.expire_after_s = Some(0.02)),
                vec!["session.created", "session.expired", "close"],
            ),
            (
                with_faults(|f| f.close_mid_session_after_s = Some(0.02)),
                vec!["session.created", "close"],
            ),
        ] {
            let server = EmbeddedServer::start(local(), cfg).expect("server starts");
            let mut client = connect(server.addr()).await;
            client.send(update_event(None)).await;
            let events = client.rest().await;
            assert_eq!(kinds(&events), expected);
            if expected.len() == 3 {
                assert_eq!(events[1].json()["reason"], "injected_fault");
            }
            drop(client);
            server.stop();
        }

        for (cfg, expected) in [
            (
                with_faults(|f| f.no_session_created = true),
                vec!["session.closed", "close"],
            ),
            (
                with_faults(|f| f.error_event_after_s = Some(0.0)),
                vec!["session.created", "error", "session.closed", "close"],
            ),
        ] {
            let server = EmbeddedServer::start(local(), cfg).expect("server starts");
            let mut client = connect(server.addr()).await;
            client.send(update_event(None)).await;
            let mut seen = Vec::new();
            let before_close = expected.len() - 2;
            client
                .read_until(&mut seen, |s| s.len() == before_close)
                .await;
            client.send(json!({"type": "session.close"})).await;
            seen.extend(client.rest().await);
            assert_eq!(kinds(&seen), expected);
            drop(client);
            server.stop();
        }

        let events = fault_run(
            with_faults(|f| f.close_with_reason = Some("server_shutdown".into())),
            final_done(0),
        )
        .await;
        let closed = &events[events.len() - 2];
        assert_eq!(
            closed.bare(),
            json!({"type": "session.closed", "reason": "server_shutdown"})
        );
    })
    .await;
}

#[actix_rt::test]
async fn ledger_faults() {
    bounded(async {
        let created = |events: &[Ev]| -> Vec<Value> {
            events
                .iter()
                .filter(|e| e.kind() == "response.created")
                .map(Ev::bare)
                .collect()
        };
        let dones = |events: &[Ev], id: &str| events.iter().filter(|e| is_done_of(e, id)).count();

        let events = fault_run(with_faults(|f| f.missing_response_id = true), final_done(0)).await;
        assert_eq!(
            created(&events)[0],
            json!({"type": "response.created", "response": {"status": "in_progress"}})
        );
        let events = fault_run(with_faults(|f| f.duplicate_created = true), final_done(0)).await;
        let c = created(&events);
        assert_eq!((c.len(), &c[0]), (3, &c[1]));
        let events = fault_run(
            with_faults(|f| f.done_without_created = true),
            final_done(0),
        )
        .await;
        // (`input_audio_buffer.committed` may come first: the commit races response 0.)
        let responses: Vec<&Ev> = events
            .iter()
            .filter(|e| e.kind().starts_with("response."))
            .collect();
        assert_eq!(responses[0].kind(), "response.done");
        assert_eq!(responses[0].json()["response"]["id"], "resp_orphan");
        let events = fault_run(with_faults(|f| f.duplicate_done = true), final_done(0)).await;
        assert_eq!(
            (dones(&events, "resp_0_0"), dones(&events, "resp_0_1")),
            (2, 1)
        );
        for (status, cfg) in [
            ("failed", with_faults(|f| f.failed_response = true)),
            ("cancelled", with_faults(|f| f.cancelled_response = true)),
        ] {
            let events = fault_run(cfg, final_done(0)).await;
            let done = events
                .iter()
                .find(|e| is_done_of(e, "resp_0_0"))
                .unwrap()
                .bare();
            assert_eq!(done["response"]["status"], status);
            assert_eq!(done["response"]["status_details"]["type"], status);
        }
    })
    .await;
}

#[actix_rt::test]
async fn audio_and_transcript_faults() {
    bounded(async {
        let audio = |events: &[Ev]| -> Vec<Value> {
            events
                .iter()
                .filter(|e| e.kind() == "response.audio.delta")
                .map(Ev::bare)
                .collect()
        };
        let first = |f: fn(&mut DuplexFaults)| async move {
            let events = fault_run(with_faults(f), final_done(0)).await;
            audio(&events).remove(0)
        };
        assert_eq!(
            first(|f| f.audio_wrong_format = true).await["format"],
            "opus"
        );
        assert_eq!(
            first(|f| f.audio_wrong_rate = true).await["sample_rate_hz"],
            16000
        );
        let bad = first(|f| f.audio_bad_base64 = true).await;
        assert!(STANDARD.decode(bad["delta"].as_str().unwrap()).is_err());
        let odd = first(|f| f.audio_odd_length = true).await;
        assert_eq!(
            STANDARD
                .decode(odd["delta"].as_str().unwrap())
                .unwrap()
                .len()
                % 2,
            1
        );
        assert_eq!(
            first(|f| f.audio_unknown_response = true).await["response_id"],
            "resp_unknown"
        );

        let events = fault_run(
            with_faults(|f| f.transcript_unknown_response = true),
            final_done(0),
        )
        .await;
        let text = events
            .iter()
            .find(|e| e.kind() == "response.audio_transcript.delta")
            .unwrap();
        assert_eq!(text.json()["response_id"], "resp_unknown");

        let events = fault_run(
            with_faults(|f| {
                f.omit_format = true;
                f.omit_sample_rate = true;
            }),
            final_done(0),
        )
        .await;
        let deltas = audio(&events);
        assert_eq!(deltas.len(), 6);
        assert!(
            deltas
                .iter()
                .all(|d| d.get("format").is_none() && d.get("sample_rate_hz").is_none())
        );
    })
    .await;
}

#[actix_rt::test]
async fn commit_and_decision_faults() {
    bounded(async {
        let events = fault_run(with_faults(|f| f.never_commit_ack = true), final_done(0)).await;
        assert!(!kinds(&events).iter().any(|k| k == "input_audio_buffer.committed"));
        assert!(events.iter().any(|e| is_done_of(e, "resp_0_1")));

        // A final listen would follow resp_0_0's done in the same batch (the commit is
        // deferred behind it, or decided at once): with the fault, nothing follows.
        let mut cfg = with_faults(|f| f.no_final_decision = true);
        cfg.duplex.final_decision = FinalDecision::Listen;
        let events = fault_run(cfg, |s: &[Ev]| {
            s.iter().any(|e| is_done_of(e, "resp_0_0"))
                && s.iter().any(|e| e.kind() == "input_audio_buffer.committed")
        })
        .await;
        assert!(!kinds(&events).iter().any(|k| k == "response.listen"), "{events:?}");
        assert_eq!(kinds(&events)[events.len() - 2..], ["session.closed", "close"]);

        // Without the fault the same run ends in a final listen decision.
        let mut cfg = fast_cfg();
        cfg.duplex.final_decision = FinalDecision::Listen;
        let events = fault_run(cfg, |s: &[Ev]| s.iter().any(|e| e.kind() == "response.listen")).await;
        let listen = events.iter().find(|e| e.kind() == "response.listen").unwrap();
        assert_eq!(listen.bare(), json!({"type": "response.listen", "response": {"metadata": {"model_listen": true, "buffering": false}}}));
    })
    .await;
}

#[actix_rt::test]
async fn require_acks_and_only_sessions() {
    bounded(async {
        let mut cfg = with_faults(|f| {
            f.duplicate_done = true;
            f.only_sessions = vec![1];
        });
        cfg.duplex.require_acks = true;
        let server = EmbeddedServer::start(local(), cfg).expect("server starts");
        for ordinal in 0..2u64 {
            let events = scripted(server.addr(), final_done(ordinal)).await;
            let first = format!("resp_{ordinal}_0");
            let dones = events.iter().filter(|e| is_done_of(e, &first)).count();
            assert_eq!(dones, if ordinal == 1 { 2 } else { 1 });
            // No acks were sent: an error precedes session.closed.
            assert_eq!(
                kinds(&events)[events.len() - 3..],
                ["error", "session.closed", "close"]
            );
            let message = events[events.len() - 3].json()["message"]
                .as_str()
                .unwrap()
                .to_string();
            assert!(
                message.starts_with(&format!(
                    "missing completion playback.ack for {first} (played 0 of 60 ms)"
                )),
                "{message}"
            );
        }
        server.stop();
    })
    .await;
}

#[actix_rt::test]
async fn video_endpoint_still_answers_next_to_duplex() {
    bounded(async {
        let server = EmbeddedServer::start(local(), fast_cfg()).expect("server starts");
        let (_resp, mut ws) = awc::Client::new()
            .ws(server.video_url())
            .connect()
            .await
            .expect("connect");
        ws.send(Message::Text(
            json!({"type": "session.ping"}).to_string().into(),
        ))
        .await
        .expect("send");
        let Some(Ok(Frame::Text(pong))) = ws.next().await else {
            panic!("no pong")
        };
        assert_eq!(
            serde_json::from_slice::<Value>(&pong).unwrap(),
            json!({"type": "session.pong"})
        );
        drop(ws);
        server.stop();
    })
    .await;
}
