//! The sender over an in-memory pipe: an idle socket takes a message at once with its
//! lateness timed before the write; a blocked one keeps the encoded rest for the drain,
//! a message emitted while anything waits is queued (timed when the sender gets to it),
//! and the frames reach the server whole and in the order the session emitted them —
//! even when the drain is cancelled half-way; a failed write is the session's failure
//! message, once.

use std::time::Duration;

use actix_codec::Framed;
use actix_http::ws::{Codec, Frame};
use awc::BoxedSocket;
use bytes::Bytes;
use futures_util::StreamExt as _;
use tokio::io::DuplexStream;
use tokio::time::Instant;

use super::Sender;
use crate::engine::transport::{LimitedCodec, split};
use crate::workload::{OutMsg, Outbound};

/// A sender over one end of a pipe holding `capacity` bytes, and the server's codec over
/// the other.
fn pipe(capacity: usize) -> (Sender, Framed<DuplexStream, Codec>) {
    let (client, server) = tokio::io::duplex(capacity);
    let client = Framed::new(
        Box::new(client) as BoxedSocket,
        LimitedCodec::new(Codec::new().client_mode(), 1 << 20),
    );
    let (sink, _stream) = split(client);
    (Sender::new(sink), Framed::new(server, Codec::new()))
}

fn text(s: &str, intended: Option<Instant>) -> OutMsg {
    OutMsg {
        msg: Outbound::Text(s.to_owned().into()),
        intended,
    }
}

async fn next_frame(server: &mut Framed<DuplexStream, Codec>) -> Frame {
    server
        .next()
        .await
        .expect("a frame")
        .expect("a valid frame")
}

async fn next_text(server: &mut Framed<DuplexStream, Codec>) -> Bytes {
    match next_frame(server).await {
        Frame::Text(b) => b,
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
        let (mut sender, mut server) = pipe(1 << 16);
        let intended = Instant::now();
        tokio::time::advance(Duration::from_millis(3)).await;
        assert!(sender.idle());
        sender.send(text("hello", Some(intended))).unwrap();
        // A reactive message (no schedule) is sent but not timed.
        sender.send(text("ack", None)).unwrap();
        assert!(sender.idle() && !sender.has_waiting());
        assert_eq!(sender.take_lateness().values(None).unwrap(), [0.003]);
        assert_eq!(next_text(&mut server).await, "hello");
        assert_eq!(next_text(&mut server).await, "ack");
    });
}

#[test]
fn a_blocked_write_waits_for_the_drain_and_frames_stay_whole_and_in_order() {
    run(async {
        // The pipe holds 64 bytes: a 5,000-byte frame cannot go out at once.
        let (mut sender, mut server) = pipe(64);
        let big = "x".repeat(5_000);
        let start = Instant::now();
        sender.send(text(&big, Some(start))).unwrap();
        assert!(sender.has_waiting(), "the rest of the frame waits");
        // The next message and a pong are not written at once: they queue behind.
        sender
            .send(text("next", Some(start + Duration::from_millis(1))))
            .unwrap();
        sender.pong(Bytes::from_static(b"p"));
        // A drain cancelled half-way (the server is not reading yet) loses nothing.
        let cut = tokio::time::timeout(Duration::from_millis(2), sender.drain()).await;
        assert!(cut.is_err(), "the pipe is full: the drain waits");
        let reader = async {
            tokio::time::sleep(Duration::from_millis(5)).await;
            let first = next_text(&mut server).await;
            let second = next_text(&mut server).await;
            (first, second, next_frame(&mut server).await)
        };
        let (drained, (first, second, pong)) = tokio::join!(sender.drain(), reader);
        drained.unwrap();
        assert_eq!(first, Bytes::from(big));
        assert_eq!(second, "next");
        assert_eq!(pong, Frame::Pong(Bytes::from_static(b"p")));
        assert!(sender.idle());
        let lateness = sender.take_lateness().values(None).unwrap();
        assert_eq!(lateness[0], 0.0);
        // The queued message was timed when the sender got to it: after the server began
        // reading, 5 ms after the start, so at least 4 ms past its intended time.
        assert!(lateness[1] >= 0.004, "{lateness:?}");
    });
}

#[test]
fn a_failed_write_is_the_sessions_failure_message_once() {
    run(async {
        let (mut sender, server) = pipe(1 << 16);
        drop(server);
        let msg = sender
            .send(text("hello", None))
            .expect_err("a write to a closed pipe must fail");
        assert!(msg.starts_with("send failed: "), "{msg}");
        assert!(!sender.idle() && !sender.has_waiting());
        // Broken: later messages are dropped, not failed again.
        assert_eq!(sender.send(text("more", None)), Ok(()));
        assert_eq!(sender.drain().await, Ok(()));
    });
}

#[test]
fn close_writes_what_waits_then_the_close_frame() {
    run(async {
        let (mut sender, mut server) = pipe(64);
        sender.send(text(&"y".repeat(1_000), None)).unwrap();
        sender.send(text("last", None)).unwrap();
        let reader = async {
            let a = next_text(&mut server).await;
            let b = next_text(&mut server).await;
            (a.len(), b, next_frame(&mut server).await)
        };
        let ((), (len, last, close)) = tokio::join!(sender.close(), reader);
        assert_eq!((len, &last[..]), (1_000, &b"last"[..]));
        assert!(matches!(close, Frame::Close(Some(_))), "{close:?}");
    });
}
