//! The embedded server's own `/metrics` (Prometheus text), like a model server exports:
//! WebSocket connections open now and accepted so far, sessions started and refused, per
//! endpoint (video, duplex, transcription, `scripted_rules` for `[server.scripted]`, and
//! `replay` for `rtload serve --replay`, whose diverged clients are counted too),
//! and vLLM's own gauges over the whole server (`vllm:num_requests_running`: sessions
//! admitted and open; `vllm:num_requests_waiting`: always 0, the server queues nothing;
//! `vllm:websocket_connections_active`). Clients scrape it through `[target]
//! metrics_url`; the tests do too.
//!
//! The accounting lives in one place: every endpoint upgrades its request through
//! [`super::ws::accept`], which admits the connection here (`[server] max_sessions`) and
//! hands back the [`Conn`] the endpoint starts its sessions through and reads its load
//! factor from (`[server.load]`), so no endpoint can be left out of the tallies, the
//! limit or the load. Admission is one compare-and-swap, the load one atomic read.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use actix_web::{HttpResponse, web};

use super::config::{LoadConfig, ServerConfig};

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
    /// Any path of `rtload serve --replay`.
    Replay = 4,
}

/// How many endpoints are counted.
const N: usize = 5;

/// Each endpoint's `endpoint` label, in [`Endpoint`] order.
const NAMES: [&str; N] = [
    "video",
    "duplex",
    "transcription",
    "scripted_rules",
    "replayed",
];

/// Connection and session tallies shared by every worker, with the admission limit and
/// the load model that read them.
#[derive(Debug, Default)]
pub(crate) struct ServerMetrics {
    active: [AtomicU64; N],
    accepted: [AtomicU64; N],
    started: [AtomicU64; N],
    refused: [AtomicU64; N],
    /// Connections admitted and open, over every endpoint.
    admitted: AtomicU64,
    /// Replayed connections closed because the client departed from the recording.
    diverged: AtomicU64,
    /// `[server] max_sessions` (`None`: no limit).
    max_sessions: Option<u64>,
    /// `[server.load]`.
    load: LoadConfig,
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

    /// `[server.load]`'s slow-down factor now (`max(1, admitted / k)`, see
    /// [`LoadConfig::factor`]): one atomic read.
    pub(crate) fn load_factor(&self) -> f64 {
        self.0.load_factor()
    }

    /// This replayed connection departed from the recording (`rtload serve --replay`).
    pub(crate) fn replay_diverged(&self) {
        self.0.diverged.fetch_add(1, Ordering::Relaxed);
    }
}

impl Drop for Conn {
    fn drop(&mut self) {
        self.0.active[self.1 as usize].fetch_sub(1, Ordering::Relaxed);
        self.0.admitted.fetch_sub(1, Ordering::Relaxed);
    }
}

impl ServerMetrics {
    /// Tallies for a server with `cfg`'s `max_sessions` and `[server.load]`.
    pub(crate) fn new(cfg: &ServerConfig) -> ServerMetrics {
        ServerMetrics {
            max_sessions: cfg.max_sessions.map(u64::from),
            load: cfg.load.clone(),
            ..ServerMetrics::default()
        }
    }

    /// A WebSocket connection to `ep` asks to be admitted: `None` (counted as refused)
    /// when `max_sessions` are open, else a [`Conn`] that counts as active until dropped.
    pub(crate) fn admit(self: &Arc<Self>, ep: Endpoint) -> Option<Conn> {
        let conn = self.try_admit(ep);
        if conn.is_none() {
            self.refused[ep as usize].fetch_add(1, Ordering::Relaxed);
        }
        conn
    }

    /// [`ServerMetrics::admit`] without counting a refusal: for a caller that hands a
    /// refused connection on to the path that refuses it (and counts it there).
    pub(crate) fn try_admit(self: &Arc<Self>, ep: Endpoint) -> Option<Conn> {
        let max = self.max_sessions.unwrap_or(u64::MAX);
        let won = self
            .admitted
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < max).then_some(n + 1)
            });
        if won.is_err() {
            return None;
        }
        self.accepted[ep as usize].fetch_add(1, Ordering::Relaxed);
        self.active[ep as usize].fetch_add(1, Ordering::Relaxed);
        Some(Conn(Arc::clone(self), ep))
    }

    /// `[server] max_sessions`, as configured.
    pub(crate) fn max_sessions(&self) -> Option<u64> {
        self.max_sessions
    }

    /// The load factor with the sessions admitted now.
    fn load_factor(&self) -> f64 {
        self.load.factor(self.admitted.load(Ordering::Relaxed))
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
        self.render_vllm(&mut e);
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
        e.counter(
            "rtload_server_sessions_refused_total",
            "WebSocket sessions refused because [server] max_sessions were open.",
            &rows(&per(&self.refused)),
        );
        e.counter(
            "rtload_server_replay_diverged_total",
            "Replayed sessions (rtload serve --replay) closed with 1008 because the client departed from the recording.",
            &[(&[], self.diverged.load(Ordering::Relaxed) as f64)],
        );
        e.finish()
    }

    /// vLLM's gauges, over the whole server (vLLM serves one model per process).
    fn render_vllm(&self, e: &mut Exposition) {
        let admitted = self.admitted.load(Ordering::Relaxed) as f64;
        let open: u64 = self.active.iter().map(|a| a.load(Ordering::Relaxed)).sum();
        e.gauge(
            "vllm:num_requests_running",
            "Sessions admitted and open (the requests the simulated model runs).",
            &[(&[], admitted)],
        );
        e.gauge(
            "vllm:num_requests_waiting",
            "Requests waiting: always 0, the embedded server refuses instead of queueing.",
            &[(&[], 0.0)],
        );
        e.gauge(
            "vllm:websocket_connections_active",
            "Number of currently active WebSocket connections.",
            &[(&[], open as f64)],
        );
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
