//! The barge-in state machine on hand-made timelines: onset on the append grid, each
//! stop kind, the answer, and the speech clip.

use bytes::Bytes;

use super::{Barge, CHUNK, Chunk, speech_clip};

fn barge(after_ms: f64, chunks: usize) -> Barge {
    Barge::new(after_ms, Bytes::from(vec![1u8; chunks * CHUNK]))
}

/// Question ends at 1.0 s; silence until the reply's first audio (1.25 s) + 300 ms, on
/// the 200 ms grid: onset at 1.6 s, then 2 chunks of speech, then the commit.
#[test]
fn onset_lands_on_the_first_append_past_the_offset() {
    let mut b = barge(300.0, 2);
    b.question_ended(1.0);
    assert_eq!(b.next_chunk(1.0), Chunk::Silence);
    b.audio("r0", 0.2, 0.9); // before the question ended: not the reply
    assert!(b.awaiting_reply());
    b.audio("r1", 0.2, 1.25);
    assert_eq!(b.target_id(), Some("r1"));
    assert_eq!(b.next_chunk(1.2), Chunk::Silence);
    assert_eq!(b.next_chunk(1.4), Chunk::Silence);
    assert_eq!(b.next_chunk(1.6), Chunk::Speech(0));
    assert_eq!(b.next_chunk(1.8), Chunk::Speech(1));
    assert_eq!(b.next_chunk(2.0), Chunk::End);
    let rec = b.finish(None);
    assert_eq!(rec.offset_ms, Some(350.0));
    assert_eq!(rec.response_id.as_deref(), Some("r1"));
}

fn interrupted() -> Barge {
    let mut b = barge(0.0, 1);
    b.question_ended(1.0);
    b.audio("r1", 0.5, 1.1);
    assert_eq!(b.next_chunk(1.2), Chunk::Speech(0));
    b.played_at_onset_ms = Some(100.0);
    b
}

#[test]
fn a_clear_stops_the_reply_and_counts_what_came_after() {
    let mut b = interrupted();
    b.audio("r1", 0.5, 1.25); // after the onset
    b.speech_started(1.3);
    b.cleared(Some("r1"), 1.35);
    b.done("r1", true, 1.36); // the first stop counts
    b.created("r2", 1.35);
    b.audio("r2", 0.2, 1.5);
    let rec = b.finish(Some(250.0));
    assert_eq!(rec.stop_ms, Some(150.0));
    assert_eq!(rec.stop_by, Some("cleared"));
    assert_eq!(rec.audio_after_onset_ms, Some(500.0));
    assert_eq!(rec.heard_after_onset_ms, Some(150.0));
    assert_eq!(rec.speech_started_ms, Some(100.0));
    assert_eq!(rec.answer_ms, Some(300.0));
}

#[test]
fn a_reply_let_finish_stops_at_its_last_audio() {
    let mut b = interrupted();
    b.audio("r1", 0.2, 1.4);
    b.done("r1", false, 1.5);
    let rec = b.finish(Some(700.0));
    assert_eq!((rec.stop_ms, rec.stop_by), (Some(200.0), Some("finished")));
    assert_eq!(rec.answer_ms, None, "no answer: absent, not zero");
}

#[test]
fn a_cancel_without_clear_is_the_stop() {
    let mut b = interrupted();
    b.done("r1", true, 1.45);
    b.cleared(Some("other"), 1.3); // another response's clear is not this stop
    assert_eq!(b.finish(None).stop_by, Some("cancelled"));
}

#[test]
fn no_reply_no_onset_no_values() {
    let mut b = barge(0.0, 1);
    b.question_ended(1.0);
    assert_eq!(b.next_chunk(1.0), Chunk::Silence);
    let rec = b.finish(Some(0.0));
    assert_eq!(rec.stop_ms, None);
    assert_eq!(rec.audio_after_onset_ms, None);
    assert_eq!(rec.heard_after_onset_ms, None);
}

#[test]
fn the_clip_skips_leading_silence_and_repeats_the_voice() {
    let mut pcm = vec![0u8; CHUNK]; // 200 ms of silence
    pcm.extend((0..CHUNK / 2).flat_map(|i| if i % 2 == 0 { 1000i16 } else { -1000 }.to_le_bytes()));
    let clip = speech_clip(&pcm, 3);
    assert_eq!(clip.len(), 3 * CHUNK);
    assert!(
        clip.chunks(CHUNK).all(|c| c == &pcm[CHUNK..]),
        "voice only, repeated"
    );
    assert!(speech_clip(&[], 2).is_empty());
    assert!(
        speech_clip(&[0; 3 * CHUNK], 2).is_empty(),
        "silence is no speech"
    );
}
