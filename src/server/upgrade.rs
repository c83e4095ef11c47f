//! The plain (`ws://`) listener, and the duplex and video endpoints owning their
//! sockets. The listener is actix-http's `HttpService` on actix-server (as
//! [`super::tls_listen`] builds it for `wss://`) with an upgrade service: every request
//! asking for an upgrade comes here with its connection. A WebSocket handshake for the
//! duplex endpoint (`GET /v1/realtime`, with `duplex=1` when transcription shares the
//! path) or the video endpoint (`GET /v1/realtime/video`) that is admitted under
//! `max_sessions` gets its `101` written here, and the connection then reads and writes
//! the socket itself ([`super::own_ws`]): no channel, no body stream, no second task per
//! message.
//!
//! Every other upgrade (another endpoint, a replay, a refused or malformed handshake)
//! is handed back to the app unchanged: its request head is written back in front of
//! the bytes still unread, and an HTTP/1 service without an upgrade hook serves the
//! connection, so those endpoints answer exactly as on actix-web's own listener.

use std::net::SocketAddr;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};
use std::time::Duration;

use actix_codec::{AsyncRead, AsyncWrite, Framed, ReadBuf};
use actix_http::body::MessageBody;
use actix_http::{HttpMessage as _, HttpService, Method, Request, Response, h1};
use actix_rt::net::TcpStream;
use actix_service::{IntoServiceFactory, Service, ServiceFactory, ServiceFactoryExt as _};
use actix_web::dev::{AppConfig, Server};
use actix_web::web;
use bytes::{Buf as _, BytesMut};
use futures_util::future::LocalBoxFuture;
use tokio::io::AsyncWriteExt as _;

use super::duplex::{self, DUPLEX_PATH, DuplexState};
use super::own_ws::{FrameReader, FrameWriter, Inbound, Outbound};
use super::tls_listen::{ListenOpts, OnConnect};
use super::video::{self, VIDEO_PATH, VideoState};
use super::ws::{Endpoint, Upgrades};

/// What decides whether an upgrade is served on an owned socket.
#[derive(Clone)]
pub(super) struct OwnRoutes {
    /// The duplex endpoint's state; `None` when another route owns its path (replay
    /// mode, a scripted endpoint on it).
    pub(super) duplex: Option<web::Data<DuplexState>>,
    /// The video endpoint's state; `None` when another route owns its path.
    pub(super) video: Option<web::Data<VideoState>>,
    /// Whether transcription shares the path (then only `duplex=1` is duplex).
    pub(super) shared_path: bool,
    /// Admission, limit and tallies.
    pub(super) upgrades: web::Data<Upgrades>,
}

/// An endpoint served on an owned socket, with its state.
enum Owned {
    Duplex(web::Data<DuplexState>),
    Video(web::Data<VideoState>),
}

impl Owned {
    fn endpoint(&self) -> Endpoint {
        match self {
            Owned::Duplex(_) => Endpoint::Duplex,
            Owned::Video(_) => Endpoint::Video,
        }
    }
}

impl OwnRoutes {
    /// The endpoint `req` is a sound WebSocket handshake for, when it is served here.
    fn route_for(&self, req: &Request) -> Option<Owned> {
        let uri = req.uri();
        let route = if uri.path() == DUPLEX_PATH {
            let query = uri.query().unwrap_or("");
            let duplex = !self.shared_path || super::transcription::wants_duplex(query);
            Owned::Duplex(self.duplex.clone().filter(|_| duplex)?)
        } else if uri.path() == VIDEO_PATH {
            Owned::Video(self.video.clone()?)
        } else {
            return None;
        };
        let sound =
            req.method() == Method::GET && actix_http::ws::verify_handshake(req.head()).is_ok();
        sound.then_some(route)
    }
}

/// Binds `bind` and builds the plain server: the app `factory` makes, every duplex
/// WebSocket on its own socket (see the module doc).
pub(super) fn server<F, I, S, B>(
    bind: SocketAddr,
    factory: F,
    on_connect: OnConnect,
    opts: ListenOpts,
    own: OwnRoutes,
) -> std::io::Result<(Server, SocketAddr)>
where
    F: Fn() -> I + Send + Clone + 'static,
    I: IntoServiceFactory<S, actix_http::Request>,
    S: ServiceFactory<actix_http::Request, Config = AppConfig> + 'static,
    S::Error: Into<actix_web::Error> + 'static,
    S::InitError: std::fmt::Debug,
    S::Response: Into<Response<B>> + 'static,
    <S::Service as Service<actix_http::Request>>::Future: 'static,
    S::Service: 'static,
    B: MessageBody + 'static,
{
    let lst = super::tls_listen::listener(bind)?;
    let addr = lst.local_addr()?;
    let mut builder = Server::build()
        .workers(opts.workers)
        .shutdown_timeout(opts.shutdown_timeout_s);
    if !opts.os_signals {
        builder = builder.disable_signals();
    }
    let signal = builder.graceful_shutdown_signal();
    let builder = builder.listen("rtload-ws", lst, move || {
        let signal = signal.clone();
        let on_connect = std::sync::Arc::clone(&on_connect);
        let again = factory.clone();
        let upgrade = UpgradeFactory {
            own: Rc::new(own.clone()),
            fallback: Rc::new(move || fallback(again.clone())),
        };
        let app = factory()
            .into_factory()
            .map_err(|err| err.into().error_response());
        HttpService::build()
            .graceful_shutdown_signal(move || {
                let signal = signal.clone();
                async move { signal.notified().await }
            })
            // After the WebSocket close handshake the connection is dropped at once:
            // the default (1 s) holds the TCP connection open, and clients that wait
            // for the server's close (Python `websockets`) hold their slot that long.
            .client_disconnect_timeout(Duration::ZERO)
            .tcp_nodelay(true)
            .local_addr(addr)
            .on_connect_ext(move |io: &TcpStream, ext: _| {
                (on_connect)(io as &dyn std::any::Any, ext)
            })
            .upgrade(upgrade)
            .finish(actix_service::map_config(app, |_| AppConfig::default()))
            .tcp()
    })?;
    Ok((builder.run(), addr))
}

/// Serves one connection handed back to the app (see the module doc).
type Fallback = Rc<dyn Fn(Prefixed, Option<SocketAddr>) -> LocalBoxFuture<'static, ()>>;

/// Builds a worker's [`Fallback`]: the app behind an HTTP/1 service without an
/// upgrade hook.
fn fallback<F, I, S, B>(factory: F) -> LocalBoxFuture<'static, Result<Fallback, ()>>
where
    F: Fn() -> I + 'static,
    I: IntoServiceFactory<S, actix_http::Request>,
    S: ServiceFactory<actix_http::Request, Config = AppConfig> + 'static,
    S::Error: Into<actix_web::Error> + 'static,
    S::InitError: std::fmt::Debug,
    S::Response: Into<Response<B>> + 'static,
    <S::Service as Service<actix_http::Request>>::Future: 'static,
    S::Service: 'static,
    B: MessageBody + 'static,
{
    let app = factory()
        .into_factory()
        .map_err(|err| err.into().error_response());
    let h1 = HttpService::<Prefixed, _, _>::build()
        .client_disconnect_timeout(Duration::ZERO)
        .h1(actix_service::map_config(app, |_| AppConfig::default()));
    Box::pin(async move {
        let handler = Rc::new(h1.new_service(()).await?);
        let serve: Fallback = Rc::new(move |io, peer| {
            let handler = Rc::clone(&handler);
            Box::pin(async move {
                if let Err(err) = handler.call((io, peer)).await {
                    tracing::debug!("connection ended with an error: {err}");
                }
            })
        });
        Ok(serve)
    })
}

/// The upgrade service's factory (one per worker).
struct UpgradeFactory {
    own: Rc<OwnRoutes>,
    fallback: Rc<dyn Fn() -> LocalBoxFuture<'static, Result<Fallback, ()>>>,
}

impl ServiceFactory<(Request, Framed<TcpStream, h1::Codec>)> for UpgradeFactory {
    type Response = ();
    type Error = actix_web::Error;
    type Config = ();
    type Service = Upgrade;
    type InitError = ();
    type Future = LocalBoxFuture<'static, Result<Upgrade, ()>>;

    fn new_service(&self, _: ()) -> Self::Future {
        let own = Rc::clone(&self.own);
        let fallback = (self.fallback)();
        Box::pin(async move {
            Ok(Upgrade {
                own,
                fallback: fallback.await?,
            })
        })
    }
}

/// The upgrade service of one worker.
struct Upgrade {
    own: Rc<OwnRoutes>,
    fallback: Fallback,
}

impl Service<(Request, Framed<TcpStream, h1::Codec>)> for Upgrade {
    type Response = ();
    type Error = actix_web::Error;
    type Future = LocalBoxFuture<'static, Result<(), actix_web::Error>>;

    actix_service::always_ready!();

    fn call(&self, (req, framed): (Request, Framed<TcpStream, h1::Codec>)) -> Self::Future {
        let own = Rc::clone(&self.own);
        let fallback = Rc::clone(&self.fallback);
        Box::pin(async move {
            let parts = framed.into_parts();
            let admitted = own.route_for(&req).and_then(|route| {
                let (conn, max) = own.upgrades.admit_own(route.endpoint())?;
                Some((route, conn, max))
            });
            if let Some((route, conn, max)) = admitted {
                let query_session_id = duplex::query_session_id(req.uri().query().unwrap_or(""));
                let Some(socket) = handshake(&req, parts.io, parts.read_buf, max).await else {
                    return Ok(());
                };
                match route {
                    Owned::Duplex(state) => {
                        duplex::run_owned(socket, state, query_session_id, conn).await;
                    }
                    Owned::Video(state) => video::run_owned(socket, state, conn).await,
                }
            } else {
                let mut prefix = head_bytes(&req);
                prefix.extend_from_slice(&parts.read_buf);
                let mut io = parts.io;
                if !parts.write_buf.is_empty() && io.write_all(&parts.write_buf).await.is_err() {
                    return Ok(());
                }
                fallback(Prefixed { prefix, io }, req.peer_addr()).await;
            }
            // `req` (and the connection's count in its extensions) lives to here.
            drop(req);
            Ok(())
        })
    }
}

/// Answers the handshake with `101` and splits the socket into its halves; `None` when
/// the peer is already gone.
async fn handshake(
    req: &Request,
    io: TcpStream,
    read_ahead: BytesMut,
    max: usize,
) -> Option<(Inbound, Outbound)> {
    let key = req.headers().get(actix_http::header::SEC_WEBSOCKET_KEY)?;
    let accept = actix_http::ws::hash_key(key.as_bytes());
    let mut head = Vec::with_capacity(160);
    head.extend_from_slice(
        b"HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\nconnection: upgrade\r\nsec-websocket-accept: ",
    );
    head.extend_from_slice(&accept);
    head.extend_from_slice(b"\r\n\r\n");
    let (read, write) = io.into_split();
    let mut writer = FrameWriter::with_head(write, &head);
    writer.flush().await.ok()?;
    let reader = FrameReader::new(read, read_ahead, max);
    Some((Inbound::Own(reader), Outbound::Own(writer)))
}

/// `req`'s head as HTTP/1.1 text, as the client sent it (header names lowercase).
fn head_bytes(req: &Request) -> BytesMut {
    let mut head = BytesMut::with_capacity(1024);
    let target = req
        .uri()
        .path_and_query()
        .map_or("/", |pq| pq.as_str())
        .to_string();
    head.extend_from_slice(format!("{} {target} HTTP/1.1\r\n", req.method()).as_bytes());
    for (name, value) in req.headers().iter() {
        head.extend_from_slice(name.as_str().as_bytes());
        head.extend_from_slice(b": ");
        head.extend_from_slice(value.as_bytes());
        head.extend_from_slice(b"\r\n");
    }
    head.extend_from_slice(b"\r\n");
    head
}

/// A connection whose first bytes are `prefix` (a request head written back), then
/// the socket's.
pub(super) struct Prefixed {
    prefix: BytesMut,
    io: TcpStream,
}

impl AsyncRead for Prefixed {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        if self.prefix.is_empty() {
            return Pin::new(&mut self.io).poll_read(cx, buf);
        }
        let n = self.prefix.len().min(buf.remaining());
        buf.put_slice(&self.prefix[..n]);
        self.prefix.advance(n);
        Poll::Ready(Ok(()))
    }
}

impl AsyncWrite for Prefixed {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.io).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}

#[cfg(test)]
#[path = "upgrade_tests.rs"]
mod tests;
