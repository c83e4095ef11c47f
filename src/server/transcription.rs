//! Socket side of the vLLM realtime transcription endpoint (`[transcription] path`,
//! default `/v1/realtime` for clients without `duplex=1`): one task per connection that
//! greets with `session.created` and `select!`s over the inbound stream and the next
//! due action of its [`TranscriptionPlan`] (offsets from the connection start, so the
//! schedule never drifts). A connection with no client message and nothing scheduled for
//! the server's `idle_timeout_s` is closed.

use actix_web::{HttpRequest, HttpResponse, guard, web};
use actix_ws::{AggregatedMessage, CloseCode, CloseReason, Session};
use tokio::time::{Instant, sleep_until};

use super::Flow;
use super::config::{ServerConfig, TranscriptionServerConfig};
use super::transcription_plan::{Action, TranscriptionPlan};

/// Shared, read-only state of the transcription endpoint.
pub(crate) struct TranscriptionState {
    config: ServerConfig,
}

impl TranscriptionState {
    /// State for `config`.
    pub(crate) fn new(config: &ServerConfig) -> TranscriptionState {
        TranscriptionState {
            config: config.clone(),
        }
    }
}

/// True when the query asks for the OmniInteract duplex mode (`duplex=1` or `true`).
pub(crate) fn wants_duplex(query: &str) -> bool {
    query.split('&').any(|kv| {
        let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
        k == "duplex" && matches!(v, "1" | "true" | "True")
    })
}

/// Registers the route (before the duplex route, which keeps `duplex=1` clients when
/// both share a path).
pub(crate) fn register(svc: &mut web::ServiceConfig, state: web::Data<TranscriptionState>) {
    let path = state.config.transcription.path.clone();
    svc.service(
        web::resource(path)
            .app_data(state)
            .guard(guard::fn_guard(|ctx| {
                !wants_duplex(ctx.head().uri.query().unwrap_or(""))
            }))
            .route(web::get().to(endpoint)),
    );
}

async fn endpoint(
    req: HttpRequest,
    body: web::Payload,
    state: web::Data<TranscriptionState>,
) -> Result<HttpResponse, actix_web::Error> {
    let ws = super::ws::accept(&req, body, super::ws::Endpoint::Transcription).await?;
    // The protocol's session starts with the connection (`session.created`).
    let ordinal = ws.conn.session_started();
    let t = &state.config.transcription;
    let cfg = TranscriptionServerConfig {
        faults: t.faults.for_session(ordinal),
        ..t.clone()
    };
    let conn = Connection {
        session: ws.session,
        plan: TranscriptionPlan::new(cfg),
        t0: Instant::now(),
        idle: std::time::Duration::from_secs_f64(state.config.idle_timeout_s),
        last_activity: Instant::now(),
        tally: ws.conn,
    };
    actix_web::rt::spawn(conn.run(ws.stream, ordinal));
    Ok(ws.response)
}

struct Connection {
    session: Session,
    plan: TranscriptionPlan,
    t0: Instant,
    idle: std::time::Duration,
    last_activity: Instant,
    /// Counts the connection as open in `/metrics` until it ends; gives the load factor.
    tally: super::ws::Conn,
}

impl Connection {
    async fn run(mut self, mut stream: super::ws::Inbound, ordinal: u64) {
        let created = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let greeting = self.plan.start(&format!("sess_{ordinal:08x}"), created);
        let mut flow = self.execute(greeting).await;
        while matches!(flow, Flow::Continue) {
            let idle = self.last_activity + self.idle;
            let wake = self
                .plan
                .next_due()
                .map_or(idle, |d| (self.t0 + d).min(idle));
            flow = tokio::select! {
                biased;
                msg = stream.recv() => {
                    let at = Instant::now();
                    self.last_activity = at;
                    match msg {
                        Some(Ok(AggregatedMessage::Text(t))) => {
                            self.plan.set_load(self.tally.load_factor());
                            let actions = self.plan.on_text(&t, at - self.t0);
                            self.execute(actions).await
                        }
                        Some(Ok(AggregatedMessage::Ping(p))) => match self.session.pong(&p).await {
                            Ok(()) => Flow::Continue,
                            Err(closed) => closed.into(),
                        },
                        Some(Ok(AggregatedMessage::Close(reason))) => Flow::Close(reason),
                        Some(Ok(AggregatedMessage::Pong(_) | AggregatedMessage::Binary(_))) => Flow::Continue,
                        Some(Err(_)) | None => Flow::Gone,
                    }
                }
                () = sleep_until(wake) => self.on_timer().await,
            };
        }
        if let Flow::Close(reason) = flow {
            let _ = self.session.close(reason).await;
        }
    }

    async fn on_timer(&mut self) -> Flow {
        let now = Instant::now();
        let actions = self.plan.pop_due(now - self.t0);
        if !actions.is_empty() {
            self.last_activity = now;
            return self.execute(actions).await;
        }
        if now >= self.last_activity + self.idle {
            return Flow::Close(Some(CloseReason {
                code: CloseCode::Normal,
                description: Some("idle timeout".to_string()),
            }));
        }
        Flow::Continue
    }

    async fn execute(&mut self, actions: Vec<Action>) -> Flow {
        for action in actions {
            match action {
                Action::Send(text) => {
                    if let Err(closed) = self.session.text(text).await {
                        return closed.into();
                    }
                }
                Action::Close => return Flow::Close(None),
            }
        }
        Flow::Continue
    }
}
