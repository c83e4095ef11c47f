//! Typed sample outcomes: why a sample failed ([`FailureKind`]) next to the exact
//! message the reference clients print ([`Failure::message`]), so failures can be counted
//! per kind in results, progress and the terminal summary while every message stays
//! word for word what the spec asserts.

use std::collections::BTreeMap;

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
