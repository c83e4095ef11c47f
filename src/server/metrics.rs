//! The embedded server's own `/metrics` (Prometheus text), like a model server exports:
//! WebSocket connections open now and accepted so far, and sessions started, per endpoint
//! (video, duplex, transcription, and `scripted_rules` for `[server.scripted]`). Clients
//! scrape it through `[target] metrics_url`; the tests do too.
//!
//! The accounting lives in one place: every endpoint upgrades its request through
//! [`super::ws::accept`], which counts the connection here and hands back the [`Conn`]
//! the endpoint starts its sessions through, so no endpoint can be left out of the tallies.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use actix_web::{HttpResponse, web};

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

/// `GET /metrics`.
async fn metrics_endpoint(metrics: web::Data<Arc<ServerMetrics>>) -> HttpResponse {
    HttpResponse::Ok()
        .content_type(crate::util::http::CONTENT_TYPE)
        .body(metrics.render())
}

/// Registers `/metrics`, which renders the tallies [`super::ws::accept`] counts on.
pub(crate) fn register(svc: &mut web::ServiceConfig, metrics: web::Data<Arc<ServerMetrics>>) {
    svc.app_data(metrics)
        .route(METRICS_PATH, web::get().to(metrics_endpoint));
}
