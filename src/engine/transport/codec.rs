//! The connection's codec: awc's client codec behind a size gate read from the frame
//! header, lenient close frames, write buffers fitted to the next frame, and — when the
//! server agreed to `permessage-deflate` — compressed messages both ways (awc's codec
//! rejects RSV1, so compressed frames are read and written here, around it).

use std::cell::RefCell;

use actix_codec::{Decoder, Encoder};
use actix_http::ws::{CloseCode, CloseReason, Item, ProtocolError};
use awc::ws::{Codec, Frame, Message};
use bytes::Bytes;

use super::deflate::{Agreed, Deflater, InflateError, Inflater};
use super::frame;

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
    /// A compressed message could not be inflated within the limit.
    #[error("{0}")]
    Inflate(#[from] InflateError),
    /// A frame broke `permessage-deflate`'s rules (RFC 7692 §6).
    #[error("permessage-deflate: {0}")]
    Deflate(&'static str),
    /// Any other WebSocket protocol error.
    #[error("{0}")]
    Protocol(#[from] ProtocolError),
}

impl From<std::io::Error> for FrameError {
    fn from(e: std::io::Error) -> Self {
        FrameError::Protocol(ProtocolError::Io(e))
    }
}

/// The codec's side of an agreed `permessage-deflate`.
struct Deflate {
    inflater: Inflater,
    /// `None`: the agreed client window is one rtload cannot compress within.
    deflater: Option<Deflater>,
    /// Bytes inflated so far of the fragmented compressed message being read.
    reading: Option<usize>,
}

thread_local! {
    /// An outbound message's compressed payload, before it is framed: one per shard
    /// thread, shared by its sessions like the frame scratch.
    static DEFLATED: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
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
    /// Set when the server agreed to `permessage-deflate`.
    deflate: Option<Box<Deflate>>,
}

impl LimitedCodec {
    /// Wrap `inner`, refusing frames and messages above `max` bytes.
    pub fn new(inner: Codec, max: usize) -> Self {
        Self {
            inner,
            max,
            partial: None,
            deflate: None,
        }
    }

    /// This codec with `permessage-deflate` as `agreed`: RSV1 messages are inflated (to
    /// at most the limit), data messages compressed when the agreed window allows.
    pub fn with_deflate(mut self, agreed: &Agreed) -> Self {
        self.deflate = Some(Box::new(Deflate {
            inflater: Inflater::new(agreed),
            deflater: Deflater::new(agreed),
            reading: None,
        }));
        self
    }

    /// Appends the client frame of a data message (`opcode` 0x1 or 0x2) masked with
    /// `key` to `out`: compressed, with RSV1, when this connection compresses.
    pub fn frame_into<B: frame::FrameBuf>(
        &mut self,
        out: &mut B,
        opcode: u8,
        payload: &[u8],
        key: [u8; 4],
    ) -> Result<(), ProtocolError> {
        let Some(d) = self.deflate.as_mut().and_then(|d| d.deflater.as_mut()) else {
            frame::encode_masked(out, opcode, false, payload, key);
            return Ok(());
        };
        DEFLATED.with_borrow_mut(|buf| {
            d.deflate(payload, buf)
                .map_err(|e| ProtocolError::Io(std::io::Error::other(e)))?;
            frame::encode_masked(out, opcode, true, buf, key);
            if buf.capacity() > super::KEEP_WRITE_BUF_BYTES {
                *buf = Vec::new();
            }
            Ok(())
        })
    }

    /// Whether data messages go out compressed.
    pub fn compresses(&self) -> bool {
        self.deflate.as_ref().is_some_and(|d| d.deflater.is_some())
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
        let rsv1 = src[0] & 0x40 != 0;
        let frame = match self.deflate.as_deref_mut() {
            // Control frames between a compressed message's fragments are read as usual.
            Some(d) if rsv1 || (d.reading.is_some() && opcode < 0x8) => {
                let header = (src[0], src[1], opcode, fin, idx, len as usize);
                d.decode(src, header, max)?
            }
            _ => self.inner.decode(src)?,
        };
        if matches!(opcode, 0x0..=0x2) && frame.is_some() {
            self.partial = (!fin).then_some(so_far);
        }
        Ok(frame)
    }
}

impl Deflate {
    /// Reads one frame of a compressed message (or a frame arriving while one is being
    /// read), once whole: its payload inflated, as awc would have returned it plain.
    fn decode(
        &mut self,
        src: &mut bytes::BytesMut,
        (b0, b1, opcode, fin, idx, len): (u8, u8, u8, bool, usize, usize),
        max: usize,
    ) -> Result<Option<Frame>, FrameError> {
        let rsv1 = b0 & 0x40 != 0;
        match (opcode, rsv1, self.reading) {
            (0x1 | 0x2, true, None) | (0x0, false, Some(_)) => {}
            (0x8..=0xf, true, _) => return Err(FrameError::Deflate("RSV1 set on a control frame")),
            (0x0, true, _) => {
                return Err(FrameError::Deflate("RSV1 set on a continuation frame"));
            }
            (0x1 | 0x2, _, Some(_)) => {
                return Err(FrameError::Deflate(
                    "a new message began before the compressed one ended",
                ));
            }
            _ => {
                return Err(FrameError::Deflate(
                    "RSV1 set on a frame that cannot carry it",
                ));
            }
        }
        if b0 & 0x30 != 0 {
            return Err(FrameError::Deflate("RSV2 or RSV3 set"));
        }
        if b1 & 0x80 != 0 {
            return Err(ProtocolError::MaskedFrame.into());
        }
        if src.len() < idx + len {
            return Ok(None);
        }
        let frame = src.split_to(idx + len);
        let already = self.reading.unwrap_or(0);
        let out = self.inflater.inflate(&frame[idx..], fin, already, max);
        let out = Bytes::from(out.inspect_err(|_| self.reading = None)?);
        self.reading = (!fin).then_some(already + out.len());
        Ok(Some(match (opcode, fin) {
            (0x1, true) => Frame::Text(out),
            (0x2, true) => Frame::Binary(out),
            (0x1, false) => Frame::Continuation(Item::FirstText(out)),
            (0x2, false) => Frame::Continuation(Item::FirstBinary(out)),
            (_, false) => Frame::Continuation(Item::Continue(out)),
            (_, true) => Frame::Continuation(Item::Last(out)),
        }))
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
        match &item {
            Message::Text(t) if self.compresses() => {
                self.frame_into(dst, 0x1, t.as_bytes(), rand::random())
            }
            Message::Binary(b) if self.compresses() => self.frame_into(dst, 0x2, b, rand::random()),
            _ => self.inner.encode(item, dst),
        }
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
