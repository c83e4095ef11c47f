//! The duplex session's validation rules (spec §1.3, §1.5, §1.7): the response ledger,
//! audio-delta validation, the post-commit decision, the session-termination and `error`
//! event rules, and the Python-style renderings the reference's messages are made of.
//!
//! Pure code: events (`serde_json::Value`) in, verdicts out. Every check is incremental
//! (one event at a time, in arrival order) so a long session never rescans its history.

use std::borrow::Cow;
use std::collections::{HashSet, VecDeque};

use serde_json::Value;

use super::ids::{RespIx, ResponseIds};
pub use super::metrics::response_id;
use crate::util::pyfmt::py_repr_json;
pub use crate::util::pyfmt::{py_g, py_list, py_repr, py_repr_str, py_str, truthy};
pub use view::EventView;

/// Audio delta event types: the seed name and the later upstream alias.
pub const AUDIO_DELTA_TYPES: [&str; 2] = ["response.audio.delta", "response.output_audio.delta"];
/// Text delta event types (seed names plus the later transcript alias).
pub const TEXT_DELTA_TYPES: [&str; 4] = [
    "response.audio_transcript.delta",
    "response.output_audio_transcript.delta",
    "response.output_text.delta",
    "response.text.delta",
];
/// An audio delta's payload field `key`: the string the parser set aside, else the
/// event's own field; whether it is truthy and the string it is, if one.
fn payload_field<'a, E: EventView + ?Sized>(
    ev: &'a E,
    aside: &'a Option<Cow<'_, str>>,
    key: &str,
) -> Option<(bool, Option<&'a str>)> {
    match aside {
        Some(s) => Some((!s.is_empty(), Some(&**s))),
        None => match ev.str_field(key) {
            Some(s) => Some((!s.is_empty(), Some(s))),
            None => ev.field(key).map(|d| (truthy(&d), None)),
        },
    }
}

/// `error` codes later servers send about late or unknown playback acks; warnings only.
pub const TOLERATED_ERROR_CODES: [&str; 2] = ["playback_ack_too_late", "playback_item_not_found"];
/// The only output rate the duplex workload accepts.
pub const OUTPUT_RATE_HZ: u64 = 24_000;

/// A broken response ledger (reference `response_ledger`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LedgerError {
    /// `response.created` / `response.done` without an id; carries the event type.
    #[error("{0} has no response_id")]
    NoId(String),
    /// A second `response.created` for one id.
    #[error("duplicate response.created for {0}")]
    DuplicateCreated(String),
    /// `response.done` for an id never created.
    #[error("response.done without response.created for {0}")]
    DoneWithoutCreated(String),
    /// A second `response.done` for one id.
    #[error("duplicate response.done for {0}")]
    DuplicateDone(String),
    /// A `response.done` that reports `failed`.
    #[error("response.done reports failure for {0}")]
    Failed(String),
}

/// Created/done bookkeeping over `response.created` / `response.done`, in event order.
/// The first error is kept and the ledger stops changing after it, like the reference's
/// scan that raises at the first bad event. Its state is kept under each response's
/// index in the session's id table ([`Ledger::observe_at`]), one byte a response; a
/// ledger fed by [`Ledger::observe`] keeps a table of its own.
#[derive(Debug, Default, Clone)]
pub struct Ledger {
    /// The ids of [`Ledger::observe`]'s events (a session passes its own indices).
    #[cfg(test)]
    own: ResponseIds,
    /// Under each held response's index less `base`: never created, created, or done.
    state: VecDeque<Slot>,
    /// The index of `state`'s first slot: the responses before it were done and let go
    /// ([`Ledger::evict_first`]).
    base: RespIx,
    created: usize,
    done_count: usize,
    error: Option<LedgerError>,
}

/// One response's place in the ledger.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum Slot {
    #[default]
    Unseen,
    Created,
    Done,
}

impl Ledger {
    /// Account for one event (other event types are ignored).
    #[cfg(test)]
    pub fn observe(&mut self, ev: &Value) {
        let ix = response_id(ev)
            .filter(|id| !id.is_empty())
            .map(|id| self.own.intern(id));
        self.observe_at(ev, ix);
    }

    /// [`Ledger::observe`] with the session's index of the event's response id
    /// (`None` when it names none or an empty one). A ledger is fed by this or by
    /// [`Ledger::observe`], never both.
    pub fn observe_at<E: EventView + ?Sized>(&mut self, ev: &E, ix: Option<RespIx>) {
        let kind = ev.kind();
        if self.error.is_some() || !matches!(kind, "response.created" | "response.done") {
            return;
        }
        let (Some(id), Some(ix)) = (ev.response_id().filter(|id| !id.is_empty()), ix) else {
            self.error = Some(LedgerError::NoId(kind.to_owned()));
            return;
        };
        debug_assert!(ix >= self.base, "an evicted index is never given again");
        let r = (ix - self.base) as usize;
        if self.state.len() <= r {
            self.state.resize(r + 1, Slot::Unseen);
        }
        let slot = &mut self.state[r];
        self.error = match (kind == "response.created", *slot) {
            (true, Slot::Unseen) => {
                *slot = Slot::Created;
                self.created += 1;
                None
            }
            (true, _) => Some(LedgerError::DuplicateCreated(id.to_owned())),
            (false, Slot::Unseen) => Some(LedgerError::DoneWithoutCreated(id.to_owned())),
            (false, Slot::Done) => Some(LedgerError::DuplicateDone(id.to_owned())),
            (false, Slot::Created) if reports_failure(ev.value()) => {
                Some(LedgerError::Failed(id.to_owned()))
            }
            (false, Slot::Created) => {
                *slot = Slot::Done;
                self.done_count += 1;
                None
            }
        };
    }
    /// The first ledger error, if any.
    pub fn error(&self) -> Option<&LedgerError> {
        self.error.as_ref()
    }
    /// Whether `id` was created (a ledger fed by [`Ledger::observe`]).
    #[cfg(test)]
    pub fn is_created(&self, id: &str) -> bool {
        self.own.get(id).is_some_and(|ix| self.is_created_at(ix))
    }
    /// Whether response `ix` was created (one let go counts as created: only done ones
    /// and never created ones that nothing can ask about are let go).
    pub fn is_created_at(&self, ix: RespIx) -> bool {
        ix < self.base || self.slot(ix).is_some_and(|s| s != Slot::Unseen)
    }
    /// Whether response `ix` was created and done.
    pub fn is_done_at(&self, ix: RespIx) -> bool {
        ix < self.base || self.slot(ix) == Some(Slot::Done)
    }
    fn slot(&self, ix: RespIx) -> Option<Slot> {
        let r = ix.checked_sub(self.base)?;
        self.state.get(r as usize).copied()
    }
    /// Lets the oldest held response go, `ix`, which must be done ([`Ledger::is_done_at`])
    /// or never created (then it counts as done; it was neither): the window the session
    /// keeps (`session::responses`). A later event naming its id comes with a new index.
    pub fn evict_first(&mut self, ix: RespIx) {
        debug_assert_eq!(ix, self.base, "the oldest held goes first");
        debug_assert!(
            self.is_done_at(ix) || !self.is_created_at(ix),
            "only a done or never created response is let go"
        );
        self.state.pop_front();
        self.base += 1;
    }
    /// `created == done` and no error.
    pub fn is_closed(&self) -> bool {
        self.error.is_none() && self.created == self.done_count
    }
    /// Created but not done, sorted (as the reference prints them), for a ledger fed by
    /// [`Ledger::observe`].
    #[cfg(test)]
    pub fn unfinished(&self) -> Vec<&str> {
        self.unfinished_in(&self.own)
    }
    /// Created but not done, sorted, their ids read from `ids` (the table whose indices
    /// fed the ledger).
    pub fn unfinished_in<'a>(&self, ids: &'a ResponseIds) -> Vec<&'a str> {
        let mut v: Vec<&str> = (ids.iter())
            .filter(|(ix, _)| self.slot(*ix) == Some(Slot::Created))
            .map(|(_, id)| id)
            .collect();
        v.sort_unstable();
        v
    }
}

fn status_detail(v: Option<&Value>) -> Option<&Value> {
    v?.get("status_details")?.get("type")
}

fn reports_failure(ev: &Value) -> bool {
    let resp = ev.get("response").filter(|r| r.is_object());
    [
        ev.get("status"),
        resp.and_then(|r| r.get("status")),
        status_detail(Some(ev)),
        status_detail(resp),
    ]
    .into_iter()
    .flatten()
    .any(|v| v.as_str() == Some("failed"))
}

/// True when the `response.done` status (`response.status`, else top-level `status`) is
/// `cancelled`.
pub fn is_cancelled(ev: &Value) -> bool {
    let status = match ev.get("response").and_then(|r| r.get("status")) {
        Some(s) if truthy(s) => s,
        _ => match ev.get("status") {
            Some(s) if truthy(s) => s,
            _ => return false,
        },
    };
    status.as_str() == Some("cancelled")
}

/// A `response.listen` that is a real model decision: metadata (`response.metadata` when
/// `response` is an object, else top-level `metadata`) with `model_listen == true` and
/// `buffering != true`.
pub fn is_listen_decision(ev: &Value) -> bool {
    let meta = match ev.get("response") {
        Some(r) if r.is_object() => r.get("metadata"),
        _ => ev.get("metadata"),
    };
    meta.is_some_and(|m| {
        m.is_object()
            && m.get("buffering") != Some(&Value::Bool(true))
            && m.get("model_listen") == Some(&Value::Bool(true))
    })
}

/// The post-commit decision scan (spec §1.5 step 2) over the events after the committed
/// one, fed one event at a time.
#[derive(Debug, Clone, Default)]
pub struct PostCommit {
    prior: HashSet<String>,
    decided: bool,
}

impl PostCommit {
    /// A scan that first waits for `prior` (responses open when a deferred commit landed).
    pub fn new(prior: impl IntoIterator<Item = String>) -> Self {
        Self {
            prior: prior.into_iter().collect(),
            decided: false,
        }
    }
    /// Account for one event after the committed index.
    pub fn observe<E: EventView + ?Sized>(&mut self, ev: &E) {
        match ev.str_field("type") {
            Some("response.done") => {
                if let Some(id) = ev.response_id()
                    && self.prior.remove(id)
                {
                    return;
                }
                if self.prior.is_empty() && !is_cancelled(ev.value()) {
                    self.decided = true;
                }
            }
            Some("response.listen") if self.prior.is_empty() && is_listen_decision(ev.value()) => {
                self.decided = true;
            }
            _ => {}
        }
    }
    /// Whether a decision has been seen.
    pub fn decided(&self) -> bool {
        self.decided
    }
}

/// An invalid audio delta (spec §1.7), in the reference's words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AudioError {
    /// No response id.
    #[error("response audio has no response_id")]
    NoId,
    /// `delta`/`audio` is not a string.
    #[error("response audio payload is missing")]
    Missing,
    /// `format` present and not `pcm16`.
    #[error("OmniInteract output must be pcm16")]
    Format,
    /// `sample_rate_hz` other than 24000.
    #[error("OmniInteract output must use 24000 Hz audio")]
    Rate,
    /// Strict base64 decoding failed.
    #[error("response audio is not valid base64")]
    Base64,
    /// Decoded to zero or an odd number of bytes.
    #[error("response audio is empty or not PCM16 aligned")]
    Alignment,
}

/// Audio-delta validation with the reference's once-only warnings and its "last seen
/// rate" assumption.
#[derive(Debug, Clone)]
pub struct AudioCheck {
    last_rate: u64,
}

impl Default for AudioCheck {
    fn default() -> Self {
        Self {
            last_rate: OUTPUT_RATE_HZ,
        }
    }
}

/// Decodes an audio delta's base64 as the reference's `base64.b64decode` does: the
/// standard alphabet, canonical padding, any trailing bits
/// ([`crate::util::b64::trailing_bits_allowed`], at SIMD speed: decoding was ~4 % of a
/// duplex run's CPU with the scalar engine).
#[cfg(test)]
pub fn decode_audio_b64(encoded: &str) -> Result<Vec<u8>, base64::DecodeError> {
    let mut out = Vec::new();
    decode_audio_b64_into(encoded, &mut out).map(|()| out)
}

/// [`decode_audio_b64`] into `out` (cleared first), so a caller can reuse one buffer.
pub fn decode_audio_b64_into(encoded: &str, out: &mut Vec<u8>) -> Result<(), base64::DecodeError> {
    crate::util::b64::decode_into(crate::util::b64::trailing_bits_allowed(), encoded, out)
}

/// An audio delta's string payload fields, borrowed from the frame by the session's parser
/// ([`crate::workload::omni::session::parse`]; owned only when the JSON string had
/// escapes). Both empty for any other event, or when the event carries them itself.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct AudioPayload<'a> {
    /// The `delta` string.
    pub delta: Option<Cow<'a, str>>,
    /// The `audio` string (the reference reads it when `delta` is empty or absent).
    pub audio: Option<Cow<'a, str>>,
}

impl AudioCheck {
    /// Validate one audio delta and return its response id and decoded PCM16 bytes.
    /// Warnings are appended to `warnings` unless already there.
    #[cfg(test)]
    pub fn check<'a>(
        &mut self,
        ev: &'a Value,
        warnings: &mut Vec<String>,
    ) -> Result<(&'a str, Vec<u8>), AudioError> {
        self.check_with(ev, &AudioPayload::default(), warnings)
    }

    /// [`AudioCheck::check`] of an event whose string `delta` / `audio` fields the parser
    /// set aside in `payload` ([`crate::workload::omni::session::parse`]); fields not set
    /// aside are read from `ev`.
    #[cfg(test)]
    pub fn check_with<'a>(
        &mut self,
        ev: &'a Value,
        payload: &AudioPayload<'_>,
        warnings: &mut Vec<String>,
    ) -> Result<(&'a str, Vec<u8>), AudioError> {
        let mut pcm = Vec::new();
        let id = self.check_into(ev, payload, warnings, &mut pcm)?;
        Ok((id, pcm))
    }

    /// [`AudioCheck::check_with`], decoding into `pcm` (a buffer the caller reuses).
    pub fn check_into<'a, E: EventView + ?Sized>(
        &mut self,
        ev: &'a E,
        payload: &AudioPayload<'_>,
        warnings: &mut Vec<String>,
        pcm: &mut Vec<u8>,
    ) -> Result<&'a str, AudioError> {
        let kind = ev.str_field("type").unwrap_or("response.audio.delta");
        let rate = ev.field("sample_rate_hz").filter(|r| !r.is_null());
        let seen = self.last_rate;
        if let Some(r) = rate.as_deref().and_then(Value::as_u64).filter(|r| *r > 0) {
            self.last_rate = r;
        }
        let id = (ev.response_id())
            .filter(|id| !id.is_empty())
            .ok_or(AudioError::NoId)?;
        let encoded = match payload_field(ev, &payload.delta, "delta") {
            Some((true, s)) => s,
            _ => payload_field(ev, &payload.audio, "audio").and_then(|(_, s)| s),
        };
        let encoded = encoded.ok_or(AudioError::Missing)?;
        match ev.str_field("format") {
            Some("pcm16") => {}
            Some(_) => return Err(AudioError::Format),
            None => match ev.field("format").as_deref() {
                None | Some(Value::Null) => {
                    warn_once(warnings, format!("{kind} omitted format; assumed pcm16"))
                }
                Some(_) => return Err(AudioError::Format),
            },
        }
        let rate_ok = match rate {
            None => {
                warn_once(
                    warnings,
                    format!("{kind} omitted sample_rate_hz; assumed {seen}"),
                );
                seen == OUTPUT_RATE_HZ
            }
            Some(r) => r.as_f64() == Some(OUTPUT_RATE_HZ as f64) && !r.is_boolean(),
        };
        if !rate_ok {
            return Err(AudioError::Rate);
        }
        decode_audio_b64_into(encoded, pcm).map_err(|_| AudioError::Base64)?;
        if pcm.is_empty() || !pcm.len().is_multiple_of(2) {
            return Err(AudioError::Alignment);
        }
        Ok(id)
    }
}

/// Push `w` unless it is already recorded.
pub fn warn_once(warnings: &mut Vec<String>, w: String) {
    if !warnings.contains(&w) {
        warnings.push(w);
    }
}

/// What an `error` event means for the session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ErrorVerdict {
    /// Fatal: the failure message (the Python rendering of the event, as the reference's
    /// `str(event)`).
    Fatal(String),
    /// A tolerated playback-ack complaint: the warning to record.
    Tolerated(String),
}

/// Judge an `error` event (code at `code` or `error.code`); `text` is the event as
/// received, so the message keeps the server's key order as the reference's does.
pub fn error_verdict(ev: &Value, text: &str) -> ErrorVerdict {
    let code = ev
        .get("code")
        .or_else(|| ev.get("error").and_then(|e| e.get("code")))
        .and_then(Value::as_str);
    match code {
        Some(c) if TOLERATED_ERROR_CODES.contains(&c) => {
            ErrorVerdict::Tolerated(format!("server warning: {c}"))
        }
        _ => ErrorVerdict::Fatal(py_repr_json(text).unwrap_or_else(|| py_repr(ev))),
    }
}

/// The reference's `_raise_if_session_terminated` rule for one `session.expired` /
/// `session.closed` event. `after_close` is true in the post-close check (messages get
/// the `Unexpected ` prefix); `sent_after_close` is true when the event arrived after our
/// `session.close`. A `session.closed` after our close with no reason (or the later
/// upstream reason `client_close`) is expected and gives `None`.
pub fn termination_failure(
    ev: &Value,
    after_close: bool,
    sent_after_close: bool,
) -> Option<String> {
    let kind = ev.get("type").and_then(Value::as_str)?;
    if !matches!(kind, "session.expired" | "session.closed") {
        return None;
    }
    let reason = match ev.get("reason") {
        None | Some(Value::Null) => ev
            .get("event")
            .filter(|e| e.is_object())
            .and_then(|e| e.get("reason")),
        r => r,
    }
    .filter(|r| !r.is_null());
    let expected_reason = reason.is_none_or(|r| r.as_str() == Some("client_close"));
    if kind == "session.closed" && after_close && sent_after_close && expected_reason {
        return None;
    }
    let detail = reason
        .filter(|r| truthy(r))
        .map(|r| format!(": {}", py_str(r)))
        .unwrap_or_default();
    let prefix = if after_close { "Unexpected " } else { "" };
    Some(format!("{prefix}{kind}{detail}"))
}

#[path = "ledger_view.rs"]
mod view;

#[cfg(test)]
#[path = "ledger_tests.rs"]
mod tests;
