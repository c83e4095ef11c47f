//! The reader role. **Owns** the socket's read half and the reassembly of fragmented
//! messages. Its job: take the next frame the socket hands over, **stamp it at that
//! moment** (the receipt time every latency is measured to), join fragments, and hand the
//! sample one timestamped event — a whole data message, a ping to answer, the peer's
//! close, or a read failure. Frames that complete nothing (a fragment, a pong) are
//! absorbed here. It never interprets a payload: the session parses what it receives.
//!
//! [`Reader::next`] is cancel-safe (a frame is consumed only when it is returned, and a
//! fragment's bytes live in the reassembler), so the sample's loop can wait on it beside
//! its wake-up and the sender's pending writes.

use futures_util::StreamExt as _;
use tokio::time::Instant;

use super::transport::{ReadEvent, Reassembler, WsStream};

/// One inbound event and the instant its frame was handed over.
#[derive(Debug)]
pub struct Received {
    /// Receipt time: taken the moment the socket handed the frame over.
    pub at: Instant,
    /// A data message, a ping, the close (`Close(None)`: the stream ended without a close
    /// frame); `Err` when the read failed (the sample's failure message).
    pub event: Result<ReadEvent, String>,
}

/// The reader role (see the module header).
pub struct Reader {
    stream: WsStream,
    joiner: Reassembler,
}

impl Reader {
    /// A reader of `stream`.
    pub fn new(stream: WsStream) -> Self {
        Reader {
            stream,
            joiner: Reassembler::default(),
        }
    }

    /// The next event: waits for a frame that completes one.
    pub async fn next(&mut self) -> Received {
        loop {
            let next = self.stream.next().await;
            // Receipt time: taken the moment the frame is handed to us.
            let at = Instant::now();
            let event = match next {
                None => Ok(ReadEvent::Close(None)),
                Some(frame) => frame
                    .map_err(|e| e.to_string())
                    .and_then(|f| self.joiner.push(f).map_err(|e| e.to_string())),
            };
            if !matches!(event, Ok(ReadEvent::Nothing)) {
                return Received { at, event };
            }
        }
    }
}
