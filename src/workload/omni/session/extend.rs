//! The session side of a barge-in ([`super::barge`]): the appends that follow the
//! question (silence, then the interrupting speech) on the upload's grid, and the events
//! the barge-in watches.

use std::time::Duration;

use serde_json::Value;
use tokio::time::Instant;

use super::barge::{CHUNK, Chunk};
use super::{BYTES_PER_SECOND, DuplexSession, ledger};
use crate::workload::omni::ledger::{AUDIO_DELTA_TYPES, response_id};
use crate::workload::omni::pacing::{Append, append_message};
use crate::workload::omni::playback::OUTPUT_RATE;
use crate::workload::{Effects, Outbound};

/// 200 ms of silence.
static SILENCE: [u8; CHUNK] = [0; CHUNK];

impl DuplexSession {
    /// Sends the barge-in appends due at `now` after the question; `Some(offset)` once
    /// the interruption is spoken (the commit goes at `offset`), `None` while it goes on.
    pub(super) fn extend(&mut self, now: Instant, fx: &mut Effects) -> Option<usize> {
        if self.ext_offset == 0 {
            self.ext_offset = self.streamed_len;
            let end_s = self.due_s(self.streamed_len, now);
            self.barge.as_mut()?.question_ended(end_s);
        }
        loop {
            let up = self.upload.as_ref()?;
            let intended = up.due(self.ext_offset);
            if intended.is_some_and(|t| t > now) {
                return None;
            }
            let due_s = self.due_s(self.ext_offset, now);
            let chunk = self.barge.as_mut()?.next_chunk(due_s);
            let pcm: &[u8] = match chunk {
                Chunk::End => return Some(self.ext_offset),
                Chunk::Silence => &SILENCE,
                Chunk::Speech(k) => {
                    if k == 0 {
                        self.spoke(due_s);
                    }
                    self.barge.as_ref()?.speech_chunk(k)
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

    /// The interrupting speech starts at `onset_s`: what of the reply had played by
    /// then, and a deadline that lets the interruption be spoken.
    fn spoke(&mut self, onset_s: f64) {
        let played = (self.barge.as_ref())
            .and_then(|b| b.target_id())
            .map(|id| self.resp.played_ms(id, onset_s));
        let Some(b) = self.barge.as_mut() else { return };
        b.played_at_onset_ms = played;
        let speech_s = b.speech_s();
        if let Some(onset) = self.instant(onset_s) {
            let until = onset + Duration::from_secs_f64(speech_s + self.cfg.timeout_s.max(0.0));
            self.deadline = self.deadline.max(Some(until));
        }
    }

    /// Session-clock seconds of the append at `offset` (now, for unpaced uploads).
    fn due_s(&self, offset: usize, now: Instant) -> f64 {
        let at = self.upload.as_ref().and_then(|u| u.due(offset));
        self.secs(at.unwrap_or(now))
    }

    /// Feeds the barge-in what event `ev` (received at `at_s`, carrying `audio_len`
    /// decoded audio bytes when it is an audio delta) means for it.
    pub(super) fn watch_barge(&mut self, ev: &Value, audio_len: Option<usize>, at_s: f64) {
        let Some(b) = self.barge.as_mut() else { return };
        let kind = ev.get("type").and_then(Value::as_str).unwrap_or("");
        let rid = response_id(ev).filter(|r| !r.is_empty());
        match (kind, rid) {
            (k, Some(r)) if AUDIO_DELTA_TYPES.contains(&k) => {
                let dur_s = audio_len.unwrap_or(0) as f64 / (2 * OUTPUT_RATE) as f64;
                b.audio(r, dur_s, at_s);
            }
            ("response.created", Some(r)) => b.created(r, at_s),
            ("response.done", Some(r)) => b.done(r, ledger::is_cancelled(ev), at_s),
            ("output_audio_buffer.cleared", r) => b.cleared(r, at_s),
            ("input_audio_buffer.speech_started", _) => b.speech_started(at_s),
            _ => {}
        }
    }

    /// The message of an upload that timed out.
    pub(super) fn upload_timeout(&self) -> String {
        match &self.barge {
            Some(b) if b.awaiting_reply() => format!(
                "barge-in: no reply to interrupt arrived within {}s after the question was sent",
                ledger::py_g(self.cfg.timeout_s)
            ),
            _ => {
                let t = self.cfg.timeout_s + self.streamed_len as f64 / BYTES_PER_SECOND as f64;
                format!("Realtime upload timed out after {}s", ledger::py_g(t))
            }
        }
    }
}
