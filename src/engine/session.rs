//! A sample's live phase: one local task on the sample's shard thread that **owns** the
//! workload's [`DynSession`] (the pure protocol state machine), the sample's outcome
//! once decided, the session's [`Wake`]-up, and the sample's roles — the [`Reader`]
//! (read half), the [`Sender`] (write half, what waits, lateness) and the [`Playback`]
//! (the listener simulation). Nothing here is shared: each value has this one owner.
//!
//! The task connects, opens the session, then waits on four things at once — a control
//! message from the sample supervisor (an interrupt), the sender's pending writes (only
//! while something waits), the wake-up (only while one is armed) and the reader's next
//! event — and hands each to the role whose job it is: a received message to the session
//! (with its receipt time), the session's [`Effects`] to the sender (messages, at once
//! when nothing waits), to playback (media, played as it arrives), to the wake-up and to
//! the live log. Roles on one shard thread talk by these typed hand-overs, not by
//! mailboxes: a mailbox hop per message cost about a tenth of a shard's CPU
//! (BENCHMARKS.md, "Sends go out from where the session emits them"). Once the outcome is
//! decided it stops reading, lets the sender write what waits and close, and returns
//! everything — session, outcome, lateness, playback summary — by value: nothing is left
//! behind in a child that might stop first.

use std::time::Duration;

use tokio::time::Instant;

use super::control::{Control, ControlRx};
use super::playback::Playback;
use super::progress::ProgressEvent;
use super::reader::{Reader, Received};
use super::record::Tape;
use super::sender::Sender;
use super::setup_cost::{OnCpu, thread_cpu_ns};
use super::tls::ClientTls;
use super::transport::{self, ReadEvent, Wire};
use super::wake::Wake;
use crate::workload::playback::PlaybackSummary;
use crate::workload::{ConnectSpec, DynSession, Effects, Failure, FailureKind};

/// Where and how the session connects, and how its listener buffers.
pub struct Setup {
    /// The run's target (the session may add to it).
    pub connect: ConnectSpec,
    /// Handshake bound.
    pub connect_timeout: Duration,
    /// The run's client TLS (for `wss://`).
    pub tls: Option<ClientTls>,
    /// Largest inbound frame or reassembled message.
    pub max_frame_bytes: usize,
    /// What the handshake offers, and the run's tally of what was agreed.
    pub wire: Wire,
    /// How the playback role buffers before it starts each stream, and where it spills.
    pub playback: super::playback::PlaybackSetup,
    /// Live log lines (`--print-chunks`), when enabled.
    pub lines: Option<crossbeam_channel::Sender<String>>,
    /// The session's wire trace, when the run records (`--record`).
    pub tape: Option<Tape>,
    /// How the sender keeps its lateness (spilled, tallied, observed live).
    pub lateness: super::lateness::LatenessSetup,
    /// Where the CPU spent connecting and sending the opening messages is added, when
    /// the run counts it.
    pub setup_cost: Option<super::setup_cost::SetupTally>,
    /// Where a measured sample's headline so far goes (`None`: nowhere).
    pub headline: Option<HeadlineFeed>,
}

/// A measured sample's headline so far, for the progress line: read from the session
/// after each inbound message, sent when it changed ([`ProgressEvent::HeadlineSoFar`]).
#[derive(Debug)]
pub struct HeadlineFeed {
    /// The sample's index in the run.
    pub idx: usize,
    /// The progress channel.
    pub tx: crossbeam_channel::Sender<ProgressEvent>,
    /// The value sent last.
    pub last: Option<f64>,
}

impl HeadlineFeed {
    /// Sends `ms` unless it is the value sent last (or not finite).
    fn offer(&mut self, ms: Option<f64>) {
        let Some(ms) = ms.filter(|v| v.is_finite()) else {
            return;
        };
        if self.last.is_some_and(|l| l.to_bits() == ms.to_bits()) {
            return;
        }
        self.last = Some(ms);
        let _ = self
            .tx
            .send(ProgressEvent::HeadlineSoFar { idx: self.idx, ms });
    }
}

/// How the live phase ended: everything it owned that the record needs.
pub struct Ended {
    /// The session, for its artifacts and typed output.
    pub session: Box<dyn DynSession>,
    /// The sample's outcome.
    pub outcome: Result<(), Failure>,
    /// When the socket opened (`None`: it never did).
    pub opened: Option<Instant>,
    /// Lateness of every scheduled message, as the sender handed it over (unread).
    pub send_lateness: crate::workload::spool::lateness::SentLateness,
    /// What the listener experienced (`None`: the socket never opened).
    pub playback: Option<PlaybackSummary>,
    /// The session's wire trace, when the run records.
    pub tape: Option<Tape>,
}

/// Runs the sample's live phase; `control` carries the supervisor's interrupts.
pub async fn run(setup: Setup, session: Box<dyn DynSession>, control: &mut ControlRx) -> Ended {
    let spec = session.connect(&setup.connect);
    tracing::debug!(url = %crate::util::target::redact_url(&spec.url), "connect");
    let connect = OnCpu::new(transport::connect(
        &spec,
        setup.connect_timeout,
        setup.tls.as_ref(),
        setup.max_frame_bytes,
        &setup.wire,
    ));
    let (connected, connect_cpu_ns) = tokio::select! {
        biased;
        Some(Control::Interrupt(msg)) = control.recv() => {
            (Err(Failure::new(FailureKind::Interrupted, msg)), 0)
        }
        (r, cpu_ns) = connect => (r.map_err(|e| e.failure()), cpu_ns),
    };
    let tally = setup.setup_cost;
    let (sink, stream) = match connected {
        Ok(halves) => halves,
        Err(outcome) => {
            if let Some(t) = &tally {
                t.add(connect_cpu_ns);
            }
            return not_connected(session, outcome, setup.tape);
        }
    };
    let opened = Instant::now();
    tracing::debug!("open");
    let mut tape = setup.tape;
    if let Some(t) = &mut tape {
        t.open(opened);
    }
    let mut live = Live {
        session,
        outcome: None,
        sender: Sender::new(sink)
            .with_tape(tape)
            .with_lateness(setup.lateness),
        playback: Playback::new(setup.playback, opened),
        wake: Wake::precise(),
        lines: setup.lines,
        headline: setup.headline,
        control_open: true,
        received_any: false,
    };
    // The session's opening messages go out before anything is read.
    let before_open = thread_cpu_ns();
    live.drive(|s, fx| s.on_open(opened, fx));
    if let Some(t) = &tally {
        t.add(connect_cpu_ns + thread_cpu_ns().saturating_sub(before_open));
    }
    let mut reader = Reader::new(stream, opened, setup.wire.receipts());
    live.until_decided(&mut reader, control).await;
    drop(reader);
    live.close(control).await;
    Ended {
        outcome: live.outcome.unwrap_or(Ok(())),
        opened: Some(opened),
        send_lateness: live.sender.take_lateness(),
        playback: Some(live.playback.finish()),
        tape: live.sender.take_tape(),
        session: live.session,
    }
}

/// The sample's end when its socket never opened (`outcome` says why), taped.
fn not_connected(session: Box<dyn DynSession>, outcome: Failure, mut tape: Option<Tape>) -> Ended {
    tracing::debug!(error = %outcome.message, "connect failed");
    if let Some(t) = &mut tape {
        t.failed(Instant::now(), false, &outcome);
    }
    Ended {
        session,
        outcome: Err(outcome),
        opened: None,
        send_lateness: Default::default(),
        playback: None,
        tape,
    }
}

/// The live phase's state: the session, its outcome and the roles it hands work to.
struct Live {
    session: Box<dyn DynSession>,
    outcome: Option<Result<(), Failure>>,
    sender: Sender,
    playback: Playback,
    wake: Wake,
    lines: Option<crossbeam_channel::Sender<String>>,
    headline: Option<HeadlineFeed>,
    /// The supervisor can still send control messages.
    control_open: bool,
    /// A data message arrived: the first one is traced.
    received_any: bool,
}

impl Live {
    /// Waits on the supervisor, the sender, the wake-up and the reader until the
    /// session's outcome is decided.
    async fn until_decided(&mut self, reader: &mut Reader, control: &mut ControlRx) {
        while self.outcome.is_none() {
            tokio::select! {
                biased;
                c = control.recv(), if self.control_open => self.control(c),
                r = self.sender.drain(), if self.sender.has_waiting() => {
                    if let Err(e) = r {
                        self.fail_taped(FailureKind::Transport, e, None);
                    }
                }
                now = self.wake.due(), if self.wake.armed() => {
                    if let Some(t) = self.sender.tape() {
                        t.wake(now);
                    }
                    self.drive(|s, fx| s.on_wake(now, fx));
                }
                rx = reader.next() => self.received(rx),
            }
        }
    }

    /// The outcome is decided: the sender writes what waits and closes, unless the
    /// supervisor interrupts again (the close then stops where it is).
    async fn close(&mut self, control: &mut ControlRx) {
        tokio::select! {
            biased;
            Some(_) = control.recv(), if self.control_open => {}
            () = self.sender.close() => {}
        }
    }

    fn control(&mut self, c: Option<Control>) {
        match c {
            Some(Control::Interrupt(msg)) => self.fail_taped(FailureKind::Interrupted, msg, None),
            None => self.control_open = false,
        }
    }

    /// One event from the reader, at its receipt time.
    fn received(&mut self, rx: Received) {
        let at = rx.at;
        match rx.event {
            Ok(ReadEvent::Data(msg)) => {
                if !self.received_any {
                    self.received_any = true;
                    tracing::debug!("first receive");
                }
                if let Some(t) = self.sender.tape() {
                    t.inbound(at, &msg);
                }
                self.drive(|s, fx| s.on_inbound(msg, at, fx));
                if let Some(feed) = &mut self.headline {
                    feed.offer(self.session.headline_so_far_ms());
                }
            }
            Ok(ReadEvent::Ping(payload)) => self.sender.pong(payload),
            Ok(ReadEvent::Nothing) => {}
            Ok(ReadEvent::Close(reason)) => {
                tracing::debug!(
                    reason = reason.as_deref().unwrap_or("none"),
                    "close received"
                );
                if let Some(t) = self.sender.tape() {
                    t.peer_closed(at, reason.as_deref());
                }
                let undecided = self.outcome.is_none();
                let try_later = reason.as_deref().is_some_and(is_try_again_later);
                self.drive(|s, fx| s.on_closed(at, reason, fx));
                after_close(&mut self.outcome, undecided, try_later);
            }
            Err(e) => self.fail_taped(FailureKind::Transport, e, Some(at)),
        }
    }

    /// Runs one session callback while the outcome is open, then carries out its effects.
    fn drive(&mut self, f: impl FnOnce(&mut dyn DynSession, &mut Effects)) {
        if self.outcome.is_some() {
            return;
        }
        let mut fx = Effects::default();
        f(self.session.as_mut(), &mut fx);
        self.apply(fx);
    }

    /// Decides the outcome as a failure of `kind` unless it is decided already, taped
    /// when it decides (the trace's `failed` event):
    /// `read_at` is the receipt stamp of a failed read (`None`: not a read, now).
    fn fail_taped(&mut self, kind: FailureKind, msg: String, read_at: Option<Instant>) {
        if self.outcome.is_some() {
            return;
        }
        let f = Failure::new(kind, msg);
        if let Some(t) = self.sender.tape() {
            t.failed(read_at.unwrap_or_else(Instant::now), read_at.is_some(), &f);
        }
        self.outcome = Some(Err(f));
    }

    /// Hands a session's effects to the roles whose job they are. A failed write fails
    /// the sample only after the session's own decision in the same effects.
    fn apply(&mut self, fx: Effects) {
        if let Some(tx) = &self.lines {
            for l in fx.lines {
                let _ = tx.send(l);
            }
        }
        let mut failed = None;
        for out in fx.outbound {
            if let Err(e) = self.sender.send(out) {
                failed.get_or_insert(e);
            }
        }
        for u in &fx.media {
            self.playback.play(u);
        }
        if let Some(at) = fx.wake_at {
            self.wake.arm(at);
        }
        if let Some(done) = fx.finish {
            self.outcome.get_or_insert(done);
        }
        if let Some(e) = failed {
            self.fail_taped(FailureKind::Transport, e, None);
        }
    }
}

/// What the peer's close decides once the session has seen it (the engine's rule, which
/// the recompute applies too): nothing more can arrive, so a session that did not decide
/// ends here as closed early — and as rejected when the outcome was open (`undecided`)
/// before the close and its code was 1013, "try again later" (`try_later`), whatever
/// the workload's message says about the close.
pub(crate) fn after_close(
    outcome: &mut Option<Result<(), Failure>>,
    undecided: bool,
    try_later: bool,
) {
    outcome.get_or_insert_with(|| {
        Err(Failure::new(
            FailureKind::ClosedEarly,
            "the connection closed before the session finished".to_string(),
        ))
    });
    if let (true, true, Some(Err(f))) = (undecided, try_later, outcome) {
        f.kind = FailureKind::Rejected;
    }
}

/// Whether a close reason as read (`"1013 busy"`) carries code 1013, "try again later"
/// (RFC 6455 §7.4, IANA registry).
pub(crate) fn is_try_again_later(reason: &str) -> bool {
    reason.split_whitespace().next() == Some("1013")
}

#[cfg(test)]
#[path = "session_tests.rs"]
mod tests;
