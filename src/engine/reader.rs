//! The reader role. **Owns** the socket's read half and the reassembly of fragmented
//! messages. Its job: take the next frame the socket hands over, **stamp it at that
//! moment** (the receipt time every latency is measured to), join fragments, and hand the
//! sample one timestamped event — a whole data message, a ping to answer, the peer's
//! close, or a read failure. Frames that complete nothing (a fragment, a pong) are
//! absorbed here. It never interprets a payload: the session parses what it receives.
//!
//! The receipt time is the kernel's, when the socket gave one: when the packet that
//! completed the message arrived ([`super::transport::stamped`]), not when this shard
//! thread got round to reading it. How much later the reader handed the message on (the
//! **reader delay**: what a stamp taken here would have added) goes into the run's
//! receipts tally ([`super::transport::receipts`]).
//!
//! [`Reader::next`] is cancel-safe (a frame is consumed only when it is returned, and a
//! fragment's bytes live in the reassembler), so the sample's loop can wait on it beside
//! its wake-up and the sender's pending writes.

use std::sync::Arc;

use futures_util::StreamExt as _;
use tokio::time::Instant;

use super::transport::receipts::{Batch, Receipts};
use super::transport::{ReadEvent, Reassembler, WsStream};

/// One inbound event and the instant its frame was handed over.
#[derive(Debug)]
pub struct Received {
    /// Receipt time: the kernel's, for the packet that completed the message; else the
    /// moment the socket handed the frame over. Never before the session's open nor an
    /// earlier receipt.
    pub at: Instant,
    /// A data message, a ping, the close (`Close(None)`: the stream ended without a close
    /// frame); `Err` when the read failed (the sample's failure message).
    pub event: Result<ReadEvent, String>,
}

/// The reader role (see the module header).
pub struct Reader {
    stream: WsStream,
    joiner: Reassembler,
    /// The latest receipt time given (the session's open before any).
    floor: Instant,
    receipts: Arc<Receipts>,
    batch: Batch,
}

impl Reader {
    /// A reader of `stream` opened at `opened`, adding to the run's `receipts`.
    pub fn new(stream: WsStream, opened: Instant, receipts: Arc<Receipts>) -> Self {
        Reader {
            stream,
            joiner: Reassembler::default(),
            floor: opened,
            receipts,
            batch: Batch::default(),
        }
    }

    /// The receipt time of a frame handed over at `now` (see [`Received::at`]), noting
    /// its reader delay.
    fn stamp(&mut self, now: Instant) -> Instant {
        let read = self.stream.last_read();
        let at = read.map_or(now, |r| r.at.min(now)).max(self.floor);
        self.floor = at;
        let delay = read.filter(|r| r.kernel_age.is_some()).map(|_| now - at);
        if self.batch.note(delay) {
            self.receipts.add(&mut self.batch);
        }
        at
    }

    /// The next event: waits for a frame that completes one.
    pub async fn next(&mut self) -> Received {
        loop {
            let next = self.stream.next().await;
            let handed = Instant::now();
            let event = match next {
                None => Ok(ReadEvent::Close(None)),
                Some(frame) => frame
                    .map_err(|e| e.to_string())
                    .and_then(|f| self.joiner.push(f).map_err(|e| e.to_string())),
            };
            if !matches!(event, Ok(ReadEvent::Nothing)) {
                let at = self.stamp(handed);
                return Received { at, event };
            }
        }
    }
}

impl Drop for Reader {
    /// What the reader stamped since its last full batch goes into the run's tally.
    fn drop(&mut self) {
        self.receipts.add(&mut self.batch);
    }
}
