//! Split tests over an in-memory pipe: messages cross both ways through the two halves,
//! and a drained write buffer is given back after each send.

use actix_codec::Framed;
use actix_http::ws::{Codec, Frame, Message};
use awc::BoxedSocket;
use bytes::Bytes;
use futures_util::{SinkExt as _, StreamExt as _};

use super::super::LimitedCodec;
use super::{IDLE_WRITE_BUF_BYTES, SCRATCH, WsSink, split};

/// A client connection over one end of a pipe, and a server codec over the other.
fn pipe() -> (
    Framed<BoxedSocket, LimitedCodec>,
    Framed<tokio::io::DuplexStream, Codec>,
) {
    narrow_pipe(1 << 20)
}

/// The write buffer's allocation, read by taking the connection apart and back.
fn write_buf_capacity(sink: &WsSink) -> usize {
    let mut slot = sink.0.borrow_mut();
    let parts = slot.take().unwrap().into_parts();
    let cap = parts.write_buf.capacity();
    *slot = Some(Framed::from_parts(parts));
    cap
}

fn run<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(f)
}

#[test]
fn messages_cross_both_ways_and_the_write_buffer_is_given_back() {
    run(async {
        let (client, mut server) = pipe();
        let (sink, mut stream) = split(client);
        let big = "x".repeat(50_000);
        sink.send(Message::Text(big.clone().into())).await.unwrap();
        assert_eq!(write_buf_capacity(&sink), IDLE_WRITE_BUF_BYTES);
        match server.next().await.unwrap().unwrap() {
            Frame::Text(b) => assert_eq!(b, Bytes::from(big)),
            other => panic!("{other:?}"),
        }
        // A small message after a large one: still the idle buffer afterwards.
        sink.send(Message::Text("ack".into())).await.unwrap();
        assert_eq!(write_buf_capacity(&sink), IDLE_WRITE_BUF_BYTES);
        // The read half sees what the server sends, between the sender's writes.
        server.send(Message::Text("hi".into())).await.unwrap();
        match stream.next().await.unwrap().unwrap() {
            Frame::Text(b) => assert_eq!(b, Bytes::from_static(b"hi")),
            other => panic!("{other:?}"),
        }
        match server.next().await.unwrap().unwrap() {
            Frame::Text(b) => assert_eq!(b, Bytes::from_static(b"ack")),
            other => panic!("{other:?}"),
        }
        // Close flushes and shuts the write direction: the server reads the end.
        sink.close().await.unwrap();
        assert!(server.next().await.is_none());
    });
}

/// [`pipe`] holding only `cap` bytes in flight.
fn narrow_pipe(
    cap: usize,
) -> (
    Framed<BoxedSocket, LimitedCodec>,
    Framed<tokio::io::DuplexStream, Codec>,
) {
    let (client, server) = tokio::io::duplex(cap);
    let client = Framed::new(
        Box::new(client) as BoxedSocket,
        LimitedCodec::new(Codec::new().client_mode(), 1 << 20),
    );
    (client, Framed::new(server, Codec::new().max_size(1 << 20)))
}

/// The frame the last direct send built, in this thread's scratch buffer.
fn scratch_len() -> usize {
    SCRATCH.with_borrow(Vec::len)
}

#[test]
fn a_message_sent_at_once_skips_the_write_buffer() {
    run(async {
        let (client, mut server) = pipe();
        let (sink, _stream) = split(client);
        assert_eq!(write_buf_capacity(&sink), IDLE_WRITE_BUF_BYTES);
        let append = "a".repeat(8_683);
        assert!(sink.send_now(Message::Text(append.clone().into())).unwrap());
        // The frame was built in the shard's scratch buffer: a 16-bit length, the key.
        assert_eq!(scratch_len(), 2 + 2 + 4 + 8_683);
        assert!(
            sink.send_now(Message::Binary(Bytes::from_static(b"\x00\x01")))
                .unwrap()
        );
        assert_eq!(scratch_len(), 2 + 4 + 2);
        assert_eq!(write_buf_capacity(&sink), IDLE_WRITE_BUF_BYTES);
        match server.next().await.unwrap().unwrap() {
            Frame::Text(b) => assert_eq!(b, Bytes::from(append)),
            other => panic!("{other:?}"),
        }
        match server.next().await.unwrap().unwrap() {
            Frame::Binary(b) => assert_eq!(b, Bytes::from_static(b"\x00\x01")),
            other => panic!("{other:?}"),
        }
    });
}

#[test]
fn what_the_socket_does_not_take_waits_in_order_for_the_flush() {
    run(async {
        // The pipe takes 100 bytes: the first frame goes out in part.
        let (client, mut server) = narrow_pipe(100);
        let (sink, _stream) = split(client);
        let first = "f".repeat(10_000);
        assert!(!sink.send_now(Message::Text(first.clone().into())).unwrap());
        assert_eq!(scratch_len(), 2 + 2 + 4 + 10_000);
        // Bytes wait: the next message queues behind them in the write buffer, not
        // through the scratch buffer (which still holds the first frame).
        assert!(!sink.send_now(Message::Text("second".into())).unwrap());
        assert_eq!(scratch_len(), 2 + 2 + 4 + 10_000);
        let flush = async { sink.flush().await.unwrap() };
        let read = async {
            let a = server.next().await.unwrap().unwrap();
            let b = server.next().await.unwrap().unwrap();
            (a, b)
        };
        let ((), (a, b)) = futures_util::join!(flush, read);
        assert_eq!(a, Frame::Text(Bytes::from(first)));
        assert_eq!(b, Frame::Text(Bytes::from_static(b"second")));
        assert_eq!(write_buf_capacity(&sink), IDLE_WRITE_BUF_BYTES);
    });
}
