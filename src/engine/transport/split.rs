//! The socket's two halves on one shard thread: the sample's sender role writes and the
//! reader task reads the same framed connection, shared as an `Rc<RefCell<_>>` that
//! neither holds across an `.await` (futures' `split` serializes the halves with a lock
//! built for threads, which a shard never needs).
//!
//! Owning the framed connection lets the sender give back the write buffer once a
//! message is out: between two sends (200 ms apart for an OmniInteract upload) a session
//! then holds [`IDLE_WRITE_BUF_BYTES`] instead of its last frame's allocation (~9 KB for
//! an append with its JPEG frame). Large frames still get exactly their room from
//! [`super::fit_if_drained`].

use std::cell::RefCell;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};

use actix_codec::{Framed, FramedParts};
use actix_http::ws::ProtocolError;
use awc::BoxedSocket;
use awc::ws::{Frame, Message};
use bytes::BytesMut;
use futures_util::Stream;

use super::{FrameError, LimitedCodec};

/// What a drained write buffer is reset to: actix-codec grows a buffer with less than
/// 1 KiB free to 8 KiB before encoding, so 1 KiB lets a small message (an ack, a pong)
/// go without a new allocation.
pub const IDLE_WRITE_BUF_BYTES: usize = 1024;

type Conn = Framed<BoxedSocket, LimitedCodec>;
type Shared = Rc<RefCell<Option<Conn>>>;

/// The write half of a client WebSocket.
pub struct WsSink(Shared);

/// The read half of a client WebSocket.
pub struct WsStream(Shared);

/// Splits `framed` into the halves the sender and the reader own.
pub fn split(framed: Conn) -> (WsSink, WsStream) {
    let shared = Rc::new(RefCell::new(Some(framed)));
    (WsSink(Rc::clone(&shared)), WsStream(shared))
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

    /// Appends `msg`'s frame to the write buffer (whole: frames never interleave).
    fn encode(&self, msg: Message) -> Result<(), ProtocolError> {
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

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let mut conn = self.0.borrow_mut();
        match conn.as_mut() {
            Some(conn) => Pin::new(conn).poll_next(cx),
            None => Poll::Ready(None),
        }
    }
}

/// The connection is being put back together: never seen, since no borrow is held
/// across an `.await`; an error rather than a panic all the same.
fn gone() -> ProtocolError {
    ProtocolError::Io(std::io::Error::other("socket in use"))
}

#[cfg(test)]
#[path = "split_tests.rs"]
mod tests;
