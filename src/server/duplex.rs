//! Socket side of the duplex speech endpoint `/v1/realtime` (spec §1, server role): one
//! task per connection that `select!`s over the inbound stream and the next due action
//! of the session's [`DuplexPlan`] (absolute offsets from `session.update`, so pacing
//! never drifts). Every event sent after `session.update` is stamped with
//! `server_sent_at_s` (seconds since that update was received) right before the write.
//!
//! Before `session.update` only `session.close` is accepted besides it; anything else
//! gets an `error` event and the socket stays open. With neither a client message nor a
//! scheduled send for the idle timeout (the update's `session.idle_timeout_s`, else the
//! server's `idle_timeout_s`) the session gets `session.expired` (reason `idle_timeout`)
//! and is closed. Query parameters of the upgrade (`duplex`, `model`, `session_id`, …)
//! are accepted; `session_id` names the session when the update gives none.

use std::collections::HashMap;

use actix_web::{HttpRequest, HttpResponse, web};
use actix_ws::{AggregatedMessage, CloseCode, CloseReason};
use serde_json::{Value, json};
use tokio::time::{Instant, sleep_until};

use super::Flow;
use super::config::{DuplexServerConfig, ServerConfig};
use super::duplex_plan::{
    Action, DuplexPlan, IDLE_REASON, Step, closed_event, error_event, expired_event, seconds,
    validate_update,
};
use super::own_ws::{Inbound, Outbound};

/// Route of the duplex speech endpoint.
pub const DUPLEX_PATH: &str = "/v1/realtime";

/// Shared, read-only state of the duplex endpoint (one per server, shared by workers).
pub(crate) struct DuplexState {
    /// The server's whole config (duplex part plus the idle timeout).
    config: ServerConfig,
}

impl DuplexState {
    /// State for `config`.
    pub(crate) fn new(config: &ServerConfig) -> DuplexState {
        DuplexState {
            config: config.clone(),
        }
    }
}

/// Registers the duplex route on an app (called once per worker by `mod.rs`).
pub(crate) fn register(svc: &mut web::ServiceConfig, state: web::Data<DuplexState>) {
    svc.app_data(state)
        .route(DUPLEX_PATH, web::get().to(duplex_endpoint));
}

/// Upgrades the request and spawns the connection task on the worker's event loop.
async fn duplex_endpoint(
    req: HttpRequest,
    body: web::Payload,
    state: web::Data<DuplexState>,
) -> Result<HttpResponse, actix_web::Error> {
    let query_session_id = query_session_id(req.query_string());
    let ws = super::ws::accept(&req, body, super::ws::Endpoint::Duplex).await?;
    let out = Outbound::Actix(ws.session);
    let conn = Connection::new(out, state, query_session_id, ws.conn);
    actix_web::rt::spawn(conn.run(Inbound::Actix(ws.stream)));
    Ok(ws.response)
}

/// The `session_id` query parameter, when given and not empty.
pub(crate) fn query_session_id(query: &str) -> Option<String> {
    web::Query::<HashMap<String, String>>::from_query(query)
        .ok()
        .and_then(|q| q.into_inner().remove("session_id"))
        .filter(|id| !id.is_empty())
}

/// Runs a duplex connection on a socket the server owns (see [`super::upgrade`]), to
/// its end.
pub(crate) async fn run_owned(
    socket: (Inbound, Outbound),
    state: web::Data<DuplexState>,
    query_session_id: Option<String>,
    tally: super::ws::Conn,
) {
    let (inbound, out) = socket;
    Connection::new(out, state, query_session_id, tally)
        .run(inbound)
        .await;
}

/// Where a connection is in its life.
enum Phase {
    /// Waiting for `session.update`; the server's idle timeout applies.
    AwaitingUpdate,
    /// A session is running.
    Active {
        /// Receipt time of `session.update`; every offset and stamp is relative to it.
        t0: Instant,
        /// The session's behaviour core.
        plan: Box<DuplexPlan>,
    },
}

/// One WebSocket connection on the duplex endpoint.
struct Connection {
    /// Outbound half.
    out: Outbound,
    /// Shared config.
    state: web::Data<DuplexState>,
    /// `session_id` query parameter of the upgrade.
    query_session_id: Option<String>,
    /// Current phase.
    phase: Phase,
    /// Last client message or scheduled send; the idle timeout counts from here.
    last_activity: Instant,
    /// This connection in the server's `/metrics`; numbers its session.
    tally: super::ws::Conn,
    /// A delta's text is written here on actix-ws's path (reused).
    scratch: String,
}

impl Connection {
    fn new(
        out: Outbound,
        state: web::Data<DuplexState>,
        query_session_id: Option<String>,
        tally: super::ws::Conn,
    ) -> Connection {
        Connection {
            out,
            state,
            query_session_id,
            phase: Phase::AwaitingUpdate,
            last_activity: Instant::now(),
            tally,
            scratch: String::new(),
        }
    }

    /// Runs the connection to completion.
    async fn run(mut self, mut stream: Inbound) {
        // One timer for the connection's life, moved only when it must be: it stays in
        // the runtime's wheel across client messages instead of being registered and
        // removed again for each one.
        let timer = sleep_until(self.next_wake());
        tokio::pin!(timer);
        let flow = loop {
            let wake = self.next_wake();
            // A later wake (activity pushed the idle deadline on) keeps the timer: it
            // may fire early, and `on_timer` then finds nothing due and it is moved.
            if wake < timer.deadline() || timer.is_elapsed() {
                timer.as_mut().reset(wake);
            }
            let flow = tokio::select! {
                biased;
                msg = stream.recv() => {
                    let received = Instant::now();
                    self.last_activity = received;
                    match msg {
                        Some(Ok(msg)) => self.on_message(msg, received).await,
                        // An oversized frame: 1009 (on an owned socket; actix's
                        // path sends its own).
                        Some(Err(_)) => stream.refusal().map_or(Flow::Gone, |r| Flow::Close(Some(r))),
                        // Stream ended: nothing more to read or say.
                        None => Flow::Gone,
                    }
                }
                () = &mut timer => self.on_timer().await,
            };
            // What this wake produced goes out in one write (an owned socket).
            if !matches!(flow, Flow::Gone) && self.out.flush().await.is_err() {
                break Flow::Gone;
            }
            if !matches!(flow, Flow::Continue) {
                break flow;
            }
        };
        if let Flow::Close(reason) = flow {
            // Always a status code (1000 unless the reason says otherwise): without
            // one, clients see 1005 "no status received".
            let reason = reason.or_else(|| Some(CloseCode::Normal.into()));
            self.out.close(reason).await;
        }
    }

    /// The idle deadline of the current phase.
    fn idle_deadline(&self) -> Instant {
        let idle = match &self.phase {
            Phase::AwaitingUpdate => seconds(self.state.config.idle_timeout_s),
            Phase::Active { plan, .. } => plan.idle_timeout(),
        };
        self.last_activity + idle
    }

    /// When the timer branch should fire: the next due action, else the idle deadline.
    fn next_wake(&self) -> Instant {
        let idle = self.idle_deadline();
        match &self.phase {
            Phase::Active { t0, plan } => plan.next_due().map_or(idle, |due| (*t0 + due).min(idle)),
            Phase::AwaitingUpdate => idle,
        }
    }

    /// Timer fired: run every due action (each sent as it is taken), or expire an idle
    /// session.
    async fn on_timer(&mut self) -> Flow {
        let now = Instant::now();
        let mut any = false;
        loop {
            let step = match &mut self.phase {
                Phase::Active { t0, plan } => plan.pop_due_step(now.saturating_duration_since(*t0)),
                Phase::AwaitingUpdate => None,
            };
            let Some(step) = step else { break };
            self.last_activity = now;
            any = true;
            let flow = self.perform(step).await;
            if !matches!(flow, Flow::Continue) {
                return flow;
            }
        }
        if any {
            return Flow::Continue;
        }
        if now < self.idle_deadline() {
            return Flow::Continue;
        }
        match self.send(expired_event(IDLE_REASON)).await {
            Flow::Continue => Flow::Close(Some(CloseReason {
                code: CloseCode::Normal,
                description: Some("idle timeout".to_string()),
            })),
            other => other,
        }
    }

    /// Handles one inbound message received at `received`.
    async fn on_message(&mut self, msg: AggregatedMessage, received: Instant) -> Flow {
        let sent = match msg {
            AggregatedMessage::Text(text) => return self.on_text(&text, received).await,
            AggregatedMessage::Ping(payload) => self.out.pong(&payload).await,
            AggregatedMessage::Close(reason) => return Flow::Close(reason),
            AggregatedMessage::Pong(_) | AggregatedMessage::Binary(_) => Ok(()),
        };
        match sent {
            Ok(()) => Flow::Continue,
            Err(closed) => closed.into(),
        }
    }

    /// Handles one client JSON event.
    async fn on_text(&mut self, text: &str, received: Instant) -> Flow {
        if let Phase::Active { plan, .. } = &mut self.phase {
            // `[server.load]`: responses this event schedules run at today's load.
            plan.set_load(self.tally.load_factor());
        }
        if let Phase::Active { t0, plan } = &mut self.phase
            && let Some(steps) =
                plan.on_append_text_steps(text, received.saturating_duration_since(*t0))
        {
            return self.execute(steps).await;
        }
        let event: Value = match serde_json::from_str(text) {
            Ok(event) => event,
            Err(err) => {
                return self
                    .send(error_event(&format!("invalid JSON event: {err}")))
                    .await;
            }
        };
        let Some(kind) = event.get("type").and_then(Value::as_str) else {
            return self
                .send(error_event("event has no string \"type\" field"))
                .await;
        };
        let steps = match &mut self.phase {
            Phase::Active { t0, plan } => {
                plan.on_event_steps(kind, &event, received.saturating_duration_since(*t0))
            }
            Phase::AwaitingUpdate => match kind {
                "session.update" => return self.on_update(&event, received).await,
                "session.close" => steps([Action::Send(closed_event(None)), Action::Close]),
                other => steps([Action::Send(error_event(&format!(
                    "'{other}' before session.update: send session.update first"
                )))]),
            },
        };
        self.execute(steps).await
    }

    /// Validates `session.update` and starts the session (a bad one gets an `error`
    /// event and the socket stays open).
    async fn on_update(&mut self, event: &Value, received: Instant) -> Flow {
        let info = match validate_update(event) {
            Ok(info) => info,
            Err(message) => return self.send(error_event(&message)).await,
        };
        let config = &self.state.config;
        let ordinal = self.tally.session_started();
        let cfg = DuplexServerConfig {
            faults: config.duplex.faults.for_session(ordinal),
            ..config.duplex.clone()
        };
        let mut plan = DuplexPlan::new(
            cfg,
            ordinal,
            info,
            self.query_session_id.take(),
            config.idle_timeout_s,
        );
        let actions = plan.start();
        self.phase = Phase::Active {
            t0: received,
            plan: Box::new(plan),
        };
        self.execute(steps(actions)).await
    }

    /// Performs `steps` in order; a `Close` ends the connection.
    async fn execute(&mut self, steps: Vec<Step>) -> Flow {
        for step in steps {
            let flow = self.perform(step).await;
            if !matches!(flow, Flow::Continue) {
                return flow;
            }
        }
        Flow::Continue
    }

    /// Performs one step: sends its event (a delta written from its pieces straight
    /// into the socket's write buffer) or closes.
    async fn perform(&mut self, step: Step) -> Flow {
        match step {
            Step::Act(Action::Send(event)) => self.send(event).await,
            Step::Act(Action::Close) => Flow::Close(None),
            Step::Delta(delta) => {
                let stamp = match &self.phase {
                    Phase::Active { t0, .. } => t0.elapsed().as_secs_f64(),
                    // Deltas are only scheduled once a session runs.
                    Phase::AwaitingUpdate => 0.0,
                };
                let written = self
                    .out
                    .text_with(&mut self.scratch, |out| delta.write(out, stamp))
                    .await;
                match written {
                    Ok(()) => Flow::Continue,
                    Err(closed) => closed.into(),
                }
            }
        }
    }

    /// Stamps `event` with `server_sent_at_s` (once a session runs) and sends it.
    async fn send(&mut self, mut event: Value) -> Flow {
        if let (Phase::Active { t0, .. }, Value::Object(map)) = (&self.phase, &mut event) {
            map.insert(
                "server_sent_at_s".to_string(),
                json!(t0.elapsed().as_secs_f64()),
            );
        }
        self.send_text(super::wire::event_text(event)).await
    }

    /// Sends one text message.
    async fn send_text(&mut self, text: String) -> Flow {
        match self.out.text(text).await {
            Ok(()) => Flow::Continue,
            Err(closed) => closed.into(),
        }
    }
}

/// Actions built as JSON, as steps.
fn steps(actions: impl IntoIterator<Item = Action>) -> Vec<Step> {
    actions.into_iter().map(Step::Act).collect()
}
