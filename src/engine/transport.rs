//! The WebSocket transport edge: awc connect on the shard thread, frame reassembly.
//!
//! awc's client, connection and errors are not `Send`: everything here runs on the shard
//! thread that owns the sample, and errors leave this module as owned strings. This
//! module never interprets payloads.

use std::cell::RefCell;
use std::time::Duration;

use actix_http::ws::Item;
use awc::BoxedSocket;
use awc::ws::{Codec, Frame, Message};
use bytes::{Bytes, BytesMut};
use futures_util::StreamExt;
use futures_util::stream::{SplitSink, SplitStream};

use crate::workload::{ConnectSpec, Inbound};

/// The write half of a client WebSocket.
pub type WsSink = SplitSink<actix_codec::Framed<BoxedSocket, Codec>, Message>;
/// The read half of a client WebSocket.
pub type WsStream = SplitStream<actix_codec::Framed<BoxedSocket, Codec>>;

/// Largest inbound message accepted (the reference allows 64 MiB).
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
    },
    /// Writing a frame failed.
    #[error("send failed: {0}")]
    Send(String),
    /// Reading a frame failed.
    #[error("receive failed: {0}")]
    Recv(String),
}

thread_local! {
    /// One client per shard thread. `limit(0)`: the default limit of 100 counts live
    /// WebSockets and silently delays the 101st session.
    static CLIENT: RefCell<Option<awc::Client>> = const { RefCell::new(None) };
}

fn client() -> awc::Client {
    CLIENT.with(|c| {
        c.borrow_mut()
            .get_or_insert_with(|| {
                awc::Client::builder()
                    .connector(awc::Connector::new().limit(0))
                    .disable_timeout()
                    .finish()
            })
            .clone()
    })
}

/// Open the session's WebSocket on the current (shard) thread and split it.
pub async fn connect(
    spec: &ConnectSpec,
    timeout: Duration,
) -> Result<(WsSink, WsStream), TransportError> {
    let err = |msg: String| TransportError::Connect {
        url: crate::util::target::redact_url(&spec.url),
        msg: crate::util::target::redact_text(&msg),
    };
    // URL user info goes as `Authorization: Basic` (as curl does) unless a header says otherwise.
    let (url, basic) = crate::util::target::split_user_info(&spec.url);
    let mut req = client().ws(url.as_str()).max_frame_size(MAX_MESSAGE_BYTES);
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
    let (_resp, framed) = tokio::time::timeout(timeout, req.connect())
        .await
        .map_err(|_| {
            err(format!(
                "no handshake within {:.0} s",
                timeout.as_secs_f64()
            ))
        })?
        .map_err(|e| err(e.to_string()))?;
    Ok(framed.split())
}

/// What one read produced once fragments are joined.
#[derive(Debug, Clone, PartialEq)]
pub enum ReadEvent {
    /// A complete data message.
    Data(Inbound),
    /// A ping the sender must answer.
    Ping(Bytes),
    /// The peer sent a close frame (with its reason, if any).
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
            Frame::Close(reason) => ReadEvent::Close(reason.map(|r| {
                let code: u16 = r.code.into();
                match r.description {
                    Some(d) => format!("{code} {d}"),
                    None => code.to_string(),
                }
            })),
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
    String::from_utf8(b.to_vec())
        .map(Inbound::Text)
        .map_err(|_| TransportError::Recv("text frame is not valid UTF-8".into()))
}

/// Encode an outbound message for awc.
pub fn to_message(msg: crate::workload::Outbound) -> Message {
    match msg {
        crate::workload::Outbound::Text(s) => Message::Text(s.into()),
        crate::workload::Outbound::Binary(b) => Message::Binary(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
