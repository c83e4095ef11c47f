//! Embedded reference server: an actix-web app that speaks the realtime protocols
//! from the server side, so rtload can be tested and demonstrated without a GPU.
//! This module owns the app, its routes and startup/shutdown; `config` owns the
//! config types, `video` the `/v1/realtime/video` endpoint and `video_plan` its pure
//! core. Each endpoint exposes a shared state type and a `register` fn; adding another
//! endpoint (e.g. `duplex` for `/v1/realtime`) is one more `.configure(..)` in
//! `build_server`. It never imports client modules, and the client side never
//! imports it.
//!
//! Every accepted TCP connection gets `TCP_NODELAY` (`HttpServer::tcp_nodelay(true)`):
//! without it small server messages wait ~20 ms (Nagle + delayed ACK).

pub mod config;
mod video;
mod video_plan;

#[cfg(test)]
mod tests;

use std::net::SocketAddr;
use std::sync::mpsc;
use std::thread::JoinHandle;

use actix_web::{App, HttpServer, dev::ServerHandle, web};

pub use config::{ServerConfig, ServerError, VideoFaults, VideoServerConfig};
pub use video::VIDEO_PATH;

/// A running embedded server on its own thread (with its own actix `System`).
/// Stopped gracefully by [`EmbeddedServer::stop`] or on drop.
pub struct EmbeddedServer {
    /// Address the listener is bound to (the real port when bound to port 0).
    addr: SocketAddr,
    /// Handle used to ask the server to stop; `None` once stopped.
    handle: Option<ServerHandle>,
    /// The thread running the actix `System`; joined on stop.
    thread: Option<JoinHandle<std::io::Result<()>>>,
}

impl EmbeddedServer {
    /// Binds `bind` (use port 0 for an ephemeral port), starts the server on a new
    /// thread and returns once it is accepting connections.
    pub fn start(bind: SocketAddr, cfg: ServerConfig) -> std::io::Result<EmbeddedServer> {
        validate(&cfg)?;
        let (tx, rx) = mpsc::channel::<std::io::Result<(SocketAddr, ServerHandle)>>();
        let thread = std::thread::Builder::new()
            .name("rtload-server".to_string())
            .spawn(move || {
                actix_rt::System::new().block_on(async move {
                    match build_server(bind, &cfg, false) {
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

    /// Stops accepting, lets open connections finish (up to `shutdown_timeout_s`) and
    /// joins the server thread.
    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        if let Some(handle) = self.handle.take() {
            // The command is queued synchronously; the returned future only reports
            // completion, which joining the thread below also gives us.
            drop(handle.stop(true));
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
pub fn serve_blocking(bind: SocketAddr, cfg: ServerConfig) -> std::io::Result<()> {
    validate(&cfg)?;
    actix_rt::System::new().block_on(async move {
        let (server, _addr) = build_server(bind, &cfg, true)?;
        server.await
    })
}

fn validate(cfg: &ServerConfig) -> std::io::Result<()> {
    cfg.validate()
        .map_err(|err| std::io::Error::new(std::io::ErrorKind::InvalidInput, err.to_string()))
}

/// Binds `bind` (actix's listener: backlog 1024) and builds the server with every
/// endpoint registered. Must be called inside an actix `System`. Returns the server
/// future (not yet polled) and the bound address.
fn build_server(
    bind: SocketAddr,
    cfg: &ServerConfig,
    os_signals: bool,
) -> std::io::Result<(actix_web::dev::Server, SocketAddr)> {
    let video_state = web::Data::new(video::VideoState::new(cfg));
    let server = HttpServer::new(move || {
        let video_state = video_state.clone();
        App::new().configure(move |svc| video::register(svc, video_state))
    })
    .workers(cfg.workers)
    .tcp_nodelay(true)
    .shutdown_timeout(cfg.shutdown_timeout_s);
    let server = if os_signals {
        server
    } else {
        server.disable_signals()
    };
    let server = server.bind(bind)?;
    let addr = server
        .addrs()
        .first()
        .copied()
        .ok_or_else(|| std::io::Error::other("server bound no address"))?;
    Ok((server.run(), addr))
}
