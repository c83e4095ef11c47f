//! Pure core of the realtime video endpoint: `session.start` validation, the §2.2
//! frame/chunk arithmetic, the absolute chunk schedule, fault application (as a list of
//! [`Step`]s the socket loop walks) and the payload bytes. No sockets, no clocks.

use std::time::Duration;

use bytes::Bytes;
use rand::{Rng, SeedableRng, rngs::SmallRng};
use serde_json::Value;

use super::config::VideoServerConfig;

/// Exact error text for bad geometry (spec'd by the brief).
pub(crate) const GEOMETRY_ERROR: &str = "width and height must be positive multiples of 16";

/// Pixel frames of the chunk sent at `position` (§2.2: 9 for chunk 0, then 12).
pub(crate) fn frames_in_chunk(position: u32) -> u32 {
    if position == 0 { 9 } else { 12 }
}

/// Server formula of §2.2: `chunks(f) = ((f - 1) // 4 + 1) // 3` (0 for `f == 0`).
pub(crate) fn chunks_for_frames(num_frames: u64) -> u64 {
    if num_frames == 0 {
        return 0;
    }
    ((num_frames - 1) / 4 + 1) / 3
}

/// Checks a `session.start` event and returns the number of chunks it asks for. The
/// `Err` is the exact `message` of the `error` event to send before closing.
pub(crate) fn validate_start(event: &Value, max_frames: u64) -> Result<u32, String> {
    let positive_16 = |key: &str| {
        event
            .get(key)
            .and_then(Value::as_u64)
            .is_some_and(|v| v > 0 && v % 16 == 0)
    };
    if !(positive_16("width") && positive_16("height")) {
        return Err(GEOMETRY_ERROR.to_string());
    }
    let raw = event.get("num_frames").unwrap_or(&Value::Null);
    let Some(frames) = raw.as_u64() else {
        return Err(format!("num_frames must be a positive integer, got {raw}"));
    };
    // What the reference server's formula accepts: any count giving at least one chunk
    // (12n - 3 is exact; others round down).
    let chunks = chunks_for_frames(frames);
    if chunks == 0 {
        return Err(format!(
            "num_frames must give at least one chunk (chunks = ((num_frames - 1) // 4 + 1) // 3, \
             so num_frames >= 9; 12*n - 3 is exact: 9, 21, 33, ...), got {frames}"
        ));
    }
    if frames > max_frames {
        return Err(format!(
            "num_frames {frames} ({chunks} chunks) exceeds the server maximum of {max_frames}"
        ));
    }
    u32::try_from(chunks).map_err(|_| format!("num_frames {frames} is too large"))
}

/// Offsets from session start at which media chunks `0..n` are due. Nominal times are
/// absolute (`first_chunk_ms + Σ gaps`, gap = interval × ramp_factor for chunks
/// `1..ramp_chunks`), so jitter never accumulates; each jittered time is clamped to be
/// no earlier than the previous chunk's and no earlier than zero.
pub(crate) fn chunk_schedule(cfg: &VideoServerConfig, n: u32, jitter_seed: u64) -> Vec<Duration> {
    let mut rng = SmallRng::seed_from_u64(jitter_seed);
    let mut nominal_ms = cfg.first_chunk_ms;
    let mut prev_ms = 0.0_f64;
    let mut out = Vec::with_capacity(n as usize);
    for position in 0..n {
        if position > 0 {
            let factor = if position < cfg.ramp_chunks {
                cfg.ramp_factor
            } else {
                1.0
            };
            nominal_ms += cfg.chunk_interval_ms * factor;
        }
        let jitter = if cfg.jitter_ms > 0.0 {
            rng.random_range(-cfg.jitter_ms..=cfg.jitter_ms)
        } else {
            0.0
        };
        let at_ms = (nominal_ms + jitter).max(prev_ms).max(0.0);
        prev_ms = at_ms;
        out.push(Duration::from_secs_f64(at_ms / 1000.0));
    }
    out
}

/// One thing the socket loop does next, in order.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Step {
    /// Send `video.start`.
    Start,
    /// At `due` after session start: send the chunk's metadata (unless
    /// `with_metadata` is false) and then its binary frame.
    Media {
        /// Position in send order (0 = first chunk, carries the `ftyp` box).
        position: u32,
        /// `generation_chunk_index` written into the metadata.
        index: u32,
        /// `num_frames` written into the metadata.
        num_frames: u32,
        /// Whether the metadata precedes the binary frame.
        with_metadata: bool,
        /// Offset from session start.
        due: Duration,
    },
    /// Send the trailer metadata + binary (`generation_chunk_index` = `index`).
    Trailer {
        /// Index written into the trailer metadata (one past the last media chunk).
        index: u32,
    },
    /// Send `{"type":"error","message":...}`.
    Error(String),
    /// Send `session.done`.
    Done {
        /// Value of `stopped`.
        stopped: bool,
        /// Value of `chunks` (media chunks actually sent).
        chunks: u32,
    },
    /// Close the socket normally; the session is over.
    Close,
    /// Stop sending but keep the socket open (idle timeout applies again).
    Stall,
}

/// Builds the whole step list of a session that asked for `requested` chunks, with
/// every fault switch of `cfg.faults` applied.
pub(crate) fn plan_session(cfg: &VideoServerConfig, requested: u32, jitter_seed: u64) -> Vec<Step> {
    let faults = &cfg.faults;
    if let Some(message) = &faults.error_on_start {
        return vec![Step::Error(message.clone()), Step::Close];
    }
    let n = requested.saturating_sub(faults.fewer_chunks.unwrap_or(0));
    let schedule = chunk_schedule(cfg, n, jitter_seed);
    let mut steps = vec![Step::Start];
    for sent in 0..=n {
        if faults.error_after_chunks == Some(sent) {
            steps.push(Step::Error(format!(
                "injected fault: error after {sent} chunk(s)"
            )));
            steps.push(Step::Close);
            return steps;
        }
        if faults.close_after_chunks == Some(sent) {
            steps.push(Step::Close);
            return steps;
        }
        if faults.stall_after_chunks == Some(sent) {
            steps.push(Step::Stall);
            return steps;
        }
        if sent == n {
            break;
        }
        let mut index = sent;
        if faults.out_of_order {
            index = match sent {
                1 => 2,
                2 => 1,
                other => other,
            };
        }
        if faults.duplicate_index && sent == 2 {
            index = 1;
        }
        steps.push(Step::Media {
            position: sent,
            index,
            num_frames: frames_in_chunk(sent),
            with_metadata: !(faults.binary_without_metadata && sent == 0),
            due: schedule[sent as usize],
        });
    }
    if cfg.trailer {
        steps.push(Step::Trailer { index: n });
    }
    steps.push(Step::Done {
        stopped: faults.stopped,
        chunks: n,
    });
    steps.push(Step::Close);
    steps
}

/// Minimal fMP4 `ftyp` box that opens the first media chunk.
const FTYP: [u8; 24] = [
    0, 0, 0, 24, b'f', b't', b'y', b'p', b'i', b's', b'o', b'5', 0, 0, 2, 0, b'i', b's', b'o',
    b'6', b'm', b'p', b'4', b'1',
];

/// Deterministic media payload of `len` bytes; the first chunk starts with `ftyp`.
pub(crate) fn media_payload(first: bool, len: usize) -> Bytes {
    let mut body: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
    if first {
        let head = FTYP.len().min(len);
        body[..head].copy_from_slice(&FTYP[..head]);
    }
    Bytes::from(body)
}

/// Small trailer payload: an `mfra` box holding an `mfro` box (24 bytes).
pub(crate) fn trailer_payload() -> Bytes {
    Bytes::from_static(&[
        0, 0, 0, 24, b'm', b'f', b'r', b'a', 0, 0, 0, 16, b'm', b'f', b'r', b'o', 0, 0, 0, 0, 0, 0,
        0, 24,
    ])
}

/// Formats 128 random bits as a version-4 UUID string.
pub(crate) fn uuid_v4(bits: u128) -> String {
    let b = (bits & !(0xf << 76) | (0x4 << 76)) & !(0x3 << 62) | (0x2 << 62);
    format!(
        "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        b >> 96,
        (b >> 80) & 0xffff,
        (b >> 64) & 0xffff,
        (b >> 48) & 0xffff,
        b & 0xffff_ffff_ffff
    )
}

#[cfg(test)]
#[path = "video_plan_tests.rs"]
mod tests;
