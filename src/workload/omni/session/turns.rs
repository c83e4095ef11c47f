//! Turns (`[workload] turns = N`): the user speaks the case's audio N times in one
//! session. After each turn the microphone stays open — silence on the 200 ms append grid
//! — until the reply to that turn has ended (its `response.done`, or the model's decision
//! to listen) and `turn_gap_ms` more have passed; then the next turn speaks. A turn ends
//! with `input_audio_buffer.commit` `"final": false` under explicit turn detection, with
//! nothing under server VAD (the server hears the end of speech); the last turn ends with
//! the session's final commit either way.
//!
//! Per turn, from its **end of speech** (the intended send time of the end of its last
//! append, where the user stopped talking): the reply is the first response created at or
//! after it; `first_audio_ms` / `first_text_ms` run to the reply's first audio delta /
//! first non-empty text delta; `vad_stop_to_first_audio_ms` from the first
//! `input_audio_buffer.speech_stopped` received after the end of speech, and
//! `explicit_commit_to_first_audio_ms` from the turn's commit (its intended send time).
//!
//! Pure: times in seconds on the session clock in, chunk decisions and records out.

use bytes::Bytes;
use serde::Serialize;

use super::barge::{CHUNK, Chunk};
use super::responses::RowsLeft;
use crate::util::leb128;
use crate::workload::spool::spilled::{LogParts, SpilledLog};
use crate::workload::spool::{SessionSpool, Span};

/// What one turn measured (`null`: not reached).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TurnRecord {
    /// 0-based.
    pub turn: usize,
    /// Session-clock seconds the turn's speech began and ended.
    pub speech_start_s: f64,
    /// See the module docs.
    pub speech_end_s: Option<f64>,
    /// The turn's explicit commit was sent at its end of speech.
    pub committed: bool,
    /// The reply: the first response created at or after the end of speech.
    pub reply_id: Option<String>,
    /// End of speech → the reply's first audio, ms.
    pub first_audio_ms: Option<f64>,
    /// End of speech → the reply's first non-empty text, ms.
    pub first_text_ms: Option<f64>,
    /// The server's `speech_stopped` → the reply's first audio, ms.
    pub vad_stop_to_first_audio_ms: Option<f64>,
    /// The turn's commit → the reply's first audio, ms.
    pub explicit_commit_to_first_audio_ms: Option<f64>,
    #[serde(skip)]
    speech_stopped_s: Option<f64>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum State {
    /// Waiting for the current turn's reply to end.
    AfterSpeech,
    /// The reply ended; the next turn starts at this time.
    Gap(f64),
    /// Speaking the current turn: chunks sent so far.
    Speaking(usize),
    /// The last turn was spoken.
    Done,
}

/// One session's turns in progress.
#[derive(Debug)]
pub(super) struct Turns {
    n: usize,
    gap_s: f64,
    explicit: bool,
    speech: Bytes,
    state: State,
    pending_commit: bool,
    /// `[load] duration_s` on the session clock: the turn whose speech ends at or after
    /// it is the last.
    until_s: Option<f64>,
    /// The turns before the current one, encoded ([`PastTurn::encode`]): they no longer
    /// change. Past a 512-byte tail they go to the session's spool when it has one
    /// ([`Turns::spill_to`]), so a held session's memory for them stays flat; the report
    /// reads them back ([`TurnsLeft`]).
    past: SpilledLog,
    /// How many turns `past` holds.
    past_n: usize,
    /// The current turn (the last one begun): the only record events still change.
    current: TurnRecord,
}

/// What a session left for the report to read back after the run: its turns as it
/// ended, the past turns' encoded log (its spilled part still in the run's spool) and the
/// last turn ([`Turns::finish`]), and the rows of the responses that left its window
/// ([`super::responses::RowsLeft`]). Made at the session's end without any IO; the report
/// reads the spilled parts after the run and gets the records ([`TurnsLeft::records`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TurnsLeft {
    /// `None`: the session's turns are in its output already (or it had none).
    turns: Option<(LogParts, TurnRecord)>,
    /// The rows of the responses that left the session's window, if any did.
    pub rows: Option<RowsLeft>,
}

impl TurnsLeft {
    /// Whether it carries the session's turns ([`TurnsLeft::records`]).
    pub fn has_turns(&self) -> bool {
        self.turns.is_some()
    }

    /// Where the spilled past turns are in the run's spool (none: all in memory).
    pub fn spilled(&self) -> Option<Span> {
        self.turns.as_ref().and_then(|(past, _)| past.spilled)
    }

    /// Every turn's record, in order, given the bytes of [`TurnsLeft::spilled`] read
    /// back (empty when none); an error when they are not the bytes spilled. None
    /// without turns ([`TurnsLeft::has_turns`]).
    pub fn records(&self, spilled: &[u8]) -> Result<Vec<TurnRecord>, String> {
        let Some((past, current)) = &self.turns else {
            return Ok(Vec::new());
        };
        let past = past.join(spilled)?;
        let mut out = Vec::new();
        let mut at = 0;
        while at < past.len() {
            let turn = out.len();
            let (p, reply) = PastTurn::decode(&past, &mut at)
                .ok_or_else(|| format!("past turn {turn} is damaged"))?;
            out.push(p.record(turn, reply));
        }
        out.push(current.clone());
        Ok(out)
    }
}

/// A turn that a later turn followed: its [`TurnRecord`] as [`PastTurn::BYTES`] bytes
/// and its reply's id ([`PastTurn::encode`]), every float by its bits, instead of 144
/// bytes and a `String`. A soak's session begins a turn per reply, so this is per
/// response (spilled past a 512-byte tail, so its memory is bounded). Absent
/// times are NaN (every kept time is finite: the differences of finite session-clock
/// times). [`PastTurn::record`] gives the record back as it was (`turn` is its
/// position; `speech_stopped_s` is read only while the turn is current).
#[derive(Debug, Clone)]
struct PastTurn {
    speech_start_s: f64,
    /// `speech_end_s`, `first_audio_ms`, `first_text_ms`, `vad_stop_to_first_audio_ms`,
    /// `explicit_commit_to_first_audio_ms`; NaN: `None`.
    times: [f64; 5],
    committed: bool,
}

impl PastTurn {
    /// Bytes of an encoded turn before its reply's id: six floats and a flag byte.
    const BYTES: usize = 6 * 8 + 1;

    /// Appends its bytes and `reply`'s to `out`: floats little-endian; flag bit 0
    /// `committed`, bit 1 a reply, whose id follows as its LEB128 length and bytes.
    fn encode(&self, reply: Option<&str>, out: &mut Vec<u8>) {
        let floats = std::iter::once(self.speech_start_s).chain(self.times);
        for v in floats {
            out.extend_from_slice(&v.to_bits().to_le_bytes());
        }
        out.push(u8::from(self.committed) | (u8::from(reply.is_some()) << 1));
        if let Some(id) = reply {
            leb128::put(out, id.len() as u64);
            out.extend_from_slice(id.as_bytes());
        }
    }

    /// The turn and reply id [`PastTurn::encode`] wrote at `*at` in `b`, moving `*at`
    /// past them (`None`: cut short or not UTF-8).
    fn decode(b: &[u8], at: &mut usize) -> Option<(Self, Option<String>)> {
        let fixed = b.get(*at..*at + Self::BYTES)?;
        let word = |k: usize| {
            let mut w = [0u8; 8];
            w.copy_from_slice(&fixed[k * 8..k * 8 + 8]);
            f64::from_bits(u64::from_le_bytes(w))
        };
        let flags = fixed[48];
        *at += Self::BYTES;
        let reply = if flags & 2 != 0 {
            let len = usize::try_from(leb128::get(b, at)?).ok()?;
            let id = b.get(*at..at.checked_add(len)?)?;
            *at += len;
            Some(String::from_utf8(id.to_vec()).ok()?)
        } else {
            None
        };
        let turn = PastTurn {
            speech_start_s: word(0),
            times: [word(1), word(2), word(3), word(4), word(5)],
            committed: flags & 1 != 0,
        };
        Some((turn, reply))
    }

    fn of(r: &TurnRecord) -> Self {
        let nan = |v: Option<f64>| v.unwrap_or(f64::NAN);
        PastTurn {
            speech_start_s: r.speech_start_s,
            times: [
                nan(r.speech_end_s),
                nan(r.first_audio_ms),
                nan(r.first_text_ms),
                nan(r.vad_stop_to_first_audio_ms),
                nan(r.explicit_commit_to_first_audio_ms),
            ],
            committed: r.committed,
        }
    }

    fn record(&self, turn: usize, reply_id: Option<String>) -> TurnRecord {
        let some = |v: f64| (!v.is_nan()).then_some(v);
        let [end, audio, text, vad, commit] = self.times.map(some);
        TurnRecord {
            turn,
            speech_start_s: self.speech_start_s,
            speech_end_s: end,
            committed: self.committed,
            reply_id,
            first_audio_ms: audio,
            first_text_ms: text,
            vad_stop_to_first_audio_ms: vad,
            explicit_commit_to_first_audio_ms: commit,
            speech_stopped_s: None,
        }
    }
}

impl Turns {
    /// `n` turns of `speech` (whole chunks; the first is the case upload itself),
    /// `gap_ms` after each reply, explicit commits or not.
    pub(super) fn new(n: usize, gap_ms: f64, explicit: bool, speech: Bytes) -> Self {
        Self {
            n: n.max(1),
            gap_s: gap_ms / 1000.0,
            explicit,
            speech,
            state: State::AfterSpeech,
            pending_commit: false,
            until_s: None,
            past: SpilledLog::default(),
            past_n: 0,
            current: TurnRecord::default(),
        }
    }

    /// Held for `until_s` session-clock seconds (`[load] duration_s`): no more turns begin
    /// after the one whose speech ends at or after it, `n` at most.
    pub(super) fn until(mut self, until_s: Option<f64>) -> Self {
        self.until_s = until_s;
        self
    }

    /// Past turns past a small tail go to `spool` (a logical file of the session's own);
    /// call before the first turn ends.
    pub(super) fn spill_to(mut self, spool: SessionSpool) -> Self {
        if self.past_n == 0 {
            self.past = SpilledLog::spilling(spool);
        }
        self
    }

    fn current(&mut self) -> &mut TurnRecord {
        &mut self.current
    }

    /// Turns begun so far.
    fn begun(&self) -> usize {
        self.past_n + 1
    }

    /// The session ended: its turns as the report reads them ([`TurnsLeft`]). No IO,
    /// whatever was spilled: it runs on the session's shard thread.
    pub(super) fn finish(self) -> TurnsLeft {
        TurnsLeft {
            turns: Some((self.past.into_parts(), self.current)),
            rows: None,
        }
    }

    /// The case upload (turn 0) ended at `at_s`.
    pub(super) fn question_ended(&mut self, at_s: f64) {
        if self.current().speech_end_s.is_none() {
            self.end_speech(at_s);
        }
    }

    fn end_speech(&mut self, at_s: f64) {
        let held = self.until_s.is_some_and(|u| at_s + 1e-9 >= u);
        let last = held || self.begun() >= self.n;
        let explicit = self.explicit;
        let rec = self.current();
        rec.speech_end_s = Some(at_s);
        // The last turn's commit is the session's final commit, explicit in both modes.
        rec.committed = explicit || last;
        if last {
            self.state = State::Done;
        } else {
            self.state = State::AfterSpeech;
            self.pending_commit = explicit;
        }
    }

    /// Waiting for a reply (for the timeout message): the turn waiting, if any.
    pub(super) fn awaiting_reply(&self) -> Option<usize> {
        (self.state == State::AfterSpeech).then(|| self.begun() - 1)
    }

    /// What the extension append due at `due_s` carries.
    pub(super) fn next_chunk(&mut self, due_s: f64) -> Chunk {
        if std::mem::take(&mut self.pending_commit) {
            return Chunk::Commit;
        }
        match self.state {
            State::Done => Chunk::End,
            State::AfterSpeech => Chunk::Silence,
            State::Gap(start) if due_s + 1e-9 < start => Chunk::Silence,
            State::Gap(_) => {
                let next = TurnRecord {
                    turn: self.begun(),
                    speech_start_s: due_s,
                    ..TurnRecord::default()
                };
                let ended = std::mem::replace(&mut self.current, next);
                let mut bytes = Vec::with_capacity(PastTurn::BYTES + 64);
                PastTurn::of(&ended).encode(ended.reply_id.as_deref(), &mut bytes);
                self.past.push(&bytes);
                self.past_n += 1;
                self.state = State::Speaking(0);
                self.next_chunk(due_s)
            }
            State::Speaking(k) if k < self.speech.len() / CHUNK => {
                self.state = State::Speaking(k + 1);
                Chunk::Speech(k)
            }
            State::Speaking(_) => {
                self.end_speech(due_s);
                self.next_chunk(due_s)
            }
        }
    }

    /// PCM of speech chunk `k`.
    pub(super) fn speech_chunk(&self, k: usize) -> &[u8] {
        &self.speech[k * CHUNK..(k + 1) * CHUNK]
    }

    /// Seconds of one turn's speech.
    pub(super) fn speech_s(&self) -> f64 {
        (self.speech.len() / 2) as f64 / 16_000.0
    }

    /// The record waiting for its reply's events: the current turn once it has ended.
    fn ended(&mut self) -> Option<&mut TurnRecord> {
        let rec = &mut self.current;
        rec.speech_end_s.is_some().then_some(rec)
    }

    /// `response.created` of `rid` at `at_s`.
    pub(super) fn created(&mut self, rid: &str, at_s: f64) {
        if let Some(rec) = self.ended()
            && rec.reply_id.is_none()
            && rec.speech_end_s.is_some_and(|e| at_s >= e)
        {
            rec.reply_id = Some(rid.to_string());
        }
    }

    /// An audio delta of `rid` at `at_s`.
    pub(super) fn audio(&mut self, rid: &str, at_s: f64) {
        let Some(rec) = self.ended().filter(|r| r.reply_id.as_deref() == Some(rid)) else {
            return;
        };
        if rec.first_audio_ms.is_some() {
            return;
        }
        let end = rec.speech_end_s.unwrap_or(at_s);
        rec.first_audio_ms = Some(ms(at_s - end));
        rec.vad_stop_to_first_audio_ms = rec.speech_stopped_s.map(|s| ms(at_s - s));
        rec.explicit_commit_to_first_audio_ms = rec.committed.then(|| ms(at_s - end));
    }

    /// A non-empty text delta of `rid` at `at_s`.
    pub(super) fn text(&mut self, rid: &str, at_s: f64) {
        if let Some(rec) = self.ended().filter(|r| r.reply_id.as_deref() == Some(rid))
            && rec.first_text_ms.is_none()
        {
            rec.first_text_ms = rec.speech_end_s.map(|e| ms(at_s - e));
        }
    }

    /// `input_audio_buffer.speech_stopped` at `at_s`.
    pub(super) fn speech_stopped(&mut self, at_s: f64) {
        if let Some(rec) = self.ended()
            && rec.speech_stopped_s.is_none()
            && rec.speech_end_s.is_some_and(|e| at_s >= e)
        {
            rec.speech_stopped_s = Some(at_s);
        }
    }

    /// The reply to the waiting turn ended at `at_s` (`rid`'s `response.done`, or a
    /// listen decision when `rid` is `None`): the next turn follows after the gap.
    pub(super) fn reply_ended(&mut self, rid: Option<&str>, at_s: f64) {
        if self.state != State::AfterSpeech {
            return;
        }
        let rec = &self.current;
        let ours = match rid {
            Some(r) => rec.reply_id.as_deref() == Some(r),
            None => rec.reply_id.is_none() && rec.speech_end_s.is_some_and(|e| at_s >= e),
        };
        if ours {
            self.state = State::Gap(at_s + self.gap_s);
        }
    }
}

/// Seconds as ms, 3 decimals.
fn ms(s: f64) -> f64 {
    (s * 1e6).round() / 1000.0
}

#[cfg(test)]
#[path = "turns_tests.rs"]
mod tests;
