//! The duplex upload plan (spec §1.4): the final-commit tail rule and the sequence of
//! 200 ms `input_audio_buffer.append` events with the 1 fps video frames that ride them,
//! plus the pacing modes that place those appends in time.
//!
//! Pure code: lengths and counts in, offsets and times out. The plan is an iterator so a
//! long video never materializes thousands of appends per session.

use std::fmt::Write as _;
use std::ops::Range;
use std::sync::Arc;

use base64::Engine as _;
use bytestring::ByteString;
use serde_json::Value;
use tokio::time::Instant;

use super::upload::CaseUpload;

/// Input PCM16 bytes per second (16 kHz mono).
pub const BYTES_PER_SECOND: usize = 32_000;
/// Bytes per append (200 ms).
pub const CHUNK_BYTES: usize = 6_400;
/// Model-unit length when the server does not announce one.
pub const DEFAULT_CHUNK_PERIOD_MS: u64 = 1_000;

/// The pacing modes, shared with the transcription workload.
pub use crate::util::pacing::PacingMode;

/// The negotiated model-unit length: `session.capabilities.chunk_period_ms` of the most
/// recent event that carries a positive integer there, else 1000.
pub fn chunk_period_ms<'a>(events_newest_first: impl IntoIterator<Item = &'a Value>) -> u64 {
    events_newest_first
        .into_iter()
        .find_map(|ev| {
            ev.get("session")?
                .get("capabilities")?
                .get("chunk_period_ms")?
                .as_u64()
                .filter(|p| *p > 0)
        })
        .unwrap_or(DEFAULT_CHUNK_PERIOD_MS)
}

/// The final-commit tail rule: the number of PCM bytes to stream. When the PCM is at least
/// one sample long and an exact multiple of the model unit
/// (`32000 * chunk_period_ms / 1000` bytes), the last sample (2 bytes) is dropped so the
/// final unit stays buffered until the commit.
pub fn streamed_len(pcm_len: usize, chunk_period_ms: u64) -> usize {
    let unit = (BYTES_PER_SECOND as u64 * chunk_period_ms / 1000) as usize;
    if pcm_len >= 2 && unit != 0 && pcm_len.is_multiple_of(unit) {
        pcm_len - 2
    } else {
        pcm_len
    }
}

/// One planned `input_audio_buffer.append`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Append {
    /// 1-based position in the upload.
    pub index: usize,
    /// First PCM byte.
    pub offset: usize,
    /// One past the last PCM byte.
    pub end: usize,
    /// `(end - offset) * 1000 // 32000`.
    pub duration_ms: u64,
    /// `end * 1000 // 32000`.
    pub audio_end_ms: u64,
    /// Frame slots that became due with this append (`end_ms >= (k + 0.5) * 1000`); empty
    /// or missing frames in these slots are skipped when sending.
    pub frames: Range<usize>,
}

/// The appends for `pcm_len` streamed bytes and `frame_count` 1 fps frame slots.
#[derive(Debug, Clone)]
pub struct AppendPlan {
    pcm_len: usize,
    frame_count: usize,
    offset: usize,
    index: usize,
    frame_cursor: usize,
}

impl AppendPlan {
    /// A plan over the first `pcm_len` bytes of the prepared PCM.
    pub fn new(pcm_len: usize, frame_count: usize) -> Self {
        Self {
            pcm_len,
            frame_count,
            offset: 0,
            index: 0,
            frame_cursor: 0,
        }
    }
    /// Number of appends the whole plan has (0 for empty PCM).
    pub fn total(&self) -> usize {
        self.pcm_len.div_ceil(CHUNK_BYTES)
    }
}

impl Iterator for AppendPlan {
    type Item = Append;

    fn next(&mut self) -> Option<Append> {
        if self.offset >= self.pcm_len {
            return None;
        }
        let offset = self.offset;
        let end = (offset + CHUNK_BYTES).min(self.pcm_len);
        let end_ms = (end * 1000 / BYTES_PER_SECOND) as u64;
        let first = self.frame_cursor;
        // end_ms >= (k + 0.5) * 1000  <=>  2 * end_ms >= (2k + 1) * 1000
        while self.frame_cursor < self.frame_count
            && 2 * end_ms >= (2 * self.frame_cursor as u64 + 1) * 1000
        {
            self.frame_cursor += 1;
        }
        self.index += 1;
        self.offset = end;
        Some(Append {
            index: self.index,
            offset,
            end,
            duration_ms: ((end - offset) * 1000 / BYTES_PER_SECOND) as u64,
            audio_end_ms: end_ms,
            frames: first..self.frame_cursor,
        })
    }
}

/// The `input_audio_buffer.append` JSON for `a`, and how many frames it carries
/// (`video_frames` only when at least one non-empty frame is due).
pub fn append_message(a: &Append, pcm: &[u8], frames: &[Option<Arc<str>>]) -> (String, usize) {
    let ready: Vec<&str> = frames
        .get(a.frames.clone())
        .unwrap_or_default()
        .iter()
        .filter_map(|f| f.as_deref().filter(|f| !f.is_empty()))
        .collect();
    let list = if ready.is_empty() {
        String::new()
    } else {
        serde_json::to_string(&ready).unwrap_or_else(|_| "[]".into())
    };
    // Sized up front: the message is kept for the whole run (built before timing), and
    // growing it by doubling would leave half of every message unused.
    let audio_len = (a.end - a.offset).div_ceil(3) * 4;
    let mut msg = String::with_capacity(audio_len + list.len() + 192);
    msg.push_str(r#"{"type":"input_audio_buffer.append","audio":""#);
    crate::util::b64::standard().encode_string(&pcm[a.offset..a.end], &mut msg);
    let _ = write!(
        msg,
        r#"","input_audio_format":"pcm16","sample_rate_hz":16000,"duration_ms":{},"audio_end_ms":{}"#,
        a.duration_ms, a.audio_end_ms
    );
    if !list.is_empty() {
        let _ = write!(msg, r#","video_frames":{list}"#);
    }
    msg.push('}');
    (msg, ready.len())
}

/// One session's upload in progress: the next append, its schedule, and the lag record.
#[derive(Debug, Clone)]
pub struct Uploader {
    mode: PacingMode,
    t0: Instant,
    plan: AppendPlan,
    next: Option<Append>,
    streamed_len: usize,
    lag_sum: f64,
    /// Appends sent.
    pub chunks: usize,
    /// Video frames sent.
    pub frames_sent: usize,
    /// Largest lag of an append behind its schedule, seconds.
    pub max_lag_s: f64,
}

impl Uploader {
    /// An upload of `streamed_len` bytes starting at `t0`.
    pub fn new(mode: PacingMode, t0: Instant, streamed_len: usize, frame_count: usize) -> Self {
        let mut plan = AppendPlan::new(streamed_len, frame_count);
        let next = plan.next();
        Self {
            mode,
            t0,
            plan,
            next,
            streamed_len,
            lag_sum: 0.0,
            chunks: 0,
            frames_sent: 0,
            max_lag_s: 0.0,
        }
    }

    /// When the append starting at `offset` (or, at `streamed_len`, the commit) is due;
    /// `None` means "as soon as possible" (saturate).
    pub fn due(&self, offset: usize) -> Option<Instant> {
        Some(self.t0 + self.mode.due_after(offset)?)
    }

    /// The appends due at `now`, as `(message, intended send time)`, from the case's
    /// built messages. Saturate hands out one per call so inbound events and acks
    /// interleave with the upload. An append `upload` has no message for ends the upload
    /// early ([`CaseUpload::get`] has one for every length the tail rule streams).
    pub fn due_appends(
        &mut self,
        now: Instant,
        upload: &CaseUpload,
    ) -> Vec<(ByteString, Option<Instant>)> {
        let mut out = Vec::new();
        while let Some(a) = self.next.take() {
            let intended = self.due(a.offset);
            if intended.is_some_and(|t| t > now) {
                self.next = Some(a);
                break;
            }
            let Some(built) = upload.get(self.streamed_len, &a) else {
                break;
            };
            // The reference's lag: time past the schedule when the append is handed over.
            let lag = intended.map_or(0.0, |t| now.saturating_duration_since(t).as_secs_f64());
            self.chunks += 1;
            self.frames_sent += built.frames;
            self.lag_sum += lag;
            self.max_lag_s = self.max_lag_s.max(lag);
            out.push((built.msg.clone(), intended));
            self.next = self.plan.next();
            if intended.is_none() {
                break;
            }
        }
        out
    }

    /// Every append is out and the commit is due at `now`.
    #[cfg(test)]
    pub fn commit_due(&self, now: Instant) -> bool {
        self.commit_due_at(self.streamed_len, now)
    }

    /// Every append of the case is out and a commit placed at `offset` (the case's
    /// length, or past the appends a barge-in adds) is due at `now`.
    pub fn commit_due_at(&self, offset: usize, now: Instant) -> bool {
        self.next.is_none() && self.due(offset).is_none_or(|t| t <= now)
    }

    /// Every append of the case (the user's question) was sent.
    pub fn question_sent(&self) -> bool {
        self.next.is_none()
    }

    /// An append the session built itself (a barge-in's), handed over at `now`: counted
    /// with the case's, its lag too.
    pub fn sent_extra(&mut self, intended: Option<Instant>, now: Instant) {
        let lag = intended.map_or(0.0, |t| now.saturating_duration_since(t).as_secs_f64());
        self.chunks += 1;
        self.lag_sum += lag;
        self.max_lag_s = self.max_lag_s.max(lag);
    }

    /// The next moment the upload has something to send.
    #[cfg(test)]
    pub fn next_wake(&self, now: Instant) -> Instant {
        self.next_wake_at(None, now)
    }

    /// [`Self::next_wake`] when, once the case's appends are out, the next thing to send
    /// sits at `ext` (a barge-in's next append) instead of the commit.
    pub fn next_wake_at(&self, ext: Option<usize>, now: Instant) -> Instant {
        let offset = match &self.next {
            Some(a) => a.offset,
            None => ext.unwrap_or(self.streamed_len),
        };
        self.due(offset).unwrap_or(now)
    }

    /// Mean append lag, seconds (0 before the first append).
    pub fn mean_lag_s(&self) -> f64 {
        if self.chunks == 0 {
            0.0
        } else {
            self.lag_sum / self.chunks as f64
        }
    }
}

#[cfg(test)]
#[path = "pacing_tests.rs"]
mod tests;
