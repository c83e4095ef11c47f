//! End-to-end tests of the transcription endpoint over real sockets (127.0.0.1, port 0):
//! routing next to the duplex endpoint, a whole session, a configured path, and an
//! error fault. Assertions are on event order and content, never on durations.

use std::net::SocketAddr;
use std::time::Duration;

use base64::Engine as _;
use serde_json::{Value, json};

use super::test_client::{Ev, connect_path};
use super::*;
use crate::server::config::TranscriptionServerConfig;

fn local() -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], 0))
}

fn fast_cfg() -> ServerConfig {
    ServerConfig {
        transcription: TranscriptionServerConfig {
            latency_ms: 1.0,
            final_delay_ms: 1.0,
            ..TranscriptionServerConfig::default()
        },
        shutdown_timeout_s: 1,
        ..ServerConfig::default()
    }
}

async fn bounded<F: Future<Output = ()>>(f: F) {
    tokio::time::timeout(Duration::from_secs(20), f)
        .await
        .expect("test exceeded its safety-net timeout");
}

fn append(words: &[usize]) -> Value {
    let pcm = crate::util::tonecode::encode(words, 16_000, 2.5);
    let bytes: Vec<u8> = pcm.iter().flat_map(|s| s.to_le_bytes()).collect();
    let audio = base64::engine::general_purpose::STANDARD.encode(bytes);
    json!({"type": "input_audio_buffer.append", "audio": audio})
}

/// A whole session on `path_and_query`; every event until `transcription.done`, an
/// `error`, or the close.
async fn session(addr: SocketAddr, path_and_query: &str) -> Vec<Ev> {
    let mut c = connect_path(addr, path_and_query).await;
    let created = c.next().await;
    assert_eq!(created.kind(), "session.created", "{created:?}");
    c.send(json!({"type": "session.update", "model": "m"}))
        .await;
    c.send(json!({"type": "input_audio_buffer.commit", "final": false}))
        .await;
    c.send(append(&[3, 4])).await;
    c.send(json!({"type": "input_audio_buffer.commit", "final": true}))
        .await;
    let mut seen = vec![created];
    c.read_until(&mut seen, |s| {
        s.last()
            .is_some_and(|e| matches!(e.kind().as_str(), "transcription.done" | "error"))
    })
    .await;
    seen
}

#[actix_rt::test]
async fn plain_v1_realtime_speaks_transcription_and_duplex_1_keeps_duplex() {
    bounded(async {
        let server = EmbeddedServer::start(local(), fast_cfg()).expect("server starts");
        let seen = session(server.addr(), "/v1/realtime?model=m").await;
        let kinds: Vec<String> = seen.iter().map(Ev::kind).collect();
        assert_eq!(
            kinds,
            [
                "session.created",
                "transcription.delta",
                "transcription.delta",
                "transcription.done"
            ]
        );
        assert_eq!(seen[1].json()["delta"], "fox");
        assert_eq!(seen[2].json()["delta"], " jumps");
        assert_eq!(seen[3].json()["text"], "fox jumps");
        assert_eq!(seen[3].json()["usage"]["completion_tokens"], 2);
        // The duplex client is still routed to the duplex endpoint: it says nothing
        // first, and answers `session.close` with `session.closed`.
        let mut d = super::test_client::connect_duplex(server.addr()).await;
        d.send(json!({"type": "session.close"})).await;
        assert_eq!(d.next().await.kind(), "session.closed");
        server.stop();
    })
    .await;
}

#[actix_rt::test]
async fn configured_path_and_error_fault() {
    bounded(async {
        let mut cfg = fast_cfg();
        cfg.transcription.path = "/v1/stt".into();
        cfg.transcription.faults.error_after_deltas = Some(1);
        cfg.transcription.faults.only_sessions = vec![1];
        let server = EmbeddedServer::start(local(), cfg).expect("server starts");
        let ok = session(server.addr(), "/v1/stt").await;
        assert_eq!(ok.last().unwrap().kind(), "transcription.done");
        let bad = session(server.addr(), "/v1/stt").await;
        let last = bad.last().unwrap().json();
        assert_eq!(
            (last["type"].as_str(), last["code"].as_str()),
            (Some("error"), Some("processing_error"))
        );
        assert_eq!(
            bad.iter()
                .filter(|e| e.kind() == "transcription.delta")
                .count(),
            1
        );
        server.stop();
    })
    .await;
}

#[test]
fn duplex_query_detection() {
    use super::transcription::wants_duplex;
    assert!(wants_duplex("duplex=1&model=m"));
    assert!(wants_duplex("model=m&duplex=true"));
    assert!(!wants_duplex("model=m"));
    assert!(!wants_duplex("duplex=0"));
    assert!(!wants_duplex(""));
}

#[test]
fn transcription_config_parses_and_validates() {
    let cfg = ServerConfig::from_toml_str(
        "[transcription]\npath = \"/x\"\nwords_per_second = 4.0\n[transcription.faults]\nno_done = true\n",
    )
    .unwrap();
    assert_eq!(cfg.transcription.path, "/x");
    assert!(cfg.transcription.faults.no_done);
    let d = ServerConfig::default().transcription;
    assert_eq!(
        (d.path.as_str(), d.sample_rate_hz),
        ("/v1/realtime", 16_000)
    );
    assert_eq!(
        (d.latency_ms, d.final_delay_ms, d.words_per_second),
        (150.0, 100.0, 2.5)
    );
    for bad in [
        "[transcription]\npath = \"x\"",
        "[transcription]\nwords_per_second = 0.0",
        "[transcription]\nlatency_ms = -1.0",
        "[transcription]\nsample_rate_hz = 10",
    ] {
        let err = ServerConfig::from_toml_str(bad).unwrap_err();
        assert!(err.to_string().contains("transcription."), "{bad}: {err}");
    }
}
