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

#[test]
fn a_packed_build_sends_the_same_appends_as_one_on_the_heap() {
    // Mappings smaller than a case: a case's appends span several of them.
    let mut packer = crate::util::packed::Packer::with_chunk_bytes(3 * CHUNK_BYTES);
    let cases = [
        media(4 * 32_000 + 2, &[Some("a"), None, Some("c"), Some("d")]),
        media(2, &[]),
        media(CHUNK_BYTES, &[Some("x")]),
    ];
    let drafts: Vec<CaseDraft> = cases
        .iter()
        .map(|m| CaseUpload::draft(m, &mut packer).unwrap())
        .collect();
    let packed = packer.finish().unwrap();
    assert!(packed.mappings() > 1, "{}", packed.mappings());
    for (m, d) in cases.iter().zip(drafts) {
        let (heap, up) = (CaseUpload::new(m), d.resolve(&packed).unwrap());
        assert_eq!((up.body.clone(), up.last.clone()), (heap.body, heap.last));
        assert_eq!(
            (up.pcm_len, up.frame_count),
            (heap.pcm_len, heap.frame_count)
        );
        assert!(up.speech.is_empty());
    }
}

#[test]
fn a_draft_keeps_the_speech_it_is_given() {
    let m = media(3 * CHUNK_BYTES + 2, &[]);
    let mut packer = crate::util::packed::Packer::new();
    let turns = CaseUpload::draft(&m, &mut packer)
        .unwrap()
        .with_turn_speech(&m);
    let barge = (CaseUpload::draft(&m, &mut packer).unwrap()).with_speech(&m, 300.0);
    let packed = packer.finish().unwrap();
    let turns = turns.resolve(&packed).unwrap();
    assert_eq!(turns.speech, m.pcm.slice(..3 * CHUNK_BYTES));
    let barge = barge.resolve(&packed).unwrap();
    assert_eq!(
        barge.speech.len(),
        2 * CHUNK_BYTES,
        "300 ms rounds up to two chunks"
    );
}

#[test]
fn pack_all_builds_every_case_in_order_and_stops_at_the_first_bad_one() {
    let lens = [4 * 32_000, 2, CHUNK_BYTES];
    let ups = pack_all(&lens, |&n| Ok(media(n, &[])), |d, m| d.with_turn_speech(m)).unwrap();
    for (&n, up) in lens.iter().zip(&ups) {
        let heap = CaseUpload::new(&media(n, &[]));
        assert_eq!(
            (&up.body, &up.last, up.pcm_len),
            (&heap.body, &heap.last, n)
        );
        assert_eq!(up.speech.len(), n / CHUNK_BYTES * CHUNK_BYTES);
    }
    let bad = pack_all(
        &lens,
        |&n| {
            if n == 2 {
                Err(format!("case {n}"))
            } else {
                Ok(media(n, &[]))
            }
        },
        |d, _| d,
    );
    assert_eq!(bad.unwrap_err(), "case 2");
}
