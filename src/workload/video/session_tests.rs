//! Tests of the video session state machine: scripted inbound events with chosen receipt
//! times, no sockets, no clocks.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tokio::time::Instant;

use super::*;
use crate::workload::video::rollout::PromptUpdate;

fn settings(num_chunks: u32, updates: Vec<PromptUpdate>) -> SessionSettings {
    SessionSettings {
        start_payload: Arc::from(r#"{"type":"session.start"}"#),
        prompt_updates: Arc::from(updates),
        num_chunks,
        num_frames: 12 * num_chunks - 3,
        target_fps: 16.0,
        first_chunk_timeout: Duration::from_secs(900),
        chunk_timeout: Duration::from_secs(300),
        ping_interval: Some(Duration::from_secs(20)),
        print_chunks: false,
    }
}

struct Harness {
    s: VideoSession,
    t0: Instant,
}

impl Harness {
    fn new(n: u32) -> Self {
        Self::with(settings(n, Vec::new()))
    }
    fn with(cfg: SessionSettings) -> Self {
        let t0 = Instant::now();
        let mut s = VideoSession::new(cfg, 0, None);
        let mut fx = Effects::default();
        s.on_open(t0, &mut fx);
        assert_eq!(
            fx.outbound[0].msg,
            Outbound::Text(r#"{"type":"session.start"}"#.into())
        );
        Self { s, t0 }
    }
    fn at(&self, secs: f64) -> Instant {
        self.t0 + Duration::from_secs_f64(secs)
    }
    fn text(&mut self, secs: f64, v: serde_json::Value) -> Effects {
        let mut fx = Effects::default();
        self.s
            .on_inbound(Inbound::Text(v.to_string().into()), self.at(secs), &mut fx);
        fx
    }
    fn meta(&mut self, secs: f64, index: u64, kind: &str) -> Effects {
        let frames = if index == 0 { 9 } else { 12 };
        self.text(secs, json!({"type":"video.chunk_metadata","kind":kind,"num_frames":frames,"byte_length":4,"generation_chunk_index":index}))
    }
    fn binary(&mut self, secs: f64, n: usize) -> Effects {
        let mut fx = Effects::default();
        self.s.on_inbound(
            Inbound::Binary(Bytes::from(vec![7u8; n])),
            self.at(secs),
            &mut fx,
        );
        fx
    }
    fn chunk(&mut self, secs: f64, index: u64) -> Effects {
        assert!(self.meta(secs, index, "media").finish.is_none());
        self.binary(secs, 4)
    }
    fn done(&mut self, secs: f64, stopped: bool, chunks: u64) -> Effects {
        self.text(
            secs,
            json!({"type":"session.done","stopped":stopped,"chunks":chunks}),
        )
    }
    fn output(self) -> VideoOutput {
        self.s.into_output()
    }
}

#[track_caller]
fn assert_failed(fx: &Effects, expected: &str) {
    match &fx.finish {
        Some(Err(f)) => assert_eq!(f.message, expected),
        other => panic!("expected failure {expected:?}, got {other:?}"),
    }
}

#[test]
fn happy_path_records_chunks_and_times() {
    let mut h = Harness::new(3);
    h.text(
        0.01,
        json!({"type":"video.start","request_id":"r1","format":"m4s"}),
    );
    h.chunk(1.0, 0);
    h.chunk(1.5, 1);
    let fx = h.chunk(2.25, 2);
    assert_eq!(fx.media.len(), 1);
    assert!((fx.media[0].duration_s - 0.75).abs() < 1e-12);
    h.meta(2.3, 0, "trailer");
    assert!(h.binary(2.3, 10).finish.is_none());
    assert!(matches!(h.done(2.4, false, 3).finish, Some(Ok(()))));
    let o = h.output();
    assert_eq!(o.request_id.as_deref(), Some("r1"));
    assert_eq!(
        o.records.iter().map(|r| r.index).collect::<Vec<_>>(),
        [0, 1, 2]
    );
    assert!(
        (o.records[0].inter_arrival_s - 1.0).abs() < 1e-9,
        "first inter-arrival is the TTFC"
    );
    assert!((o.records[2].inter_arrival_s - 0.75).abs() < 1e-9);
    assert!((o.ttfc_s.unwrap() - 1.0).abs() < 1e-9);
    assert!((o.wall_s.unwrap() - 2.4).abs() < 1e-9);
    assert_eq!(o.media_bytes, 22, "trailer bytes count as media bytes");
}

#[test]
fn binary_without_metadata_fails() {
    let mut h = Harness::new(3);
    assert_failed(
        &h.binary(1.0, 4),
        "Received a binary frame with no preceding video.chunk_metadata event.",
    );
}

#[test]
fn server_error_names_chunks_and_request() {
    let mut h = Harness::new(3);
    h.chunk(1.0, 0);
    let fx = h.text(1.2, json!({"type":"error","message":"boom"}));
    assert_failed(
        &fx,
        "Server rejected the session after 1 chunk(s): boom (requested 3 chunks = num_frames 33)",
    );
    let mut h = Harness::new(7);
    let fx = h.text(0.2, json!({"type":"error","code":5}));
    assert_failed(
        &fx,
        r#"Server rejected the session after 0 chunk(s): {"code":5,"type":"error"} (requested 7 chunks = num_frames 81)"#,
    );
}

#[test]
fn post_checks_in_reference_order() {
    let mut h = Harness::new(3);
    assert_failed(
        &h.done(1.0, false, 0),
        "The session finished without delivering a single media chunk.",
    );

    let mut h = Harness::new(3);
    h.chunk(1.0, 0);
    let fx = h.done(1.1, true, 1);
    assert_failed(
        &fx,
        r#"The session was stopped before it finished: {"chunks":1,"stopped":true,"type":"session.done"}"#,
    );

    let mut h = Harness::new(3);
    h.chunk(1.0, 0);
    h.chunk(1.1, 2);
    h.chunk(1.2, 1);
    assert_failed(
        &h.done(1.3, false, 3),
        "Chunk indices are not contiguous from zero: [0, 2, 1]",
    );

    let mut h = Harness::new(3);
    h.chunk(1.0, 0);
    h.chunk(1.1, 1);
    assert_failed(
        &h.done(1.3, false, 2),
        "Expected 3 chunks for num_frames=33, received 2.",
    );
}

#[test]
fn first_chunk_timeout_ignores_non_media_messages() {
    let mut cfg = settings(3, Vec::new());
    cfg.first_chunk_timeout = Duration::from_secs(5);
    cfg.ping_interval = None;
    let mut h = Harness::with(cfg);
    let fx = h.text(4.0, json!({"type":"session.pong"}));
    assert_eq!(
        fx.wake_at,
        Some(h.at(5.0)),
        "a pong must not extend the deadline"
    );
    let mut fx = Effects::default();
    h.s.on_wake(h.at(5.0), &mut fx);
    assert_failed(
        &fx,
        "No media chunk for 5 s after 0 chunk(s); the server may still be loading, compiling, or capturing graphs.",
    );
}

#[test]
fn chunk_timeout_counts_from_last_media() {
    let mut cfg = settings(3, Vec::new());
    cfg.chunk_timeout = Duration::from_millis(2500);
    cfg.ping_interval = None;
    let mut h = Harness::with(cfg);
    let fx = h.chunk(1.0, 0);
    assert_eq!(fx.wake_at, Some(h.at(3.5)));
    h.meta(2.0, 1, "trailer");
    let fx = h.binary(2.0, 3);
    assert_eq!(
        fx.wake_at,
        Some(h.at(3.5)),
        "trailer chunks do not move the deadline"
    );
    let mut fx = Effects::default();
    h.s.on_wake(h.at(3.5), &mut fx);
    assert_failed(
        &fx,
        "No media chunk for 2.5 s after 1 chunk(s); the server may still be loading, compiling, or capturing graphs.",
    );
}

#[test]
fn pings_on_their_own_schedule() {
    let mut cfg = settings(3, Vec::new());
    cfg.ping_interval = Some(Duration::from_secs(2));
    let mut h = Harness::with(cfg);
    let mut fx = Effects::default();
    h.s.on_wake(h.at(2.0), &mut fx);
    assert_eq!(fx.outbound.len(), 1);
    assert_eq!(
        fx.outbound[0].msg,
        Outbound::Text(r#"{"type":"session.ping"}"#.into())
    );
    assert_eq!(fx.outbound[0].intended, Some(h.at(2.0)));
    assert_eq!(fx.wake_at, Some(h.at(4.0)));
    assert!(fx.finish.is_none());
}

#[test]
fn prompt_updates_fire_on_their_boundary_in_order() {
    let ups = vec![
        PromptUpdate {
            after_chunk: 0,
            prompt: "a".into(),
            transition_chunks: 3,
        },
        PromptUpdate {
            after_chunk: 2,
            prompt: "b".into(),
            transition_chunks: 1,
        },
    ];
    let mut h = Harness::with(settings(4, ups));
    let fx = h.chunk(1.0, 0);
    assert_eq!(fx.outbound.len(), 1);
    let Outbound::Text(t) = &fx.outbound[0].msg else {
        panic!()
    };
    let v: serde_json::Value = serde_json::from_str(t).unwrap();
    assert_eq!(v["interaction"]["event_id"], "chunk-0");
    assert!(h.chunk(1.5, 1).outbound.is_empty());
    let fx = h.chunk(2.0, 2);
    let Outbound::Text(t) = &fx.outbound[0].msg else {
        panic!()
    };
    assert!(t.contains("chunk-2") && t.contains("\"b\""), "{t}");
    assert!(
        h.chunk(2.5, 3).outbound.is_empty(),
        "each update is sent once"
    );
}

#[test]
fn early_close_names_chunk_count() {
    let mut h = Harness::new(3);
    h.chunk(1.0, 0);
    let mut fx = Effects::default();
    h.s.on_closed(h.at(1.2), Some("1000".into()), &mut fx);
    assert_failed(
        &fx,
        "The server closed the session without session.done after 1 chunk(s) (close reason: 1000).",
    );
}

#[test]
fn later_metadata_replaces_unconsumed_one() {
    let mut h = Harness::new(1);
    h.meta(0.5, 5, "media");
    h.meta(0.6, 0, "media");
    h.binary(0.7, 4);
    assert!(matches!(h.done(0.8, false, 1).finish, Some(Ok(()))));
    assert_eq!(h.output().records[0].index, 0);
}

#[test]
fn media_is_spooled_as_it_arrives_and_published_from_the_spool() {
    let t0 = Instant::now();
    let tmp = tempfile::tempdir().unwrap();
    let spool = std::sync::Arc::new(crate::workload::spool::Spool::create(tmp.path()).unwrap());
    let save_as = super::SaveAs {
        path: "session-004.mp4".into(),
        spool: std::sync::Arc::clone(&spool),
    };
    let mut s = VideoSession::new(settings(1, Vec::new()), 4, Some(save_as));
    let mut fx = Effects::default();
    s.on_open(t0, &mut fx);
    let meta = json!({"type":"video.chunk_metadata","kind":"media","num_frames":9,"generation_chunk_index":0});
    s.on_inbound(Inbound::Text(meta.to_string().into()), t0, &mut fx);
    s.on_inbound(Inbound::Binary(Bytes::from_static(b"ftyp")), t0, &mut fx);
    let done = json!({"type":"session.done","stopped":false,"chunks":1});
    s.on_inbound(Inbound::Text(done.to_string().into()), t0, &mut fx);
    let a = s.artifacts();
    assert_eq!(a.len(), 1);
    assert_eq!(a[0].rel_path, std::path::PathBuf::from("session-004.mp4"));
    let crate::workload::ArtifactBody::Spooled(from, span) = &a[0].body else {
        panic!("media is spooled, not held: {:?}", a[0].body);
    };
    assert!(std::sync::Arc::ptr_eq(from, &spool));
    spool.flush();
    let mut copied = Vec::new();
    spool.copy_to(*span, &mut copied).unwrap();
    assert_eq!(copied, b"ftyp");
}
