//! Turns on hand-made timelines: the schedule of speech, commits and silence, and each
//! turn's metrics from its end of speech.

use bytes::Bytes;

use super::{Chunk, Turns};
use crate::workload::omni::session::barge::CHUNK;

/// Every record, as the session's end leaves them (nothing spilled here).
fn records(t: &Turns) -> Vec<super::TurnRecord> {
    let left = clone(t).finish();
    assert_eq!(left.spilled(), None);
    left.records(&[]).unwrap()
}

/// A copy of an unspilled `t` (a spilling log's spool handle is not cloned).
fn clone(t: &Turns) -> Turns {
    let mut past = crate::workload::spool::spilled::SpilledLog::default();
    past.push(t.past.tail());
    Turns {
        speech: t.speech.clone(),
        current: t.current.clone(),
        past,
        ..*t
    }
}

fn turns(n: usize, explicit: bool) -> Turns {
    Turns::new(n, 500.0, explicit, Bytes::from(vec![1u8; 2 * CHUNK]))
}

#[test]
fn explicit_turns_commit_wait_for_the_reply_then_speak_again() {
    let mut t = turns(2, true);
    t.question_ended(1.0);
    assert_eq!(
        t.next_chunk(1.0),
        Chunk::Commit,
        "turn 0 ends with its commit"
    );
    assert_eq!(t.next_chunk(1.0), Chunk::Silence);
    assert_eq!(t.awaiting_reply(), Some(0));
    t.created("r0", 1.05);
    t.text("r0", 1.08);
    t.audio("r0", 1.1);
    t.reply_ended(Some("other"), 1.2); // not the reply
    assert_eq!(t.next_chunk(1.2), Chunk::Silence);
    t.reply_ended(Some("r0"), 1.3);
    assert_eq!(t.next_chunk(1.6), Chunk::Silence, "the gap: until 1.8");
    assert_eq!(
        t.next_chunk(1.8),
        Chunk::Speech(0),
        "turn 1 starts after the gap"
    );
    assert_eq!(t.next_chunk(2.0), Chunk::Speech(1));
    assert_eq!(
        t.next_chunk(2.2),
        Chunk::End,
        "the last turn ends with the final commit"
    );
    let r = records(&t);
    assert_eq!(r.len(), 2);
    assert_eq!(r[0].first_audio_ms, Some(100.0));
    assert_eq!(r[0].first_text_ms, Some(80.0));
    assert_eq!(r[0].explicit_commit_to_first_audio_ms, Some(100.0));
    assert_eq!(r[1].speech_start_s, 1.8);
    assert_eq!(r[1].speech_end_s, Some(2.2));
    assert!(r[1].committed, "the final commit ends the last turn");
}

#[test]
fn server_vad_turns_send_no_commit_and_measure_from_speech_stopped() {
    let mut t = turns(2, false);
    t.question_ended(1.0);
    assert_eq!(t.next_chunk(1.0), Chunk::Silence, "no commit");
    t.created("early", 0.9); // created before the end of speech: not the reply
    t.speech_stopped(1.2);
    t.created("r0", 1.25);
    t.audio("r0", 1.4);
    let r = &records(&t)[0];
    assert_eq!(r.reply_id.as_deref(), Some("r0"));
    assert!(!r.committed);
    assert_eq!(r.first_audio_ms, Some(400.0));
    assert_eq!(r.vad_stop_to_first_audio_ms, Some(200.0));
    assert_eq!(
        r.explicit_commit_to_first_audio_ms, None,
        "absent, not zero"
    );
}

#[test]
fn a_listen_decision_ends_an_unanswered_turn() {
    let mut t = turns(2, true);
    t.question_ended(1.0);
    assert_eq!(t.next_chunk(1.0), Chunk::Commit);
    t.reply_ended(None, 0.5); // a listen before the end of speech does not count
    assert_eq!(t.next_chunk(1.0), Chunk::Silence);
    t.reply_ended(None, 1.1);
    assert_eq!(t.next_chunk(1.6), Chunk::Speech(0));
    assert_eq!(records(&t)[0].first_audio_ms, None);
}

#[test]
fn one_turn_is_the_seed_session() {
    let mut t = turns(1, true);
    t.question_ended(1.0);
    assert_eq!(
        t.next_chunk(1.0),
        Chunk::End,
        "no extension: the final commit at once"
    );
    assert!(records(&t)[0].committed);
}

#[test]
fn a_held_session_speaks_until_a_turn_ends_past_its_duration() {
    // Held for 2.1 s: turn 0 ends at 1.0, turn 1 at 2.2 — at or past 2.1, so it is the
    // last, its commit the final one, though `n` allows more.
    let mut t = turns(usize::MAX, true).until(Some(2.1));
    t.question_ended(1.0);
    assert_eq!(t.next_chunk(1.0), Chunk::Commit, "turn 0 is not the last");
    t.reply_ended(None, 1.3);
    assert_eq!(t.next_chunk(1.8), Chunk::Speech(0));
    assert_eq!(t.next_chunk(2.0), Chunk::Speech(1));
    assert_eq!(t.next_chunk(2.2), Chunk::End, "turn 1 ended past 2.1 s");
    let r = records(&t);
    assert_eq!(r.len(), 2);
    assert!(r[1].committed);
    // A question that already ends past the duration is the only turn.
    let mut t = turns(usize::MAX, true).until(Some(0.5));
    t.question_ended(1.0);
    assert_eq!(t.next_chunk(1.0), Chunk::End);
}

#[test]
fn a_past_turn_keeps_its_record_in_49_bytes_and_its_reply_and_gives_them_back_unchanged() {
    assert_eq!(std::mem::size_of::<super::TurnRecord>(), 144);
    // Every field set, then none: both come back as they were.
    let full = super::TurnRecord {
        turn: 3,
        speech_start_s: 1.5,
        speech_end_s: Some(2.5),
        committed: true,
        reply_id: Some("resp_0123".into()),
        first_audio_ms: Some(-0.0),
        first_text_ms: Some(12.345),
        vad_stop_to_first_audio_ms: Some(7.0),
        explicit_commit_to_first_audio_ms: Some(100.0),
        speech_stopped_s: None,
    };
    let back = super::PastTurn::of(&full).record(3, full.reply_id.clone());
    assert_eq!(back, full);
    // Its bytes give back the same bits (the form past turns are kept and spilled in).
    let mut bytes = Vec::new();
    super::PastTurn::of(&full).encode(full.reply_id.as_deref(), &mut bytes);
    assert_eq!(bytes.len(), super::PastTurn::BYTES + 1 + "resp_0123".len());
    let empty = super::TurnRecord {
        turn: 4,
        ..super::TurnRecord::default()
    };
    super::PastTurn::of(&empty).encode(None, &mut bytes);
    assert_eq!(
        bytes.len(),
        2 * super::PastTurn::BYTES + 1 + "resp_0123".len()
    );
    let mut at = 0;
    let (p, reply) = super::PastTurn::decode(&bytes, &mut at).unwrap();
    let again = p.record(3, reply);
    assert_eq!(again, full);
    assert!(again.first_audio_ms.unwrap().is_sign_negative());
    let (p, reply) = super::PastTurn::decode(&bytes, &mut at).unwrap();
    assert_eq!(p.record(4, reply), empty);
    assert_eq!(at, bytes.len());
    // Cut short: no turn, not a wrong one.
    let mut at = 0;
    assert!(super::PastTurn::decode(&bytes[..super::PastTurn::BYTES + 3], &mut at).is_none());
}

#[test]
fn past_replies_keep_their_ids() {
    // Turns 0 and 1 had replies; turn 2 is current.
    let mut t = turns(3, true);
    t.question_ended(1.0);
    assert_eq!(t.next_chunk(1.0), Chunk::Commit);
    t.created("r0", 1.05);
    t.reply_ended(Some("r0"), 1.2);
    assert_eq!(t.next_chunk(1.7), Chunk::Speech(0));
    assert_eq!(t.next_chunk(1.9), Chunk::Speech(1));
    assert_eq!(t.next_chunk(2.1), Chunk::Commit);
    t.created("r1", 2.15);
    t.reply_ended(Some("r1"), 2.3);
    assert_eq!(t.next_chunk(2.9), Chunk::Speech(0));
    t.created("early", 2.95); // before turn 2's end of speech: no reply
    let r = records(&t);
    let replies: Vec<Option<&str>> = r.iter().map(|t| t.reply_id.as_deref()).collect();
    assert_eq!(replies, [Some("r0"), Some("r1"), None]);
    assert_eq!(r[1].speech_start_s, 1.7);
}

/// Speaks `n` turns, each answered by a reply, with times that vary per turn (some
/// absent).
fn speak(mut t: Turns, n: usize) -> Turns {
    let mut at = 1.0;
    t.question_ended(at);
    for k in 0..n {
        assert_eq!(t.next_chunk(at), Chunk::Commit);
        let rid = format!("r{k}");
        t.created(&rid, at + 0.05);
        if k % 3 != 0 {
            t.audio(&rid, at + 0.1 + k as f64 * 1e-4);
        }
        if k % 5 != 0 {
            t.text(&rid, at + 0.07);
        }
        t.reply_ended(Some(&rid), at + 0.2);
        at += 0.7;
        assert_eq!(t.next_chunk(at), Chunk::Speech(0));
        assert_eq!(t.next_chunk(at + 0.2), Chunk::Speech(1));
        at += 0.4;
    }
    t
}

#[test]
fn spilled_past_turns_come_back_as_the_records_of_unspilled_ones() {
    let tmp = tempfile::tempdir().unwrap();
    let spool = crate::workload::spool::Spool::create(tmp.path()).unwrap();
    let n = 500; // 500 × ~53 bytes: many tails spilled
    let spilled = speak(turns(n + 1, true).spill_to(spool.session().log()), n);
    let kept = speak(turns(n + 1, true), n);
    assert!(spilled.past.spilled() > 0);
    assert!(spilled.past.heap_bytes() <= crate::workload::spool::spilled::TAIL_BYTES + 64);
    // The session's end reads nothing back; the report reads the span after the flush.
    let (left, all) = (spilled.finish(), kept.finish());
    assert_eq!(all.spilled(), None);
    spool.flush();
    let back = spool.load(left.spilled().unwrap()).unwrap();
    let (a, b) = (left.records(&back).unwrap(), all.records(&[]).unwrap());
    assert_eq!(a.len(), n + 1);
    assert_eq!(a, b);
    // Bit for bit, not only equal as numbers.
    let bits = |r: &[super::TurnRecord]| serde_json::to_string(r).unwrap();
    assert_eq!(bits(&a), bits(&b));
    // Bytes that are not the ones spilled are an error, never fewer turns.
    assert!(left.records(&back[..back.len() - 1]).is_err());
}
