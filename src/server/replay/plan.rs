//! The pure core of `rtload serve --replay`: one recorded session as a [`Script`] (what
//! the client sent, in order, and every server message anchored to the client message
//! it answered), and one live connection's [`ConnPlan`] over it (which recorded client
//! message each live one is, what is due to be sent when, or divergence). No socket, no
//! clock: times come in as arguments.
//!
//! **Anchoring.** Each recorded server event is anchored to the latest client message
//! recorded before it (by `t_s`), or to the open when none was; its delay is
//! `t_reply - t_anchor`. Live, it is sent at `live_anchor + delay / speed`, where the
//! live anchor is the moment the matching live client message arrived (or the
//! connection opened). The recorded delay holds one network round trip (the client
//! stamped both ends: its send, its receipt), which the live path adds again, so the
//! live connection's round trip (measured by the socket side with WebSocket pings,
//! [`ConnPlan::round_trip`]) is subtracted from it, down to 0: the live client then
//! measures the recorded delay. Server events go out in recorded order: one whose anchor has not
//! arrived holds back those after it. Events recorded after the client's own close are
//! not replayed (the close handshake answers that close).
//!
//! **Matching.** A live client message is matched by kind (text or binary) and JSON
//! `type` against the next recorded client message. With a tolerance of `T` (default
//! 0), a connection may spend `T` departures in all: a live message that matches the
//! recorded one `k` places ahead skips the `k` recorded messages in between (spending
//! `k`; what was anchored to them counts from now), and a live message that matches
//! none of the next `T - used + 1` is ignored as unexpected (spending 1). A departure
//! beyond the tolerance is [`Diverged`].

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use bytestring::ByteString;
use tokio::time::Instant;

/// What a client message is, for matching: its kind and its JSON `type`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shape {
    /// A binary message (else text).
    pub binary: bool,
    /// The JSON `type` of a text message that is an object with one.
    pub ty: Option<String>,
}

impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.binary, &self.ty) {
            (true, _) => f.write_str("a binary message"),
            (false, Some(ty)) => write!(f, "text {ty:?}"),
            (false, None) => f.write_str("text without a JSON type"),
        }
    }
}

/// What the server sends: payloads are shared, never copied per connection.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// A text message.
    Text(ByteString),
    /// A binary message.
    Binary(Bytes),
    /// A close frame with this code and reason; the connection ends.
    Close {
        /// Status code.
        code: u16,
        /// Reason.
        reason: Option<String>,
    },
    /// The stream ended without a close frame; the connection is dropped.
    Drop,
}

/// One event of a recorded session, as the loader hands it over.
#[derive(Debug, Clone, PartialEq)]
pub enum Recorded {
    /// The upgrade completed.
    Open {
        /// Seconds on the recording's clock.
        t_s: f64,
    },
    /// The client sent a message.
    Client {
        /// When the client wrote it.
        t_s: f64,
        /// What it was.
        shape: Shape,
    },
    /// The client closed.
    ClientClose {
        /// When.
        t_s: f64,
    },
    /// The server sent this (a message, or its close).
    Server {
        /// When the client received it.
        t_s: f64,
        /// What.
        reply: Reply,
    },
}

/// A server event and its anchor.
#[derive(Debug, Clone)]
struct Step {
    /// Index of the client message it answers; `None`: the open.
    anchor: Option<usize>,
    /// Recorded seconds from its anchor.
    after_s: f64,
    reply: Reply,
}

/// One recorded session, ready to be replayed by any number of connections.
#[derive(Debug, Clone)]
pub struct Script {
    /// The session's sample index in the recording.
    pub idx: usize,
    /// A warm-up session.
    pub warmup: bool,
    client: Vec<Shape>,
    steps: Vec<Step>,
}

impl Script {
    /// The script of session `idx` from its events, in recorded order.
    pub fn new(idx: usize, warmup: bool, events: Vec<Recorded>) -> Script {
        let mut open_t = None;
        let mut client: Vec<Shape> = Vec::new();
        let mut last: Option<(usize, f64)> = None;
        let mut steps = Vec::new();
        for ev in events {
            match ev {
                Recorded::Open { t_s } => open_t = open_t.or(Some(t_s)),
                Recorded::Client { t_s, shape } => {
                    last = Some((client.len(), t_s));
                    client.push(shape);
                }
                Recorded::ClientClose { .. } => break,
                Recorded::Server { t_s, reply } => {
                    let from = last.map_or_else(|| *open_t.get_or_insert(t_s), |(_, t)| t);
                    steps.push(Step {
                        anchor: last.map(|(i, _)| i),
                        after_s: (t_s - from).max(0.0),
                        reply,
                    });
                }
            }
        }
        Script {
            idx,
            warmup,
            client,
            steps,
        }
    }

    /// Client messages recorded.
    pub fn client_messages(&self) -> usize {
        self.client.len()
    }

    /// Server events to replay.
    pub fn server_events(&self) -> usize {
        self.steps.len()
    }
}

/// A live client departed from the recording beyond the tolerance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diverged {
    /// What was expected and what came, naming the recorded message and session.
    pub message: String,
}

/// One live connection replaying a [`Script`].
#[derive(Debug)]
pub struct ConnPlan {
    script: Arc<Script>,
    speed: f64,
    tolerance: u32,
    /// Departures spent.
    used: u32,
    /// Live arrival time of each recorded client message consumed so far.
    live: Vec<Instant>,
    /// Live client messages seen.
    seen: u64,
    open: Instant,
    /// The live round trip, taken off every delay.
    rtt: Duration,
    /// Next step to send.
    next: usize,
    /// A close (or drop) was sent: nothing more.
    ended: bool,
}

impl ConnPlan {
    /// A connection opened at `open` replaying `script` at `speed` (> 0) with
    /// `tolerance` departures allowed.
    pub fn new(script: Arc<Script>, speed: f64, tolerance: u32, open: Instant) -> ConnPlan {
        ConnPlan {
            live: Vec::with_capacity(script.client.len()),
            script,
            speed,
            tolerance,
            used: 0,
            seen: 0,
            open,
            rtt: Duration::ZERO,
            next: 0,
            ended: false,
        }
    }

    /// A measured round trip of the live connection: the smallest so far is taken off
    /// every recorded delay (see the module header).
    pub fn round_trip(&mut self, rtt: Duration) {
        if !rtt.is_zero() && (self.rtt.is_zero() || rtt < self.rtt) {
            self.rtt = rtt;
        }
    }

    /// A live client message of `shape` arrived at `now`.
    pub fn on_client(&mut self, shape: &Shape, now: Instant) -> Result<(), Diverged> {
        self.seen += 1;
        let cursor = self.live.len();
        let budget = (self.tolerance - self.used) as usize;
        let mut ahead = self.script.client.iter().skip(cursor).take(budget + 1);
        if let Some(k) = ahead.position(|s| s == shape) {
            self.used += k as u32;
            self.live.extend(std::iter::repeat_n(now, k + 1));
            return Ok(());
        }
        if self.used < self.tolerance {
            self.used += 1;
            return Ok(());
        }
        Err(self.diverged(shape))
    }

    fn diverged(&self, got: &Shape) -> Diverged {
        let (cursor, s) = (self.live.len(), &self.script);
        let expected = match s.client.get(cursor) {
            Some(want) => format!(
                "expected {want} (recorded client message {} of session {})",
                cursor + 1,
                s.idx
            ),
            None => format!(
                "expected no more client messages (session {} recorded {})",
                s.idx,
                s.client.len()
            ),
        };
        Diverged {
            message: format!(
                "replay diverged: {expected}, got {got} (client message {} of this \
connection); {} departure(s) allowed (--replay-tolerance), all spent",
                self.seen, self.tolerance
            ),
        }
    }

    /// When the next server event is due; `None` while it waits for its client message
    /// (or when nothing is left).
    pub fn next_due(&self) -> Option<Instant> {
        if self.ended {
            return None;
        }
        let step = self.script.steps.get(self.next)?;
        let anchor = match step.anchor {
            None => self.open,
            Some(i) => *self.live.get(i)?,
        };
        let after = Duration::from_secs_f64(step.after_s / self.speed);
        Some(anchor + after.saturating_sub(self.rtt))
    }

    /// The server events due at `now`, in order (a close or drop ends the list and the
    /// replay).
    pub fn pop_due(&mut self, now: Instant) -> Vec<Reply> {
        let mut out = Vec::new();
        while self.next_due().is_some_and(|t| t <= now) {
            let reply = self.script.steps[self.next].reply.clone();
            self.next += 1;
            self.ended = matches!(reply, Reply::Close { .. } | Reply::Drop);
            out.push(reply);
        }
        out
    }

    /// Every recorded server event was sent.
    #[cfg(test)]
    pub fn finished(&self) -> bool {
        self.ended || self.next == self.script.steps.len()
    }
}

#[cfg(test)]
#[path = "plan_tests.rs"]
mod tests;
