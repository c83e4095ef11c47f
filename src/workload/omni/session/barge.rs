//! Barge-in, the client side (`[workload.barge_in]`): after the case's audio (the user's
//! question) the session keeps its microphone open — silence, on the same 200 ms append
//! grid — until the agent's reply has played `after_ms`, then speaks over it (the
//! interrupting speech, `speech_ms` of the case's own voice) and commits. What it
//! measures, all on the session's receipt clock from the **onset** (the intended send
//! time of the first append carrying the interrupting speech):
//!
//! - `stop_ms`: onset → the reply's `output_audio_buffer.cleared`, or its `response.done`
//!   with status `cancelled`, whichever arrives first; a reply the server lets finish is
//!   stopped by its last audio delta (`stop_by = "finished"`);
//! - `audio_after_onset_ms`: the reply's audio that arrived after the onset;
//! - `heard_after_onset_ms`: what the listener still heard of it after the onset (the
//!   serial playback clock, truncated by the clear as the upstream client truncates);
//! - `answer_ms`: onset → first audio of the first response created after the onset;
//! - `speech_started_ms`: onset → the server's `input_audio_buffer.speech_started`.
//!
//! Pure: times in seconds on the session clock in, chunk decisions and a record out.

use bytes::Bytes;
use serde::Serialize;

use crate::util::wav::pcm16_rms as rms;

/// The reply interrupted: the response of the first audio delta that arrives after the
/// question's last append was due.
#[derive(Debug, Clone, PartialEq)]
struct Target {
    id: String,
    first_audio_s: f64,
}

/// What the next extension append carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Chunk {
    /// Microphone open, nobody speaking.
    Silence,
    /// Chunk `k` of the interrupting speech.
    Speech(usize),
    /// A turn ended: send its commit (`"final": false`) now, then ask again.
    Commit,
    /// Everything was spoken: the final commit.
    End,
}

/// What one barge-in measured (`null` fields were not reached).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct BargeInRecord {
    /// The offset into the reply this session was asked to interrupt at, ms.
    pub after_ms: f64,
    /// The response interrupted.
    pub response_id: Option<String>,
    /// Onset − the reply's first audio receipt, ms (the asked offset rounded up to the
    /// 200 ms append grid).
    pub offset_ms: Option<f64>,
    /// Onset → the reply stopped, ms.
    pub stop_ms: Option<f64>,
    /// What stopped it: `cleared`, `cancelled` or `finished`.
    pub stop_by: Option<&'static str>,
    /// The reply's audio received after the onset, ms.
    pub audio_after_onset_ms: Option<f64>,
    /// The reply's audio the listener heard after the onset, ms.
    pub heard_after_onset_ms: Option<f64>,
    /// Onset → first audio of the answer to the interrupting speech, ms.
    pub answer_ms: Option<f64>,
    /// Onset → the server's `input_audio_buffer.speech_started`, ms.
    pub speech_started_ms: Option<f64>,
}

/// One session's barge-in in progress.
#[derive(Debug, Clone)]
pub(super) struct Barge {
    after_s: f64,
    /// The interrupting speech, whole 200 ms chunks of PCM16 16 kHz.
    speech: Bytes,
    question_end_s: Option<f64>,
    target: Option<Target>,
    onset_s: Option<f64>,
    spoken: usize,
    answer_id: Option<String>,
    last_target_audio_s: Option<f64>,
    audio_after_s: f64,
    /// The reply's audio played by the onset, ms (read from the playback clock then).
    pub(super) played_at_onset_ms: Option<f64>,
    /// The record so far.
    pub(super) rec: BargeInRecord,
}

/// Bytes per extension append (200 ms of PCM16 16 kHz).
pub(super) const CHUNK: usize = super::pacing::CHUNK_BYTES;

impl Barge {
    /// A barge-in `after_ms` into the reply, speaking `speech` (whole chunks).
    pub(super) fn new(after_ms: f64, speech: Bytes) -> Self {
        Self {
            after_s: after_ms / 1000.0,
            speech,
            question_end_s: None,
            target: None,
            onset_s: None,
            spoken: 0,
            answer_id: None,
            last_target_audio_s: None,
            audio_after_s: 0.0,
            played_at_onset_ms: None,
            rec: BargeInRecord {
                after_ms,
                ..BargeInRecord::default()
            },
        }
    }

    /// The question's last append was due at `at_s`: from here the microphone stays open.
    pub(super) fn question_ended(&mut self, at_s: f64) {
        self.question_end_s.get_or_insert(at_s);
    }

    /// Waiting for a reply to interrupt (for the timeout message).
    pub(super) fn awaiting_reply(&self) -> bool {
        self.target.is_none()
    }

    /// The reply being interrupted.
    pub(super) fn target_id(&self) -> Option<&str> {
        self.target.as_ref().map(|t| t.id.as_str())
    }

    /// Seconds of interrupting speech.
    pub(super) fn speech_s(&self) -> f64 {
        (self.speech.len() / 2) as f64 / 16_000.0
    }

    /// What the extension append due at `due_s` carries. Deciding the onset here puts it
    /// exactly on that append's intended send time.
    pub(super) fn next_chunk(&mut self, due_s: f64) -> Chunk {
        if self.onset_s.is_none() {
            match &self.target {
                Some(t) if due_s >= t.first_audio_s + self.after_s - 1e-9 => {
                    self.onset_s = Some(due_s);
                    self.rec.offset_ms = Some(ms(due_s - t.first_audio_s));
                }
                _ => return Chunk::Silence,
            }
        }
        let k = self.spoken;
        if k < self.speech.len() / CHUNK {
            self.spoken += 1;
            Chunk::Speech(k)
        } else {
            Chunk::End
        }
    }

    /// PCM of speech chunk `k`.
    pub(super) fn speech_chunk(&self, k: usize) -> &[u8] {
        &self.speech[k * CHUNK..(k + 1) * CHUNK]
    }

    /// An audio delta of `rid` with `dur_s` of audio arrived at `at_s`.
    pub(super) fn audio(&mut self, rid: &str, dur_s: f64, at_s: f64) {
        if self.target.is_none() && self.question_end_s.is_some_and(|q| at_s >= q) {
            self.target = Some(Target {
                id: rid.to_string(),
                first_audio_s: at_s,
            });
            self.rec.response_id = Some(rid.to_string());
        }
        let Some(onset) = self.onset_s else { return };
        if self.target_id() == Some(rid) {
            self.last_target_audio_s = Some(at_s);
            if at_s >= onset {
                self.audio_after_s += dur_s;
            }
        } else if self.rec.answer_ms.is_none() && self.answer_id.as_deref() == Some(rid) {
            self.rec.answer_ms = Some(ms(at_s - onset));
        }
    }

    /// `response.created` of `rid` arrived at `at_s`.
    pub(super) fn created(&mut self, rid: &str, at_s: f64) {
        if self.answer_id.is_none()
            && self.onset_s.is_some_and(|o| at_s >= o)
            && self.target_id() != Some(rid)
        {
            self.answer_id = Some(rid.to_string());
        }
    }

    /// `output_audio_buffer.cleared` (of `rid`, or of everything) arrived at `at_s`.
    pub(super) fn cleared(&mut self, rid: Option<&str>, at_s: f64) {
        if rid.is_none_or(|r| self.target_id() == Some(r)) {
            self.stopped("cleared", at_s);
        }
    }

    /// `response.done` of `rid` arrived at `at_s`.
    pub(super) fn done(&mut self, rid: &str, cancelled: bool, at_s: f64) {
        if self.target_id() != Some(rid) {
            return;
        }
        if cancelled {
            self.stopped("cancelled", at_s);
        } else if let Some(last) = self.last_target_audio_s {
            self.stopped("finished", last);
        }
    }

    /// `input_audio_buffer.speech_started` arrived at `at_s`.
    pub(super) fn speech_started(&mut self, at_s: f64) {
        if let Some(onset) = self.onset_s.filter(|o| at_s >= *o)
            && self.rec.speech_started_ms.is_none()
        {
            self.rec.speech_started_ms = Some(ms(at_s - onset));
        }
    }

    fn stopped(&mut self, by: &'static str, at_s: f64) {
        let Some(onset) = self.onset_s else { return };
        if self.rec.stop_ms.is_none() && at_s >= onset {
            self.rec.stop_ms = Some(ms(at_s - onset));
            self.rec.stop_by = Some(by);
        }
    }

    /// The record, given the reply's audio kept by the playback clock (after any clear).
    pub(super) fn finish(mut self, kept_ms: Option<f64>) -> BargeInRecord {
        if self.onset_s.is_some() {
            self.rec.audio_after_onset_ms = Some(ms(self.audio_after_s));
            if let (Some(kept), Some(played)) = (kept_ms, self.played_at_onset_ms) {
                self.rec.heard_after_onset_ms = Some(round3((kept - played).max(0.0)));
            }
        }
        self.rec
    }
}

/// Sample `idx`'s barge-in offset in [lo, hi] ms: uniform over samples, the same each run.
pub fn offset_ms(lo: f64, hi: f64, idx: usize) -> f64 {
    // splitmix64 of the index, top 53 bits as a fraction in [0, 1).
    let mut z = (idx as u64)
        .wrapping_add(1)
        .wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    let u = ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64;
    lo + (hi - lo) * u
}

/// Seconds as ms, 3 decimals.
fn ms(s: f64) -> f64 {
    round3(s * 1000.0)
}

fn round3(v: f64) -> f64 {
    (v * 1000.0).round() / 1000.0
}

/// The interrupting speech cut from the case's PCM: from its first chunk at least
/// -40 dBFS loud (leading silence is not speech), `chunks` whole chunks, repeating the
/// case's voice when it is shorter. Empty when no 200 ms of the case is that loud.
pub fn speech_clip(pcm: &[u8], chunks: usize) -> Bytes {
    const THRESHOLD_RMS: f64 = 327.68; // -40 dBFS
    let whole = pcm.len() / CHUNK * CHUNK;
    if whole == 0 {
        return Bytes::new();
    }
    let Some(first) =
        (0..whole / CHUNK).find(|&k| rms(&pcm[k * CHUNK..(k + 1) * CHUNK]) >= THRESHOLD_RMS)
    else {
        return Bytes::new();
    };
    let start = first * CHUNK;
    let voice = &pcm[start..whole];
    let mut out = Vec::with_capacity(chunks * CHUNK);
    while out.len() < chunks * CHUNK {
        let n = (chunks * CHUNK - out.len()).min(voice.len());
        out.extend_from_slice(&voice[..n]);
    }
    Bytes::from(out)
}

#[cfg(test)]
#[path = "barge_tests.rs"]
mod tests;
