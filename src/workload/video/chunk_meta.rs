//! What a `video.chunk_metadata` event tells the session about the binary chunk that
//! follows it, read on the hot path (one per chunk) by a typed, borrowing parse that
//! builds no `serde_json::Value`; any event that parse cannot take as-is (a field of an
//! unexpected type, a duplicate key) falls back to the `Value` reading, so both paths
//! always agree.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::Value;

/// The metadata of one chunk.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChunkMeta {
    /// `kind == "media"` (anything else is a trailer: no record).
    pub media: bool,
    /// `generation_chunk_index` (0 when absent or not an unsigned integer).
    pub index: u64,
    /// `num_frames` (0 when absent or not an unsigned integer; truncated to `u32`).
    pub num_frames: u32,
    /// The server's send stamp, when it is a number.
    pub server_sent_at_s: Option<f64>,
}

impl ChunkMeta {
    /// The metadata read from a parsed event.
    pub fn of_value(v: &Value) -> Self {
        Self {
            media: v.get("kind").and_then(Value::as_str) == Some("media"),
            index: v
                .get("generation_chunk_index")
                .and_then(Value::as_u64)
                .unwrap_or(0),
            num_frames: v.get("num_frames").and_then(Value::as_u64).unwrap_or(0) as u32,
            server_sent_at_s: v.get("server_sent_at_s").and_then(Value::as_f64),
        }
    }
}

/// The fields the fast path reads; unknown fields are skipped (still validated as JSON).
#[derive(Deserialize)]
struct Fields<'a> {
    #[serde(rename = "type", borrow)]
    ty: Cow<'a, str>,
    #[serde(default, borrow)]
    kind: Option<Cow<'a, str>>,
    #[serde(default)]
    generation_chunk_index: Option<u64>,
    #[serde(default)]
    num_frames: Option<u64>,
    #[serde(default)]
    server_sent_at_s: Option<f64>,
}

/// `Some` when `text` is a `video.chunk_metadata` event the typed parse takes; `None`
/// for every other text (parse it as a `Value` then).
pub fn fast(text: &str) -> Option<ChunkMeta> {
    let f: Fields<'_> = serde_json::from_str(text).ok()?;
    (f.ty == "video.chunk_metadata").then(|| ChunkMeta {
        media: f.kind.as_deref() == Some("media"),
        index: f.generation_chunk_index.unwrap_or(0),
        num_frames: f.num_frames.unwrap_or(0) as u32,
        server_sent_at_s: f.server_sent_at_s,
    })
}

#[cfg(test)]
#[path = "chunk_meta_tests.rs"]
mod tests;
