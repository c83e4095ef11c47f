//! Typed sample outcomes: why a sample failed ([`FailureKind`]) next to the exact
//! message the reference clients print ([`Failure::message`]), so failures can be counted
//! per kind in results, progress and the terminal summary while every message stays
//! word for word what the spec asserts. Every measured session also ends in one
//! [`Class`]: good, degraded (completed but broke a per-session SLO), rejected (the
//! server refused it for capacity: see [`is_rejection`]) or failed.

use std::collections::BTreeMap;

pub use classes::{
    Class, ClassCounts, Rules, SESSION_METRICS, SessionBound, catalogue as classes_catalogue,
};

mod classes;

/// Why a sample failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FailureKind {
    /// The TCP connection or TLS could not be made.
    Connect,
    /// The WebSocket upgrade was refused (with the HTTP status when there was one).
    Handshake {
        /// The HTTP status of the refusal.
        status: Option<u16>,
    },
    /// A protocol or connect deadline passed.
    Timeout,
    /// The peer broke the protocol (unexpected message, bad order, bad payload).
    Protocol,
    /// The server reported an error (an `error` event, a rejection).
    ServerError,
    /// The server closed the socket before the session finished.
    ClosedEarly,
    /// Reading or writing the socket failed.
    Transport,
    /// The run completed but the report could not use it (e.g. too few chunks).
    Report,
    /// A sample actor crashed or could not start.
    Crashed,
    /// The run was interrupted (Ctrl-C / SIGTERM) while the sample was in flight: its own
    /// outcome, never counted as a server failure.
    Interrupted,
    /// The server closed the WebSocket with code 1013 ("try again later"): a capacity
    /// refusal, counted as [`Class::Rejected`].
    Rejected,
}

impl FailureKind {
    /// Every kind's stable name, as counted in JSON (`failures_by_kind`) and progress.
    pub fn label(self) -> &'static str {
        match self {
            FailureKind::Connect => "connect",
            FailureKind::Handshake { .. } => "handshake",
            FailureKind::Timeout => "timeout",
            FailureKind::Protocol => "protocol",
            FailureKind::ServerError => "server_error",
            FailureKind::ClosedEarly => "closed_early",
            FailureKind::Transport => "transport",
            FailureKind::Report => "report",
            FailureKind::Crashed => "crashed",
            FailureKind::Interrupted => "interrupted",
            FailureKind::Rejected => "rejected",
        }
    }
}

/// A failed sample: its kind and the message (the reference's exact text).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// Why.
    pub kind: FailureKind,
    /// What the user reads.
    pub message: String,
}

impl Failure {
    /// A failure of `kind` with `message`, cut to
    /// `MESSAGE_CHARS` characters with its
    /// original length noted: a server's 5 MB error text is not copied into every
    /// output and every session's record.
    pub fn new(kind: FailureKind, message: impl Into<String>) -> Self {
        let message = message.into();
        let max = crate::util::bounded::MESSAGE_CHARS;
        Self {
            kind,
            message: if message.len() > max {
                crate::util::bounded::bounded(&message, max)
            } else {
                message
            },
        }
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// One capacity-refusal pattern for a server's `error` event (`[load] reject_patterns`,
/// or a workload's defaults in `Descriptor::reject_patterns`): a server error whose
/// message holds `code` as a whole token (quoted or not) and contains `message` (each
/// when given) is a rejection, not a failure.
#[derive(
    Debug, Clone, PartialEq, Eq, serde::Deserialize, serde::Serialize, schemars::JsonSchema,
)]
#[serde(deny_unknown_fields)]
pub struct RejectPattern {
    /// The error event's code, e.g. `resource_exhausted`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// Text the error's message contains, e.g. `capacity_exhausted`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

impl RejectPattern {
    /// A pattern on the error's code.
    pub fn code(code: &str) -> Self {
        Self {
            code: Some(code.to_string()),
            message: None,
        }
    }
    /// A pattern on text in the error's message.
    pub fn message(text: &str) -> Self {
        Self {
            code: None,
            message: Some(text.to_string()),
        }
    }
    /// Whether the failure text `text` matches (a pattern with neither part matches
    /// nothing).
    pub fn matches(&self, text: &str) -> bool {
        if self.code.is_none() && self.message.is_none() {
            return false;
        }
        self.code.as_deref().is_none_or(|c| has_token(text, c))
            && self
                .message
                .as_deref()
                .is_none_or(|m| !m.is_empty() && text.contains(m))
    }
}

/// `token` occurs in `text` with no identifier character (`[A-Za-z0-9_.-]`) on either
/// side: `'code': 'resource_exhausted'` holds `resource_exhausted`,
/// `resource_exhausted_soon` does not.
fn has_token(text: &str, token: &str) -> bool {
    if token.is_empty() {
        return false;
    }
    let ident = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-');
    text.match_indices(token).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + token.len()..].chars().next();
        !before.is_some_and(ident) && !after.is_some_and(ident)
    })
}

/// Whether `f` is a capacity refusal: an upgrade answered 429 or 503, a close with code
/// 1013 ([`FailureKind::Rejected`]), or a server error matching one of `patterns`.
pub fn is_rejection(f: &Failure, patterns: &[RejectPattern]) -> bool {
    match f.kind {
        FailureKind::Rejected => true,
        FailureKind::Handshake {
            status: Some(429 | 503),
        } => true,
        FailureKind::ServerError => patterns.iter().any(|p| p.matches(&f.message)),
        _ => false,
    }
}

/// Count failures per [`FailureKind::label`] (kinds with none are absent).
pub fn count_by_kind<'a>(kinds: impl IntoIterator<Item = FailureKind>) -> BTreeMap<&'a str, usize> {
    let mut out = BTreeMap::new();
    for k in kinds {
        *out.entry(k.label()).or_insert(0) += 1;
    }
    out
}

/// `connect 2, timeout 1` (empty when there are none).
pub fn render_counts(counts: &BTreeMap<&str, usize>) -> String {
    counts
        .iter()
        .map(|(k, n)| format!("{k} {n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
#[path = "outcome_tests.rs"]
mod tests;
