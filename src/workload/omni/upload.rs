//! One case's upload, built before timing: every `input_audio_buffer.append` message
//! (base64 PCM, its video frames, spec §1.4) as a shared [`ByteString`] that every session
//! of the case sends with no per-send encoding, for both lengths the tail rule can stream.
//!
//! Which length a session streams is only known when its `session.created` names the
//! model unit ([`pacing::streamed_len`]): the whole PCM, or all of it but the last
//! sample. The two plans share every append but the last, so the full appends are built
//! once and the last append once per candidate length.

use std::io;
use std::sync::Arc;

use bytestring::ByteString;

use crate::util::packed::{self, Packed, Packer, Ticket};

use super::media::PreparedMedia;
use super::pacing::{self, Append, AppendPlan};

/// One built append: the message (`M`: its text, or where a packed build put it) and
/// how many video frames ride it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuiltAppend<M = ByteString> {
    /// The whole `input_audio_buffer.append` JSON text.
    pub msg: M,
    /// Frames it carries (`video_frames` entries).
    pub frames: usize,
}

/// A case's appends for every length the tail rule can choose, and its duration.
#[derive(Debug)]
pub struct CaseUpload<M = ByteString> {
    pcm_len: usize,
    frame_count: usize,
    /// The appends of the whole-PCM plan but its last one.
    body: Vec<BuiltAppend<M>>,
    /// `(streamed length, its plan's last append)` for each candidate length.
    last: Vec<(usize, BuiltAppend<M>)>,
    /// The probed (container) or WAV (frames case) duration, seconds.
    pub duration_s: f64,
    /// The interrupting speech of a barge-in ([`super::session::barge::speech_clip`]),
    /// empty without one.
    pub speech: bytes::Bytes,
}

impl CaseUpload {
    /// Build every append of `media` (the work a session would otherwise do per send),
    /// each on the heap: what tests and benches use. A run packs its cases with
    /// [`CaseUpload::draft`] instead.
    pub fn new(media: &PreparedMedia) -> Self {
        let mut heap = |msg: String| Ok::<_, std::convert::Infallible>(ByteString::from(msg));
        let Ok(up) = Self::build(media, &mut heap);
        up
    }

    /// The first phase of a packed build: every append of `media` copied into `packer`
    /// (huge pages that stay fast to read after seconds idle: `util::packed`); the
    /// draft becomes the upload once the packer is finished ([`CaseDraft::resolve`]).
    pub fn draft(media: &PreparedMedia, packer: &mut Packer) -> io::Result<CaseDraft> {
        let mut push = |msg: String| packer.push(msg.as_bytes());
        let built = Self::build(media, &mut push)?;
        Ok(CaseDraft { built })
    }

    fn build<M, E>(
        media: &PreparedMedia,
        store: &mut impl FnMut(String) -> Result<M, E>,
    ) -> Result<CaseUpload<M>, E> {
        let (pcm, frames) = (&media.pcm[..], &media.frames[..]);
        let mut built = |a: &Append| {
            let (msg, n) = pacing::append_message(a, pcm, frames);
            Ok(BuiltAppend {
                msg: store(msg)?,
                frames: n,
            })
        };
        let mut whole: Vec<Append> = AppendPlan::new(pcm.len(), frames.len()).collect();
        let whole_last = whole.pop();
        let body = whole.iter().map(&mut built).collect::<Result<_, E>>()?;
        let mut last = Vec::new();
        for len in candidate_lengths(pcm.len()) {
            let final_append = if len == pcm.len() {
                whole_last.clone()
            } else {
                AppendPlan::new(len, frames.len()).last()
            };
            if let Some(a) = final_append {
                last.push((len, built(&a)?));
            }
        }
        Ok(CaseUpload {
            pcm_len: pcm.len(),
            frame_count: frames.len(),
            body,
            last,
            duration_s: media.duration_s,
            speech: bytes::Bytes::new(),
        })
    }
}

/// A case's appends packed but not yet sealed: tickets where the upload will have bytes.
#[derive(Debug)]
pub struct CaseDraft {
    built: CaseUpload<Ticket>,
}

impl CaseDraft {
    /// With the case's whole 200 ms chunks kept as the speech of later turns (shared,
    /// not copied).
    pub fn with_turn_speech(mut self, media: &PreparedMedia) -> Self {
        let whole = media.pcm.len() / pacing::CHUNK_BYTES * pacing::CHUNK_BYTES;
        self.built.speech = media.pcm.slice(..whole);
        self
    }

    /// With `speech_ms` (whole 200 ms chunks, rounded up) of `media`'s voice kept as the
    /// interrupting speech of a barge-in.
    pub fn with_speech(mut self, media: &PreparedMedia, speech_ms: f64) -> Self {
        let chunks = (speech_ms / 200.0).ceil().max(1.0) as usize;
        self.built.speech = super::session::barge::speech_clip(&media.pcm, chunks);
        self
    }

    /// The upload, its messages read from `packed` (the finished packer the draft was
    /// made with). Fails only if a message is not UTF-8, which an append never is.
    pub fn resolve(self, packed: &Packed) -> io::Result<CaseUpload> {
        let text = |t: &Ticket| {
            let bytes = packed.get(t).ok_or_else(|| packed::foreign(t))?;
            ByteString::try_from(bytes).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
        };
        let one = |b: &BuiltAppend<Ticket>| {
            Ok::<_, io::Error>(BuiltAppend {
                msg: text(&b.msg)?,
                frames: b.frames,
            })
        };
        let c = self.built;
        Ok(CaseUpload {
            pcm_len: c.pcm_len,
            frame_count: c.frame_count,
            body: c.body.iter().map(one).collect::<io::Result<_>>()?,
            last: (c.last.iter())
                .map(|(len, b)| Ok((*len, one(b)?)))
                .collect::<io::Result<_>>()?,
            duration_s: c.duration_s,
            speech: c.speech,
        })
    }
}

impl CaseUpload {
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

/// Every case's upload, its appends packed into huge pages ([`CaseUpload::draft`]):
/// `media` prepares a case (its PCM is dropped once the case is packed), `speech` picks
/// what the case keeps as speech for turns or a barge-in.
pub fn pack_all<C>(
    cases: &[C],
    mut media: impl FnMut(&C) -> Result<PreparedMedia, String>,
    speech: impl Fn(CaseDraft, &PreparedMedia) -> CaseDraft,
) -> Result<Vec<SharedUpload>, String> {
    let packing = |e: io::Error| format!("cannot keep the prepared media: {e}");
    let mut packer = Packer::new();
    let drafts = (cases.iter())
        .map(|c| {
            let m = media(c)?;
            let draft = CaseUpload::draft(&m, &mut packer).map_err(packing)?;
            Ok(speech(draft, &m))
        })
        .collect::<Result<Vec<_>, String>>()?;
    let packed = packer.finish().map_err(packing)?;
    (drafts.into_iter())
        .map(|d| d.resolve(&packed).map(Arc::new).map_err(packing))
        .collect()
}

#[cfg(test)]
#[path = "upload_tests.rs"]
mod tests;
