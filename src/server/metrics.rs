//! The embedded server's own `/metrics` (Prometheus text), like a model server exports:
//! WebSocket connections open now and accepted so far, and sessions started, per endpoint.
//! Clients scrape it through `[target] metrics_url`; the tests do too.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use actix_web::{HttpResponse, web};

use crate::util::prom::Exposition;

/// The path of the metrics route.
pub const METRICS_PATH: &str = "/metrics";

/// Which endpoint a connection belongs to.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Endpoint {
    /// `/v1/realtime/video`.
    Video = 0,
    /// `/v1/realtime`.
    Duplex = 1,
}

const NAMES: [&str; 2] = ["video", "duplex"];

/// Connection tallies shared by every worker.
#[derive(Debug, Default)]
pub(crate) struct ServerMetrics {
    active: [AtomicU64; 2],
    accepted: [AtomicU64; 2],
}

/// Counts one open WebSocket connection until dropped.
pub(crate) struct Open(Arc<ServerMetrics>, Endpoint);

impl Drop for Open {
    fn drop(&mut self) {
        self.0.active[self.1 as usize].fetch_sub(1, Ordering::Relaxed);
    }
}

impl ServerMetrics {
    /// A WebSocket connection to `ep` was accepted; it counts as active until the guard
    /// is dropped.
    pub(crate) fn open(self: &Arc<Self>, ep: Endpoint) -> Open {
        self.accepted[ep as usize].fetch_add(1, Ordering::Relaxed);
        self.active[ep as usize].fetch_add(1, Ordering::Relaxed);
        Open(Arc::clone(self), ep)
    }

    /// The exposition text, with `sessions[i]` sessions started on endpoint `i`.
    pub(crate) fn render(&self, sessions: [u64; 2]) -> String {
        let per = |vals: [u64; 2]| -> Vec<Row> {
            (0..2)
                .map(|i| ([("endpoint", NAMES[i])], vals[i] as f64))
                .collect()
        };
        let load = |a: &[AtomicU64; 2]| [0, 1].map(|i| a[i].load(Ordering::Relaxed));
        let mut e = Exposition::default();
        let active = per(load(&self.active));
        e.gauge(
            "rtload_server_websocket_connections_active",
            "WebSocket connections open now.",
            &rows(&active),
        );
        let accepted = per(load(&self.accepted));
        e.counter(
            "rtload_server_websocket_connections_total",
            "WebSocket connections accepted.",
            &rows(&accepted),
        );
        let started = per(sessions);
        e.counter(
            "rtload_server_sessions_started_total",
            "Sessions started (session.start / session.update accepted).",
            &rows(&started),
        );
        e.finish()
    }
}

type Row = ([(&'static str, &'static str); 1], f64);

fn rows(v: &[Row]) -> Vec<(&[(&'static str, &'static str)], f64)> {
    v.iter().map(|(l, x)| (l.as_slice(), *x)).collect()
}

/// `GET /metrics`.
async fn metrics_endpoint(
    metrics: web::Data<Arc<ServerMetrics>>,
    video: web::Data<super::video::VideoState>,
    duplex: web::Data<super::duplex::DuplexState>,
) -> HttpResponse {
    let body = metrics.render([video.sessions_started(), duplex.sessions_started()]);
    HttpResponse::Ok()
        .content_type(crate::util::http::CONTENT_TYPE)
        .body(body)
}

/// Registers `/metrics` (the endpoint states are registered by their own modules).
pub(crate) fn register(svc: &mut web::ServiceConfig, metrics: web::Data<Arc<ServerMetrics>>) {
    svc.app_data(metrics)
        .route(METRICS_PATH, web::get().to(metrics_endpoint));
}
