//! `[target]`'s transport settings: the inbound size limit and the compression offer.

use std::path::Path;

use super::{Overrides, RawTarget, ScenarioError, key_error};
use crate::engine::transport::Compression;

/// `[target] max_frame_bytes` (default: the transport's limit), range-checked into
/// `errors`.
pub(super) fn max_frame_bytes(
    path: &Path,
    src: &str,
    target: Option<&RawTarget>,
    errors: &mut Vec<ScenarioError>,
) -> u64 {
    let max_frame_bytes = target
        .and_then(|t| t.max_frame_bytes)
        .unwrap_or(crate::engine::transport::MAX_MESSAGE_BYTES as u64);
    if !(1..=1 << 32).contains(&max_frame_bytes) {
        errors.push(key_error(
            path,
            src,
            &["target", "max_frame_bytes"],
            format!(
                "`max_frame_bytes` must be in [1, 4294967296] (got {max_frame_bytes}); use e.g. 67108864"
            ),
        ));
    }
    max_frame_bytes
}

/// `--compression` over `[target] compression` (default `"deflate"`; serde has already
/// refused any other word, with its position).
pub(super) fn compression(target: Option<&RawTarget>, ov: &Overrides) -> Compression {
    ov.compression
        .or(target.and_then(|t| t.compression))
        .unwrap_or_default()
}
