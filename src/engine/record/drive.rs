//! One recorded session driven again in virtual time (`rtload report --recompute`): the
//! workload's [`DynSession`] — the same pure state machine the live phase owned — is
//! handed the trace's inputs at their recorded stamps: the open, each inbound message
//! with its receipt stamp, each wake-up at the time it fired, the peer's close, and the
//! failures the engine decided itself. What it emits is checked against the trace:
//! every recorded outbound message must be the next one the session emitted (same
//! payload — or, for a JSON text, the same `type`: see [`same_message`] —, same intended
//! time), and its recorded write time gives its send lateness,
//! as the sender took it. The listener is simulated by the same [`Playback`] role, the
//! outcome decided by the same rules; the result is the sample's [`SampleRecord`],
//! with the session's output in its run's store, as the live phase leaves it.
//!
//! Pure: no socket, no clock, no file — times are the trace's, payloads come through
//! the caller's `payload` function. Virtual instants are `origin + t_s` (a `t_s` read
//! back from the trace is the nanosecond it was written from, so every difference the
//! session takes is the live one).

use std::collections::VecDeque;
use std::path::PathBuf;
use std::time::Duration;

use bytes::Bytes;
use sha2::{Digest, Sha256};
use tokio::time::Instant;

use super::read::{Dir, Kind, SessionTrace, TraceError, TraceEvent};
use super::{failure_kind, hex};
use crate::engine::playback::Playback;
use crate::workload::playback::PlaybackConfig;
use crate::workload::{
    ByteString, DynSession, Effects, Failure, FailureKind, Inbound, OutMsg, Outbound, SampleRecord,
};

/// Intended times further apart than this between the run and the recompute are a
/// divergence (the trace's seconds carry nanoseconds; a microsecond is far from noise).
const INTENDED_TOLERANCE_S: f64 = 1e-6;

/// Why a session could not be driven again.
#[derive(Debug, thiserror::Error)]
pub enum DriveError {
    /// A payload could not be read back.
    #[error(transparent)]
    Trace(#[from] TraceError),
    /// The trace cannot be recomputed as it is (cut by a cap, written before the engine
    /// recorded its sample facts).
    #[error("{path}: {msg}")]
    Incomplete {
        /// The session file.
        path: PathBuf,
        /// What is missing and the fix.
        msg: String,
    },
    /// The session did something other than what the trace recorded.
    #[error("{path}:{line}: the recompute diverged from the recording: {msg}")]
    Diverged {
        /// The session file.
        path: PathBuf,
        /// The event's line in the file (1-based; line 1 is the header).
        line: usize,
        /// What differs.
        msg: String,
    },
}

/// Drives `session` through `trace` (see the module header). `origin` is the virtual
/// instant of the run's start; `payload` reads an event's payload (the trace's store).
pub fn drive(
    trace: &SessionTrace,
    session: Box<dyn DynSession>,
    playback: PlaybackConfig,
    origin: Instant,
    payload: &dyn Fn(&TraceEvent) -> Result<Option<Bytes>, TraceError>,
) -> Result<SampleRecord, DriveError> {
    let incomplete = |msg: &str| DriveError::Incomplete {
        path: trace.path.clone(),
        msg: msg.to_string(),
    };
    let summary = whole(trace)?;
    let facts = (summary.sample.clone()).ok_or_else(|| {
        incomplete("no `sample` in the summary line: recorded by an rtload before recompute existed; record it again")
    })?;
    let mut rec = SampleRecord {
        idx: trace.idx,
        warmup: trace.warmup,
        session: None,
        scheduled_s: facts.scheduled_s,
        queue_wait_s: facts.queue_wait_s,
        started_s: facts.started_s,
        opened_s: None,
        ended_s: facts.ended_s,
        outcome: Ok(()),
        send_lateness_s: Vec::new(),
        send_lateness: Default::default(),
        playback: None,
        output: None,
    };
    let recorded = match &facts.failure {
        Some(f) => Some(f.failure().ok_or_else(|| {
            incomplete(&format!(
                "unknown failure kind {:?}: recorded by a newer rtload",
                f.kind
            ))
        })?),
        None => None,
    };
    if summary.crashed {
        // The live phase panicked: its session and tape were lost with it.
        rec.outcome =
            Err(recorded.unwrap_or_else(|| Failure::new(FailureKind::Crashed, "crashed")));
        return Ok(rec);
    }
    let mut r = Replay::new(session, playback, origin);
    for (i, ev) in trace.events.iter().enumerate() {
        r.event(ev, payload).map_err(|msg| DriveError::Diverged {
            path: trace.path.clone(),
            line: i + 2,
            msg,
        })?;
    }
    let outcome = r.outcome.take().unwrap_or(Ok(()));
    let label = |o: &Result<(), Failure>| o.as_ref().err().map_or("success", |f| f.kind.label());
    let was = recorded.map_or(Ok(()), Err);
    if label(&outcome) != label(&was) {
        return Err(DriveError::Diverged {
            path: trace.path.clone(),
            line: trace.events.len() + 2,
            msg: format!(
                "the run's outcome was {}, the recompute's is {}",
                label(&was),
                label(&outcome)
            ),
        });
    }
    rec.opened_s = r.opened_s;
    rec.outcome = outcome;
    // Kept and read back as the live run's are (nothing spilled: there is no spool).
    rec.send_lateness = r.lateness.hand_over();
    crate::workload::spool::lateness::restore_sample(&mut rec, None);
    rec.playback = r.playback.map(Playback::finish);
    r.session.finish();
    rec.output = Some(());
    Ok(rec)
}

/// The summary of a trace a recompute can use: one whose file ends with its summary and
/// that no cap cut (no event dropped, every received payload in the store).
fn whole(trace: &SessionTrace) -> Result<&super::SessionSummary, DriveError> {
    let incomplete = |msg: &str| DriveError::Incomplete {
        path: trace.path.clone(),
        msg: msg.to_string(),
    };
    let summary = (trace.summary.as_ref()).ok_or_else(|| {
        incomplete("the file ends before its summary line: the run was killed while writing it; a recompute needs every session whole")
    })?;
    if summary.events_dropped > 0 {
        return Err(incomplete(
            "--record-max-events cut this trace: record again with a larger cap",
        ));
    }
    let kept_out = |e: &TraceEvent| e.dir == Dir::In && e.stored == Some(false);
    if trace.events.iter().any(kept_out) {
        return Err(incomplete(
            "--record-max-bytes kept received payloads of this trace out of the store: \
record again with a larger cap",
        ));
    }
    Ok(summary)
}

/// The live phase's state, in virtual time.
struct Replay {
    session: Box<dyn DynSession>,
    cfg: PlaybackConfig,
    origin: Instant,
    outcome: Option<Result<(), Failure>>,
    /// Emitted, not yet matched to a recorded write (the sender's order).
    pending: VecDeque<OutMsg>,
    wake: Option<Instant>,
    opened_s: Option<f64>,
    playback: Option<Playback>,
    lateness: crate::engine::lateness::LatenessLog,
}

impl Replay {
    fn new(session: Box<dyn DynSession>, cfg: PlaybackConfig, origin: Instant) -> Replay {
        Replay {
            session,
            cfg,
            origin,
            outcome: None,
            pending: VecDeque::new(),
            wake: None,
            opened_s: None,
            playback: None,
            lateness: Default::default(),
        }
    }

    fn at(&self, t_s: f64) -> Instant {
        self.origin + secs(t_s)
    }

    /// One recorded event; `Err`: how the session diverged.
    fn event(
        &mut self,
        ev: &TraceEvent,
        payload: &dyn Fn(&TraceEvent) -> Result<Option<Bytes>, TraceError>,
    ) -> Result<(), String> {
        let at = self.at(ev.t_s);
        match (ev.dir, &ev.kind) {
            (_, Kind::Open) => {
                if self.opened_s.is_some() {
                    return Err("a second open".into());
                }
                self.opened_s = Some(ev.t_s);
                let setup = super::super::playback::PlaybackSetup {
                    cfg: self.cfg,
                    spool: None,
                };
                self.playback = Some(Playback::new(setup, at));
                self.drive(|s, fx| s.on_open(at, fx));
            }
            (Dir::In, Kind::Text | Kind::Binary) => {
                if self.outcome.is_some() {
                    return Err("a message read after the outcome was decided".into());
                }
                let bytes = payload(ev).map_err(|e| e.to_string())?.unwrap_or_default();
                let msg = if ev.kind == Kind::Text {
                    Inbound::Text(ByteString::try_from(bytes).map_err(|e| e.to_string())?)
                } else {
                    Inbound::Binary(bytes)
                };
                self.drive(|s, fx| s.on_inbound(msg, at, fx));
            }
            (_, Kind::Wake) => match self.wake.take() {
                Some(w) if w <= at => self.drive(|s, fx| s.on_wake(at, fx)),
                Some(_) => return Err("a wake-up fired before the time the session asked".into()),
                None => return Err("a wake-up the session did not ask for".into()),
            },
            (Dir::In, Kind::Close) => self.peer_closed(ev, at),
            (Dir::Out, Kind::Text | Kind::Binary) => self.written(ev, payload)?,
            (_, Kind::Failed) => {
                let label = ev.failure.as_deref().unwrap_or_default();
                let kind = failure_kind(label, ev.code)
                    .ok_or_else(|| format!("unknown failure kind {label:?}"))?;
                let why = ev.reason.clone().unwrap_or_default();
                self.outcome.get_or_insert(Err(Failure::new(kind, why)));
            }
            (Dir::Out, Kind::Close) | (_, Kind::Other) => {}
        }
        Ok(())
    }

    /// The peer's close, as the live phase handles it.
    fn peer_closed(&mut self, ev: &TraceEvent, at: Instant) {
        let reason = match (ev.frame, ev.code) {
            (Some(false), _) | (_, None) => None,
            (_, Some(code)) => Some(match ev.reason.as_deref() {
                Some(why) => format!("{code} {why}"),
                None => code.to_string(),
            }),
        };
        let undecided = self.outcome.is_none();
        let try_later = (reason.as_deref()).is_some_and(crate::engine::session::is_try_again_later);
        self.drive(|s, fx| s.on_closed(at, reason, fx));
        crate::engine::session::after_close(&mut self.outcome, undecided, try_later);
    }

    /// A recorded write: the next message the session emitted, its lateness taken at the
    /// recorded write time.
    fn written(
        &mut self,
        ev: &TraceEvent,
        payload: &dyn Fn(&TraceEvent) -> Result<Option<Bytes>, TraceError>,
    ) -> Result<(), String> {
        let Some(out) = self.pending.pop_front() else {
            return Err(format!(
                "rtload wrote a {} message the session did not emit",
                ev.ty.as_deref().unwrap_or("binary")
            ));
        };
        let (bytes, text) = match &out.msg {
            Outbound::Text(s) => (s.as_bytes().clone(), true),
            Outbound::Binary(b) => (b.clone(), false),
        };
        let same = ev.sha256.as_deref() == Some(hex(&Sha256::digest(&bytes)).as_str())
            || (text && ev.kind == Kind::Text && same_message(ev, &bytes, payload));
        if !same {
            return Err(format!(
                "the session emitted a different message than the one written ({} of {} bytes \
where the trace has {} of {} bytes)",
                if text { "text" } else { "binary" },
                bytes.len(),
                ev.ty.as_deref().unwrap_or("a message"),
                ev.bytes.unwrap_or(0),
            ));
        }
        let intended = out
            .intended
            .map(|i| i.duration_since(self.origin).as_secs_f64());
        match (intended, ev.intended_s) {
            (None, None) => {}
            (Some(now), Some(then)) if (now - then).abs() <= INTENDED_TOLERANCE_S => {
                let late = secs(ev.t_s).saturating_sub(secs(then));
                self.lateness.push(late);
            }
            (now, then) => {
                return Err(format!(
                    "the message's intended send time differs: {then:?} s in the run, {now:?} s now"
                ));
            }
        }
        Ok(())
    }

    /// Runs one session callback while the outcome is open, then carries out its effects.
    fn drive(&mut self, f: impl FnOnce(&mut dyn DynSession, &mut Effects)) {
        if self.outcome.is_some() {
            return;
        }
        let mut fx = Effects::default();
        f(self.session.as_mut(), &mut fx);
        self.pending.extend(fx.outbound);
        if let Some(p) = &mut self.playback {
            for u in &fx.media {
                p.play(u);
            }
        }
        if let Some(at) = fx.wake_at {
            self.wake = Some(at);
        }
        if let Some(done) = fx.finish {
            self.outcome.get_or_insert(done);
        }
    }
}

/// Whether a written text whose digest differs from the emitted one is the same message
/// all the same: both JSON objects of the same `type`, and of the same length unless the
/// stored text holds the redaction marker. Their other bytes may differ for two honest
/// reasons — the session draws a fresh value per run (a scripted `${uuid}`: same
/// length), or the recording scrubbed a secret from the written one — neither of which a
/// metric reads.
fn same_message(
    ev: &TraceEvent,
    emitted: &[u8],
    payload: &dyn Fn(&TraceEvent) -> Result<Option<Bytes>, TraceError>,
) -> bool {
    if ev.ty.is_none() || ev.ty != super::tape::json_type(emitted) {
        return false;
    }
    let marker = crate::util::target::REDACTED.as_bytes();
    ev.bytes == Some(emitted.len())
        || (payload(ev).ok().flatten())
            .is_some_and(|b| b.windows(marker.len()).any(|w| w == marker))
}

/// Seconds read back from the trace as the duration they were written from.
fn secs(t_s: f64) -> Duration {
    Duration::try_from_secs_f64(t_s.max(0.0)).unwrap_or_default()
}

#[cfg(test)]
#[path = "drive_tests.rs"]
mod tests;
