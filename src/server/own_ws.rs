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

/// The outbound half of an owned socket: frames encoded into one buffer, and frames
/// built once and shared ([`SharedBinary`]) queued beside it without a copy; all of it
/// written by [`FrameWriter::flush`] in one go.
pub(crate) struct FrameWriter {
    io: OwnedWriteHalf,
    out: BytesMut,
    codec: Codec,
    /// The write in order when shared frames are queued: spans of `out` and shared
    /// frames (empty while only `out` is to be written).
    pieces: Vec<Piece>,
}

/// One part of a write: a span of the writer's own buffer, or a shared frame.
enum Piece {
    Own(std::ops::Range<usize>),
    Shared(Bytes),
}

/// At most this many buffers per `writev`.
const MAX_SLICES: usize = 8;

impl FrameWriter {
    /// Writes to `io`, starting with `head` (the handshake's answer).
    pub(crate) fn with_head(io: OwnedWriteHalf, head: &[u8]) -> FrameWriter {
        let mut out = BytesMut::with_capacity(16 * 1024);
        out.extend_from_slice(head);
        FrameWriter {
            io,
            out,
            codec: Codec::new(),
            pieces: Vec::new(),
        }
    }

    fn push(&mut self, msg: Message) {
        // The server-side encoder has no failure for these messages.
        let _ = self.codec.encode(msg, &mut self.out);
    }

    /// A text frame holding `text`, encoded straight from the borrowed string.
    fn push_text(&mut self, text: &str) {
        put_header(&mut self.out, OP_TEXT, text.len());
        self.out.extend_from_slice(text.as_bytes());
    }

    /// A text frame whose payload `write` puts straight into the write buffer (no
    /// string in between): a 4-byte header is set aside for it and fitted to the
    /// payload's length once that is known (moved only for a payload under 126 bytes or
    /// over 64 KiB).
    fn push_text_with(&mut self, write: impl FnOnce(&mut dyn std::fmt::Write)) {
        let at = self.out.len();
        self.out.extend_from_slice(&[0x80 | OP_TEXT, 126, 0, 0]);
        write(&mut self.out);
        let len = self.out.len() - at - 4;
        if let Ok(short) = u16::try_from(len)
            && len >= 126
        {
            self.out[at + 2..at + 4].copy_from_slice(&short.to_be_bytes());
        } else if len < 126 {
            self.out.copy_within(at + 4.., at + 2);
            self.out.truncate(at + 2 + len);
            self.out[at + 1] = len as u8;
        } else {
            let payload = self.out.split_off(at + 4);
            self.out.truncate(at);
            put_header(&mut self.out, OP_TEXT, len);
            self.out.extend_from_slice(&payload);
        }
    }

    /// A frame encoded once: queued as it is, its bytes not copied.
    fn push_shared(&mut self, frame: &Bytes) {
        self.close_own_span();
        self.pieces.push(Piece::Shared(frame.clone()));
    }

    /// Ends the span of `out` not yet in `pieces` (when there is one).
    fn close_own_span(&mut self) {
        let start = self
            .pieces
            .iter()
            .rev()
            .find_map(|p| match p {
                Piece::Own(span) => Some(span.end),
                Piece::Shared(_) => None,
            })
            .unwrap_or(0);
        if self.out.len() > start {
            self.pieces.push(Piece::Own(start..self.out.len()));
        }
    }

    /// Writes everything encoded so far in one go.
    pub(crate) async fn flush(&mut self) -> std::io::Result<()> {
        if self.pieces.is_empty() {
            if self.out.is_empty() {
                return Ok(());
            }
            let written = self.io.write_all(&self.out).await;
            self.out.clear();
            return written;
        }
        self.close_own_span();
        let written = self.write_pieces().await;
        self.pieces.clear();
        self.out.clear();
        written
    }

    /// Writes `pieces` with vectored writes until all are out.
    async fn write_pieces(&mut self) -> std::io::Result<()> {
        let (io, out, pieces) = (&mut self.io, &self.out, &self.pieces);
        let total: usize = pieces.iter().map(|p| piece_bytes(out, p).len()).sum();
        let mut done = 0;
        while done < total {
            let mut slices = [std::io::IoSlice::new(&[]); MAX_SLICES];
            let (mut n, mut skip) = (0, done);
            for piece in pieces {
                let bytes = piece_bytes(out, piece);
                if skip >= bytes.len() {
                    skip -= bytes.len();
                    continue;
                }
                slices[n] = std::io::IoSlice::new(&bytes[skip..]);
                skip = 0;
                n += 1;
                if n == MAX_SLICES {
                    break;
                }
            }
            match io.write_vectored(&slices[..n]).await? {
                0 => return Err(std::io::ErrorKind::WriteZero.into()),
                wrote => done += wrote,
            }
        }
        Ok(())
    }
}

/// The bytes of `piece` (`out` is the writer's own buffer).
fn piece_bytes<'a>(out: &'a BytesMut, piece: &'a Piece) -> &'a [u8] {
    match piece {
        Piece::Own(span) => &out[span.clone()],
        Piece::Shared(frame) => frame,
    }
}

/// Opcode of a text frame.
const OP_TEXT: u8 = 0x1;
/// Opcode of a binary frame.
const OP_BINARY: u8 = 0x2;

/// A server frame's header (final, unmasked) for `len` payload bytes with `opcode`.
fn put_header(out: &mut BytesMut, opcode: u8, len: usize) {
    use bytes::BufMut as _;
    out.put_u8(0x80 | opcode);
    if len < 126 {
        out.put_u8(len as u8);
    } else if let Ok(short) = u16::try_from(len) {
        out.put_u8(126);
        out.put_u16(short);
    } else {
        out.put_u8(127);
        out.put_u64(len as u64);
    }
}

/// A binary message sent many times unchanged (a video chunk body): its payload, and
/// its whole frame encoded once, queued on an owned socket without a copy.
pub(crate) struct SharedBinary {
    /// The payload (what actix-ws's path sends).
    payload: Bytes,
    /// The payload as one final binary frame, header included.
    frame: Bytes,
}

impl SharedBinary {
    /// Encodes `payload`'s frame once.
    pub(crate) fn new(payload: Bytes) -> SharedBinary {
        let mut frame = BytesMut::with_capacity(payload.len() + 10);
        put_header(&mut frame, OP_BINARY, payload.len());
        frame.extend_from_slice(&payload);
        SharedBinary {
            payload,
            frame: frame.freeze(),
        }
    }

    /// The payload's length in bytes.
    pub(crate) fn len(&self) -> usize {
        self.payload.len()
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
                w.push_text(&text);
                Ok(())
            }
            Outbound::Actix(s) => s.text(text).await.map_err(|_| Gone),
        }
    }

    /// One text message from a borrowed string (copied only into the write buffer on
    /// an owned socket).
    pub(crate) async fn text_str(&mut self, text: &str) -> Result<(), Gone> {
        match self {
            Outbound::Own(w) => {
                w.push_text(text);
                Ok(())
            }
            Outbound::Actix(s) => s.text(text.to_owned()).await.map_err(|_| Gone),
        }
    }

    /// One text message written by `write`: straight into the write buffer on an
    /// owned socket; into `scratch` (reused) and sent from a copy on actix-ws.
    pub(crate) async fn text_with(
        &mut self,
        scratch: &mut String,
        write: impl FnOnce(&mut dyn std::fmt::Write),
    ) -> Result<(), Gone> {
        match self {
            Outbound::Own(w) => {
                w.push_text_with(write);
                Ok(())
            }
            Outbound::Actix(s) => {
                scratch.clear();
                write(scratch);
                s.text(scratch.clone()).await.map_err(|_| Gone)
            }
        }
    }

    /// One binary message built once (its frame queued without a copy on an owned
    /// socket).
    pub(crate) async fn binary(&mut self, body: &SharedBinary) -> Result<(), Gone> {
        match self {
            Outbound::Own(w) => {
                w.push_shared(&body.frame);
                Ok(())
            }
            Outbound::Actix(s) => s.binary(body.payload.clone()).await.map_err(|_| Gone),
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
    /// connection (nothing is sent after it).
    pub(crate) async fn close(&mut self, reason: Option<CloseReason>) {
        match self {
            Outbound::Own(w) => {
                w.push(Message::Close(reason));
                if w.flush().await.is_ok() {
                    let _ = w.io.shutdown().await;
                }
            }
            Outbound::Actix(s) => {
                let _ = s.clone().close(reason).await;
            }
        }
    }
}

#[cfg(test)]
#[path = "own_ws_tests.rs"]
mod tests;
