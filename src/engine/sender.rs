//! The sender role. **Owns** the socket's write half, the messages waiting to be
//! written (in the order the session emitted them), and the sample's lateness record:
//! `actual − intended` for every scheduled message, taken as the generator gets to it,
//! before its bytes are written.
//!
//! A message the session emits goes out **at once**, inside the turn that produced it,
//! when nothing waits: it is timed, framed into the shard's scratch buffer and written
//! with one non-blocking attempt (no allocation, no hop). Only what cannot go out that way
//! waits here: the rest of a write the socket did not take (backpressure), and every
//! message emitted behind it. [`Sender::drain`] writes what waits, in order, timing each
//! message when it gets to it — exactly as if each had been handed over one by one. The
//! sample's loop awaits it only while something waits; it is cancel-safe (a message is
//! framed into the connection's write buffer before any `.await`, and what a cancelled
//! flush left there is flushed next time).
//!
//! A failed write breaks the sender: nothing more is written, and the failure's message
//! is returned once, for the sample's outcome.
//!
//! When the run records (`--record`), the sender also **owns** the session's
//! [`Tape`]: it is where each message's send time is taken, so each outbound message is
//! taped there, at that time; the live phase tapes inbound events through
//! [`Sender::tape`].

use std::collections::VecDeque;

use actix_http::ws::ProtocolError;
use awc::ws::{CloseCode, Message};
use tokio::time::Instant;

use super::lateness::{LatenessLog, LatenessSetup};
use super::record::Tape;
use super::transport::{WsSink, to_message};
use crate::workload::OutMsg;
use crate::workload::spool::lateness::SentLateness;

/// Something waiting to be written.
enum Waiting {
    /// A session message (timed when the sender gets to it, if scheduled).
    Data(OutMsg),
    /// A control frame (a pong).
    Control(Message),
}

/// The sender role (see the module header).
pub struct Sender {
    sink: WsSink,
    waiting: VecDeque<Waiting>,
    /// The connection's write buffer holds bytes the socket has not taken yet.
    flushing: bool,
    broken: bool,
    /// A session message was written: the first one is traced.
    sent_any: bool,
    /// Lateness of every scheduled message so far, compact (see [`LatenessLog`]).
    lateness: LatenessLog,
    /// The session's wire trace, when the run records.
    tape: Option<Tape>,
}

impl Sender {
    /// A sender writing to `sink`.
    pub fn new(sink: WsSink) -> Self {
        Sender {
            sink,
            waiting: VecDeque::new(),
            flushing: false,
            broken: false,
            sent_any: false,
            lateness: LatenessLog::default(),
            tape: None,
        }
    }

    /// This sender, taping what it writes on `tape` (when the run records).
    pub fn with_tape(mut self, tape: Option<Tape>) -> Self {
        self.tape = tape;
        self
    }

    /// This sender, keeping its lateness as `setup` says (spilled to the run's spool,
    /// tallied against the generator bound, observed live).
    pub fn with_lateness(mut self, setup: LatenessSetup) -> Self {
        self.lateness = LatenessLog::new(setup);
        self
    }

    /// The session's tape, when the run records.
    pub fn tape(&mut self) -> Option<&mut Tape> {
        self.tape.as_mut()
    }

    /// The session's tape, taken out.
    pub fn take_tape(&mut self) -> Option<Tape> {
        self.tape.take()
    }

    /// Whether a message may go out at once: nothing waits and no write failed.
    pub fn idle(&self) -> bool {
        !self.flushing && self.waiting.is_empty() && !self.broken
    }

    /// Whether [`Sender::drain`] has work: something waits and no write failed.
    pub fn has_waiting(&self) -> bool {
        !self.broken && (self.flushing || !self.waiting.is_empty())
    }

    /// Sends `out` at once when nothing waits (timed now), else queues it behind what
    /// does. `Err`: the write failed (the sample's failure message); dropped silently
    /// once broken.
    pub fn send(&mut self, out: OutMsg) -> Result<(), String> {
        if !self.idle() {
            if !self.broken {
                self.waiting.push_back(Waiting::Data(out));
            }
            return Ok(());
        }
        self.record(&out, Instant::now());
        self.write_now(to_message(out.msg))
    }

    /// Answers a ping (at once when nothing waits, else behind what does). A pong that
    /// cannot be written is not the session's failure: its next message's write says so.
    pub fn pong(&mut self, payload: bytes::Bytes) {
        let msg = Message::Pong(payload);
        if self.idle() {
            if let Ok(all) = self.sink.send_now(msg) {
                self.flushing = !all;
            }
        } else if !self.broken {
            self.waiting.push_back(Waiting::Control(msg));
        }
    }

    /// One non-blocking attempt; what the socket did not take waits for the flush.
    fn write_now(&mut self, msg: Message) -> Result<(), String> {
        self.first_write();
        match self.sink.send_now(msg) {
            Ok(all) => {
                self.flushing = !all;
                Ok(())
            }
            Err(e) => Err(self.broke(&e)),
        }
    }

    /// Writes what waits, in order; resolves when nothing does. Cancel-safe.
    pub async fn drain(&mut self) -> Result<(), String> {
        if self.broken {
            return Ok(());
        }
        loop {
            if self.flushing {
                if let Err(e) = self.sink.flush().await {
                    return Err(self.broke(&e));
                }
                self.flushing = false;
            }
            let msg = match self.waiting.pop_front() {
                None => return Ok(()),
                Some(Waiting::Control(m)) => m,
                Some(Waiting::Data(out)) => {
                    self.record(&out, Instant::now());
                    self.first_write();
                    to_message(out.msg)
                }
            };
            // Framed into the write buffer now; written by the flush above.
            if let Err(e) = self.sink.encode(msg) {
                return Err(self.broke(&e));
            }
            self.flushing = true;
        }
    }

    /// Writes what waits, then a normal close frame, and shuts the write direction
    /// down. A failure here is not the session's: its outcome is decided already.
    pub async fn close(&mut self) {
        if self.broken || self.drain().await.is_err() {
            return;
        }
        tracing::debug!("close sent");
        if let Some(t) = &mut self.tape {
            t.closed(Instant::now(), CloseCode::Normal.into());
        }
        let _ = self
            .sink
            .send(Message::Close(Some(CloseCode::Normal.into())))
            .await;
        let _ = self.sink.close().await;
    }

    /// The lateness record, taken out unread (its spilled span, its bytes in memory, its
    /// tallies: no IO).
    pub fn take_lateness(&mut self) -> SentLateness {
        std::mem::take(&mut self.lateness).hand_over()
    }

    fn first_write(&mut self) {
        if !self.sent_any {
            self.sent_any = true;
            tracing::debug!("first send");
        }
    }

    fn broke(&mut self, e: &ProtocolError) -> String {
        self.broken = true;
        self.waiting.clear();
        format!("send failed: {e}")
    }

    /// Lateness of `out` written at `now` (when it was scheduled), and its tape entry.
    fn record(&mut self, out: &OutMsg, now: Instant) {
        if let Some(t) = &mut self.tape {
            t.outbound(now, out.intended, &out.msg);
        }
        if let Some(intended) = out.intended {
            self.lateness.push(now.saturating_duration_since(intended));
        }
    }
}

#[cfg(test)]
#[path = "sender_tests.rs"]
mod tests;
