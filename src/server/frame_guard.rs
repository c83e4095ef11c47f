//! Inbound frame-size guard for the server's WebSocket endpoints: it reads each frame
//! header from the raw upgrade body as it streams in and fails the connection as soon as
//! a header announces more than the limit (or continuation frames add up to more), before
//! the payload is buffered. actix's own check only fires once the whole frame arrived.
//! Used only by the endpoint helper, [`super::ws::accept`].

use std::cell::RefCell;
use std::rc::Rc;

use actix_web::{FromRequest as _, HttpRequest, web};
use bytes::Bytes;
use futures_util::StreamExt as _;

/// Tracks frame boundaries across body chunks. Pure.
#[derive(Debug)]
pub struct FrameScanner {
    max: u64,
    head: Vec<u8>,
    skip: u64,
    partial: u64,
}

impl FrameScanner {
    /// A scanner refusing frames and messages above `max` bytes.
    pub fn new(max: usize) -> Self {
        Self {
            max: max as u64,
            head: Vec::with_capacity(14),
            skip: 0,
            partial: 0,
        }
    }

    /// Feed the next body bytes; `Err` says which frame is too large.
    pub fn feed(&mut self, mut data: &[u8]) -> Result<(), String> {
        while !data.is_empty() {
            if self.skip > 0 {
                let n = self.skip.min(data.len() as u64);
                self.skip -= n;
                data = &data[n as usize..];
                continue;
            }
            // A whole header at the front with none held back: read where it stands.
            if self.head.is_empty()
                && let Some((opcode, fin, len, size)) = parse(data)
            {
                self.check(opcode, fin, len)?;
                self.skip = len;
                data = &data[size..];
                continue;
            }
            self.head.push(data[0]);
            data = &data[1..];
            if let Some((opcode, fin, len, _)) = parse(&self.head) {
                self.head.clear();
                self.check(opcode, fin, len)?;
                self.skip = len;
            }
        }
        Ok(())
    }

    fn check(&mut self, opcode: u8, fin: bool, len: u64) -> Result<(), String> {
        if len > self.max {
            return Err(format!(
                "frame of {len} bytes exceeds max_frame_bytes ({})",
                self.max
            ));
        }
        if matches!(opcode, 0x0..=0x2) {
            let total = if opcode == 0x0 { self.partial } else { 0 }.saturating_add(len);
            if total > self.max {
                return Err(format!(
                    "message of at least {total} bytes (continuation frames) exceeds max_frame_bytes ({})",
                    self.max
                ));
            }
            self.partial = if fin { 0 } else { total };
        }
        Ok(())
    }
}

/// (opcode, fin, payload length, header length) once `head` holds a whole header (mask
/// included).
fn parse(head: &[u8]) -> Option<(u8, bool, u64, usize)> {
    let (b0, b1) = (*head.first()?, *head.get(1)?);
    let masked = b1 & 0x80 != 0;
    let (ext, len) = match b1 & 0x7f {
        126 => (
            2,
            u64::from(u16::from_be_bytes(head.get(2..4)?.try_into().ok()?)),
        ),
        127 => (8, u64::from_be_bytes(head.get(2..10)?.try_into().ok()?)),
        n => (0, u64::from(n)),
    };
    let need = 2 + ext + if masked { 4 } else { 0 };
    (head.len() >= need).then_some((b0 & 0x0f, b0 & 0x80 != 0, len, need))
}

/// Why the guard failed a connection's body, once it has: the endpoint helper
/// ([`super::ws`]) reads it to close the socket with 1009 and this text.
pub type Refusal = Rc<RefCell<Option<String>>>;

/// Wrap an upgrade body so oversized frames fail it from their header; the returned
/// [`Refusal`] holds the reason once one has.
pub async fn guard(
    req: &HttpRequest,
    body: web::Payload,
    max: usize,
) -> Result<(web::Payload, Refusal), actix_web::Error> {
    let mut scanner = FrameScanner::new(max);
    let refusal = Refusal::default();
    let said = Rc::clone(&refusal);
    let mut failed = false;
    let stream = body.map(move |chunk| {
        if failed {
            return Err(actix_web::error::PayloadError::Overflow);
        }
        let chunk: Bytes = chunk?;
        scanner.feed(&chunk).map_err(|msg| {
            failed = true;
            tracing::warn!("closing a WebSocket: {msg}");
            *said.borrow_mut() = Some(msg.clone());
            actix_web::error::PayloadError::Io(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                msg,
            ))
        })?;
        Ok(chunk)
    });
    let boxed: actix_http::BoxedPayloadStream = Box::pin(stream);
    let mut payload = actix_web::dev::Payload::Stream { payload: boxed };
    Ok((
        web::Payload::from_request(req, &mut payload).await?,
        refusal,
    ))
}

#[cfg(test)]
#[path = "frame_guard_tests.rs"]
mod tests;
