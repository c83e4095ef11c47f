//! Socket side of the scripted endpoint (`[server.scripted]`, mounted at its `path`
//! only when it has rules): one task per connection that `select!`s over inbound frames
//! and the next due message of its [`ConnPlan`], so scheduled sends keep their absolute
//! times. Pings are answered; binary frames are accepted and ignored; a connection with
//! neither client messages nor scheduled sends for `idle_timeout_s` is closed.

use std::sync::Arc;
use std::time::Duration;

use actix_web::{HttpRequest, HttpResponse, web};
use actix_ws::{AggregatedMessage, CloseCode, CloseReason, Session};
use tokio::time::{Instant, sleep_until};

use super::Flow;
use super::config::ServerConfig;
use super::scripted_plan::{Compiled, ConnPlan, Out};

/// Shared state of the scripted endpoint.
pub(crate) struct ScriptedState {
    compiled: Arc<Compiled>,
    idle: Duration,
}

impl ScriptedState {
    /// Compiles the rules (already validated by `ServerConfig::validate`).
    pub(crate) fn new(cfg: &ServerConfig) -> Option<ScriptedState> {
        let compiled = Compiled::new(&cfg.scripted).ok()?;
        Some(ScriptedState {
            compiled: Arc::new(compiled),
            idle: Duration::from_secs_f64(cfg.idle_timeout_s),
        })
    }
}

/// Registers the scripted route at `path`.
pub(crate) fn register(svc: &mut web::ServiceConfig, path: &str, state: web::Data<ScriptedState>) {
    svc.app_data(state)
        .route(path, web::get().to(scripted_endpoint));
}

async fn scripted_endpoint(
    req: HttpRequest,
    body: web::Payload,
    state: web::Data<ScriptedState>,
) -> Result<HttpResponse, actix_web::Error> {
    let ws = super::ws::accept(&req, body, super::ws::Endpoint::Scripted).await?;
    // A scripted session is its connection.
    let ordinal = ws.conn.session_started();
    let plan = ConnPlan::new(Arc::clone(&state.compiled), ordinal);
    let (session, stream, idle, tally) = (ws.session, ws.stream, state.idle, ws.conn);
    actix_web::rt::spawn(run(session, stream, plan, idle, tally));
    Ok(ws.response)
}

/// Runs one connection to completion.
async fn run(
    mut session: Session,
    mut stream: super::ws::Inbound,
    mut plan: ConnPlan,
    idle: Duration,
    tally: super::ws::Conn,
) {
    let mut last = Instant::now();
    plan.set_load(tally.load_factor());
    plan.on_open(last);
    let flow = loop {
        let wake = plan.next_due().unwrap_or(last + idle);
        let flow = tokio::select! {
            biased;
            msg = stream.recv() => {
                let at = Instant::now();
                last = at;
                match msg {
                    Some(Ok(AggregatedMessage::Text(text))) => {
                        plan.set_load(tally.load_factor());
                        plan.on_text(&text, at);
                        Flow::Continue
                    }
                    Some(Ok(AggregatedMessage::Ping(p))) => match session.pong(&p).await {
                        Ok(()) => Flow::Continue,
                        Err(closed) => closed.into(),
                    },
                    Some(Ok(AggregatedMessage::Close(reason))) => Flow::Close(reason),
                    Some(Ok(_)) => Flow::Continue,
                    Some(Err(_)) | None => Flow::Gone,
                }
            }
            () = sleep_until(wake) => {
                let now = Instant::now();
                let due = plan.pop_due(now);
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
        if !matches!(flow, Flow::Continue) {
            break flow;
        }
    };
    if let Flow::Close(reason) = flow {
        let _ = session.close(reason).await;
    }
}

async fn send_all(session: &mut Session, due: Vec<Out>) -> Flow {
    for out in due {
        match out {
            Out::Text(t) => {
                if let Err(closed) = session.text(t).await {
                    return closed.into();
                }
            }
            Out::Close => {
                return Flow::Close(Some(CloseReason {
                    code: CloseCode::Normal,
                    description: None,
                }));
            }
        }
    }
    Flow::Continue
}
