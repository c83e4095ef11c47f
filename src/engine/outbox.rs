//! A sample's outbox: what the session host and the sender role share to put the
//! session's messages on the wire in order, with each one's lateness recorded.
//!
//! A message the session emits goes out **at once** from the host (inside the reader's or
//! the timer's turn that produced it) when nothing is waiting for the sender: it is
//! timestamped, encoded and written with one non-blocking attempt. Only what cannot go out
//! that way is handed to the sender role's mailbox: a message behind others still waiting,
//! the rest of a write the socket did not take at once (backpressure), a failed write, a
//! pong, the close. Before this, every message took a mailbox hop (a boxed message, a
//! channel, a task wake-up) to reach the socket: about a tenth of a shard's CPU in the
//! 500-session duplex profile.
//!
//! The order on the wire is the order the session emitted: the host writes directly only
//! while nothing waits ([`Outbox::idle`]), and the sender handles what waits in mailbox
//! order. Lateness keeps its meaning — the moment the generator got to the message, before
//! its bytes are written — on both paths: a message behind a blocked write is timed when
//! the sender gets to it, exactly as when every message went through the sender.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use actix_http::ws::ProtocolError;
use awc::ws::Message;
use ractor::ActorRef;
use tokio::time::Instant;

use super::roles::SenderMsg;
use super::transport::{WsSink, to_message};
use crate::workload::OutMsg;

/// The write half and the sender's bookkeeping, shared on the shard thread.
pub struct Outbox {
    sink: WsSink,
    /// Messages handed to the sender that it has not finished with (a queued message, a
    /// write still flushing, a failure to report, a pong).
    waiting: Cell<usize>,
    /// A write failed: nothing more is sent.
    broken: Cell<bool>,
    lateness_s: RefCell<Vec<f64>>,
}

/// The outcome of one attempt to send at once.
#[derive(Debug, PartialEq)]
enum Direct {
    /// Every byte went out.
    Sent,
    /// Encoded, but part of it waits in the write buffer.
    Flushing,
    /// The write failed (the message for the session's failure).
    Failed(String),
}

impl Outbox {
    /// An outbox writing to `sink`.
    pub fn new(sink: WsSink) -> Rc<Self> {
        Rc::new(Self {
            sink,
            waiting: Cell::new(0),
            broken: Cell::new(false),
            lateness_s: RefCell::new(Vec::new()),
        })
    }

    /// Whether a message may go out at once: nothing waits for the sender and no write
    /// has failed.
    pub fn idle(&self) -> bool {
        self.waiting.get() == 0 && !self.broken.get()
    }

    /// Whether a write failed.
    pub fn is_broken(&self) -> bool {
        self.broken.get()
    }

    /// The lateness samples so far (seconds), taken out.
    pub fn take_lateness(&self) -> Vec<f64> {
        std::mem::take(&mut self.lateness_s.borrow_mut())
    }

    /// Sends `out` at once if nothing waits (its lateness timed at `now`). Otherwise —
    /// something waits, or the socket did not take all of it, or the write failed — the
    /// message the sender must be handed, already counted as waiting.
    fn route(&self, out: OutMsg, now: Instant) -> Option<SenderMsg> {
        let msg = if self.idle() {
            match self.send_now(out, now) {
                Direct::Sent => return None,
                Direct::Flushing => SenderMsg::Flush,
                Direct::Failed(e) => SenderMsg::Failed(e),
            }
        } else {
            SenderMsg::Send(out)
        };
        self.count_waiting();
        Some(msg)
    }

    /// One more message handed to the sender.
    fn count_waiting(&self) {
        self.waiting.set(self.waiting.get() + 1);
    }

    /// Records `out`'s lateness at `now`, then encodes and writes it with one attempt.
    fn send_now(&self, out: OutMsg, now: Instant) -> Direct {
        self.record(out.intended, now);
        match self.sink.send_now(to_message(out.msg)) {
            Ok(true) => Direct::Sent,
            Ok(false) => Direct::Flushing,
            Err(e) => Direct::Failed(send_failed(&e)),
        }
    }

    /// The sender's path for a queued message: lateness now, then the awaited write.
    pub async fn send_queued(&self, out: OutMsg) -> Result<(), String> {
        self.record(out.intended, Instant::now());
        self.sink
            .send(to_message(out.msg))
            .await
            .map_err(|e| send_failed(&e))
    }

    /// The sender's path for the rest of a write the socket did not take at once.
    pub async fn flush(&self) -> Result<(), String> {
        self.sink.flush().await.map_err(|e| send_failed(&e))
    }

    /// The sender's path for anything else (a pong, the close frame).
    pub async fn send_control(&self, msg: Message) -> Result<(), ProtocolError> {
        self.sink.send(msg).await
    }

    /// Flushes and shuts the write direction down.
    pub async fn close(&self) -> Result<(), ProtocolError> {
        self.sink.close().await
    }

    /// The sender finished with one message it was handed.
    pub fn done_one(&self) {
        self.waiting.set(self.waiting.get().saturating_sub(1));
    }

    /// No more writes: one failed.
    pub fn mark_broken(&self) {
        self.broken.set(true);
    }

    fn record(&self, intended: Option<Instant>, now: Instant) {
        if let Some(intended) = intended {
            let late = now.saturating_duration_since(intended).as_secs_f64();
            self.lateness_s.borrow_mut().push(late);
        }
    }
}

/// Where a sample's messages go: the outbox, and the sender role for what must wait.
#[derive(Clone)]
pub struct SendPath {
    /// The shared write half and bookkeeping.
    pub outbox: Rc<Outbox>,
    /// The sender role.
    pub sender: ActorRef<SenderMsg>,
}

impl SendPath {
    /// Sends `out` at once if nothing waits, else queues it behind what does.
    pub fn send(&self, out: OutMsg) {
        if let Some(msg) = self.outbox.route(out, Instant::now()) {
            self.deliver(msg);
        }
    }

    /// Gives `msg` to the sender role; nothing is sent at once until it is done with it.
    pub fn hand_over(&self, msg: SenderMsg) {
        self.outbox.count_waiting();
        self.deliver(msg);
    }

    /// Casts `msg` (already counted as waiting) to the sender.
    fn deliver(&self, msg: SenderMsg) {
        if self.sender.cast(msg).is_err() {
            // The sender is gone (it stopped after a failure or the close): nothing waits.
            self.outbox.done_one();
        }
    }
}

/// The session's failure message for a write that failed.
fn send_failed(e: &ProtocolError) -> String {
    format!("send failed: {e}")
}

#[cfg(test)]
#[path = "outbox_tests.rs"]
mod tests;
