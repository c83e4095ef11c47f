//! Validation of the client events of the duplex endpoint (spec §1.2, server role):
//! `session.update`, `input_audio_buffer.append` and `playback.ack`. Every `Err` is the
//! exact `message` of the `error` event the server sends. Pure: values in, values out.
//!
//! Appends are most of what a server reads (each ~8.5 KB of base64), so a valid one is
//! checked straight from its text ([`checked_append`]: its audio string cut out before
//! the JSON scan, borrowed fields, the audio's base64 checked without decoding it:
//! [`strict_len`]); anything it does
//! not accept goes through [`validate_append`] over the parsed `Value`, which names the
//! error.

use std::cell::RefCell;

use base64::Engine as _;
use serde::Deserialize;
use serde_json::Value;

use crate::util::b64;

/// Input audio byte rate: PCM16 mono at 16 kHz.
pub(crate) const INPUT_BYTES_PER_S: u64 = 32_000;
/// Largest accepted `session.idle_timeout_s` (same bound as the server config).
const MAX_IDLE_S: f64 = 1e9;

/// What the server keeps from a valid `session.update`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct UpdateInfo {
    /// `session.model`.
    pub(crate) model: String,
    /// `session.session_id`, when given.
    pub(crate) session_id: Option<String>,
    /// `session.idle_timeout_s`, when given.
    pub(crate) idle_timeout_s: Option<f64>,
}

/// Checks the shape of a `session.update` (§1.2 item 1). Required: a `session` object
/// with a non-empty `model` and `input_audio_format`/`output_audio_format` `"pcm16"`.
/// Checked when present: `modalities` (strings, including `"audio"`), `turn_detection`
/// (must be null: no server VAD here), `overlap_policy` and `playback_commit_policy`
/// (strings), `extra_body` (object), `ref_audio` (a base64 `data:audio/…` URL),
/// `session_id` (string), `idle_timeout_s` (seconds in (0, 1e9]).
pub(crate) fn validate_update(event: &Value) -> Result<UpdateInfo, String> {
    let Some(session) = event.get("session").filter(|s| s.is_object()) else {
        return Err("session.update needs a \"session\" object".to_string());
    };
    let field = |key: &str| session.get(key);
    let model = match field("model").and_then(Value::as_str) {
        Some(model) if !model.is_empty() => model.to_string(),
        _ => return Err("session.model must be a non-empty string".to_string()),
    };
    for key in ["input_audio_format", "output_audio_format"] {
        let value = field(key).unwrap_or(&Value::Null);
        if value != "pcm16" {
            return Err(format!("session.{key} must be \"pcm16\", got {value}"));
        }
    }
    if let Some(modalities) = field("modalities") {
        let list = modalities.as_array();
        let strings = list.is_some_and(|l| l.iter().all(Value::is_string));
        if !strings || !list.is_some_and(|l| l.iter().any(|m| m == "audio")) {
            return Err(format!(
                "session.modalities must be a list of strings containing \"audio\", got {modalities}"
            ));
        }
    }
    // As vLLM-Omni validates it: null, or server VAD, which wants the barge-in overlap
    // policy. (This server takes turns as `[server.duplex] turns` says either way.)
    if let Some(turn) = field("turn_detection").filter(|t| !t.is_null()) {
        if turn.get("type").and_then(Value::as_str) != Some("server_vad") {
            return Err(format!(
                "session.turn_detection must be null or an object with type='server_vad', got {turn}"
            ));
        }
        if let Some(p) = field("overlap_policy").and_then(Value::as_str)
            && p != "barge_in_on_speech"
        {
            return Err(format!(
                "overlap_policy='{p}' conflicts with turn_detection; expected 'barge_in_on_speech'"
            ));
        }
    }
    for key in ["overlap_policy", "playback_commit_policy", "session_id"] {
        if let Some(value) = field(key).filter(|v| !v.is_string()) {
            return Err(format!("session.{key} must be a string, got {value}"));
        }
    }
    if let Some(extra) = field("extra_body").filter(|v| !v.is_object()) {
        return Err(format!("session.extra_body must be an object, got {extra}"));
    }
    if let Some(ref_audio) = field("ref_audio") {
        check_ref_audio(ref_audio)?;
    }
    let idle_timeout_s = match field("idle_timeout_s") {
        None | Some(Value::Null) => None,
        Some(value) => match value.as_f64() {
            Some(s) if s > 0.0 && s <= MAX_IDLE_S => Some(s),
            _ => {
                return Err(format!(
                    "session.idle_timeout_s must be a number of seconds in (0, 1e9], got {value}"
                ));
            }
        },
    };
    Ok(UpdateInfo {
        model,
        session_id: field("session_id")
            .and_then(Value::as_str)
            .map(str::to_string),
        idle_timeout_s,
    })
}

/// `ref_audio` must be `data:audio/<type>;base64,<strict base64>`.
fn check_ref_audio(value: &Value) -> Result<(), String> {
    let payload = value
        .as_str()
        .and_then(|s| s.strip_prefix("data:audio/"))
        .and_then(|s| s.split_once(";base64,"))
        .map(|(_, payload)| payload);
    let Some(payload) = payload else {
        return Err("session.ref_audio must be a data:audio/<type>;base64,<data> URL".to_string());
    };
    b64::standard()
        .decode(payload)
        .map(drop)
        .map_err(|err| format!("session.ref_audio is not valid base64: {err}"))
}

/// A valid append: how much it adds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Append {
    /// Decoded PCM16 bytes.
    pub(crate) bytes: u64,
    /// JPEG frames in `video_frames`.
    pub(crate) frames: usize,
}

/// Checks an `input_audio_buffer.append` (§1.2 item 2) given the audio bytes accepted
/// before it: `input_audio_format` `"pcm16"`, `sample_rate_hz` 16000, `audio` strict
/// base64 of a non-empty even number of bytes, `duration_ms` and `audio_end_ms` (when
/// present) equal to the floor-ms of this chunk and of the cumulative input, and every
/// `video_frames` entry (when present: a non-empty list) strict base64 of bytes starting
/// with the JPEG SOI marker `FF D8`.
pub(crate) fn validate_append(event: &Value, bytes_before: u64) -> Result<Append, String> {
    let fail = |msg: String| Err(format!("input_audio_buffer.append: {msg}"));
    let format = event.get("input_audio_format").unwrap_or(&Value::Null);
    if format != "pcm16" {
        return fail(format!(
            "input_audio_format must be \"pcm16\", got {format}"
        ));
    }
    let rate = event.get("sample_rate_hz").unwrap_or(&Value::Null);
    if rate.as_f64() != Some(16_000.0) {
        return fail(format!("sample_rate_hz must be 16000, got {rate}"));
    }
    let Some(audio) = event.get("audio").and_then(Value::as_str) else {
        return fail("needs a base64 string \"audio\" field".to_string());
    };
    let pcm = match b64::standard().decode(audio) {
        Ok(pcm) => pcm,
        Err(err) => return fail(format!("audio is not valid base64: {err}")),
    };
    if pcm.is_empty() {
        return fail("audio is empty".to_string());
    }
    if pcm.len() % 2 != 0 {
        return fail(format!(
            "audio is not PCM16 aligned: {} bytes (odd length)",
            pcm.len()
        ));
    }
    let bytes = pcm.len() as u64;
    let end = bytes_before + bytes;
    for (key, expected, what) in [
        (
            "duration_ms",
            bytes * 1000 / INPUT_BYTES_PER_S,
            format!("the {bytes} audio bytes of this append"),
        ),
        (
            "audio_end_ms",
            end * 1000 / INPUT_BYTES_PER_S,
            format!("the {end} audio bytes received so far"),
        ),
    ] {
        if let Some(value) = event.get(key)
            && value.as_u64() != Some(expected)
        {
            return fail(format!(
                "{key} {value} does not match {what} (expected {expected})"
            ));
        }
    }
    let frames = match event.get("video_frames") {
        None => 0,
        Some(frames) => match check_frames(frames) {
            Ok(n) => n,
            Err(msg) => return fail(msg),
        },
    };
    Ok(Append { bytes, frames })
}

/// The fields of an append that [`validate_append`] reads, borrowed from the text. A
/// string with escapes, a duplicate key or a value of another type fails to parse, and
/// the event then takes the `Value` path.
#[derive(Deserialize)]
struct AppendFields<'a> {
    #[serde(rename = "type")]
    kind: &'a str,
    input_audio_format: &'a str,
    sample_rate_hz: f64,
    audio: &'a str,
    #[serde(default, deserialize_with = "present")]
    duration_ms: Option<u64>,
    #[serde(default, deserialize_with = "present")]
    audio_end_ms: Option<u64>,
    #[serde(default, borrow, deserialize_with = "present")]
    video_frames: Option<Vec<&'a str>>,
}

/// An optional field that, when present, must hold a `T` (`null` included: the `Value`
/// path rejects a present `null` too, so it must not read as absent here).
fn present<'de, D: serde::Deserializer<'de>, T: Deserialize<'de>>(
    d: D,
) -> Result<Option<T>, D::Error> {
    T::deserialize(d).map(Some)
}

thread_local! {
    /// Decoded base64 goes here (only its length and first bytes are checked), so a
    /// server thread reuses one buffer instead of allocating one per append.
    static SCRATCH: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    /// An append's text with its audio string emptied ([`audio_span`]), reused.
    static REST: RefCell<String> = const { RefCell::new(String::new()) };
}

/// The byte range of the contents of the top-level `"audio":"…"` string of `text` (an
/// object), when that key is written exactly so and its string is standard-alphabet
/// base64 with at most two `=` before its closing quote; `None` otherwise (an escape,
/// any other byte: the caller then reads the whole text). The one pass over the ~8.5 KB
/// of base64 both finds the string's end and checks its alphabet, so the JSON scan of
/// the rest skips it and [`span_len`] need not read it again.
fn audio_span(text: &str) -> Option<(usize, usize)> {
    const KEY: &[u8] = b"\"audio\":\"";
    let b = text.as_bytes();
    let (mut depth, mut i) = (0usize, 0usize);
    while i < b.len() {
        match b[i] {
            b'"' if depth == 1 && b[i..].starts_with(KEY) => {
                let start = i + KEY.len();
                let mut end = start + base64_run(&b[start..]);
                for _ in 0..2 {
                    if b.get(end) == Some(&b'=') {
                        end += 1;
                    }
                }
                return (b.get(end) == Some(&b'"')).then_some((start, end));
            }
            b'"' => {
                // Past the string (its escapes included) to its closing quote.
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.checked_sub(1)?,
            _ => {}
        }
        i += 1;
    }
    None
}

/// Whether `c` is of the standard base64 alphabet, in three branch-free compares: a
/// letter of either case (`c | 0x20` is lower case), `/` or a digit (`/` is just below
/// `0`), or `+`.
pub(crate) fn is_base64(c: u8) -> bool {
    ((c | 0x20).wrapping_sub(b'a') < 26) | (c.wrapping_sub(b'/') < 11) | (c == b'+')
}

/// How many leading bytes of `b` are of the standard alphabet: 32-byte blocks folded
/// with [`is_base64`] (fixed length, so they compile to vector compares); the block
/// that holds the first other byte, and the tail, are searched byte by byte.
fn base64_run(b: &[u8]) -> usize {
    let blocks = b.chunks_exact(32);
    let tail = blocks.remainder();
    for (n, block) in blocks.enumerate() {
        let Ok(block) = <&[u8; 32]>::try_from(block) else {
            return n * 32;
        };
        if block
            .iter()
            .fold(0u8, |bad, &c| bad | u8::from(!is_base64(c)))
            != 0
        {
            return n * 32 + block.iter().take_while(|&&c| is_base64(c)).count();
        }
    }
    b.len() - tail.len() + tail.iter().take_while(|&&c| is_base64(c)).count()
}

/// Decodes strict base64 into `buf` (its allocation reused); `None` if it is not
/// ([`crate::util::b64::standard`]: SIMD, the strict engine's verdict; a proptest holds it).
pub(crate) fn decode_into<'b>(buf: &'b mut Vec<u8>, text: &str) -> Option<&'b [u8]> {
    b64::decode_into(b64::standard(), text, buf).ok()?;
    Some(&buf[..])
}

/// The length `text` decodes to under the strict rule ([`crate::util::b64::standard`]:
/// canonical padding, zero trailing bits), or `None` where that decoder refuses it;
/// checked without decoding (a proptest holds it to the decoder's verdict).
pub(crate) fn strict_len(text: &str) -> Option<usize> {
    let b = text.as_bytes();
    let body = b
        .strip_suffix(b"==")
        .or_else(|| b.strip_suffix(b"="))
        .unwrap_or(b);
    if base64_run(body) != body.len() {
        return None;
    }
    span_len(text)
}

/// [`strict_len`] of a string whose bytes are known to be alphabet followed by at most
/// two `=` (an [`audio_span`]): its length, padding and trailing bits are checked.
fn span_len(text: &str) -> Option<usize> {
    let b = text.as_bytes();
    if !b.len().is_multiple_of(4) {
        return None;
    }
    let pad = match b {
        [.., b'=', b'='] => 2,
        [.., b'='] => 1,
        _ => 0,
    };
    let body = &b[..b.len() - pad];
    // The bits of the last character past the data must be zero.
    let spare = [0, 0x03, 0x0F][pad];
    if let Some(&last) = body.last()
        && sextet(last).is_none_or(|v| v & spare != 0)
    {
        return None;
    }
    Some(b.len() / 4 * 3 - pad)
}

/// The value of a base64 character of the standard alphabet.
fn sextet(c: u8) -> Option<u8> {
    match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    }
}

/// `Some` only when `text` is an `input_audio_buffer.append` that [`validate_append`]
/// accepts given `bytes_before`, with the same [`Append`]; `None` for anything else
/// (another event, an invalid append, or JSON this reader does not take), which the
/// caller then parses and validates as a `Value`.
pub(crate) fn checked_append(text: &str, bytes_before: u64) -> Option<Append> {
    // serde's derived structs also read a JSON array of the fields in order; an event
    // is an object.
    if !text.trim_start().starts_with('{') {
        return None;
    }
    let span = audio_span(text);
    REST.with_borrow_mut(|rest| {
        // The audio string emptied: the fields are read from the rest, the audio from
        // the span (the rest is valid JSON exactly when the text is, the string holding
        // no escape; an empty `audio` there is the one the span was cut from).
        let (fields, audio) = match span {
            Some((start, end)) => {
                rest.clear();
                rest.push_str(&text[..start]);
                rest.push_str(&text[end..]);
                (rest.as_str(), Some(&text[start..end]))
            }
            None => (text, None),
        };
        let f: AppendFields = serde_json::from_str(fields).ok()?;
        if audio.is_some() && !f.audio.is_empty() {
            return None;
        }
        // The span's alphabet is checked already; a whole-text read's is not.
        let bytes = match audio {
            Some(audio) => span_len(audio)?,
            None => strict_len(f.audio)?,
        };
        checked_fields(&f, bytes as u64, bytes_before)
    })
}

/// [`checked_append`] once the fields are read and the audio's `bytes` counted.
fn checked_fields(f: &AppendFields, bytes: u64, bytes_before: u64) -> Option<Append> {
    if f.kind != "input_audio_buffer.append"
        || f.input_audio_format != "pcm16"
        || f.sample_rate_hz != 16_000.0
    {
        return None;
    }
    // Only the length is used: the bytes are decoded only for a speech detector
    // ([`text_rms`]).
    SCRATCH.with_borrow_mut(|buf| {
        if bytes == 0 || !bytes.is_multiple_of(2) {
            return None;
        }
        let end = bytes_before + bytes;
        let matches = |field: Option<u64>, expected| field.is_none_or(|v| v == expected);
        if !matches(f.duration_ms, bytes * 1000 / INPUT_BYTES_PER_S)
            || !matches(f.audio_end_ms, end * 1000 / INPUT_BYTES_PER_S)
        {
            return None;
        }
        let frames = match &f.video_frames {
            None => 0,
            Some(list) if list.is_empty() => return None,
            Some(list) => {
                for frame in list {
                    if !decode_into(buf, frame)?.starts_with(&[0xFF, 0xD8]) {
                        return None;
                    }
                }
                list.len()
            }
        };
        Some(Append { bytes, frames })
    })
}

/// Checks `video_frames`; returns the number of frames.
fn check_frames(frames: &Value) -> Result<usize, String> {
    let Some(list) = frames.as_array().filter(|l| !l.is_empty()) else {
        return Err(format!(
            "video_frames must be a non-empty list of base64 JPEG strings, got {frames}"
        ));
    };
    for (i, frame) in list.iter().enumerate() {
        let Some(text) = frame.as_str() else {
            return Err(format!(
                "video_frames[{i}] must be a base64 string, got {frame}"
            ));
        };
        let jpeg = b64::standard()
            .decode(text)
            .map_err(|err| format!("video_frames[{i}] is not valid base64: {err}"))?;
        if !jpeg.starts_with(&[0xFF, 0xD8]) {
            return Err(format!(
                "video_frames[{i}] is not a JPEG (does not start with the FF D8 SOI marker)"
            ));
        }
    }
    Ok(list.len())
}

/// A well-formed `playback.ack`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Ack {
    /// `response_id`.
    pub(crate) response_id: String,
    /// `played_ms`.
    pub(crate) played_ms: u64,
}

/// Checks a `playback.ack` (§1.2 item 3): string `response_id`, non-negative integer
/// `played_ms`, and (when present) `item_id == "item_" + response_id` and
/// `committed_ms` a non-negative integer no larger than `played_ms`.
pub(crate) fn parse_ack(event: &Value) -> Result<Ack, String> {
    let Some(response_id) = event.get("response_id").and_then(Value::as_str) else {
        return Err("playback.ack needs a string \"response_id\"".to_string());
    };
    let played = event.get("played_ms").unwrap_or(&Value::Null);
    let Some(played_ms) = played.as_u64() else {
        return Err(format!(
            "playback.ack played_ms must be a non-negative integer, got {played}"
        ));
    };
    if let Some(item) = event.get("item_id")
        && item.as_str() != Some(&format!("item_{response_id}"))
    {
        return Err(format!(
            "playback.ack item_id must be \"item_{response_id}\", got {item}"
        ));
    }
    if let Some(committed) = event.get("committed_ms")
        && committed.as_u64().is_none_or(|c| c > played_ms)
    {
        return Err(format!(
            "playback.ack committed_ms must be an integer in [0, played_ms = {played_ms}], got {committed}"
        ));
    }
    Ok(Ack {
        response_id: response_id.to_string(),
        played_ms,
    })
}

/// RMS level of the PCM in an append's text ([`checked_append`] accepted it), for the
/// barge-in speech detector: decoded a second time, only when barge-in is on.
pub(crate) fn text_rms(text: &str) -> Option<f64> {
    let f: AppendFields = serde_json::from_str(text).ok()?;
    base64_rms(f.audio)
}

/// [`text_rms`] of a parsed append.
pub(crate) fn event_rms(event: &Value) -> Option<f64> {
    base64_rms(event.get("audio")?.as_str()?)
}

fn base64_rms(audio: &str) -> Option<f64> {
    SCRATCH.with_borrow_mut(|buf| Some(crate::util::wav::pcm16_rms(decode_into(buf, audio)?)))
}
