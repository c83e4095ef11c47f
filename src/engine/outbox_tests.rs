//! The outbox over an in-memory pipe: an idle socket takes a message at once with its
//! lateness timed before the write; a blocked one keeps the encoded rest for the
//! sender's flush, a message emitted while anything waits is routed to the sender (timed
//! when the sender gets to it), and the frames reach the server whole and in the order
//! the session emitted them; a failed write is the session's failure message.

use std::time::Duration;

use actix_codec::Framed;
use actix_http::ws::{Codec, Frame};
use awc::BoxedSocket;
use bytes::Bytes;
use futures_util::StreamExt as _;
use tokio::io::DuplexStream;
use tokio::time::Instant;

use super::{Direct, Outbox};
use crate::engine::roles::SenderMsg;
use crate::engine::transport::{LimitedCodec, split};
use crate::workload::{OutMsg, Outbound};

/// An outbox over one end of a pipe holding `capacity` bytes, and the server's codec
/// over the other.
fn pipe(capacity: usize) -> (std::rc::Rc<Outbox>, Framed<DuplexStream, Codec>) {
    let (client, server) = tokio::io::duplex(capacity);
    let client = Framed::new(
        Box::new(client) as BoxedSocket,
        LimitedCodec::new(Codec::new().client_mode(), 1 << 20),
    );
    let (sink, _stream) = split(client);
    (Outbox::new(sink), Framed::new(server, Codec::new()))
}

fn text(s: &str, intended: Option<Instant>) -> OutMsg {
    OutMsg {
        msg: Outbound::Text(s.to_owned().into()),
        intended,
    }
}

async fn next_text(server: &mut Framed<DuplexStream, Codec>) -> Bytes {
    match server.next().await {
        Some(Ok(Frame::Text(b))) => b,
        other => panic!("expected a text frame, got {other:?}"),
    }
}

fn run<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .unwrap()
        .block_on(f)
}

#[test]
fn an_idle_socket_takes_a_message_at_once_timed_before_the_write() {
    run(async {
        let (outbox, mut server) = pipe(1 << 16);
        let intended = Instant::now();
        tokio::time::advance(Duration::from_millis(3)).await;
        assert!(outbox.idle());
        assert_eq!(
            outbox.send_now(text("hello", Some(intended)), Instant::now()),
            Direct::Sent
        );
        // A reactive message (no schedule) is sent but not timed.
        assert_eq!(
            outbox.send_now(text("ack", None), Instant::now()),
            Direct::Sent
        );
        assert_eq!(outbox.take_lateness(), [0.003]);
        assert_eq!(next_text(&mut server).await, "hello");
        assert_eq!(next_text(&mut server).await, "ack");
    });
}

#[test]
fn a_blocked_write_waits_for_the_flush_and_frames_stay_whole_and_in_order() {
    run(async {
        // The pipe holds 64 bytes: a 5,000-byte frame cannot go out at once.
        let (outbox, mut server) = pipe(64);
        let big = "x".repeat(5_000);
        let start = Instant::now();
        let flush = outbox.route(text(&big, Some(start)), start);
        assert!(matches!(flush, Some(SenderMsg::Flush)), "{flush:?}");
        assert!(!outbox.idle(), "the rest of the frame waits for the sender");
        // The next message is not written at once: it is handed to the sender, behind.
        let late = start + Duration::from_millis(1);
        let queued = outbox.route(text("next", Some(late)), late);
        let Some(SenderMsg::Send(next)) = queued else {
            panic!("expected the message queued for the sender, got {queued:?}");
        };
        // What the sender does with the two, in mailbox order.
        let sender = async {
            outbox.flush().await.unwrap();
            outbox.done_one();
            outbox.send_queued(next).await.unwrap();
            outbox.done_one();
        };
        let reader = async {
            tokio::time::sleep(Duration::from_millis(5)).await;
            (next_text(&mut server).await, next_text(&mut server).await)
        };
        let ((), (first, second)) = tokio::join!(sender, reader);
        assert_eq!(first, Bytes::from(big));
        assert_eq!(second, "next");
        assert!(outbox.idle());
        let lateness = outbox.take_lateness();
        assert_eq!(lateness[0], 0.0);
        // The queued message was timed when the sender got to it: after the server began
        // reading, 5 ms after the start, so at least 4 ms past its intended time.
        assert!(lateness[1] >= 0.004, "{lateness:?}");
    });
}

#[test]
fn a_failed_write_is_the_sessions_failure_message() {
    run(async {
        let (outbox, server) = pipe(1 << 16);
        drop(server);
        let Direct::Failed(msg) = outbox.send_now(text("hello", None), Instant::now()) else {
            panic!("a write to a closed pipe must fail");
        };
        assert!(msg.starts_with("send failed: "), "{msg}");
        outbox.mark_broken();
        assert!(!outbox.idle() && outbox.is_broken());
    });
}
