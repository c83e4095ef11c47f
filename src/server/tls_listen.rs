//! The embedded server's `wss://` listener. Before a connection is handed to rustls its
//! first byte is peeked (not consumed): a TLS connection opens with a handshake record
//! (`0x16`); anything else is a client speaking plain HTTP (`ws://`, `http://`) to a TLS
//! port, which gets a plain `400 Bad Request` naming the fix instead of a TLS alert
//! (which an HTTP client reads as "invalid HTTP version"), then the connection closes.
//!
//! actix-web's `HttpServer::bind_rustls_0_23` offers no hook below TLS, so this builds
//! the same service it does (actix-http's `HttpService` behind the rustls acceptor) on
//! actix-server directly, with the peek in front.

use std::any::Any;
use std::net::SocketAddr;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use actix_http::body::MessageBody;
use actix_http::{Extensions, HttpService, Request, Response};
use actix_rt::net::TcpStream;
use actix_service::{IntoServiceFactory, Service, ServiceFactory, ServiceFactoryExt as _};
use actix_web::dev::{AppConfig, Server};
use futures_util::future::LocalBoxFuture;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

use super::tls::ServerTls;

/// The first byte of a TLS record carrying a handshake message (a ClientHello).
pub(crate) const TLS_HANDSHAKE: u8 = 0x16;
/// How long a new connection may stay silent before it is dropped (rustls's own
/// handshake timeout in actix-tls is 3 s too).
const FIRST_BYTE_WAIT: Duration = Duration::from_secs(3);
/// Most bytes of a plain request read (to the end of its head) before answering, so
/// the close does not reset the connection over unread bytes and lose the answer.
const PLAIN_HEAD_BYTES: usize = 16 * 1024;
/// The answer's body: the cause and the fix.
pub(crate) const PLAIN_HINT: &str =
    "this port speaks TLS: connect with wss:// (https://), not ws:// (http://)\n";

/// The whole answer to a plain-HTTP request on the TLS port.
pub(crate) fn plain_answer() -> String {
    format!(
        "HTTP/1.1 400 Bad Request\r\ncontent-type: text/plain; charset=utf-8\r\n\
         content-length: {}\r\nconnection: close\r\n\r\n{PLAIN_HINT}",
        PLAIN_HINT.len()
    )
}

/// What a connection's first byte says it speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Speaks {
    /// A TLS handshake record: hand it to rustls.
    Tls,
    /// Anything else: plain text on a TLS port.
    Plain,
}

/// Classifies a connection by its first byte. Pure.
pub(crate) fn speaks(first: u8) -> Speaks {
    if first == TLS_HANDSHAKE {
        Speaks::Tls
    } else {
        Speaks::Plain
    }
}

/// Whether `head` holds a complete HTTP request head (ends with an empty line).
pub(crate) fn head_complete(head: &[u8]) -> bool {
    head.windows(4).any(|w| w == b"\r\n\r\n")
}

/// The server's own settings the TLS listener applies (as `HttpServer` does).
pub(super) struct ListenOpts {
    /// Worker threads.
    pub(super) workers: usize,
    /// Graceful stop, seconds.
    pub(super) shutdown_timeout_s: u64,
    /// Whether Ctrl-C / SIGTERM stop the server.
    pub(super) os_signals: bool,
}

/// The callback every accepted connection goes through (connection counting).
pub(super) type OnConnect = Arc<dyn Fn(&dyn Any, &mut Extensions) + Send + Sync>;

/// Binds `bind` (backlog 1024, as actix-web) and builds a server speaking TLS with the
/// app `factory` makes, plain requests answered with [`plain_answer`].
pub(super) fn server<F, I, S, B>(
    bind: SocketAddr,
    tls: ServerTls,
    factory: F,
    on_connect: OnConnect,
    opts: ListenOpts,
) -> std::io::Result<(Server, SocketAddr)>
where
    F: Fn() -> I + Send + Clone + 'static,
    I: IntoServiceFactory<S, Request>,
    S: ServiceFactory<Request, Config = AppConfig> + 'static,
    S::Error: Into<actix_web::Error> + 'static,
    S::InitError: std::fmt::Debug,
    S::Response: Into<Response<B>> + 'static,
    <S::Service as Service<Request>>::Future: 'static,
    S::Service: 'static,
    B: MessageBody + 'static,
{
    let lst = listener(bind)?;
    let addr = lst.local_addr()?;
    let mut builder = Server::build()
        .workers(opts.workers)
        .shutdown_timeout(opts.shutdown_timeout_s);
    if !opts.os_signals {
        builder = builder.disable_signals();
    }
    let signal = builder.graceful_shutdown_signal();
    let cfg = tls.0;
    let builder = builder.listen("rtload-wss", lst, move || {
        let signal = signal.clone();
        let on_connect = Arc::clone(&on_connect);
        let app = factory()
            .into_factory()
            .map_err(|err| err.into().error_response());
        let http = HttpService::build()
            .graceful_shutdown_signal(move || {
                let signal = signal.clone();
                async move { signal.notified().await }
            })
            // As `build_server` sets for plain connections (see there).
            .client_disconnect_timeout(Duration::ZERO)
            .tcp_nodelay(true)
            .secure()
            .local_addr(addr)
            .on_connect_ext(move |io: &_, ext: _| (on_connect)(io as &dyn Any, ext))
            .finish(actix_service::map_config(app, |_| AppConfig::default()))
            .rustls_0_23(cfg.clone());
        Sniffing(http)
    })?;
    Ok((builder.run(), addr))
}

/// A listening socket with actix-web's backlog (1024) and `SO_REUSEADDR`.
pub(super) fn listener(bind: SocketAddr) -> std::io::Result<std::net::TcpListener> {
    let socket = match bind {
        SocketAddr::V4(_) => tokio::net::TcpSocket::new_v4()?,
        SocketAddr::V6(_) => tokio::net::TcpSocket::new_v6()?,
    };
    socket.set_reuseaddr(true)?;
    socket.bind(bind)?;
    socket.listen(1024)?.into_std()
}

/// A connection service factory that peeks first (see the module doc).
struct Sniffing<T>(T);

impl<T> ServiceFactory<TcpStream> for Sniffing<T>
where
    T: ServiceFactory<TcpStream, Config = (), Response = ()>,
    T::Service: 'static,
    T::Future: 'static,
    T::Error: std::fmt::Display,
{
    type Response = ();
    type Error = ();
    type Config = ();
    type Service = Sniff<T::Service>;
    type InitError = T::InitError;
    type Future = LocalBoxFuture<'static, Result<Self::Service, Self::InitError>>;

    fn new_service(&self, _: ()) -> Self::Future {
        let inner = self.0.new_service(());
        Box::pin(async move { Ok(Sniff(Rc::new(inner.await?))) })
    }
}

/// The per-worker service: TLS connections go on to `S`, plain ones get the hint.
struct Sniff<S>(Rc<S>);

impl<S> Service<TcpStream> for Sniff<S>
where
    S: Service<TcpStream, Response = ()> + 'static,
    S::Error: std::fmt::Display,
{
    type Response = ();
    type Error = ();
    type Future = LocalBoxFuture<'static, Result<(), ()>>;

    fn poll_ready(&self, cx: &mut std::task::Context<'_>) -> std::task::Poll<Result<(), ()>> {
        self.0.poll_ready(cx).map_err(|e| {
            tracing::debug!("TLS acceptor not ready: {e}");
        })
    }

    fn call(&self, io: TcpStream) -> Self::Future {
        let inner = Rc::clone(&self.0);
        Box::pin(async move {
            let mut first = [0u8; 1];
            let peeked = tokio::time::timeout(FIRST_BYTE_WAIT, io.peek(&mut first)).await;
            match peeked {
                Ok(Ok(1..)) if speaks(first[0]) == Speaks::Tls => {
                    inner.call(io).await.map_err(|e| {
                        tracing::debug!("TLS connection failed: {e}");
                    })
                }
                Ok(Ok(1..)) => {
                    answer_plain(io).await;
                    Ok(())
                }
                // Closed, silent or failed before a byte: nothing to answer.
                _ => Ok(()),
            }
        })
    }
}

/// Reads the plain request's head (bounded, briefly), answers [`plain_answer`] and
/// closes.
async fn answer_plain(mut io: TcpStream) {
    let mut head = Vec::with_capacity(1024);
    let read = async {
        let mut buf = [0u8; 2048];
        while head.len() < PLAIN_HEAD_BYTES && !head_complete(&head) {
            match io.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => head.extend_from_slice(&buf[..n]),
            }
        }
    };
    let _ = tokio::time::timeout(FIRST_BYTE_WAIT, read).await;
    tracing::debug!("plain-text request on the TLS port answered with 400");
    let _ = io.write_all(plain_answer().as_bytes()).await;
    let _ = io.shutdown().await;
}

#[cfg(test)]
#[path = "tls_listen_tests.rs"]
mod tests;
