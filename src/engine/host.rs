//! The session host: a sample's [`DynSession`] and the plumbing that carries out its
//! [`Effects`], shared on the sample's shard thread by the three places that drive the
//! session — the reader task (each inbound message, at its receipt time), the wake-up
//! timer (each requested wake-up) and the sample supervisor (open, interrupt, a failed
//! send, a crashed child).
//!
//! Driving the session where the event happens, instead of casting every message and
//! wake-up to the supervisor's mailbox, takes two actor hops (a boxed message, a channel
//! and a task wake each) off every received message and every wake-up; the messages the
//! session emits go out through its [`super::outbox`], at once when nothing waits. It stays
//! single-threaded: the host is an `Rc<RefCell<_>>` that never leaves the shard thread,
//! and no borrow of it is held across an `.await`, so the tasks that drive it take turns.

use std::cell::RefCell;
use std::rc::{Rc, Weak};

use ractor::{ActorCell, ActorRef};
use tokio::time::Instant;

use super::outbox::SendPath;
use super::roles::{PlaybackMsg, SenderMsg};
use super::wake::WakeTimer;
use crate::workload::{DynSession, Effects, Failure, FailureKind, MediaUnit};

/// Media units are handed to the playback role in batches of this many (and the rest
/// when the sample ends): playback only simulates at the end, and a message per unit
/// was a mailbox hop per received chunk.
const MEDIA_BATCH: usize = 32;

/// The host, shared on the shard thread.
pub type SharedHost = Rc<RefCell<Host>>;
/// What the reader and the timer hold: they stop driving once the sample is gone.
pub type WeakHost = Weak<RefCell<Host>>;

/// A sample's session and where its effects go.
pub struct Host {
    session: Option<Box<dyn DynSession>>,
    /// The sample's outcome, once decided (by the session, a failure or an interrupt).
    pub outcome: Option<Result<(), Failure>>,
    /// Where messages go (at once, or through the sender role), until shutdown begins.
    pub sender: Option<SendPath>,
    /// The playback role, until shutdown begins.
    pub playback: Option<ActorRef<PlaybackMsg>>,
    /// The reader role, until shutdown begins.
    pub reader: Option<ActorCell>,
    media: Vec<MediaUnit>,
    wake: Option<WakeTimer>,
    lines: Option<crossbeam_channel::Sender<String>>,
    me: WeakHost,
}

impl Host {
    /// A host for `session`; `lines` receives its live log lines (`--print-chunks`).
    pub fn new(
        session: Box<dyn DynSession>,
        lines: Option<crossbeam_channel::Sender<String>>,
    ) -> SharedHost {
        Rc::new_cyclic(|me| {
            RefCell::new(Host {
                session: Some(session),
                outcome: None,
                sender: None,
                playback: None,
                reader: None,
                media: Vec::new(),
                wake: None,
                lines,
                me: me.clone(),
            })
        })
    }

    /// The session, for what the supervisor asks of it outside the live phase (its
    /// connect target, its artifacts and typed output at the end).
    pub fn session_mut(&mut self) -> Option<&mut (dyn DynSession + 'static)> {
        self.session.as_deref_mut()
    }

    /// Takes the session out (when the sample reports).
    pub fn take_session(&mut self) -> Option<Box<dyn DynSession>> {
        self.session.take()
    }

    /// Runs one session callback while the sample's outcome is open, then carries out the
    /// effects it returned.
    pub fn drive(&mut self, f: impl FnOnce(&mut dyn DynSession, &mut Effects)) {
        if self.outcome.is_some() {
            return;
        }
        let mut fx = Effects::default();
        if let Some(s) = self.session.as_deref_mut() {
            f(s, &mut fx);
        }
        self.apply(fx);
    }

    /// Ends the sample with a failure of `kind` unless its outcome is already decided.
    pub fn fail(&mut self, kind: FailureKind, msg: String) {
        if self.outcome.is_some() {
            return;
        }
        let mut fx = Effects::default();
        fx.fail_as(kind, msg);
        self.apply(fx);
    }

    /// Carry out a session's effects.
    fn apply(&mut self, fx: Effects) {
        if let Some(tx) = &self.lines {
            for l in fx.lines {
                let _ = tx.send(l);
            }
        }
        if let Some(path) = &self.sender {
            for out in fx.outbound {
                path.send(out);
            }
        }
        if self.playback.is_some() {
            self.media.extend(fx.media);
            if self.media.len() >= MEDIA_BATCH {
                self.flush_media();
            }
        }
        if let Some(at) = fx.wake_at {
            let me = self.me.clone();
            self.wake
                .get_or_insert_with(|| WakeTimer::start(move || fire(&me)))
                .arm(at);
        }
        if let Some(done) = fx.finish {
            if self.outcome.is_none() {
                self.outcome = Some(done);
            }
            self.begin_shutdown();
        }
    }

    /// Ask every child to finish: the sender closes the socket, playback reports, the
    /// reader stops; the wake-up timer ends. Idempotent.
    pub fn begin_shutdown(&mut self) {
        if let Some(mut w) = self.wake.take() {
            w.disarm();
        }
        if let Some(path) = self.sender.take() {
            path.hand_over(SenderMsg::Close);
        }
        self.flush_media();
        if let Some(p) = self.playback.take() {
            let _ = p.cast(PlaybackMsg::Finish);
        }
        if let Some(r) = self.reader.take() {
            r.stop(None);
        }
    }

    /// Hand the buffered media units to playback (in order, ahead of any later message).
    fn flush_media(&mut self) {
        if let Some(p) = &self.playback
            && !self.media.is_empty()
        {
            let _ = p.cast(PlaybackMsg::Media(std::mem::take(&mut self.media)));
        }
    }
}

/// A requested wake-up came due: drive the session's `on_wake`. `false` once the sample
/// is gone (the timer task then ends).
fn fire(host: &WeakHost) -> bool {
    let Some(h) = host.upgrade() else {
        return false;
    };
    h.borrow_mut().drive(|s, fx| s.on_wake(Instant::now(), fx));
    true
}

#[cfg(test)]
#[path = "host_tests.rs"]
mod tests;
