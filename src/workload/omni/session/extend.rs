//! What follows the case's audio when a scenario asks for more than the seed's one
//! question: a barge-in ([`super::barge`]) or further turns ([`super::turns`]). Both add
//! appends (silence, then speech) on the upload's grid and watch the server's events;
//! this is the session side they share.

use std::time::Duration;

use tokio::time::Instant;

use super::barge::{Barge, CHUNK, Chunk};
use super::event::Event;
use super::turns::Turns;
use super::{BYTES_PER_SECOND, DuplexSession, ledger};
use crate::workload::omni::ledger::{AUDIO_DELTA_TYPES, EventView, TEXT_DELTA_TYPES};
use crate::workload::omni::pacing::{Append, append_message};
use crate::workload::omni::playback::OUTPUT_RATE;
use crate::workload::{Effects, Outbound};

/// 200 ms of silence.
static SILENCE: [u8; CHUNK] = [0; CHUNK];

/// A turn's commit.
const TURN_COMMIT: &str = r#"{"type":"input_audio_buffer.commit","final":false}"#;

/// The extension a session runs after the case's audio.
#[derive(Debug)]
pub(super) enum Ext {
    /// Interrupt the agent's reply.
    Barge(Box<Barge>),
    /// Speak again, turn after turn.
    Turns(Box<Turns>),
}

impl Ext {
    fn next_chunk(&mut self, due_s: f64) -> Chunk {
        match self {
            Ext::Barge(b) => b.next_chunk(due_s),
            Ext::Turns(t) => t.next_chunk(due_s),
        }
    }

    fn speech_chunk(&self, k: usize) -> &[u8] {
        match self {
            Ext::Barge(b) => b.speech_chunk(k),
            Ext::Turns(t) => t.speech_chunk(k),
        }
    }

    fn speech_s(&self) -> f64 {
        match self {
            Ext::Barge(b) => b.speech_s(),
            Ext::Turns(t) => t.speech_s(),
        }
    }

    fn question_ended(&mut self, at_s: f64) {
        match self {
            Ext::Barge(b) => b.question_ended(at_s),
            Ext::Turns(t) => t.question_ended(at_s),
        }
    }
}

impl DuplexSession {
    /// Interrupt the agent's reply `after_ms` into it with the case's speech clip
    /// ([`super::barge`]); none without a clip (the workload fails such a session first).
    pub fn with_barge_in(mut self, after_ms: f64) -> Self {
        if !self.appends.speech.is_empty() {
            let b = Barge::new(after_ms, self.appends.speech.clone());
            self.ext = Some(Ext::Barge(Box::new(b)));
        }
        self
    }

    /// Speak the case's audio `n` times ([`super::turns`]), `gap_ms` after each reply, ending
    /// turns with explicit commits or leaving them to the server's voice detection; with
    /// `until_s`, the turn whose speech ends at or after it is the last.
    pub fn with_turns(
        mut self,
        n: usize,
        gap_ms: f64,
        explicit: bool,
        until_s: Option<f64>,
    ) -> Self {
        let mut t = Turns::new(n, gap_ms, explicit, self.appends.speech.clone()).until(until_s);
        if let Some(spool) = &self.spool {
            t = t.spill_to(spool.log());
        }
        self.ext = Some(Ext::Turns(Box::new(t)));
        self
    }

    /// What the extension measured goes to the session's output.
    pub(super) fn finish_ext(&mut self) {
        match self.ext.take() {
            Some(Ext::Barge(b)) => {
                let kept = b.target_id().map(|id| self.resp.kept_ms(id));
                self.out.barge_in = Some(b.finish(kept));
            }
            // No IO here (the shard thread): spilled turns stay in the spool until the
            // report reads them; a log all in memory is decoded now.
            Some(Ext::Turns(t)) => match t.finish() {
                left if left.spilled().is_some() => self.out.turns_spooled = Some(left),
                left => match left.records(&[]) {
                    Ok(records) => self.out.turns = records,
                    Err(e) => {
                        self.out.error.get_or_insert(e);
                    }
                },
            },
            None => {}
        }
    }

    /// Sends the extension's appends due at `now` after the case's; `Some(offset)` once
    /// everything was spoken (the final commit goes at `offset`), `None` while it goes on.
    pub(super) fn extend(&mut self, now: Instant, fx: &mut Effects) -> Option<usize> {
        if self.ext_offset == 0 {
            self.ext_offset = self.streamed_len;
            let end_s = self.due_s(self.streamed_len, now);
            self.ext.as_mut()?.question_ended(end_s);
        }
        loop {
            let intended = self.upload.as_ref()?.due(self.ext_offset);
            if intended.is_some_and(|t| t > now) {
                return None;
            }
            let due_s = self.due_s(self.ext_offset, now);
            let pcm: &[u8] = match self.ext.as_mut()?.next_chunk(due_s) {
                Chunk::End => return Some(self.ext_offset),
                Chunk::Commit => {
                    fx.send(Outbound::Text(TURN_COMMIT.into()), intended);
                    continue;
                }
                Chunk::Silence => &SILENCE,
                Chunk::Speech(k) => {
                    if k == 0 {
                        self.spoke(due_s);
                    }
                    self.ext.as_ref()?.speech_chunk(k)
                }
            };
            let end = self.ext_offset + CHUNK;
            let a = Append {
                index: 0,
                offset: 0,
                end: CHUNK,
                duration_ms: (CHUNK * 1000 / BYTES_PER_SECOND) as u64,
                audio_end_ms: (end * 1000 / BYTES_PER_SECOND) as u64,
                frames: 0..0,
            };
            let (msg, _) = append_message(&a, pcm, &[]);
            fx.send(Outbound::Text(msg.into()), intended);
            self.upload.as_mut()?.sent_extra(intended, now);
            self.ext_offset = end;
        }
    }

    /// Speech starts at `start_s`: a deadline that lets it be spoken and answered, and
    /// for a barge-in what of the reply had played by then.
    fn spoke(&mut self, start_s: f64) {
        if let Some(Ext::Barge(b)) = &self.ext {
            let played = b.target_id().map(|id| id.to_string());
            let played = played.map(|id| self.resp.played_ms(&id, start_s));
            if let Some(Ext::Barge(b)) = self.ext.as_mut() {
                b.played_at_onset_ms = played;
            }
        }
        let Some(speech_s) = self.ext.as_ref().map(Ext::speech_s) else {
            return;
        };
        if let Some(start) = self.instant(start_s) {
            let until = start + Duration::from_secs_f64(speech_s + self.cfg.timeout_s.max(0.0));
            self.deadline = self.deadline.max(Some(until));
        }
    }

    /// Session-clock seconds of the append at `offset` (now, for unpaced uploads).
    fn due_s(&self, offset: usize, now: Instant) -> f64 {
        let at = self.upload.as_ref().and_then(|u| u.due(offset));
        self.secs(at.unwrap_or(now))
    }

    /// Feeds the extension what event `ev` (received at `at_s`, carrying `audio_len`
    /// decoded audio bytes when it is an audio delta) means for it.
    pub(super) fn watch_ext(&mut self, ev: &Event<'_>, audio_len: Option<usize>, at_s: f64) {
        let kind = ev.kind();
        let rid = ev.response_id().filter(|r| !r.is_empty());
        match self.ext.as_mut() {
            Some(Ext::Barge(b)) => match (kind, rid) {
                (k, Some(r)) if AUDIO_DELTA_TYPES.contains(&k) => {
                    let dur_s = audio_len.unwrap_or(0) as f64 / (2 * OUTPUT_RATE) as f64;
                    b.audio(r, dur_s, at_s);
                }
                ("response.created", Some(r)) => b.created(r, at_s),
                ("response.done", Some(r)) => b.done(r, ledger::is_cancelled(ev.value()), at_s),
                ("output_audio_buffer.cleared", r) => b.cleared(r, at_s),
                ("input_audio_buffer.speech_started", _) => b.speech_started(at_s),
                _ => {}
            },
            Some(Ext::Turns(t)) => match (kind, rid) {
                (k, Some(r)) if AUDIO_DELTA_TYPES.contains(&k) => t.audio(r, at_s),
                (k, Some(r)) if TEXT_DELTA_TYPES.contains(&k) && has_text(ev) => t.text(r, at_s),
                ("response.created", Some(r)) => t.created(r, at_s),
                ("response.done", Some(r)) => t.reply_ended(Some(r), at_s),
                ("response.listen", _) if ledger::is_listen_decision(ev.value()) => {
                    t.reply_ended(None, at_s)
                }
                ("input_audio_buffer.speech_stopped", _) => t.speech_stopped(at_s),
                _ => {}
            },
            None => {}
        }
    }

    /// The message of an upload that timed out.
    pub(super) fn upload_timeout(&self) -> String {
        let within = ledger::py_g(self.cfg.timeout_s);
        match &self.ext {
            Some(Ext::Barge(b)) if b.awaiting_reply() => format!(
                "barge-in: no reply to interrupt arrived within {within}s after the question was sent"
            ),
            Some(Ext::Turns(t)) if t.awaiting_reply().is_some() => format!(
                "turns: the reply to turn {} did not end within {within}s",
                t.awaiting_reply().unwrap_or(0)
            ),
            _ => {
                let t = self.cfg.timeout_s + self.streamed_len as f64 / BYTES_PER_SECOND as f64;
                format!("Realtime upload timed out after {}s", ledger::py_g(t))
            }
        }
    }
}

/// A text delta with non-blank text.
fn has_text(ev: &Event<'_>) -> bool {
    ev.str_field("delta").is_some_and(|d| !d.trim().is_empty())
}
