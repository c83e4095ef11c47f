//! The engine-facing session: a thin adapter from [`TranscriptionCore`] actions to the
//! seam's [`Effects`], and the record handed back at the end.

use std::sync::Arc;

use bytes::Bytes;
use tokio::time::Instant;

use super::protocol::{Actions, Cause, Record, Settings, TranscriptionCore};
use crate::workload::{Effects, FailureKind, Inbound, Outbound, Session};

/// What one finished session hands to the report.
#[derive(Debug, Clone)]
pub struct TranscriptionOutput {
    /// Index of the dataset item streamed.
    pub item: usize,
    /// What the session observed.
    pub record: Record,
}

/// One transcription session.
#[derive(Debug)]
pub struct TranscriptionSession {
    core: TranscriptionCore,
    item: usize,
}

impl TranscriptionSession {
    /// A session streaming `pcm` of dataset item `item`.
    pub fn new(settings: Arc<Settings>, pcm: Bytes, item: usize) -> Self {
        Self {
            core: TranscriptionCore::new(settings, pcm),
            item,
        }
    }
}

/// The seam's failure kind for a protocol failure cause.
pub fn failure_kind(cause: Cause) -> FailureKind {
    match cause {
        Cause::Timeout => FailureKind::Timeout,
        Cause::ServerError => FailureKind::ServerError,
        Cause::ClosedEarly => FailureKind::ClosedEarly,
        Cause::Protocol => FailureKind::Protocol,
    }
}

fn apply(a: Actions, fx: &mut Effects) {
    for (msg, intended) in a.send {
        fx.send(Outbound::Text(msg.into()), intended);
    }
    if let Some(w) = a.wake {
        fx.wake(w);
    }
    match a.finish {
        Some(Ok(())) => fx.succeed(),
        Some(Err((cause, e))) => fx.fail_as(failure_kind(cause), e),
        None => {}
    }
}

impl Session for TranscriptionSession {
    type Output = TranscriptionOutput;

    fn on_open(&mut self, now: Instant, fx: &mut Effects) {
        apply(self.core.on_open(now), fx);
    }

    fn on_inbound(&mut self, msg: Inbound, at: Instant, fx: &mut Effects) {
        match msg {
            Inbound::Text(t) => apply(self.core.on_text(&t, at), fx),
            Inbound::Binary(b) => apply(self.core.on_text(&String::from_utf8_lossy(&b), at), fx),
        }
    }

    fn on_wake(&mut self, now: Instant, fx: &mut Effects) {
        apply(self.core.on_wake(now), fx);
    }

    fn on_closed(&mut self, _at: Instant, reason: Option<String>, fx: &mut Effects) {
        apply(self.core.on_closed(reason.as_deref()), fx);
    }

    fn into_output(self) -> TranscriptionOutput {
        TranscriptionOutput {
            item: self.item,
            record: self.core.into_record(),
        }
    }
}
