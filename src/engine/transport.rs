//! The WebSocket transport edge: awc connect on the shard thread (every socket with
//! `TCP_NODELAY`, `permessage-deflate` offered and negotiated), a frame-size limit
//! enforced from the frame header ([`LimitedCodec`], which also inflates and deflates),
//! frame reassembly.
//!
//! awc's client, connection and errors are not `Send`: everything here runs on the shard
//! thread that owns the sample, and errors leave this module as owned strings. This
//! module never interprets payloads. `wss://` uses the run's [`ClientTls`] (built once
//! per run by the caller); TLS failures read as their cause (see [`super::tls`]), and so
//! does a `ws://` client answered by a TLS server (`scheme_hint`).

use std::cell::RefCell;
use std::time::Duration;

use actix_http::ws::Item;
use awc::ws::{Frame, Message};
use bytes::{Bytes, BytesMut};

use super::tls::ClientTls;
use crate::workload::{ConnectSpec, Inbound};

mod codec;
pub mod deflate;
mod frame;
pub mod receipts;
pub mod refusal;
mod scheme_hint;
mod split;
pub mod stamped;
#[cfg(test)]
mod tests;
mod wire;
pub use codec::{FrameError, KEEP_WRITE_BUF_BYTES, LimitedCodec, peek_header};
pub use deflate::Compression;
pub use refusal::Refusal;
#[cfg(test)]
pub(crate) use split::split;
pub use split::{WsSink, WsStream};
pub use wire::{Wire, describe as describe_wire};

/// Default largest inbound frame or message (the reference allows 64 MiB).
pub const MAX_MESSAGE_BYTES: usize = 64 * 1024 * 1024;

/// A transport failure, owned and `Send` so it can cross actor boundaries.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TransportError {
    /// The WebSocket handshake did not complete.
    #[error("connect to {url} failed: {msg}")]
    Connect {
        /// The URL, redacted (no user info, no credential query values).
        url: String,
        /// awc's error text.
        msg: String,
        /// Why, for counting: connect, handshake (with the HTTP status) or timeout.
        kind: crate::workload::FailureKind,
    },
    /// Reading a frame failed.
    #[error("receive failed: {0}")]
    Recv(String),
}

/// A shard's client and the TLS configuration it was built with (`None`: plain only).
type ShardClient = (Option<ClientTls>, awc::Client);
impl TransportError {
    /// This error as a sample failure (same message).
    pub fn failure(&self) -> crate::workload::Failure {
        use crate::workload::FailureKind;
        let kind = match self {
            TransportError::Connect { kind, .. } => *kind,
            TransportError::Recv(_) => FailureKind::Transport,
        };
        crate::workload::Failure::new(kind, self.to_string())
    }
}

thread_local! {
    /// One client per shard thread. `limit(0)`: the default limit of 100 counts live
    /// WebSockets and silently delays the 101st session.
    static CLIENT: RefCell<Option<ShardClient>> = const { RefCell::new(None) };
}

/// A connected TCP stream, as actix-tls's connector hands it to awc.
type TcpConnection = actix_tls::connect::Connection<awc::http::Uri, tokio::net::TcpStream>;

/// A connected TCP stream read with the kernel's receive times ([`stamped`]).
type StampedConnection = actix_tls::connect::Connection<awc::http::Uri, stamped::StampedTcp>;

/// Sets `TCP_NODELAY` on a socket awc just connected, before TLS or the upgrade request:
/// without it a small message sent right after another waits for the peer's delayed ACK
/// (40 ms on Linux), and no send-lateness figure can see it (the bytes wait in the kernel).
/// Then asks the kernel to stamp what the socket receives ([`stamped::StampedTcp`]).
fn nodelay(conn: TcpConnection) -> StampedConnection {
    if let Err(e) = conn.io_ref().set_nodelay(true) {
        tracing::warn!("cannot set TCP_NODELAY: {e}");
    }
    let (tcp, conn) = conn.replace_io(());
    conn.replace_io(stamped::StampedTcp::new(tcp)).1
}

fn client(tls: Option<&ClientTls>) -> awc::Client {
    use actix_service::ServiceExt as _;
    let same = |have: &Option<ClientTls>| match (have, tls) {
        (Some(a), Some(b)) => std::sync::Arc::ptr_eq(&a.0, &b.0),
        (None, None) => true,
        _ => false,
    };
    CLIENT.with(|c| {
        let mut c = c.borrow_mut();
        if !c.as_ref().is_some_and(|(have, _)| same(have)) {
            *c = None;
        }
        c.get_or_insert_with(|| {
            // awc's own resolve-and-connect service, each socket set to TCP_NODELAY and
            // read with the kernel's receive times.
            let tcp = actix_tls::connect::Connector::new(actix_tls::connect::Resolver::default())
                .service()
                .map(nodelay as fn(TcpConnection) -> StampedConnection);
            let mut connector = awc::Connector::new().connector(tcp).limit(0);
            if let Some(t) = tls {
                connector = connector.rustls_0_23(t.0.clone());
            }
            let client = awc::Client::builder()
                .wrap(refusal::ReadRefusals)
                .connector(connector)
                .disable_timeout()
                .finish();
            (tls.cloned(), client)
        })
        .1
        .clone()
    })
}

/// Open the session's WebSocket on the current (shard) thread and split it. `tls` is
/// the run's client TLS configuration (required for `wss://`); `wire` says what to offer
/// and counts what was agreed. Inbound frames and reassembled (or inflated) messages
/// larger than `max_frame_bytes` fail the read.
///
/// An upgrade refused with 429 or 503 is tried again after the server's `Retry-After`
/// as often as `wire.retry_rejected` allows ([`refusal::retry_wait`]); each retry is a
/// new request, counted in the run's wire tally.
pub async fn connect(
    spec: &ConnectSpec,
    timeout: Duration,
    tls: Option<&ClientTls>,
    max_frame_bytes: usize,
    wire: &Wire,
) -> Result<(WsSink, WsStream), TransportError> {
    let started = tokio::time::Instant::now();
    let mut retried = 0;
    loop {
        let (mut error, refusal) = match attempt(spec, timeout, tls, max_frame_bytes, wire).await {
            Ok(halves) => return Ok(halves),
            Err(failed) => failed,
        };
        let Some(refusal) = refusal else {
            return Err(error);
        };
        match refusal::retry_wait(&refusal, retried, wire.retry_rejected) {
            Ok(wait) => {
                wire.record_retry();
                tracing::debug!(
                    status = refusal.status,
                    wait_s = wait.as_secs_f64(),
                    "upgrade refused; retrying"
                );
                tokio::time::sleep(wait).await;
                retried += 1;
            }
            Err(why) => {
                if let TransportError::Connect { msg, .. } = &mut error {
                    msg.push_str(&refusal::retry_note(
                        why.as_deref(),
                        retried,
                        started.elapsed(),
                        wire.retry_rejected,
                    ));
                }
                return Err(error);
            }
        }
    }
}

/// One upgrade attempt; a failure comes with the refusal behind it, if the server
/// answered with a status other than 101.
async fn attempt(
    spec: &ConnectSpec,
    timeout: Duration,
    tls: Option<&ClientTls>,
    max_frame_bytes: usize,
    wire: &Wire,
) -> Result<(WsSink, WsStream), (TransportError, Option<Refusal>)> {
    use crate::workload::FailureKind;
    let err = |msg: String, kind: FailureKind| TransportError::Connect {
        url: crate::util::target::redact_url(&spec.url),
        msg: crate::util::target::redact_text(&msg),
        kind,
    };
    // URL user info goes as `Authorization: Basic` (as curl does) unless a header says otherwise.
    let (url, basic) = crate::util::target::split_user_info(&spec.url);
    let mut req = client(tls).ws(url.as_str()).max_frame_size(max_frame_bytes);
    let has_auth = spec
        .headers
        .iter()
        .any(|(k, _)| k.eq_ignore_ascii_case("authorization"));
    if let Some(basic) = basic.filter(|_| !has_auth) {
        req = req.set_header("Authorization", basic);
    }
    if let Some(offer) = wire.compression.offer() {
        req = req.set_header("Sec-WebSocket-Extensions", offer);
    }
    for (k, v) in &spec.headers {
        req = req.set_header(k.as_str(), v.as_str());
    }
    let connected = tokio::time::timeout(timeout, req.connect())
        .await
        .map_err(|_| {
            let msg = format!("no handshake within {:.0} s", timeout.as_secs_f64());
            (err(msg, FailureKind::Timeout), None)
        })?;
    let (resp, framed) = match connected {
        Ok(ok) => ok,
        Err(e) => {
            if let Some(r) = refusal_of(&e) {
                let kind = FailureKind::Handshake {
                    status: Some(r.status),
                };
                return Err((err(r.to_string(), kind), Some(r)));
            }
            let kind = match &e {
                awc::error::WsClientError::SendRequest(_) => FailureKind::Connect,
                _ => FailureKind::Handshake { status: None },
            };
            let msg = match super::tls::rustls_error(&e) {
                Some(t) => super::tls::explain(t),
                None => scheme_hint::plain_to_tls(&spec.url, &e).unwrap_or_else(|| e.to_string()),
            };
            return Err((err(msg, kind), None));
        }
    };
    let agreed = negotiated(&resp, wire.compression)
        .map_err(|m| (err(m, FailureKind::Handshake { status: Some(101) }), None))?;
    wire.record(agreed.as_ref());
    wire.record_handshake(|| {
        (resp.headers().iter())
            .map(|(k, v)| {
                (
                    k.as_str().to_string(),
                    String::from_utf8_lossy(v.as_bytes()).into(),
                )
            })
            .collect()
    });
    let framed = framed.into_map_codec(|inner| {
        let codec = LimitedCodec::new(inner, max_frame_bytes);
        match &agreed {
            Some(a) => codec.with_deflate(a),
            None => codec,
        }
    });
    Ok(split::split(framed))
}

/// The refused upgrade behind `e`: read by [`refusal::ReadRefusals`] from the refusing
/// connection, or (should awc check the status first) only its status.
fn refusal_of(e: &awc::error::WsClientError) -> Option<Refusal> {
    use awc::error::{SendRequestError, WsClientError};
    match e {
        WsClientError::SendRequest(SendRequestError::Custom(inner, _)) => {
            inner.downcast_ref::<Refusal>().cloned()
        }
        WsClientError::InvalidResponseStatus(status) => Some(Refusal {
            status: status.as_u16(),
            reason: status.canonical_reason().unwrap_or("").to_string(),
            retry_after: None,
            body: None,
        }),
        _ => None,
    }
}

/// The extension the server's 101 answer agreed to, or why the answer is not one the
/// offer allows (RFC 6455 §9.1: the client fails the connection).
fn negotiated(
    resp: &awc::ClientResponse,
    compression: Compression,
) -> Result<Option<deflate::Agreed>, String> {
    let values: Vec<&str> = resp
        .headers()
        .get_all("sec-websocket-extensions")
        .map(|v| v.to_str().unwrap_or("\u{fffd}"))
        .collect();
    deflate::negotiate(compression, &values).map_err(|why| {
        let offer = compression
            .offer()
            .map_or("no extension".to_string(), |o| format!("`{o}`"));
        format!(
            "the server answered with `Sec-WebSocket-Extensions: {}`, which rtload's offer \
({offer}) does not allow: {why}; set `[target] compression = \"none\"` (--compression none) \
to offer no compression",
            values.join(", ")
        )
    })
}

/// What one read produced once fragments are joined.
#[derive(Debug, Clone, PartialEq)]
pub enum ReadEvent {
    /// A complete data message.
    Data(Inbound),
    /// A ping the sender must answer.
    Ping(Bytes),
    /// The peer sent a close frame: `"<code>[ <reason>]"` (`1005` when it had no code).
    Close(Option<String>),
    /// Nothing to deliver yet (a fragment, a pong).
    Nothing,
}

/// Joins continuation frames into whole messages. Pure.
#[derive(Debug, Default)]
pub struct Reassembler {
    partial: Option<(bool, BytesMut)>,
}

impl Reassembler {
    /// Feed one frame.
    pub fn push(&mut self, frame: Frame) -> Result<ReadEvent, TransportError> {
        Ok(match frame {
            Frame::Text(b) => ReadEvent::Data(text(b)?),
            Frame::Binary(b) => ReadEvent::Data(Inbound::Binary(b)),
            Frame::Ping(b) => ReadEvent::Ping(b),
            Frame::Pong(_) => ReadEvent::Nothing,
            // A close frame without a status code is code 1005 (RFC 6455 §7.1.5), so
            // "closed with no code" stays distinct from "no close frame at all" (`None`).
            Frame::Close(reason) => ReadEvent::Close(Some(reason.map_or_else(
                || "1005".to_owned(),
                |r| {
                    let code: u16 = r.code.into();
                    match r.description {
                        Some(d) => format!("{code} {d}"),
                        None => code.to_string(),
                    }
                },
            ))),
            Frame::Continuation(item) => self.continuation(item)?,
        })
    }

    fn continuation(&mut self, item: Item) -> Result<ReadEvent, TransportError> {
        match item {
            Item::FirstText(b) => self.partial = Some((true, BytesMut::from(&b[..]))),
            Item::FirstBinary(b) => self.partial = Some((false, BytesMut::from(&b[..]))),
            Item::Continue(b) => self.extend(&b)?,
            Item::Last(b) => {
                self.extend(&b)?;
                let (is_text, buf) = self.partial.take().unwrap_or_default();
                let bytes = buf.freeze();
                return Ok(ReadEvent::Data(if is_text {
                    text(bytes)?
                } else {
                    Inbound::Binary(bytes)
                }));
            }
        }
        Ok(ReadEvent::Nothing)
    }

    fn extend(&mut self, b: &[u8]) -> Result<(), TransportError> {
        let (_, buf) = self.partial.as_mut().ok_or_else(|| {
            TransportError::Recv("continuation frame without a first frame".into())
        })?;
        if buf.len() + b.len() > MAX_MESSAGE_BYTES {
            return Err(TransportError::Recv(format!(
                "message larger than {MAX_MESSAGE_BYTES} bytes"
            )));
        }
        buf.extend_from_slice(b);
        Ok(())
    }
}

fn text(b: Bytes) -> Result<Inbound, TransportError> {
    crate::workload::ByteString::try_from(b)
        .map(Inbound::Text)
        .map_err(|_| TransportError::Recv("text frame is not valid UTF-8".into()))
}

/// Encode an outbound message for awc.
pub fn to_message(msg: crate::workload::Outbound) -> Message {
    match msg {
        crate::workload::Outbound::Text(s) => Message::Text(s),
        crate::workload::Outbound::Binary(b) => Message::Binary(b),
    }
}
