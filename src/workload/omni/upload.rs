//! One case's upload, built before timing: every `input_audio_buffer.append` message
//! (base64 PCM, its video frames, spec §1.4) as a shared [`ByteString`] that every session
//! of the case sends with no per-send encoding, for both lengths the tail rule can stream.
//!
//! Which length a session streams is only known when its `session.created` names the
//! model unit ([`pacing::streamed_len`]): the whole PCM, or all of it but the last
//! sample. The two plans share every append but the last, so the full appends are built
//! once and the last append once per candidate length.

use std::sync::Arc;

use bytestring::ByteString;

use super::media::PreparedMedia;
use super::pacing::{self, Append, AppendPlan};

/// One built append: the message and how many video frames ride it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuiltAppend {
    /// The whole `input_audio_buffer.append` JSON text.
    pub msg: ByteString,
    /// Frames it carries (`video_frames` entries).
    pub frames: usize,
}

/// A case's appends for every length the tail rule can choose, and its duration.
#[derive(Debug)]
pub struct CaseUpload {
    pcm_len: usize,
    frame_count: usize,
    /// The appends of the whole-PCM plan but its last one.
    body: Vec<BuiltAppend>,
    /// `(streamed length, its plan's last append)` for each candidate length.
    last: Vec<(usize, BuiltAppend)>,
    /// The probed (container) or WAV (frames case) duration, seconds.
    pub duration_s: f64,
    /// The interrupting speech of a barge-in ([`super::session::barge::speech_clip`]),
    /// empty without one.
    pub speech: bytes::Bytes,
}

impl CaseUpload {
    /// Build every append of `media` (the work a session would otherwise do per send).
    pub fn new(media: &PreparedMedia) -> Self {
        let (pcm, frames) = (&media.pcm[..], &media.frames[..]);
        let built = |a: &Append| {
            let (msg, n) = pacing::append_message(a, pcm, frames);
            BuiltAppend {
                msg: msg.into(),
                frames: n,
            }
        };
        let mut whole: Vec<Append> = AppendPlan::new(pcm.len(), frames.len()).collect();
        let whole_last = whole.pop();
        let body = whole.iter().map(built).collect();
        let mut last: Vec<(usize, BuiltAppend)> = Vec::new();
        for len in candidate_lengths(pcm.len()) {
            let final_append = if len == pcm.len() {
                whole_last.clone()
            } else {
                AppendPlan::new(len, frames.len()).last()
            };
            if let Some(a) = final_append {
                last.push((len, built(&a)));
            }
        }
        Self {
            pcm_len: pcm.len(),
            frame_count: frames.len(),
            body,
            last,
            duration_s: media.duration_s,
            speech: bytes::Bytes::new(),
        }
    }

    /// With the case's whole 200 ms chunks kept as the speech of later turns (shared,
    /// not copied).
    pub fn with_turn_speech(mut self, media: &PreparedMedia) -> Self {
        let whole = media.pcm.len() / pacing::CHUNK_BYTES * pacing::CHUNK_BYTES;
        self.speech = media.pcm.slice(..whole);
        self
    }

    /// With `speech_ms` (whole 200 ms chunks, rounded up) of `media`'s voice kept as the
    /// interrupting speech of a barge-in.
    pub fn with_speech(mut self, media: &PreparedMedia, speech_ms: f64) -> Self {
        let chunks = (speech_ms / 200.0).ceil().max(1.0) as usize;
        self.speech = super::session::barge::speech_clip(&media.pcm, chunks);
        self
    }

    /// Bytes of PCM the case has.
    pub fn pcm_len(&self) -> usize {
        self.pcm_len
    }

    /// Its 1 fps frame slots.
    pub fn frame_count(&self) -> usize {
        self.frame_count
    }

    /// The message for append `a` of the plan over `streamed_len` bytes; `None` only for a
    /// length the tail rule never chooses or an append that plan does not have.
    pub fn get(&self, streamed_len: usize, a: &Append) -> Option<&BuiltAppend> {
        let n = streamed_len.div_ceil(pacing::CHUNK_BYTES);
        if a.index == n {
            return self
                .last
                .iter()
                .find(|(len, _)| *len == streamed_len)
                .map(|(_, b)| b);
        }
        self.body.get(a.index.checked_sub(1)?)
    }

    /// Heap bytes the built messages hold: what keeping the case ready costs.
    pub fn memory_bytes(&self) -> usize {
        let each = |b: &BuiltAppend| b.msg.len() + std::mem::size_of::<BuiltAppend>();
        self.body.iter().map(each).sum::<usize>()
            + self.last.iter().map(|(_, b)| each(b)).sum::<usize>()
    }
}

/// The lengths [`pacing::streamed_len`] can return for `pcm_len` bytes.
fn candidate_lengths(pcm_len: usize) -> Vec<usize> {
    let mut out = vec![pcm_len];
    if pcm_len >= 2 {
        out.push(pcm_len - 2);
    }
    out
}

/// One upload per case, shared by all its sessions.
pub type SharedUpload = Arc<CaseUpload>;

#[cfg(test)]
#[path = "upload_tests.rs"]
mod tests;
