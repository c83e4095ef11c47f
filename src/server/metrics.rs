//! The embedded server's own `/metrics` (Prometheus text), like a model server exports:
//! WebSocket connections open now and accepted so far, and sessions started, per endpoint
//! (video, duplex, transcription, and `scripted_rules` for `[server.scripted]`). Clients
//! scrape it through `[target] metrics_url`; the tests do too.
//!
//! The accounting lives in one place: every endpoint upgrades its request through
//! [`accept`], which counts the connection and hands back the [`Conn`] the endpoint starts
//! its sessions through, so no endpoint can be left out of the tallies.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use actix_web::{HttpRequest, HttpResponse, web};
use actix_ws::{AggregatedMessageStream, Session};

use crate::util::prom::Exposition;

#[cfg(test)]
#[path = "metrics_tests.rs"]
mod tests;

/// The path of the metrics route.
pub const METRICS_PATH: &str = "/metrics";

/// Which endpoint a connection belongs to.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Endpoint {
    /// `/v1/realtime/video`.
    Video = 0,
    /// `/v1/realtime` with `duplex=1`.
    Duplex = 1,
    /// The transcription path (default `/v1/realtime` without `duplex=1`).
    Transcription = 2,
    /// `[server.scripted] path`.
    Scripted = 3,
}

/// How many endpoints are counted.
const N: usize = 4;

/// Each endpoint's `endpoint` label, in [`Endpoint`] order.
const NAMES: [&str; N] = ["video", "duplex", "transcription", "scripted_rules"];

/// Connection and session tallies shared by every worker.
#[derive(Debug, Default)]
pub(crate) struct ServerMetrics {
    active: [AtomicU64; N],
    accepted: [AtomicU64; N],
    started: [AtomicU64; N],
}

/// One accepted WebSocket connection: counted as active until dropped; the sessions it
/// starts are counted through it.
pub(crate) struct Conn(Arc<ServerMetrics>, Endpoint);

impl Conn {
    /// A session started on this connection (`session.start`, `session.update`, or the
    /// connection itself where the protocol has no start event); returns its ordinal on
    /// the endpoint (0 for the first), which selects faults and names sessions.
    pub(crate) fn session_started(&self) -> u64 {
        self.0.started[self.1 as usize].fetch_add(1, Ordering::Relaxed)
    }
}

impl Drop for Conn {
    fn drop(&mut self) {
        self.0.active[self.1 as usize].fetch_sub(1, Ordering::Relaxed);
    }
}

impl ServerMetrics {
    /// A WebSocket connection to `ep` was accepted; it counts as active until the guard
    /// is dropped.
    pub(crate) fn open(self: &Arc<Self>, ep: Endpoint) -> Conn {
        self.accepted[ep as usize].fetch_add(1, Ordering::Relaxed);
        self.active[ep as usize].fetch_add(1, Ordering::Relaxed);
        Conn(Arc::clone(self), ep)
    }

    /// The exposition text.
    pub(crate) fn render(&self) -> String {
        let per = |a: &[AtomicU64; N]| -> Vec<Row> {
            (0..N)
                .map(|i| {
                    (
                        [("endpoint", NAMES[i])],
                        a[i].load(Ordering::Relaxed) as f64,
                    )
                })
                .collect()
        };
        let mut e = Exposition::default();
        e.gauge(
            "rtload_server_websocket_connections_active",
            "WebSocket connections open now.",
            &rows(&per(&self.active)),
        );
        e.counter(
            "rtload_server_websocket_connections_total",
            "WebSocket connections accepted.",
            &rows(&per(&self.accepted)),
        );
        e.counter(
            "rtload_server_sessions_started_total",
            "Sessions started (video session.start, duplex session.update, a transcription or scripted connection).",
            &rows(&per(&self.started)),
        );
        e.finish()
    }
}

type Row = ([(&'static str, &'static str); 1], f64);

fn rows(v: &[Row]) -> Vec<(&[(&'static str, &'static str)], f64)> {
    v.iter().map(|(l, x)| (l.as_slice(), *x)).collect()
}

/// A WebSocket accepted on one endpoint: the handshake answer, both halves, and the
/// connection's tally.
pub(crate) struct Accepted {
    /// The `101 Switching Protocols` answer to return.
    pub(crate) response: HttpResponse,
    /// The outbound half.
    pub(crate) session: Session,
    /// Inbound messages (continuations aggregated), at most `max` bytes each.
    pub(crate) stream: AggregatedMessageStream,
    /// Counts the connection until dropped; starts its sessions.
    pub(crate) conn: Conn,
}

/// Upgrade `req` on endpoint `ep`: frames announcing more than `max` bytes fail the
/// connection from their header ([`super::frame_guard`]), the handshake, the message
/// stream, and the connection counted on the server's [`ServerMetrics`].
pub(crate) async fn accept(
    req: &HttpRequest,
    body: web::Payload,
    max: usize,
    ep: Endpoint,
) -> Result<Accepted, actix_web::Error> {
    let metrics = req
        .app_data::<web::Data<Arc<ServerMetrics>>>()
        .map(|m| Arc::clone(m.get_ref()))
        .ok_or_else(|| actix_web::error::ErrorInternalServerError("/metrics not registered"))?;
    let body = super::frame_guard::guard(req, body, max).await?;
    let (response, session, stream) = actix_ws::handle(req, body)?;
    let stream = stream
        .max_frame_size(max)
        .aggregate_continuations()
        .max_continuation_size(max);
    Ok(Accepted {
        response,
        session,
        stream,
        conn: metrics.open(ep),
    })
}

/// `GET /metrics`.
async fn metrics_endpoint(metrics: web::Data<Arc<ServerMetrics>>) -> HttpResponse {
    HttpResponse::Ok()
        .content_type(crate::util::http::CONTENT_TYPE)
        .body(metrics.render())
}

/// Registers `/metrics` and the tallies every endpoint's [`accept`] counts on.
pub(crate) fn register(svc: &mut web::ServiceConfig, metrics: web::Data<Arc<ServerMetrics>>) {
    svc.app_data(metrics)
        .route(METRICS_PATH, web::get().to(metrics_endpoint));
}
