//! The socket's two halves on one shard thread: the sample's sender role writes and its
//! reader role reads the same framed connection, shared as an `Rc<RefCell<_>>` that
//! neither holds across an `.await` (futures' `split` serializes the halves with a lock
//! built for threads, which a shard never needs).
//!
//! A data message sent at once ([`WsSink::send_now`]) while nothing is buffered skips the
//! connection's write buffer: its frame is masked into one scratch buffer per shard
//! thread ([`super::frame`]; compressed first when the server agreed to
//! `permessage-deflate`) and written from there; only what the socket does not take
//! at once is moved into the write buffer, for [`WsSink::flush`]. So an OmniInteract
//! append (~9 KB, five a second) costs no allocation and one copy, and a session's write
//! buffer stays empty between sends.
//!
//! Owning the framed connection also lets the sender give back the write buffer once a
//! queued message is out: a session then holds [`IDLE_WRITE_BUF_BYTES`] instead of its
//! last frame's allocation. Large frames still get exactly their room from
//! [`super::fit_if_drained`].

use std::cell::RefCell;
use std::io::ErrorKind::WriteZero;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};

use actix_codec::{Framed, FramedParts};
use actix_http::ws::ProtocolError;
use awc::BoxedSocket;
use awc::ws::{Frame, Message};
use bytes::BytesMut;
use futures_util::Stream;
use tokio::io::AsyncWrite;

use super::stamped::{self, ReadStamp};
use super::{FrameError, KEEP_WRITE_BUF_BYTES, LimitedCodec};

/// What a drained write buffer is reset to: nothing. Data messages sent at once never
/// use it; what does (a message queued behind a blocked write, a pong, the close) is
/// rare enough that allocating for it beats every session holding a buffer.
pub const IDLE_WRITE_BUF_BYTES: usize = 0;

type Conn = Framed<BoxedSocket, LimitedCodec>;

type Shared = Rc<RefCell<Option<Conn>>>;

thread_local! {
    /// The frame [`WsSink::send_now`] writes directly: one per shard thread, shared by
    /// its sessions (a frame is written, or moved to its connection, before the next).
    static SCRATCH: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// The write half of a client WebSocket.
pub struct WsSink(Shared);

/// The read half of a client WebSocket, with the stamp of the latest socket read that
/// brought it bytes ([`super::stamped`]).
pub struct WsStream(Shared, Option<ReadStamp>);

/// Splits `framed` into the halves the sender and the reader own.
pub fn split(framed: Conn) -> (WsSink, WsStream) {
    let sink = WsSink(Rc::new(RefCell::new(Some(framed))));
    // The connection's 8 KiB write buffer goes at once: data messages skip it.
    sink.release_drained();
    let stream = WsStream(Rc::clone(&sink.0), None);
    (sink, stream)
}

impl WsSink {
    /// Encodes `msg`, writes it out, then gives back the drained write buffer.
    pub async fn send(&self, msg: Message) -> Result<(), ProtocolError> {
        self.encode(msg)?;
        self.flush().await
    }

    /// Encodes `msg` and writes what the socket takes right now, without waiting: `true`
    /// when every buffered byte went out (the drained buffer is given back), `false` when
    /// some wait in the write buffer for [`WsSink::flush`] (nothing else wakes for them).
    pub fn send_now(&self, msg: Message) -> Result<bool, ProtocolError> {
        let (opcode, payload) = match &msg {
            Message::Text(t) => (0x1, &t.as_bytes()[..]),
            Message::Binary(b) => (0x2, &b[..]),
            _ => return self.send_now_buffered(msg),
        };
        let mut slot = self.0.borrow_mut();
        if !slot.as_ref().is_some_and(Conn::is_write_buf_empty) {
            drop(slot);
            return self.send_now_buffered(msg);
        }
        SCRATCH.with_borrow_mut(|scratch| {
            scratch.clear();
            let conn = slot.as_mut().ok_or_else(gone)?;
            conn.codec_mut()
                .frame_into(scratch, opcode, payload, rand::random())?;
            let sent = write_direct(&mut slot, scratch);
            if scratch.capacity() > KEEP_WRITE_BUF_BYTES {
                // One large message (the reference voice) does not stay pinned.
                *scratch = Vec::new();
            }
            sent
        })
    }

    /// [`WsSink::send_now`] through the write buffer: control frames, and a message
    /// behind bytes already buffered.
    fn send_now_buffered(&self, msg: Message) -> Result<bool, ProtocolError> {
        self.encode(msg)?;
        let mut cx = Context::from_waker(std::task::Waker::noop());
        match self.poll_flush(&mut cx) {
            Poll::Ready(r) => r.map(|()| {
                self.release_drained();
                true
            }),
            Poll::Pending => Ok(false),
        }
    }

    /// Writes out everything buffered, then gives back the drained write buffer.
    pub async fn flush(&self) -> Result<(), ProtocolError> {
        std::future::poll_fn(|cx| self.poll_flush(cx)).await?;
        self.release_drained();
        Ok(())
    }

    /// Appends `msg`'s frame to the write buffer (whole: frames never interleave); the
    /// next [`WsSink::flush`] writes it.
    pub fn encode(&self, msg: Message) -> Result<(), ProtocolError> {
        let mut conn = self.0.borrow_mut();
        let conn = conn.as_mut().ok_or_else(gone)?;
        Pin::new(conn).write(msg)
    }

    /// Flushes what is buffered and shuts the write direction down.
    pub async fn close(&self) -> Result<(), ProtocolError> {
        std::future::poll_fn(|cx| {
            let mut conn = self.0.borrow_mut();
            match conn.as_mut() {
                Some(conn) => Pin::new(conn).close::<Message>(cx),
                None => Poll::Ready(Err(gone())),
            }
        })
        .await
    }

    fn poll_flush(&self, cx: &mut Context<'_>) -> Poll<Result<(), ProtocolError>> {
        let mut conn = self.0.borrow_mut();
        match conn.as_mut() {
            Some(conn) => Pin::new(conn).flush::<Message>(cx),
            None => Poll::Ready(Err(gone())),
        }
    }

    /// Swaps a drained write buffer for a small one (actix-codec has no accessor for it:
    /// the connection is taken apart and put back together, moving no buffered byte).
    fn release_drained(&self) {
        let mut slot = self.0.borrow_mut();
        if !slot.as_ref().is_some_and(Conn::is_write_buf_empty) {
            return;
        }
        let Some(conn) = slot.take() else { return };
        let mut parts: FramedParts<BoxedSocket, LimitedCodec> = conn.into_parts();
        parts.write_buf = BytesMut::with_capacity(IDLE_WRITE_BUF_BYTES);
        *slot = Some(Framed::from_parts(parts));
    }
}

impl Stream for WsStream {
    type Item = Result<Frame, FrameError>;

    /// A read of the socket made during this poll is this connection's (a shard thread
    /// polls one thing at a time): its stamp is kept for the frames it completes.
    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        let before = stamped::seq();
        let polled = match this.0.borrow_mut().as_mut() {
            Some(conn) => Pin::new(conn).poll_next(cx),
            None => Poll::Ready(None),
        };
        if let Some(read) = stamped::latest(before) {
            this.1 = Some(read);
        }
        polled
    }
}

impl WsStream {
    /// The latest socket read that brought this connection bytes: a frame just returned
    /// arrived with it (its last byte did) — `None` before any stamped read (a socket
    /// that is not a client TCP stream, e.g. a test pipe).
    pub fn last_read(&self) -> Option<ReadStamp> {
        self.1
    }
}

/// Writes `frame` to the connection's socket with non-blocking attempts: `true` when all
/// of it went out and the socket flushed; otherwise what was not taken is moved into the
/// (empty) write buffer for [`WsSink::flush`] and `false` is returned.
fn write_direct(slot: &mut Option<Conn>, frame: &[u8]) -> Result<bool, ProtocolError> {
    let conn = slot.as_mut().ok_or_else(gone)?;
    let mut cx = Context::from_waker(std::task::Waker::noop());
    let mut done = 0;
    while done < frame.len() {
        match Pin::new(conn.io_mut()).poll_write(&mut cx, &frame[done..]) {
            Poll::Ready(Ok(0)) => return Err(ProtocolError::Io(WriteZero.into())),
            Poll::Ready(Ok(n)) => done += n,
            Poll::Ready(Err(e)) => return Err(ProtocolError::Io(e)),
            Poll::Pending => break,
        }
    }
    if done == frame.len() {
        return match Pin::new(conn.io_mut()).poll_flush(&mut cx) {
            Poll::Ready(r) => r.map(|()| true).map_err(ProtocolError::Io),
            Poll::Pending => Ok(false),
        };
    }
    let Some(conn) = slot.take() else {
        return Err(gone());
    };
    let mut parts: FramedParts<BoxedSocket, LimitedCodec> = conn.into_parts();
    parts.write_buf.extend_from_slice(&frame[done..]);
    *slot = Some(Framed::from_parts(parts));
    Ok(false)
}

/// The connection is being put back together: never seen, since no borrow is held
/// across an `.await`; an error rather than a panic all the same.
fn gone() -> ProtocolError {
    ProtocolError::Io(std::io::Error::other("socket in use"))
}

#[cfg(test)]
#[path = "split_tests.rs"]
mod tests;
