//! The one WebSocket endpoint helper: every protocol's route (video, duplex,
//! transcription, scripted) upgrades its request through [`accept`], so each gets the
//! same inbound limit (`[server] max_frame_bytes`, checked from the frame header by
//! [`super::frame_guard`] and again by actix's codec on frames and reassembled messages),
//! the same refusal (close code 1009 with the reason, see [`Inbound`]), the same admission
//! (`[server] max_sessions`: a session beyond it is refused by [`super::refuse`] before
//! the endpoint sees it), its connection and sessions counted in `/metrics`
//! ([`super::metrics`]), and the same socket options ([`socket_options`], applied to every
//! accepted connection). An endpoint chooses none of these: it names its [`Endpoint`] and
//! runs its protocol over what it gets back.

use std::sync::Arc;

use actix_http::ws::ProtocolError;
use actix_web::{HttpRequest, HttpResponse, web};
use actix_ws::{AggregatedMessage, AggregatedMessageStream, CloseCode, CloseReason, Session};

use super::config::ServerConfig;
use super::frame_guard::{self, Refusal};
use super::metrics::ServerMetrics;
pub(crate) use super::metrics::{Conn, Endpoint};
use super::refuse::Refuser;

/// What every upgrade on this server shares: the inbound limit and the tallies.
pub(crate) struct Upgrades {
    /// `[server] max_frame_bytes` as a buffer size.
    max_inbound: usize,
    /// The tallies `/metrics` renders; they admit sessions.
    metrics: Arc<ServerMetrics>,
    /// How a session beyond `max_sessions` is refused.
    refuser: Refuser,
}

impl Upgrades {
    /// The settings of `cfg`, counting on `metrics`.
    pub(crate) fn new(cfg: &ServerConfig, metrics: Arc<ServerMetrics>) -> Upgrades {
        Upgrades {
            max_inbound: cfg.max_inbound_bytes(),
            refuser: Refuser {
                how: cfg.refuse_with,
                limit: metrics.max_sessions().unwrap_or(u64::MAX),
                retry_after_s: cfg.retry_after_s,
                idle: std::time::Duration::from_secs_f64(cfg.idle_timeout_s),
                max_inbound: cfg.max_inbound_bytes(),
            },
            metrics,
        }
    }
}

impl Upgrades {
    /// Admits a session on `ep` for a socket the server owns ([`super::upgrade`]):
    /// its tally and the inbound limit, or `None` at `max_sessions`, not counted: the
    /// app's route then refuses it (and counts it) as usual.
    pub(crate) fn admit_own(&self, ep: Endpoint) -> Option<(Conn, usize)> {
        Some((self.metrics.try_admit(ep)?, self.max_inbound))
    }
}

/// Makes [`Upgrades`] available to every route's [`accept`].
pub(crate) fn register(svc: &mut web::ServiceConfig, upgrades: web::Data<Upgrades>) {
    svc.app_data(upgrades);
}

/// Socket options of every accepted connection, set from the server's `on_connect`:
/// `TCP_NODELAY`, without which small server messages wait ~20 ms (Nagle + delayed ACK).
/// (`HttpServer::tcp_nodelay(true)` sets it too; this keeps the guarantee even if that
/// builder option ever changes meaning.)
pub(crate) fn socket_options(io: &dyn std::any::Any) {
    if let Some(stream) = io.downcast_ref::<actix_rt::net::TcpStream>() {
        let _ = stream.set_nodelay(true);
    }
}

/// A WebSocket accepted on one endpoint: the handshake answer, both halves, and the
/// connection's tally.
pub(crate) struct Accepted {
    /// The `101 Switching Protocols` answer to return.
    pub(crate) response: HttpResponse,
    /// The outbound half.
    pub(crate) session: Session,
    /// Inbound messages (continuations aggregated), at most `max_frame_bytes` each.
    pub(crate) stream: Inbound,
    /// Counts the connection until dropped; starts its sessions.
    pub(crate) conn: Conn,
}

/// Upgrades `req` on endpoint `ep` with the server's [`Upgrades`]: frames announcing
/// more than `max_frame_bytes` fail the connection from their header, the handshake, the
/// message stream, and the connection counted in `/metrics`. When `max_sessions` are
/// open the error is the refusal: its response (an HTTP refusal, or the `101` of a socket
/// refused in band) is what the endpoint's `?` hands to actix.
pub(crate) async fn accept(
    req: &HttpRequest,
    body: web::Payload,
    ep: Endpoint,
) -> Result<Accepted, actix_web::Error> {
    let upgrades = req.app_data::<web::Data<Upgrades>>().ok_or_else(|| {
        actix_web::error::ErrorInternalServerError("WebSocket upgrades not registered")
    })?;
    let Some(conn) = upgrades.metrics.admit(ep) else {
        return Err(upgrades.refuser.refuse(req, body, ep));
    };
    let max = upgrades.max_inbound;
    let (body, refusal) = frame_guard::guard(req, body, max).await?;
    let (response, session, stream) = actix_ws::handle(req, body)?;
    let stream = stream
        .max_frame_size(max)
        .aggregate_continuations()
        .max_continuation_size(max);
    Ok(Accepted {
        response,
        stream: Inbound {
            stream,
            session: session.clone(),
            refusal,
        },
        session,
        conn,
    })
}

/// An endpoint's inbound messages. When the frame guard fails the connection, the
/// client gets a close frame with code 1009 (message too big) and the guard's reason;
/// the endpoint sees the error and ends. The close still reaches the client after the
/// endpoint is gone: the response body ends only at a close frame or when every
/// `Session` is dropped, and the task sending the close holds one until it is queued.
pub(crate) struct Inbound {
    stream: AggregatedMessageStream,
    /// Sends the 1009 close.
    session: Session,
    refusal: Refusal,
}

impl Inbound {
    /// The next message; `None` once the stream ended. Cancel-safe (used in `select!`):
    /// the close is sent from a task of its own.
    pub(crate) async fn recv(&mut self) -> Option<Result<AggregatedMessage, ProtocolError>> {
        let msg = self.stream.recv().await;
        if matches!(msg, Some(Err(_)))
            && let Some(why) = self.refusal.borrow_mut().take()
        {
            let reason = CloseReason {
                code: CloseCode::Size,
                description: Some(why),
            };
            let session = self.session.clone();
            actix_web::rt::spawn(async move {
                let _ = session.close(Some(reason)).await;
            });
        }
        msg
    }
}
