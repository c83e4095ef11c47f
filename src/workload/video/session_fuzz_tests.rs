//! Property tests: arbitrary inbound messages (shaped events, JSON, text, binary) in any
//! order, with wake-ups and a close, never panic the video session, and every failure
//! is a message (issue 11 item 16). Case counts are bounded so CI stays fast.

use std::sync::Arc;
use std::time::Duration;

use proptest::prelude::*;
use tokio::time::Instant;

use super::*;
use crate::workload::fuzz::{drive, event, steps};

const TYPES: &[&str] = &[
    "session.started",
    "video.chunk_metadata",
    "session.done",
    "session.pong",
    "error",
    "session.update_ack",
];

const KEYS: &[&str] = &[
    "kind",
    "num_frames",
    "byte_length",
    "generation_chunk_index",
    "request_id",
    "format",
    "stopped",
    "chunks",
    "message",
    "server_sent_at_s",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn any_inbound_sequence_is_handled(
        steps in steps(event(TYPES, KEYS)),
        chunks in 1u32..4,
        close in proptest::option::of(".{0,12}"),
    ) {
        let cfg = SessionSettings {
            start_payload: Arc::from(r#"{"type":"session.start"}"#),
            prompt_updates: Arc::from(Vec::new()),
            num_chunks: chunks,
            num_frames: 12 * chunks - 3,
            target_fps: 16.0,
            first_chunk_timeout: Duration::from_secs(5),
            chunk_timeout: Duration::from_secs(3),
            ping_interval: Some(Duration::from_secs(2)),
            print_chunks: false,
        };
        let mut s = VideoSession::new(cfg, 0, None);
        let t0 = Instant::now();
        let mut fx = Effects::default();
        s.on_open(t0, &mut fx);
        drive(&mut s, t0, &steps, close);
    }
}
