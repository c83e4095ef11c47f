//! The WebSocket transport edge: awc connect on the shard thread, a frame-size limit
//! enforced from the frame header ([`LimitedCodec`]), frame reassembly.
//!
//! awc's client, connection and errors are not `Send`: everything here runs on the shard
//! thread that owns the sample, and errors leave this module as owned strings. This
//! module never interprets payloads. `wss://` uses the run's [`ClientTls`] (built once
//! per run by the caller); TLS failures read as their cause (see [`super::tls`]).

use std::cell::RefCell;
use std::time::Duration;

use actix_codec::{Decoder, Encoder};
use actix_http::ws::{CloseCode, CloseReason, Item, ProtocolError};
use awc::ws::{Codec, Frame, Message};
use bytes::{Bytes, BytesMut};

use super::tls::ClientTls;
use crate::workload::{ConnectSpec, Inbound};

mod frame;
mod split;
#[cfg(test)]
pub(crate) use split::split;
pub use split::{WsSink, WsStream};

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
    /// Writing a frame failed.
    #[error("send failed: {0}")]
    Send(String),
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
            TransportError::Send(_) | TransportError::Recv(_) => FailureKind::Transport,
        };
        crate::workload::Failure::new(kind, self.to_string())
    }
}

thread_local! {
    /// One client per shard thread. `limit(0)`: the default limit of 100 counts live
    /// WebSockets and silently delays the 101st session.
    static CLIENT: RefCell<Option<ShardClient>> = const { RefCell::new(None) };
}

fn client(tls: Option<&ClientTls>) -> awc::Client {
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
            let mut connector = awc::Connector::new().limit(0);
            if let Some(t) = tls {
                connector = connector.rustls_0_23(t.0.clone());
            }
            let client = awc::Client::builder()
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
/// the run's client TLS configuration (required for `wss://`). Inbound frames and
/// reassembled messages larger than `max_frame_bytes` fail the read.
pub async fn connect(
    spec: &ConnectSpec,
    timeout: Duration,
    tls: Option<&ClientTls>,
    max_frame_bytes: usize,
) -> Result<(WsSink, WsStream), TransportError> {
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
    for (k, v) in &spec.headers {
        req = req.set_header(k.as_str(), v.as_str());
    }
    let connected = tokio::time::timeout(timeout, req.connect())
        .await
        .map_err(|_| {
            err(
                format!("no handshake within {:.0} s", timeout.as_secs_f64()),
                FailureKind::Timeout,
            )
        })?;
    let (_resp, framed) = match connected {
        Ok(ok) => ok,
        Err(awc::error::WsClientError::InvalidResponseStatus(status)) => {
            let body = error_body(spec, timeout, tls).await;
            return Err(err(
                format!(
                    "the server answered the WebSocket upgrade with HTTP {status} (expected 101 Switching Protocols){body}"
                ),
                FailureKind::Handshake {
                    status: Some(status.as_u16()),
                },
            ));
        }
        Err(e) => {
            let kind = match &e {
                awc::error::WsClientError::SendRequest(_) => FailureKind::Connect,
                _ => FailureKind::Handshake { status: None },
            };
            return Err(match super::tls::rustls_error(&e) {
                Some(t) => err(super::tls::explain(t), kind),
                None => err(e.to_string(), kind),
            });
        }
    };
    let framed = framed.into_map_codec(|inner| LimitedCodec::new(inner, max_frame_bytes));
    Ok(split::split(framed))
}

/// awc drops the body of a refused upgrade; to say what the server said, repeat the
/// request once as a plain GET (same headers) and quote the first bytes of its body.
async fn error_body(spec: &ConnectSpec, timeout: Duration, tls: Option<&ClientTls>) -> String {
    const QUOTE: usize = 200;
    let url = spec
        .url
        .replacen("ws://", "http://", 1)
        .replacen("wss://", "https://", 1);
    let mut req = client(tls).get(url.as_str());
    for (k, v) in &spec.headers {
        req = req.insert_header((k.as_str(), v.as_str()));
    }
    let fetch = async {
        let mut resp = req.send().await.ok()?;
        resp.body().limit(64 * 1024).await.ok()
    };
    match tokio::time::timeout(timeout, fetch).await {
        Ok(Some(body)) if !body.is_empty() => {
            let text = String::from_utf8_lossy(&body[..body.len().min(QUOTE)]);
            let more = if body.len() > QUOTE { "…" } else { "" };
            format!("; body (from a plain GET): {:?}{more}", text.trim())
        }
        _ => String::new(),
    }
}

/// Why reading a frame failed.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    /// A frame header announced more than the limit (nothing of the payload is buffered).
    #[error("frame of {len} bytes exceeds max_frame_bytes ({max})")]
    FrameTooLarge {
        /// The announced payload length.
        len: u64,
        /// The limit.
        max: usize,
    },
    /// Continuation frames added up to more than the limit.
    #[error(
        "message of at least {len} bytes (continuation frames) exceeds max_frame_bytes ({max})"
    )]
    MessageTooLarge {
        /// Bytes of the message so far.
        len: u64,
        /// The limit.
        max: usize,
    },
    /// Any other WebSocket protocol error.
    #[error("{0}")]
    Protocol(#[from] ProtocolError),
}

impl From<std::io::Error> for FrameError {
    fn from(e: std::io::Error) -> Self {
        FrameError::Protocol(ProtocolError::Io(e))
    }
}

/// awc's client codec behind a size gate: the frame header is read before the payload
/// is buffered, so an oversized frame fails at once with bounded memory (awc's own check
/// runs only once the whole frame has arrived). Close frames are parsed leniently: any
/// code, a reason that is not UTF-8 kept lossily (awc calls that "Bad opcode").
pub struct LimitedCodec {
    inner: Codec,
    max: usize,
    /// Payload bytes of the message being assembled from continuation frames.
    partial: Option<u64>,
}

impl LimitedCodec {
    /// Wrap `inner`, refusing frames and messages above `max` bytes.
    pub fn new(inner: Codec, max: usize) -> Self {
        Self {
            inner,
            max,
            partial: None,
        }
    }
}

/// A frame header read from the front of a client-side buffer (server frames are never
/// masked): (opcode, fin, header length, payload length). `None` until it is complete.
pub fn peek_header(src: &[u8]) -> Option<(u8, bool, usize, u64)> {
    let (&b0, &b1) = (src.first()?, src.get(1)?);
    let masked = b1 & 0x80 != 0;
    let (len, idx) = match b1 & 0x7f {
        126 => (
            u64::from(u16::from_be_bytes([*src.get(2)?, *src.get(3)?])),
            4,
        ),
        127 => (u64::from_be_bytes(src.get(2..10)?.try_into().ok()?), 10),
        n => (u64::from(n), 2),
    };
    let idx = if masked { idx + 4 } else { idx };
    Some((b0 & 0x0f, b0 & 0x80 != 0, idx, len))
}

impl Decoder for LimitedCodec {
    type Item = Frame;
    type Error = FrameError;

    fn decode(&mut self, src: &mut bytes::BytesMut) -> Result<Option<Frame>, FrameError> {
        let Some((opcode, fin, idx, len)) = peek_header(src) else {
            return Ok(None);
        };
        let max = self.max;
        if len > max as u64 {
            return Err(FrameError::FrameTooLarge { len, max });
        }
        if opcode == 0x8 && src.len() as u64 >= idx as u64 + len && (2..=125).contains(&len) {
            let frame = src.split_to(idx + len as usize);
            let payload = &frame[idx..];
            let code = u16::from_be_bytes([payload[0], payload[1]]);
            let reason =
                (payload.len() > 2).then(|| String::from_utf8_lossy(&payload[2..]).into_owned());
            return Ok(Some(Frame::Close(Some(CloseReason {
                code: CloseCode::from(code),
                description: reason,
            }))));
        }
        // Continuation frames add up: checked from the header too, before buffering.
        let so_far = match opcode {
            0x0 => self.partial.unwrap_or(0).saturating_add(len),
            _ => len,
        };
        if opcode == 0x0 && so_far > max as u64 {
            return Err(FrameError::MessageTooLarge { len: so_far, max });
        }
        let frame = self.inner.decode(src)?;
        if matches!(opcode, 0x0..=0x2) && frame.is_some() {
            self.partial = (!fin).then_some(so_far);
        }
        Ok(frame)
    }
}

/// A drained write buffer whose allocation is larger than this is given back before the
/// next message is encoded: one large message (OmniInteract's `session.update` carries
/// the reference voice, ~80 KiB) would otherwise pin that much memory for the session's
/// whole life.
pub const KEEP_WRITE_BUF_BYTES: usize = 32 * 1024;

impl Encoder<Message> for LimitedCodec {
    type Error = ProtocolError;

    fn encode(&mut self, item: Message, dst: &mut bytes::BytesMut) -> Result<(), ProtocolError> {
        fit_if_drained(dst, encoded_len(&item));
        self.inner.encode(item, dst)
    }
}

/// The most bytes `item` takes as a client frame: its payload plus the longest header
/// (2 bytes, an 8-byte length, the 4-byte mask).
fn encoded_len(item: &Message) -> usize {
    let payload = match item {
        Message::Text(t) => t.len(),
        Message::Binary(b) | Message::Ping(b) | Message::Pong(b) => b.len(),
        _ => 0,
    };
    payload + 14
}

/// Before a frame of at most `needed` bytes is encoded into a drained write buffer (never
/// while bytes wait to be written), gives it exactly that frame's room when its allocation
/// is larger than [`KEEP_WRITE_BUF_BYTES`] or too small for the frame. Too large: one big
/// message would stay pinned. Too small: the encoder's own `reserve` would double it, and
/// an 8.6 KiB append into the framed writer's 8 KiB buffer would leave 16 KiB held between
/// appends. A written-out buffer has been advanced past its bytes, so `capacity()` alone
/// understates what it holds; `try_reclaim` first moves it back to the start of its
/// allocation.
pub fn fit_if_drained(buf: &mut bytes::BytesMut, needed: usize) {
    if buf.is_empty() && (buf.try_reclaim(KEEP_WRITE_BUF_BYTES + 1) || !buf.try_reclaim(needed)) {
        *buf = bytes::BytesMut::with_capacity(needed);
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_drained_buffer_too_small_for_the_next_frame_gets_exactly_its_room() {
        let mut buf = bytes::BytesMut::with_capacity(8 * 1024);
        fit_if_drained(&mut buf, 9_000);
        assert!(
            (9_000..9_000 + 64).contains(&buf.capacity()),
            "{}",
            buf.capacity()
        );
        // Enough room already: kept as is.
        fit_if_drained(&mut buf, 100);
        assert!(buf.capacity() >= 9_000);
        // Bytes still to be written are never touched.
        buf.extend_from_slice(b"pending");
        fit_if_drained(&mut buf, 50_000);
        assert_eq!(&buf[..], b"pending");
        // Through the codec: an append-sized frame into the framed writer's 8 KiB buffer.
        let mut codec = LimitedCodec::new(Codec::new(), 1 << 20);
        let mut dst = bytes::BytesMut::with_capacity(8 * 1024);
        codec
            .encode(Message::Text("a".repeat(8_800).into()), &mut dst)
            .unwrap();
        assert!(
            dst.capacity() < 8_800 + 64,
            "not doubled: {}",
            dst.capacity()
        );
    }

    #[test]
    fn a_drained_large_write_buffer_is_given_back_and_pending_bytes_never_are() {
        let mut buf = bytes::BytesMut::with_capacity(100 * 1024);
        buf.extend_from_slice(b"pending");
        fit_if_drained(&mut buf, 100);
        assert_eq!(&buf[..], b"pending", "bytes still to be written stay");
        assert!(buf.capacity() >= 90 * 1024);
        // Written out the way the framed writer does it: advanced past its bytes.
        bytes::Buf::advance(&mut buf, 7);
        fit_if_drained(&mut buf, 100);
        assert!((100..164).contains(&buf.capacity()), "{}", buf.capacity());
        let mut small = bytes::BytesMut::with_capacity(8 * 1024);
        fit_if_drained(&mut small, 100);
        assert!(
            small.capacity() >= 8 * 1024,
            "a buffer of append size is kept"
        );
        // Through the codec: a large message, drained, then a small one.
        let mut codec = LimitedCodec::new(Codec::new(), 1 << 20);
        let mut dst = bytes::BytesMut::new();
        codec
            .encode(Message::Text("x".repeat(80 * 1024).into()), &mut dst)
            .unwrap();
        assert!(dst.capacity() >= 80 * 1024);
        let written = dst.len();
        bytes::Buf::advance(&mut dst, written);
        codec
            .encode(Message::Text("small".into()), &mut dst)
            .unwrap();
        assert!(dst.capacity() < KEEP_WRITE_BUF_BYTES, "{}", dst.capacity());
    }

    #[test]
    fn joins_fragments() {
        let mut r = Reassembler::default();
        assert_eq!(
            r.push(Frame::Continuation(Item::FirstText(Bytes::from_static(
                b"{\"a\""
            ))))
            .unwrap(),
            ReadEvent::Nothing
        );
        assert_eq!(
            r.push(Frame::Continuation(Item::Continue(Bytes::from_static(
                b":"
            ))))
            .unwrap(),
            ReadEvent::Nothing
        );
        assert_eq!(
            r.push(Frame::Continuation(Item::Last(Bytes::from_static(b"1}"))))
                .unwrap(),
            ReadEvent::Data(Inbound::Text("{\"a\":1}".into()))
        );
        assert!(
            r.push(Frame::Continuation(Item::Continue(Bytes::new())))
                .is_err()
        );
    }

    #[test]
    fn close_frames_carry_code_and_reason() {
        let mut r = Reassembler::default();
        assert_eq!(
            r.push(Frame::Close(None)).unwrap(),
            ReadEvent::Close(Some("1005".into()))
        );
        let bye = CloseReason {
            code: CloseCode::Normal,
            description: Some("bye".into()),
        };
        assert_eq!(
            r.push(Frame::Close(Some(bye))).unwrap(),
            ReadEvent::Close(Some("1000 bye".into()))
        );
    }
}
