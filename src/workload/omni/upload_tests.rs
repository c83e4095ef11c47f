//! The built appends are exactly what `append_message` makes, append by append, for
//! every length the tail rule streams and every frame layout.

use std::sync::Arc;

use bytes::Bytes;

use super::*;
use crate::workload::omni::pacing::{CHUNK_BYTES, append_message, streamed_len};

fn media(pcm_len: usize, frames: &[Option<&str>]) -> PreparedMedia {
    PreparedMedia {
        // Distinct bytes, so an offset mistake changes the base64.
        pcm: Bytes::from((0..pcm_len).map(|i| (i % 251) as u8).collect::<Vec<_>>()),
        frames: frames.iter().map(|f| f.map(Arc::from)).collect(),
        duration_s: pcm_len as f64 / 32_000.0,
    }
}

fn assert_same_as_built_per_send(m: &PreparedMedia) {
    let up = CaseUpload::new(m);
    for period in [1_000, 300, 200, 7] {
        let len = streamed_len(m.pcm.len(), period);
        let mut count = 0;
        for a in AppendPlan::new(len, m.frames.len()) {
            let (msg, frames) = append_message(&a, &m.pcm, &m.frames);
            let built = up
                .get(len, &a)
                .unwrap_or_else(|| panic!("append {} of {len}", a.index));
            assert_eq!(
                &built.msg[..],
                msg,
                "append {} of {len} (period {period})",
                a.index
            );
            assert_eq!(built.frames, frames);
            count += 1;
        }
        assert_eq!(count, len.div_ceil(CHUNK_BYTES));
    }
}

#[test]
fn every_append_of_both_tail_lengths_matches_the_per_send_message() {
    let frames = [Some("f0"), None, Some(""), Some("f3")];
    for pcm_len in [
        0,
        2,
        4,
        CHUNK_BYTES - 2,
        CHUNK_BYTES,
        CHUNK_BYTES + 2,
        3 * CHUNK_BYTES + 2,
        28_800,
        32_000,
        4 * 32_000,
        4 * 32_000 + 2,
    ] {
        assert_same_as_built_per_send(&media(pcm_len, &frames));
    }
}

#[test]
fn frames_ride_the_same_appends_as_when_built_per_send() {
    // A frame slot per second for 3 s; the trimmed last append ends 1/16 ms earlier.
    let m = media(3 * 32_000, &[Some("a"), Some("b"), Some("c")]);
    assert_same_as_built_per_send(&m);
    let up = CaseUpload::new(&m);
    let sent: usize = AppendPlan::new(m.pcm.len(), 3)
        .map(|a| up.get(m.pcm.len(), &a).unwrap().frames)
        .sum();
    assert_eq!(sent, 3);
}

#[test]
fn a_length_the_tail_rule_never_streams_has_no_last_append() {
    let m = media(3 * CHUNK_BYTES, &[]);
    let up = CaseUpload::new(&m);
    let odd = 3 * CHUNK_BYTES - 100;
    let last = AppendPlan::new(odd, 0).last().unwrap();
    assert!(up.get(odd, &last).is_none());
    assert!(
        up.memory_bytes() > 3 * CHUNK_BYTES * 4 / 3,
        "{}",
        up.memory_bytes()
    );
}
