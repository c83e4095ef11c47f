//! Artifact context captured inside the measured request (spec §4.2, §4.3, §4.5).
//!
//! Pure: playback segments, response records and collected events in; an
//! [`ArtifactContext`] out (sparse PCM spans already clipped at the WAV
//! horizon, transcript chunks, sanitized events, eligibility reasons). No files
//! are touched here; `publish` materializes the WAV later, one case at a time.

use bytes::Bytes;
use serde::Serialize;
use serde_json::Value;

use super::{CaseResult, REASON_AUDIO_CLIPPED, REASON_CANCELLED_RESPONSE, REASON_CLEARED_RESPONSE};

/// Output sample rate of `output.wav` (Hz).
pub const OUTPUT_SAMPLE_RATE: u32 = 24_000;
/// `wav_transcript.json` `timestamp_semantics`.
pub const TIMESTAMP_SEMANTICS: &str =
    "serialized playback queue time relative to input streaming start";
/// Event types whose base64 audio payload is replaced by `audio_bytes` in `events.json`.
#[cfg(test)]
pub const AUDIO_DELTA_TYPES: [&str; 2] = ["response.audio.delta", "response.output_audio.delta"];

/// One segment of the serial playback clock (§1.6): `start_s` / `end_s` are
/// client monotonic seconds, `pcm` the decoded PCM16 of one audio delta.
#[derive(Debug, Clone, PartialEq)]
pub struct Segment {
    /// Response the audio belongs to.
    pub response_id: String,
    /// Playback start: `max(receipt time, previous segment end)`.
    pub start_s: f64,
    /// Playback end: `start_s + samples / 24000`.
    pub end_s: f64,
    /// Decoded PCM16 little-endian mono bytes.
    pub pcm: Bytes,
}

/// What capture needs to know about one created response.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ResponseRecord {
    /// The response id.
    pub response_id: String,
    /// Its transcript deltas concatenated in receipt order (unstripped).
    pub text: String,
    /// A `response.done` was received.
    pub done: bool,
    /// That `response.done` had status `cancelled`.
    pub cancelled: bool,
    /// A barge-in (`output_audio_buffer.cleared`) dropped some of its audio.
    pub audio_cleared: bool,
}

/// Inputs of [`capture`].
#[derive(Debug, Clone, Copy)]
pub struct CaptureInput<'a> {
    /// Probed video duration, seconds (the WAV horizon is `ceil` of it).
    pub video_duration_s: f64,
    /// Monotonic time right before the first append.
    pub stream_start_s: f64,
    /// Playback segments in arrival order.
    pub segments: &'a [Segment],
    /// Created responses in creation order.
    pub responses: &'a [ResponseRecord],
}

/// A run of PCM bytes at a byte offset of the WAV data (never past the horizon).
#[derive(Debug, Clone, PartialEq)]
pub struct PcmSpan {
    /// Byte offset into the WAV data (always even).
    pub offset: u64,
    /// The writable PCM bytes.
    pub pcm: Bytes,
}

/// One `wav_transcript.json` chunk.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TranscriptChunk {
    /// The response id.
    pub response_id: String,
    /// Its stripped transcript text.
    pub text: String,
    /// `[start, end]` seconds relative to stream start, 6 decimals.
    pub timestamp: [f64; 2],
}

/// The `wav_transcript.json` document.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WavTranscript {
    /// Chunk texts joined by one space.
    pub text: String,
    /// One chunk per qualifying response, creation order.
    pub chunks: Vec<TranscriptChunk>,
    /// Always [`TIMESTAMP_SEMANTICS`].
    pub timestamp_semantics: &'static str,
}

/// Everything the finalizer needs to publish one successful case.
#[derive(Debug, Clone, PartialEq)]
pub struct ArtifactContext {
    /// `ceil(duration) * 24000 * 2`: the WAV data length in bytes.
    pub horizon_bytes: u64,
    /// Sparse PCM spans in write order (later spans win where they overlap).
    pub spans: Vec<PcmSpan>,
    /// PCM bytes dropped beyond the horizon.
    pub audio_clipped_bytes: u64,
    /// The `wav_transcript.json` content.
    pub transcript: WavTranscript,
    /// Sanitized events for `events.json` (see [`sanitize_event`]).
    pub events: CaseEvents,
    /// Eligibility reasons found: `audio_clipped`, `cancelled_response`, `cleared_response`.
    pub ineligible_reasons: Vec<&'static str>,
    /// Responses that are "complete outputs" (§1.5): done and not cancelled,
    /// some non-zero PCM inside the horizon, and a transcript chunk.
    pub complete_outputs: usize,
}

impl ArtifactContext {
    /// Number of WAV frames (samples): `horizon_bytes / 2`.
    #[cfg(test)]
    pub fn wav_frames(&self) -> u64 {
        self.horizon_bytes / 2
    }

    /// Copies the context's facts into `result`: `audio_clipped_bytes`,
    /// `transcript`, the ineligibility reasons and `eligible_for_official_eval`
    /// (= `success` and no reasons). Idempotent.
    pub fn apply_to(&self, result: &mut CaseResult) {
        result.audio_clipped_bytes = self.audio_clipped_bytes;
        result.transcript.clone_from(&self.transcript.text);
        for reason in &self.ineligible_reasons {
            result.add_ineligible_reason(reason);
        }
        result.eligible_for_official_eval =
            result.success && result.official_eval_ineligible_reasons.is_empty();
    }
}

/// A case's events for `events.json`: parsed, or the session's spilled lines (one
/// `<receipt seconds>\t<JSON>` line per event, as the session's event log writes them),
/// decoded one at a time while the file is written, so publishing a case never holds
/// every event's parsed tree.
#[derive(Debug, Clone, PartialEq)]
pub enum CaseEvents {
    /// Parsed events (a session that kept its events in memory; tests).
    Parsed(Vec<Value>),
    /// The spilled lines, checked when they were read back.
    Spilled(bytes::Bytes),
}

impl From<Vec<Value>> for CaseEvents {
    fn from(events: Vec<Value>) -> Self {
        Self::Parsed(events)
    }
}

/// Captures the artifact context of one measured case (§4.3).
pub fn capture(input: CaptureInput<'_>, events: impl Into<CaseEvents>) -> ArtifactContext {
    let horizon_s = horizon_seconds(input.video_duration_s);
    let horizon_bytes = horizon_s.saturating_mul(u64::from(OUTPUT_SAMPLE_RATE) * 2);
    let mut spans = Vec::with_capacity(input.segments.len());
    let mut audio_clipped_bytes = 0u64;
    let mut audible: Vec<&str> = Vec::new();
    for seg in input.segments {
        let offset = wav_offset(seg.start_s, input.stream_start_s);
        let len = seg.pcm.len() as u64;
        let writable = len.min(horizon_bytes.saturating_sub(offset));
        audio_clipped_bytes += len - writable;
        if writable > 0 {
            // `writable <= pcm.len()`, so the cast cannot truncate.
            let pcm = seg.pcm.slice(..writable as usize);
            if pcm.iter().any(|b| *b != 0) && !audible.contains(&seg.response_id.as_str()) {
                audible.push(&seg.response_id);
            }
            spans.push(PcmSpan { offset, pcm });
        }
    }
    let chunks = transcript_chunks(&input, horizon_s as f64);
    let complete_outputs = input
        .responses
        .iter()
        .filter(|r| r.done && !r.cancelled)
        .filter(|r| audible.contains(&r.response_id.as_str()))
        .filter(|r| chunks.iter().any(|c| c.response_id == r.response_id))
        .count();
    let mut ineligible_reasons = Vec::new();
    if audio_clipped_bytes > 0 {
        ineligible_reasons.push(REASON_AUDIO_CLIPPED);
    }
    if input.responses.iter().any(|r| r.cancelled) {
        ineligible_reasons.push(REASON_CANCELLED_RESPONSE);
    }
    if input.responses.iter().any(|r| r.audio_cleared) {
        ineligible_reasons.push(REASON_CLEARED_RESPONSE);
    }
    let text = chunks
        .iter()
        .map(|c| c.text.as_str())
        .collect::<Vec<_>>()
        .join(" ");
    ArtifactContext {
        horizon_bytes,
        spans,
        audio_clipped_bytes,
        transcript: WavTranscript {
            text,
            chunks,
            timestamp_semantics: TIMESTAMP_SEMANTICS,
        },
        events: events.into(),
        ineligible_reasons,
        complete_outputs,
    }
}

/// Byte offset of a segment in the WAV data:
/// `round_half_even(max(0, start − stream_start) · 24000) · 2` (§4.2, §7 item 10).
pub fn wav_offset(start_s: f64, stream_start_s: f64) -> u64 {
    let rel = (start_s - stream_start_s).max(0.0);
    // `as` saturates (NaN → 0), so absurd inputs cannot panic.
    let sample = (rel * f64::from(OUTPUT_SAMPLE_RATE)).round_ties_even() as u64;
    sample.saturating_mul(2)
}

/// Prepares one collected event for `events.json`: adds `_client_received_at_s`
/// (seconds since the session's WebSocket opened) and, for audio deltas, removes `delta` / `audio` and adds `audio_bytes`
/// (decoded length of the base64 payload). Non-objects pass through unchanged.
#[cfg(test)]
pub fn sanitize_event(mut event: Value, received_at_s: f64) -> Value {
    let Some(obj) = event.as_object_mut() else {
        return event;
    };
    obj.insert(
        "_client_received_at_s".to_owned(),
        Value::from(received_at_s),
    );
    let is_audio = obj
        .get("type")
        .and_then(Value::as_str)
        .is_some_and(|t| AUDIO_DELTA_TYPES.contains(&t));
    if is_audio {
        let delta = obj.remove("delta");
        let audio = obj.remove("audio");
        let payload = delta
            .as_ref()
            .and_then(Value::as_str)
            .or(audio.as_ref().and_then(Value::as_str));
        obj.insert(
            "audio_bytes".to_owned(),
            Value::from(base64_decoded_len(payload.unwrap_or(""))),
        );
    }
    event
}

/// Decoded length of a standard base64 string (padded or not).
#[cfg(test)]
fn base64_decoded_len(b64: &str) -> u64 {
    let trimmed = b64.trim_end_matches('=');
    (trimmed.len() as u64) * 3 / 4
}

/// `ceil(duration)` whole seconds; non-finite or non-positive durations give 0.
fn horizon_seconds(duration_s: f64) -> u64 {
    if duration_s.is_finite() && duration_s > 0.0 {
        duration_s.ceil() as u64
    } else {
        0
    }
}

/// Transcript chunks (§4.2 item 2), creation order.
fn transcript_chunks(input: &CaptureInput<'_>, horizon_s: f64) -> Vec<TranscriptChunk> {
    let mut chunks = Vec::new();
    for resp in input.responses {
        let text = resp.text.trim();
        if text.is_empty() {
            continue;
        }
        let mut own = input
            .segments
            .iter()
            .filter(|s| s.response_id == resp.response_id);
        let Some(first) = own.next() else {
            continue; // text without audio is omitted
        };
        let (start, end) = own.fold((first.start_s, first.end_s), |(a, b), s| {
            (a.min(s.start_s), b.max(s.end_s))
        });
        let start_rel = (start - input.stream_start_s).max(0.0);
        if start_rel >= horizon_s {
            continue;
        }
        let end_rel = (end - input.stream_start_s).min(horizon_s);
        chunks.push(TranscriptChunk {
            response_id: resp.response_id.clone(),
            text: text.to_owned(),
            timestamp: [round6(start_rel), round6(end_rel)],
        });
    }
    chunks
}

/// Python `round(x, 6)`: correctly rounded from the exact binary value.
fn round6(x: f64) -> f64 {
    // `+ 0.0` turns -0.0 into 0.0.
    format!("{x:.6}").parse::<f64>().map_or(x, |v| v + 0.0)
}

#[cfg(test)]
#[path = "capture_tests.rs"]
mod tests;
