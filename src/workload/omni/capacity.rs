//! What a full vLLM-Omni duplex server answers, as data: `session.update` on a server
//! at `max_sessions` gets the realtime `error` event built from `DuplexSessionError(
//! "duplex_session_capacity_exhausted: limit=N", code="resource_exhausted",
//! retryable=True)` (vllm-omni 0.30.0, `engine/duplex/session/manager.py`, sent by
//! `entrypoints/duplex/serving.py` as `{"type": "error", "error": {"type":
//! "rate_limit_error", "code": "resource_exhausted", "message": …}}`). Either part marks
//! the session rejected, not failed; `[load] reject_patterns` replaces these.

use crate::workload::outcome::RejectPattern;

/// The default capacity patterns of the OmniInteract workload.
pub fn reject_patterns() -> Vec<RejectPattern> {
    vec![
        RejectPattern::code("resource_exhausted"),
        RejectPattern::message("duplex_session_capacity_exhausted"),
    ]
}
