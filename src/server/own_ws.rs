//! A WebSocket the server owns after the handshake (see [`super::upgrade`]): frames are
//! read into a buffer the connection owns and decoded where they stand (many appends
//! per read when they queue, payloads split off that buffer, not copied), and outbound
//! frames are encoded into one write buffer that the connection writes itself, once
//! per wake, however many messages fell due together. No channel, no second task, no
//! body stream in between. The inbound limit is the same as on actix's path: every
//! byte read goes through [`FrameScanner`] first (1009 from the frame header), then
//! actix's own frame codec with `max_frame_bytes`.
//!
//! [`Inbound`] and [`Outbound`] are what an endpoint talks to: either this socket's
//! halves or actix-ws's (a session refused here and admitted on the fallback path, or
//! a `wss://` one), with the same messages either way.

use actix_codec::{Decoder as _, Encoder as _};
use actix_http::ws::{Codec, Frame, Item, Message, ProtocolError};
use actix_ws::{AggregatedMessage, CloseCode, CloseReason, Session};
use bytes::{Bytes, BytesMut};
use bytestring::ByteString;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};

use super::frame_guard::FrameScanner;

/// Room made in the read buffer before each read.
const READ_ROOM: usize = 16 * 1024;

/// The inbound half of an owned socket: frames decoded from its own buffer,
/// continuations aggregated, at most `max_frame_bytes` each.
pub(crate) struct FrameReader {
    io: OwnedReadHalf,
    buf: BytesMut,
    codec: Codec,
    scanner: FrameScanner,
    /// A message arriving in continuation frames: whether it is text, and its bytes.
    partial: Option<(bool, BytesMut)>,
    /// Why the scanner failed the connection, once it has.
    refusal: Option<String>,
    /// A scanner failure on the bytes read with the handshake, reported at the first
    /// `recv`.
    pending: bool,
}

impl FrameReader {
    /// Reads `io`, starting with `read_ahead` (bytes that came with the handshake).
    pub(crate) fn new(io: OwnedReadHalf, read_ahead: BytesMut, max: usize) -> FrameReader {
        let mut scanner = FrameScanner::new(max);
        let refusal = scanner.feed(&read_ahead).err();
        FrameReader {
            io,
            buf: read_ahead,
            codec: Codec::new().max_size(max),
            scanner,
            partial: None,
            pending: refusal.is_some(),
            refusal,
        }
    }

    /// The next message; `None` once the peer closed. Cancel-safe (used in `select!`):
    /// bytes are only taken from the socket by a read that completes.
    pub(crate) async fn recv(&mut self) -> Option<Result<AggregatedMessage, ProtocolError>> {
        if std::mem::take(&mut self.pending) {
            return Some(Err(too_big()));
        }
        loop {
            match self.codec.decode(&mut self.buf) {
                Ok(Some(frame)) => match self.aggregate(frame) {
                    Ok(Some(msg)) => return Some(Ok(msg)),
                    Ok(None) => continue,
                    Err(err) => return Some(Err(err)),
                },
                Ok(None) => {}
                Err(err) => return Some(Err(err)),
            }
            if self.refusal.is_some() {
                return Some(Err(too_big()));
            }
            let start = self.buf.len();
            self.buf.reserve(READ_ROOM);
            match self.io.read_buf(&mut self.buf).await {
                Ok(0) => return None,
                Ok(_) => {
                    if let Err(why) = self.scanner.feed(&self.buf[start..]) {
                        tracing::warn!("closing a WebSocket: {why}");
                        self.refusal = Some(why);
                        return Some(Err(too_big()));
                    }
                }
                Err(err) => return Some(Err(ProtocolError::Io(err))),
            }
        }
    }

    /// Why the connection is refused (close 1009 with this text), once it is.
    pub(crate) fn refusal(&mut self) -> Option<String> {
        self.refusal.take()
    }

    /// One frame in, a whole message out (or `None` while continuations add up).
    fn aggregate(&mut self, frame: Frame) -> Result<Option<AggregatedMessage>, ProtocolError> {
        Ok(Some(match frame {
            Frame::Text(text) => text_message(text)?,
            Frame::Binary(data) => AggregatedMessage::Binary(data),
            Frame::Ping(data) => AggregatedMessage::Ping(data),
            Frame::Pong(data) => AggregatedMessage::Pong(data),
            Frame::Close(reason) => AggregatedMessage::Close(reason),
            Frame::Continuation(item) => return self.continuation(item),
        }))
    }

    fn continuation(&mut self, item: Item) -> Result<Option<AggregatedMessage>, ProtocolError> {
        match item {
            Item::FirstText(_) | Item::FirstBinary(_) if self.partial.is_some() => {
                Err(ProtocolError::ContinuationStarted)
            }
            Item::FirstText(part) => {
                self.partial = Some((true, BytesMut::from(&part[..])));
                Ok(None)
            }
            Item::FirstBinary(part) => {
                self.partial = Some((false, BytesMut::from(&part[..])));
                Ok(None)
            }
            Item::Continue(part) => {
                let (_, buf) = self
                    .partial
                    .as_mut()
                    .ok_or(ProtocolError::ContinuationNotStarted)?;
                buf.extend_from_slice(&part);
                Ok(None)
            }
            Item::Last(part) => {
                let (text, mut buf) = self
                    .partial
                    .take()
                    .ok_or(ProtocolError::ContinuationNotStarted)?;
                buf.extend_from_slice(&part);
                let whole = buf.freeze();
                Ok(Some(if text {
                    text_message(whole)?
                } else {
                    AggregatedMessage::Binary(whole)
                }))
            }
        }
    }
}

/// A text message from its bytes, checked as UTF-8 without copying.
fn text_message(bytes: Bytes) -> Result<AggregatedMessage, ProtocolError> {
    ByteString::try_from(bytes)
        .map(AggregatedMessage::Text)
        .map_err(|_| {
            ProtocolError::Io(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "text frame is not UTF-8",
            ))
        })
}

/// The error a scanner failure surfaces as (its reason is in [`FrameReader::refusal`]).
fn too_big() -> ProtocolError {
    ProtocolError::Overflow
}

/// The outbound half of an owned socket: frames encoded into one buffer, written by
/// [`FrameWriter::flush`].
pub(crate) struct FrameWriter {
    io: OwnedWriteHalf,
    out: BytesMut,
    codec: Codec,
}

impl FrameWriter {
    /// Writes to `io`, starting with `head` (the handshake's answer).
    pub(crate) fn with_head(io: OwnedWriteHalf, head: &[u8]) -> FrameWriter {
        let mut out = BytesMut::with_capacity(16 * 1024);
        out.extend_from_slice(head);
        FrameWriter {
            io,
            out,
            codec: Codec::new(),
        }
    }

    fn push(&mut self, msg: Message) {
        // The server-side encoder has no failure for these messages.
        let _ = self.codec.encode(msg, &mut self.out);
    }

    /// Writes everything encoded so far in one go.
    pub(crate) async fn flush(&mut self) -> std::io::Result<()> {
        if self.out.is_empty() {
            return Ok(());
        }
        let written = self.io.write_all(&self.out).await;
        self.out.clear();
        written
    }
}

/// What an endpoint reads from: an owned socket or actix-ws's stream.
pub(crate) enum Inbound {
    /// An owned socket's reader.
    Own(FrameReader),
    /// actix-ws's stream (the 1009 close sent by it).
    Actix(super::ws::Inbound),
}

impl Inbound {
    /// The next message; `None` once the stream ended. Cancel-safe.
    pub(crate) async fn recv(&mut self) -> Option<Result<AggregatedMessage, ProtocolError>> {
        match self {
            Inbound::Own(reader) => reader.recv().await,
            Inbound::Actix(stream) => stream.recv().await,
        }
    }

    /// The close to send after a failed `recv`: 1009 with the frame guard's reason on an
    /// owned socket (actix's path sends its own).
    pub(crate) fn refusal(&mut self) -> Option<CloseReason> {
        match self {
            Inbound::Own(reader) => reader.refusal().map(|why| CloseReason {
                code: CloseCode::Size,
                description: Some(why),
            }),
            Inbound::Actix(_) => None,
        }
    }
}

/// The peer is gone: nothing more can be sent.
pub(crate) struct Gone;

/// What an endpoint writes to: an owned socket (buffered until [`Outbound::flush`]) or
/// an actix-ws session (sent as each message is given).
pub(crate) enum Outbound {
    /// An owned socket's writer.
    Own(FrameWriter),
    /// actix-ws's session.
    Actix(Session),
}

impl Outbound {
    /// One text message.
    pub(crate) async fn text(&mut self, text: String) -> Result<(), Gone> {
        match self {
            Outbound::Own(w) => {
                w.push(Message::Text(ByteString::from(text)));
                Ok(())
            }
            Outbound::Actix(s) => s.text(text).await.map_err(|_| Gone),
        }
    }

    /// A pong echoing `payload`.
    pub(crate) async fn pong(&mut self, payload: &[u8]) -> Result<(), Gone> {
        match self {
            Outbound::Own(w) => {
                w.push(Message::Pong(Bytes::copy_from_slice(payload)));
                Ok(())
            }
            Outbound::Actix(s) => s.pong(payload).await.map_err(|_| Gone),
        }
    }

    /// Writes what is buffered (an owned socket; a no-op on actix-ws).
    pub(crate) async fn flush(&mut self) -> Result<(), Gone> {
        match self {
            Outbound::Own(w) => w.flush().await.map_err(|_| Gone),
            Outbound::Actix(_) => Ok(()),
        }
    }

    /// Sends a close frame with `reason` (after anything buffered) and ends the
    /// connection.
    pub(crate) async fn close(self, reason: Option<CloseReason>) {
        match self {
            Outbound::Own(mut w) => {
                w.push(Message::Close(reason));
                if w.flush().await.is_ok() {
                    let _ = w.io.shutdown().await;
                }
            }
            Outbound::Actix(s) => {
                let _ = s.close(reason).await;
            }
        }
    }
}

#[cfg(test)]
#[path = "own_ws_tests.rs"]
mod tests;
