//! Embedded reference server: an actix-web app that speaks the realtime protocols
//! from the server side, so rtload can be tested and demonstrated without a GPU.
//! This module owns the app, its routes and startup/shutdown; `config` owns the
//! config types, `video` the `/v1/realtime/video` endpoint and `video_plan` its pure
//! core, `duplex` the `/v1/realtime` duplex speech endpoint and `duplex_plan` its pure
//! core, `scripted` the `[server.scripted]` rule endpoint and `scripted_plan` its pure
//! core, `transcription` the vLLM speech-to-text protocol (on `/v1/realtime` for clients
//! without `duplex=1`, or its own path) and `transcription_plan` its pure core, `metrics`
//! the server's own Prometheus `/metrics`, `replay` `rtload serve --replay` (every path
//! plays a recording's server side; `replay::plan` its pure core), `wire` the text of an
//! outbound JSON event, and
//! `ws` the one WebSocket endpoint helper every route upgrades through (`frame_guard`'s
//! header check, the `max_frame_bytes` limit, the close with 1009, `max_sessions`
//! admission and `refuse`'s refusals, `/metrics` accounting, socket options). Each endpoint exposes a shared state type and a `register` fn; adding
//! another endpoint is one more `.configure(..)` in `build_server`. It never imports client
//! modules, and the client side never imports it.
//!
//! Every accepted TCP connection gets `TCP_NODELAY` (`HttpServer::tcp_nodelay(true)`, and
//! [`ws::socket_options`] from `on_connect`): without it small server messages wait
//! ~20 ms (Nagle + delayed ACK).

pub mod config;
mod duplex;
mod duplex_plan;
mod frame_guard;
mod metrics;
mod own_ws;
mod refuse;
pub mod replay;
mod scripted;
mod scripted_plan;
mod tls;
mod tls_listen;
mod transcription;
mod transcription_plan;
mod upgrade;
mod vad;
mod video;
mod video_plan;
mod wire;
mod ws;

#[cfg(test)]
mod duplex_tests;
#[cfg(test)]
mod test_client;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod transcription_tests;

use std::net::SocketAddr;
use std::sync::{Arc, Condvar, Mutex, mpsc};
use std::thread::JoinHandle;
use std::time::Duration;

use actix_web::{App, dev::ServerHandle, web};

pub use config::{ServerConfig, ServerError};
pub use duplex::DUPLEX_PATH;
pub use replay::{Replay, ReplayError, ReplayOptions};
pub use tls::{ServerTls, ServerTlsError, load_tls};
pub use video::VIDEO_PATH;

/// What an endpoint's socket loop does after handling one event (shared by every
/// endpoint).
enum Flow {
    Continue,
    /// Stop the loop and send a close frame with this reason.
    Close(Option<actix_ws::CloseReason>),
    /// Stop the loop; the socket is already gone.
    Gone,
}

impl From<actix_ws::Closed> for Flow {
    fn from(_: actix_ws::Closed) -> Flow {
        Flow::Gone
    }
}

impl From<own_ws::Gone> for Flow {
    fn from(_: own_ws::Gone) -> Flow {
        Flow::Gone
    }
}

/// A running embedded server on its own thread (with its own actix `System`).
/// Stopped gracefully by [`EmbeddedServer::stop`] or on drop.
pub struct EmbeddedServer {
    /// Address the listener is bound to (the real port when bound to port 0).
    addr: SocketAddr,
    /// Handle used to ask the server to stop; `None` once stopped.
    handle: Option<ServerHandle>,
    /// Open TCP connections; a graceful stop waits for it to reach zero.
    conns: Arc<ConnTracker>,
    /// Upper bound on that wait.
    shutdown_timeout: Duration,
    /// The thread running the actix `System`; joined on stop.
    thread: Option<JoinHandle<std::io::Result<()>>>,
}

impl EmbeddedServer {
    /// Binds `bind` (use port 0 for an ephemeral port), starts the server on a new
    /// thread and returns once it is accepting connections.
    pub fn start(bind: SocketAddr, cfg: ServerConfig) -> std::io::Result<EmbeddedServer> {
        Self::start_with(bind, cfg, None)
    }

    /// [`EmbeddedServer::start`] in replay mode: every WebSocket path plays `replay`'s
    /// server side (`rtload serve --replay`); `/metrics` stays.
    pub fn start_replay(
        bind: SocketAddr,
        cfg: ServerConfig,
        replay: Replay,
    ) -> std::io::Result<EmbeddedServer> {
        Self::start_with(bind, cfg, Some(Arc::new(replay)))
    }

    fn start_with(
        bind: SocketAddr,
        cfg: ServerConfig,
        replay: Option<Arc<Replay>>,
    ) -> std::io::Result<EmbeddedServer> {
        validate(&cfg)?;
        let conns = Arc::new(ConnTracker::default());
        let shutdown_timeout = Duration::from_secs(cfg.shutdown_timeout_s);
        let thread_conns = Arc::clone(&conns);
        let (tx, rx) = mpsc::channel::<std::io::Result<(SocketAddr, ServerHandle)>>();
        let thread = std::thread::Builder::new()
            .name("rtload-server".to_string())
            .spawn(move || {
                actix_rt::System::new().block_on(async move {
                    let routes = Routes::new(&cfg, replay);
                    match build_server(bind, &cfg, routes, None, thread_conns, false) {
                        Ok((server, addr)) => {
                            let _ = tx.send(Ok((addr, server.handle())));
                            server.await
                        }
                        Err(err) => {
                            let _ = tx.send(Err(err));
                            Ok(())
                        }
                    }
                })
            })?;
        match rx.recv() {
            Ok(Ok((addr, handle))) => Ok(EmbeddedServer {
                addr,
                handle: Some(handle),
                conns,
                shutdown_timeout,
                thread: Some(thread),
            }),
            Ok(Err(err)) => {
                let _ = thread.join();
                Err(err)
            }
            Err(_) => {
                let _ = thread.join();
                Err(std::io::Error::other("server thread exited during startup"))
            }
        }
    }

    /// The bound address (with the real port).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `ws://<addr>/v1/realtime/video`.
    pub fn video_url(&self) -> String {
        format!("ws://{}{}", self.addr, VIDEO_PATH)
    }

    /// `ws://<addr>/v1/realtime` (the duplex speech endpoint; clients add their query).
    pub fn duplex_url(&self) -> String {
        format!("ws://{}{}", self.addr, DUPLEX_PATH)
    }

    /// Graceful stop: stops accepting, waits (up to `shutdown_timeout_s`) until every
    /// open connection has ended, then stops the server (dropping any connection still
    /// open) and joins its thread. Blocks the calling thread, so end client sessions
    /// driven from this thread first.
    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        if let Some(handle) = self.handle.take() {
            // Commands are queued synchronously; the returned futures only report
            // completion, which joining the thread below also gives us. We wait on our
            // own connection count because actix-server's graceful stop polls open
            // connections only once a second.
            drop(handle.pause());
            self.conns.wait_idle(self.shutdown_timeout);
            drop(handle.stop(false));
        }
        let Some(thread) = self.thread.take() else {
            return;
        };
        match thread.join() {
            Ok(Ok(())) => {}
            Ok(Err(err)) => tracing::warn!("embedded server stopped with an error: {err}"),
            Err(_) => tracing::warn!("embedded server thread panicked"),
        }
    }
}

impl Drop for EmbeddedServer {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// Runs the server on the calling thread until Ctrl-C / SIGTERM (graceful stop).
/// Prints nothing; errors binding or serving are returned.
///
/// `on_bound` is called with the real address once the listener is bound (before any
/// connection is accepted), so a caller can announce it. With `tls` the same routes are
/// served as `wss://` (see [`load_tls`]).
pub fn serve_blocking(
    bind: SocketAddr,
    cfg: ServerConfig,
    tls: Option<ServerTls>,
    on_bound: impl FnOnce(SocketAddr),
) -> std::io::Result<()> {
    serve_with(bind, cfg, tls, None, on_bound)
}

/// [`serve_blocking`] in replay mode (`rtload serve --replay`): every WebSocket path
/// plays `replay`'s server side; `/metrics` stays.
pub fn serve_replay_blocking(
    bind: SocketAddr,
    cfg: ServerConfig,
    tls: Option<ServerTls>,
    replay: Replay,
    on_bound: impl FnOnce(SocketAddr),
) -> std::io::Result<()> {
    serve_with(bind, cfg, tls, Some(Arc::new(replay)), on_bound)
}

fn serve_with(
    bind: SocketAddr,
    cfg: ServerConfig,
    tls: Option<ServerTls>,
    replay: Option<Arc<Replay>>,
    on_bound: impl FnOnce(SocketAddr),
) -> std::io::Result<()> {
    validate(&cfg)?;
    actix_rt::System::new().block_on(async move {
        let conns = Arc::new(ConnTracker::default());
        let routes = Routes::new(&cfg, replay);
        let (server, addr) = build_server(bind, &cfg, routes, tls, conns, true)?;
        on_bound(addr);
        server.await
    })
}

fn validate(cfg: &ServerConfig) -> std::io::Result<()> {
    cfg.validate()
        .map_err(|err| std::io::Error::new(std::io::ErrorKind::InvalidInput, err.to_string()))
}

/// Every route's shared state, cloned into each worker's `App`.
#[derive(Clone)]
struct Routes {
    video: web::Data<video::VideoState>,
    duplex: web::Data<duplex::DuplexState>,
    stt: web::Data<transcription::TranscriptionState>,
    scripted: Option<web::Data<scripted::ScriptedState>>,
    scripted_path: String,
    replay: Option<web::Data<replay::ReplayState>>,
    upgrades: web::Data<ws::Upgrades>,
    metrics: web::Data<Arc<metrics::ServerMetrics>>,
}

impl Routes {
    fn new(cfg: &ServerConfig, replay: Option<Arc<Replay>>) -> Routes {
        let tallies = Arc::new(metrics::ServerMetrics::new(cfg));
        Routes {
            video: web::Data::new(video::VideoState::new(cfg)),
            duplex: web::Data::new(duplex::DuplexState::new(cfg)),
            stt: web::Data::new(transcription::TranscriptionState::new(cfg)),
            scripted: (cfg.scripted.enabled())
                .then(|| scripted::ScriptedState::new(cfg).map(web::Data::new))
                .flatten(),
            scripted_path: cfg.scripted.path.clone(),
            replay: replay.map(|r| web::Data::new(replay::ReplayState::new(r, cfg.idle_timeout_s))),
            upgrades: web::Data::new(ws::Upgrades::new(cfg, Arc::clone(&tallies))),
            metrics: web::Data::new(tallies),
        }
    }

    /// What the plain listener serves on sockets of its own: the duplex and video
    /// endpoints, each unless a replay or a scripted endpoint owns its path.
    fn own(&self, cfg: &ServerConfig) -> upgrade::OwnRoutes {
        let shadowed = |path: &str| {
            self.replay.is_some() || (self.scripted.is_some() && self.scripted_path == path)
        };
        upgrade::OwnRoutes {
            duplex: (!shadowed(DUPLEX_PATH)).then(|| self.duplex.clone()),
            video: (!shadowed(VIDEO_PATH)).then(|| self.video.clone()),
            shared_path: cfg.transcription.path == DUPLEX_PATH,
            upgrades: self.upgrades.clone(),
        }
    }

    /// Registers every endpoint: in replay mode the replay on every path but
    /// `/metrics`; else scripted first (when configured, its path wins over a built-in
    /// endpoint), then transcription (on a shared path its guard passes `duplex=1`
    /// clients on to duplex).
    fn configure(self, svc: &mut web::ServiceConfig) {
        ws::register(svc, self.upgrades);
        if let Some(state) = self.replay {
            replay::register(svc, state);
        } else {
            if let Some(state) = self.scripted {
                scripted::register(svc, &self.scripted_path, state);
            }
            video::register(svc, self.video);
            transcription::register(svc, self.stt);
            duplex::register(svc, self.duplex);
        }
        metrics::register(svc, self.metrics);
    }
}

/// Binds `bind` (actix's listener: backlog 1024; with `tls`, [`tls_listen`]'s, which
/// answers plain HTTP on the TLS port with the fix) and builds
/// the server with `routes`. Must be called inside an actix `System`.
/// Returns the server future (not yet polled) and the bound address.
fn build_server(
    bind: SocketAddr,
    cfg: &ServerConfig,
    routes: Routes,
    tls: Option<ServerTls>,
    conns: Arc<ConnTracker>,
    os_signals: bool,
) -> std::io::Result<(actix_web::dev::Server, SocketAddr)> {
    let own = routes.own(cfg);
    let app = move || {
        let routes = routes.clone();
        App::new().configure(move |svc| routes.configure(svc))
    };
    let on_connect: tls_listen::OnConnect = Arc::new(move |io, ext| {
        ws::socket_options(io);
        ext.insert(conns.enter());
    });
    let opts = tls_listen::ListenOpts {
        workers: cfg.workers,
        shutdown_timeout_s: cfg.shutdown_timeout_s,
        os_signals,
    };
    if let Some(tls) = tls {
        // Its own listener: it peeks before TLS to answer plain HTTP with the fix.
        return tls_listen::server(bind, tls, app, on_connect, opts);
    }
    upgrade::server(bind, app, on_connect, opts, own)
}

/// Counts open TCP connections so a graceful stop can wait for them: every accepted
/// connection's extensions hold a [`ConnGuard`], dropped when the connection ends.
#[derive(Default)]
struct ConnTracker {
    /// Number of open connections.
    live: Mutex<usize>,
    /// Notified whenever `live` drops to zero.
    idle: Condvar,
}

impl ConnTracker {
    /// Counts one connection until the guard is dropped.
    fn enter(self: &Arc<Self>) -> ConnGuard {
        if let Ok(mut live) = self.live.lock() {
            *live += 1;
        }
        ConnGuard(Arc::clone(self))
    }

    /// Blocks until no connection is open or `timeout` passed.
    fn wait_idle(&self, timeout: Duration) {
        if let Ok(live) = self.live.lock() {
            let _ = self
                .idle
                .wait_timeout_while(live, timeout, |live| *live > 0);
        }
    }
}

/// Keeps one connection counted in its [`ConnTracker`] while alive.
struct ConnGuard(Arc<ConnTracker>);

impl Drop for ConnGuard {
    fn drop(&mut self) {
        if let Ok(mut live) = self.0.live.lock() {
            *live = live.saturating_sub(1);
            if *live == 0 {
                self.0.idle.notify_all();
            }
        }
    }
}
