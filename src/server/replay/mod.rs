//! `rtload serve --replay DIR`: the server side of a recording (`rtload run --record`)
//! played back with its original timing, to any number of clients at once. [`Replay`]
//! holds the recorded sessions as [`plan::Script`]s with every payload loaded once and
//! shared (`Bytes`); connections are given the measured sessions round-robin (warm-ups
//! only when nothing else was recorded). Each connection is one task that `select!`s
//! over inbound frames and the next due reply of its [`plan::ConnPlan`] (the matching
//! and timing rules are that module's), so replies keep their absolute times. A client
//! that departs from the recording beyond the tolerance gets an `error` event of type
//! `replay_diverged` and a close with 1008 (policy violation), and is counted in
//! `/metrics` (`rtload_server_replay_diverged_total`). The connection's round trip is
//! measured with [`PINGS`] WebSocket pings from its open (one at a time, the smallest
//! kept) for the plan to take off the recorded delays, and each reply's timer is aimed
//! early by the server's observed timer lag ([`lag`]). Pings are answered; a connection
//! with neither client messages nor due replies for `idle_timeout_s` is closed. Nothing
//! here reads files: the runner loads the recording (its `serve_replay`) and hands over
//! the scripts.

mod lag;
pub mod plan;

use std::sync::Arc;
use std::time::Duration;

use actix_web::{HttpRequest, HttpResponse, web};
use actix_ws::{AggregatedMessage, CloseCode, CloseReason, Session};
use tokio::time::{Instant, sleep_until};

use super::Flow;
use super::ws::{Conn, Endpoint, Inbound};
use plan::{ConnPlan, Reply, Script, Shape};

/// Pings sent from a connection's open to measure its round trip.
const PINGS: u8 = 3;

/// The round-trip pings of one connection: the one in flight and how many were sent.
struct Pinger {
    sent: u8,
    at: Option<Instant>,
}

impl Pinger {
    /// Sends the next ping (payload: its number), if any is left.
    async fn next(&mut self, session: &mut Session) -> Flow {
        if self.sent >= PINGS {
            return Flow::Continue;
        }
        self.sent += 1;
        self.at = Some(Instant::now());
        match session.ping(&[self.sent]).await {
            Ok(()) => Flow::Continue,
            Err(closed) => closed.into(),
        }
    }

    /// A pong arrived at `at`: the round trip of the ping it answers, if it answers ours.
    fn pong(&mut self, payload: &[u8], at: Instant) -> Option<Duration> {
        let sent = self.at.filter(|_| payload == [self.sent])?;
        self.at = None;
        Some(at.duration_since(sent))
    }
}

/// Why a replay could not be set up (before the server listens).
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// The recording could not be read or replayed: the message names the file and the fix.
    #[error("{0}")]
    Recording(String),
    /// An option is out of range.
    #[error("{0}")]
    Option(String),
}

/// How a replay runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ReplayOptions {
    /// Time scale of the server's replies: 2 answers twice as fast. Range (0, 1000].
    pub speed: f64,
    /// Departures from the recorded client messages a connection may make before it
    /// diverges (see [`plan`]).
    pub tolerance: u32,
}

impl Default for ReplayOptions {
    fn default() -> Self {
        ReplayOptions {
            speed: 1.0,
            tolerance: 0,
        }
    }
}

/// Upper bound of `--replay-speed`.
const MAX_SPEED: f64 = 1000.0;

/// A recording ready to be served: the sessions connections are given, in turn.
#[derive(Debug, Clone)]
pub struct Replay {
    sessions: Vec<Arc<Script>>,
    opts: ReplayOptions,
}

impl Replay {
    /// The sessions of a recording: the measured ones, or the warm-ups when there are
    /// no others. `what` names the recording in errors.
    pub fn new(
        scripts: Vec<Script>,
        opts: ReplayOptions,
        what: &str,
    ) -> Result<Replay, ReplayError> {
        if !(opts.speed > 0.0 && opts.speed <= MAX_SPEED) {
            return Err(ReplayError::Option(format!(
                "--replay-speed must be a number in (0, {MAX_SPEED}] (2 replays twice as \
fast), got {}",
                opts.speed
            )));
        }
        let measured = scripts.iter().any(|s| !s.warmup);
        let sessions: Vec<Arc<Script>> = (scripts.into_iter())
            .filter(|s| !measured || !s.warmup)
            .map(Arc::new)
            .collect();
        if sessions.is_empty() {
            return Err(ReplayError::Recording(format!(
                "{what}: the recording holds no session to replay: record a run that \
completes at least one session (rtload run SCENARIO --record DIR)"
            )));
        }
        Ok(Replay { sessions, opts })
    }

    /// The sessions served, in the order connections are given them.
    pub fn sessions(&self) -> Vec<usize> {
        self.sessions.iter().map(|s| s.idx).collect()
    }

    /// The options.
    pub fn options(&self) -> ReplayOptions {
        self.opts
    }

    /// The script of the connection with this ordinal (round-robin).
    fn pick(&self, ordinal: u64) -> Arc<Script> {
        let i = (ordinal % self.sessions.len() as u64) as usize;
        Arc::clone(&self.sessions[i])
    }
}

/// Shared state of the replay endpoint.
pub(crate) struct ReplayState {
    replay: Arc<Replay>,
    idle: Duration,
    lag: lag::TimerLag,
}

impl ReplayState {
    /// Serves `replay`, closing connections idle for `idle_timeout_s`.
    pub(crate) fn new(replay: Arc<Replay>, idle_timeout_s: f64) -> ReplayState {
        ReplayState {
            replay,
            idle: Duration::from_secs_f64(idle_timeout_s),
            lag: lag::TimerLag::default(),
        }
    }
}

/// Registers the replay endpoint on every path no other route takes.
pub(crate) fn register(svc: &mut web::ServiceConfig, state: web::Data<ReplayState>) {
    svc.app_data(state)
        .default_service(web::get().to(replay_endpoint));
}

async fn replay_endpoint(
    req: HttpRequest,
    body: web::Payload,
    state: web::Data<ReplayState>,
) -> Result<HttpResponse, actix_web::Error> {
    let ws = super::ws::accept(&req, body, Endpoint::Replay).await?;
    // A replayed session is its connection.
    let ordinal = ws.conn.session_started();
    let opts = state.replay.opts;
    let plan = ConnPlan::new(
        state.replay.pick(ordinal),
        opts.speed,
        opts.tolerance,
        Instant::now(),
    );
    let (session, stream, conn) = (ws.session, ws.stream, ws.conn);
    actix_web::rt::spawn(run(session, stream, plan, state, conn));
    Ok(ws.response)
}

/// The shape of a live text message: its JSON `type`, as the recorder reads it.
fn text_shape(text: &str) -> Shape {
    #[derive(serde::Deserialize)]
    struct Typed<'a> {
        #[serde(rename = "type", borrow, default)]
        ty: Option<std::borrow::Cow<'a, str>>,
    }
    let ty = text
        .trim_start()
        .starts_with('{')
        .then(|| serde_json::from_str::<Typed>(text).ok())
        .flatten()
        .and_then(|t| t.ty.map(std::borrow::Cow::into_owned));
    Shape { binary: false, ty }
}

/// Runs one connection to completion.
async fn run(
    mut session: Session,
    mut stream: Inbound,
    mut plan: ConnPlan,
    state: web::Data<ReplayState>,
    conn: Conn,
) {
    let idle = state.idle;
    let mut last = Instant::now();
    let mut pinger = Pinger { sent: 0, at: None };
    let mut flow = pinger.next(&mut session).await;
    while matches!(flow, Flow::Continue) {
        let lag = state.lag.get();
        let due = plan.next_due();
        let wake = due.map_or(last + idle, |t| t.checked_sub(lag).unwrap_or(t));
        // Only a timer that had to wait says how late timers fire.
        let timed = due.is_some() && wake > Instant::now();
        flow = tokio::select! {
            biased;
            msg = stream.recv() => {
                let at = Instant::now();
                last = at;
                let shape = match msg {
                    Some(Ok(AggregatedMessage::Text(text))) => Ok(text_shape(&text)),
                    Some(Ok(AggregatedMessage::Binary(_))) => Ok(Shape { binary: true, ty: None }),
                    Some(Ok(AggregatedMessage::Ping(p))) => Err(match session.pong(&p).await {
                        Ok(()) => Flow::Continue,
                        Err(closed) => closed.into(),
                    }),
                    Some(Ok(AggregatedMessage::Close(reason))) => Err(Flow::Close(reason)),
                    Some(Ok(AggregatedMessage::Pong(p))) => Err(match pinger.pong(&p, at) {
                        Some(rtt) => {
                            plan.round_trip(rtt);
                            pinger.next(&mut session).await
                        }
                        None => Flow::Continue,
                    }),
                    Some(Err(_)) | None => Err(Flow::Gone),
                };
                match shape {
                    Ok(shape) => on_client(&mut session, &mut plan, &shape, at, &conn).await,
                    Err(flow) => flow,
                }
            }
            () = sleep_until(wake) => {
                let now = Instant::now();
                if timed {
                    state.lag.observe(now.saturating_duration_since(wake));
                }
                let due = plan.pop_due(now + lag);
                if due.is_empty() && now >= last + idle && plan.next_due().is_none() {
                    Flow::Close(Some(CloseReason { code: CloseCode::Normal, description: Some("idle timeout".into()) }))
                } else {
                    if !due.is_empty() {
                        last = now;
                    }
                    send_all(&mut session, due).await
                }
            }
        };
    }
    if let Flow::Close(reason) = flow {
        let _ = session.close(reason).await;
    }
}

/// A live client message: matched, or the divergence answered and the connection closed.
async fn on_client(
    session: &mut Session,
    plan: &mut ConnPlan,
    shape: &Shape,
    at: Instant,
    conn: &Conn,
) -> Flow {
    let Err(diverged) = plan.on_client(shape, at) else {
        return Flow::Continue;
    };
    conn.replay_diverged();
    tracing::warn!("rtload serve --replay: {}", diverged.message);
    let event = serde_json::json!({
        "type": "error",
        "error": { "type": "replay_diverged", "message": diverged.message },
    });
    if let Err(closed) = session.text(event.to_string()).await {
        return closed.into();
    }
    Flow::Close(Some(CloseReason {
        code: CloseCode::Policy,
        description: Some("replay diverged".into()),
    }))
}

async fn send_all(session: &mut Session, due: Vec<Reply>) -> Flow {
    for reply in due {
        let sent = match reply {
            Reply::Text(t) => session.text(t).await,
            Reply::Binary(b) => session.binary(b).await,
            Reply::Close { code, reason } => {
                return Flow::Close(Some(CloseReason {
                    code: CloseCode::from(code),
                    description: reason,
                }));
            }
            Reply::Drop => return Flow::Gone,
        };
        if let Err(closed) = sent {
            return closed.into();
        }
    }
    Flow::Continue
}

#[cfg(test)]
mod tests;
