//! End-to-end tests of the embedded server over real sockets (127.0.0.1, port 0) with
//! `awc` as the client. Assertions are on event order and content only, never on
//! wall-clock durations; every test is bounded by a generous timeout.

use std::net::SocketAddr;
use std::time::Duration;

use awc::ws::CloseCode;
use serde_json::{Value, json};

use super::video_plan::GEOMETRY_ERROR;
use super::*;
use crate::server::config::{VideoFaults, VideoServerConfig};

const SAFETY_NET: Duration = Duration::from_secs(20);

use super::test_client::{Ev, connect_video as connect};

fn start_event(num_frames: u64) -> Value {
    json!({"type": "session.start", "model": "m", "prompt": "p",
           "image_reference": {"image_url": "data:image/png;base64,AA=="},
           "width": 832, "height": 480, "num_frames": num_frames, "fps": 16, "seed": 42,
           "extra_params": {"flow_shift": 5.0}})
}

fn fast_cfg() -> ServerConfig {
    ServerConfig {
        video: VideoServerConfig {
            first_chunk_ms: 2.0,
            chunk_interval_ms: 1.0,
            ramp_chunks: 2,
            ramp_factor: 2.0,
            chunk_bytes: 64,
            ..VideoServerConfig::default()
        },
        shutdown_timeout_s: 1,
        ..ServerConfig::default()
    }
}

fn with_faults(f: impl FnOnce(&mut VideoFaults)) -> ServerConfig {
    let mut cfg = fast_cfg();
    f(&mut cfg.video.faults);
    cfg
}

fn local() -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], 0))
}

/// Starts a server, runs one session asking for `num_frames`, returns every event.
async fn session_events(cfg: ServerConfig, num_frames: u64) -> Vec<Ev> {
    let server = EmbeddedServer::start(local(), cfg).expect("server starts");
    let mut client = connect(server.addr()).await;
    client.send(start_event(num_frames)).await;
    let events = client.rest().await;
    drop(client);
    server.stop();
    events
}

fn kinds(events: &[Ev]) -> Vec<String> {
    events.iter().map(Ev::kind).collect()
}

fn media_indices(events: &[Ev]) -> Vec<u64> {
    events
        .iter()
        .filter_map(|e| match e {
            Ev::Json(v) if v["type"] == "video.chunk_metadata" && v["kind"] == "media" => {
                v["generation_chunk_index"].as_u64()
            }
            _ => None,
        })
        .collect()
}

async fn bounded<F: Future<Output = ()>>(f: F) {
    tokio::time::timeout(SAFETY_NET, f)
        .await
        .expect("test exceeded its safety-net timeout");
}

#[actix_rt::test]
async fn normal_three_chunk_session() {
    bounded(async {
        let events = session_events(fast_cfg(), 33).await;
        assert_eq!(
            kinds(&events),
            [
                "video.start",
                "video.chunk_metadata",
                "bin:64",
                "video.chunk_metadata",
                "bin:64",
                "video.chunk_metadata",
                "bin:64",
                "video.chunk_metadata",
                "bin:24",
                "session.done",
                "close"
            ]
        );
        let start = events[0].json();
        let request_id = start["request_id"].as_str().expect("request_id");
        assert_eq!(request_id.len(), 36);
        assert_eq!(start["format"], "m4s");
        let mut last_sent_at = -1.0;
        for (i, pos) in [1usize, 3, 5].into_iter().enumerate() {
            let meta = events[pos].json();
            assert_eq!(meta["request_id"], request_id);
            assert_eq!(meta["kind"], "media");
            assert_eq!(meta["generation_chunk_index"], i as u64);
            assert_eq!(meta["num_frames"], if i == 0 { 9 } else { 12 });
            assert_eq!(meta["byte_length"], 64);
            let sent_at = meta["server_sent_at_s"].as_f64().expect("server_sent_at_s");
            assert!(sent_at > last_sent_at, "{sent_at} after {last_sent_at}");
            last_sent_at = sent_at;
        }
        let Ev::Bin(first) = &events[2] else { panic!() };
        assert_eq!(&first[4..8], b"ftyp");
        let trailer = events[7].json();
        assert_eq!(trailer["kind"], "trailer");
        assert_eq!(trailer["byte_length"], 24);
        assert_eq!(trailer["generation_chunk_index"], Value::Null);
        assert_eq!(
            *events[9].json(),
            json!({"type": "session.done", "stopped": false, "chunks": 3})
        );
        assert_eq!(events[10], Ev::Close(Some(CloseCode::Normal.into())));
    })
    .await;
}

#[actix_rt::test]
async fn ping_is_answered_while_the_first_chunk_is_pending() {
    bounded(async {
        let mut cfg = fast_cfg();
        cfg.video.first_chunk_ms = 60_000.0;
        let server = EmbeddedServer::start(local(), cfg).expect("server starts");
        let mut client = connect(server.addr()).await;
        client.send(json!({"type": "session.ping"})).await;
        assert_eq!(client.next().await.kind(), "session.pong");
        client.send(start_event(33)).await;
        assert_eq!(client.next().await.kind(), "video.start");
        for _ in 0..3 {
            client.send(json!({"type": "session.ping"})).await;
            assert_eq!(*client.next().await.json(), json!({"type": "session.pong"}));
        }
        // A second start is refused without ending the session.
        client.send(start_event(33)).await;
        assert_eq!(client.next().await.kind(), "error");
        client.send(json!({"type": "bogus"})).await;
        let err = client.next().await;
        assert_eq!(err.json()["message"], "unknown event type 'bogus'");
        client.send(json!({"type": "session.ping"})).await;
        assert_eq!(client.next().await.kind(), "session.pong");
        drop(client);
        server.stop();
    })
    .await;
}

#[actix_rt::test]
async fn interactions_are_silent_unless_acked() {
    bounded(async {
        for ack in [false, true] {
            let mut cfg = fast_cfg();
            cfg.video.first_chunk_ms = 60_000.0;
            cfg.video.ack_interactions = ack;
            let server = EmbeddedServer::start(local(), cfg).expect("server starts");
            let mut client = connect(server.addr()).await;
            client.send(start_event(33)).await;
            assert_eq!(client.next().await.kind(), "video.start");
            client
                .send(json!({"type": "session.interaction", "interaction": {
                    "event_id": "chunk-1", "event": {"prompt": "turn left"},
                    "transition_chunks": 3}}))
                .await;
            client.send(json!({"type": "session.ping"})).await;
            let first = client.next().await;
            if ack {
                assert_eq!(
                    *first.json(),
                    json!({"type": "session.interaction.ack", "event_id": "chunk-1"})
                );
                assert_eq!(client.next().await.kind(), "session.pong");
            } else {
                assert_eq!(first.kind(), "session.pong");
            }
            drop(client);
            server.stop();
        }
    })
    .await;
}

#[actix_rt::test]
async fn invalid_start_gets_error_then_close() {
    bounded(async {
        let server = EmbeddedServer::start(local(), fast_cfg()).expect("server starts");
        for (event, message) in [
            (
                json!({"type": "session.start", "width": 830, "height": 480, "num_frames": 33}),
                GEOMETRY_ERROR.to_string(),
            ),
            (
                json!({"type": "session.start", "width": 832, "height": 480, "num_frames": 8}),
                "num_frames must give at least one chunk (chunks = ((num_frames - 1) // 4 + 1) \
                 // 3, so num_frames >= 9; 12*n - 3 is exact: 9, 21, 33, ...), got 8"
                    .to_string(),
            ),
            (
                json!({"type": "session.start", "width": 832, "height": 480, "num_frames": 777}),
                "num_frames 777 (65 chunks) exceeds the server maximum of 765".to_string(),
            ),
        ] {
            let mut client = connect(server.addr()).await;
            client.send(event).await;
            let events = client.rest().await;
            assert_eq!(
                events,
                [
                    Ev::Json(json!({"type": "error", "message": message})),
                    Ev::Close(Some(CloseCode::Normal.into()))
                ]
            );
        }
        server.stop();
    })
    .await;
}

#[actix_rt::test]
async fn idle_connection_is_closed() {
    bounded(async {
        let mut cfg = fast_cfg();
        cfg.idle_timeout_s = 0.05;
        let server = EmbeddedServer::start(local(), cfg).expect("server starts");
        let mut client = connect(server.addr()).await;
        let Ev::Close(Some(reason)) = client.next().await else {
            panic!("expected a close frame with a reason");
        };
        assert_eq!(reason.code, CloseCode::Normal);
        assert_eq!(reason.description.as_deref(), Some("idle timeout"));
        drop(client);
        server.stop();
    })
    .await;
}

#[actix_rt::test]
async fn start_and_end_faults() {
    bounded(async {
        let events =
            session_events(with_faults(|f| f.error_on_start = Some("busy".into())), 33).await;
        assert_eq!(
            events,
            [
                Ev::Json(json!({"type": "error", "message": "busy"})),
                Ev::Close(Some(CloseCode::Normal.into()))
            ]
        );

        let events = session_events(with_faults(|f| f.close_after_chunks = Some(2)), 33).await;
        assert_eq!(
            kinds(&events),
            [
                "video.start",
                "video.chunk_metadata",
                "bin:64",
                "video.chunk_metadata",
                "bin:64",
                "close"
            ]
        );

        let events = session_events(with_faults(|f| f.error_after_chunks = Some(1)), 33).await;
        assert_eq!(
            kinds(&events),
            [
                "video.start",
                "video.chunk_metadata",
                "bin:64",
                "error",
                "close"
            ]
        );
        assert_eq!(
            events[3].json()["message"],
            "injected fault: error after 1 chunk(s)"
        );

        let events = session_events(with_faults(|f| f.stopped = true), 9).await;
        let done = events[events.len() - 2].json();
        assert_eq!(
            *done,
            json!({"type": "session.done", "stopped": true, "chunks": 1})
        );

        let events = session_events(with_faults(|f| f.fewer_chunks = Some(1)), 33).await;
        assert_eq!(media_indices(&events), [0, 1]);
        assert_eq!(events[events.len() - 2].json()["chunks"], 2);

        let mut cfg = fast_cfg();
        cfg.video.trailer = false;
        let events = session_events(cfg, 9).await;
        assert_eq!(
            kinds(&events),
            [
                "video.start",
                "video.chunk_metadata",
                "bin:64",
                "session.done",
                "close"
            ]
        );
    })
    .await;
}

#[actix_rt::test]
async fn index_and_framing_faults() {
    bounded(async {
        let events = session_events(with_faults(|f| f.out_of_order = true), 45).await;
        assert_eq!(media_indices(&events), [0, 2, 1, 3]);

        let events = session_events(with_faults(|f| f.duplicate_index = true), 45).await;
        assert_eq!(media_indices(&events), [0, 1, 1, 3]);

        let events = session_events(with_faults(|f| f.binary_without_metadata = true), 21).await;
        assert_eq!(
            kinds(&events)[..4],
            ["video.start", "bin:64", "video.chunk_metadata", "bin:64"]
        );
        assert_eq!(media_indices(&events), [1]);
    })
    .await;
}

#[actix_rt::test]
async fn stalled_session_keeps_the_socket_open() {
    bounded(async {
        let server =
            EmbeddedServer::start(local(), with_faults(|f| f.stall_after_chunks = Some(1)))
                .expect("server starts");
        let mut client = connect(server.addr()).await;
        client.send(start_event(33)).await;
        let head: Vec<String> = [
            client.next().await,
            client.next().await,
            client.next().await,
        ]
        .iter()
        .map(Ev::kind)
        .collect();
        assert_eq!(head, ["video.start", "video.chunk_metadata", "bin:64"]);
        client.send(json!({"type": "session.ping"})).await;
        assert_eq!(client.next().await.kind(), "session.pong");
        client.send_close(CloseCode::Normal).await;
        // The server echoes the client's close.
        assert_eq!(
            client.next().await,
            Ev::Close(Some(CloseCode::Normal.into()))
        );
        drop(client);
        server.stop();
    })
    .await;
}

#[actix_rt::test]
async fn stalled_session_is_closed_when_idle() {
    bounded(async {
        let mut cfg = with_faults(|f| f.stall_after_chunks = Some(1));
        cfg.idle_timeout_s = 0.05;
        let events = session_events(cfg, 33).await;
        assert_eq!(
            kinds(&events),
            ["video.start", "video.chunk_metadata", "bin:64", "close"]
        );
        let Ev::Close(Some(reason)) = &events[3] else {
            panic!("expected a close reason");
        };
        assert_eq!(reason.description.as_deref(), Some("idle timeout"));
    })
    .await;
}

#[actix_rt::test]
async fn servers_bind_distinct_ports_and_stop() {
    bounded(async {
        let a = EmbeddedServer::start(local(), fast_cfg()).expect("a starts");
        let b = EmbeddedServer::start(local(), fast_cfg()).expect("b starts");
        assert_ne!(a.addr().port(), 0);
        assert_ne!(a.addr(), b.addr());
        assert_eq!(
            a.video_url(),
            format!("ws://{}/v1/realtime/video", a.addr())
        );
        let addr = a.addr();
        a.stop();
        drop(b);
        let refused = awc::Client::new()
            .ws(format!("ws://{addr}{VIDEO_PATH}"))
            .connect()
            .await;
        assert!(refused.is_err());
    })
    .await;
}

#[test]
fn invalid_config_is_rejected_before_binding() {
    let cfg = ServerConfig {
        workers: 0,
        ..ServerConfig::default()
    };
    let err = EmbeddedServer::start(local(), cfg).err().expect("rejected");
    assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
    assert!(err.to_string().contains("workers"), "{err}");
}
