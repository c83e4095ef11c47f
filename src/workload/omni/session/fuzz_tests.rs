//! Property tests: arbitrary inbound messages (shaped events, JSON, text, binary) in any
//! order, with wake-ups and a close, never panic the duplex session, and every failure
//! is a message (issue 11 item 16). Case counts are bounded so CI stays fast.

use std::sync::Arc;

use bytes::Bytes;
use proptest::prelude::*;
use tokio::time::Instant;

use super::*;
use crate::workload::fuzz::{drive, event, steps};
use crate::workload::omni::upload::CaseUpload;

const TYPES: &[&str] = &[
    "session.created",
    "session.expired",
    "session.closed",
    "error",
    "input_audio_buffer.committed",
    "response.created",
    "response.done",
    "response.listen",
    "response.audio.delta",
    "response.audio_transcript.delta",
    "response.text.delta",
    "output_audio_buffer.cleared",
    "conversation.item.created",
];

const KEYS: &[&str] = &[
    "response_id",
    "response",
    "delta",
    "audio",
    "format",
    "sample_rate_hz",
    "event",
    "reason",
    "overlap_deferred",
    "metadata",
    "status",
    "message",
    "code",
    "error",
    "session",
];

fn session(capture: bool) -> DuplexSession {
    let cfg = DuplexSettings::new("m", Arc::from("data:audio/wav;base64,UklGRg=="));
    let media = PreparedMedia {
        pcm: Bytes::from(vec![0u8; 2 * 32_000]),
        frames: Arc::from(vec![Some(Arc::from("f0")), None]),
        duration_s: 2.0,
    };
    DuplexSession::new(
        Arc::new(cfg),
        Arc::new(CaseUpload::new(&media)),
        "omniinteract:1q1a:r-0:1".into(),
        capture,
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn any_inbound_sequence_is_handled(
        steps in steps(event(TYPES, KEYS)),
        capture in any::<bool>(),
        close in proptest::option::of(".{0,12}"),
    ) {
        let mut s = session(capture);
        let t0 = Instant::now();
        let mut fx = Effects::default();
        s.on_open(t0, &mut fx);
        drive(&mut s, t0, &steps, close);
        let _ = Box::new(s).into_output();
    }
}
