//! The transport's pure parts: write-buffer fitting, fragment reassembly, close frames.

use actix_codec::Encoder as _;
use actix_http::ws::{CloseCode, CloseReason};
use awc::ws::Codec;

use super::codec::fit_if_drained;
use super::*;

#[test]
fn a_drained_buffer_too_small_for_the_next_frame_gets_exactly_its_room() {
    let mut buf = bytes::BytesMut::with_capacity(8 * 1024);
    fit_if_drained(&mut buf, 9_000);
    assert!(
        (9_000..9_000 + 64).contains(&buf.capacity()),
        "{}",
        buf.capacity()
    );
    // Enough room already: kept as is.
    fit_if_drained(&mut buf, 100);
    assert!(buf.capacity() >= 9_000);
    // Bytes still to be written are never touched.
    buf.extend_from_slice(b"pending");
    fit_if_drained(&mut buf, 50_000);
    assert_eq!(&buf[..], b"pending");
    // Through the codec: an append-sized frame into the framed writer's 8 KiB buffer.
    let mut codec = LimitedCodec::new(Codec::new(), 1 << 20);
    let mut dst = bytes::BytesMut::with_capacity(8 * 1024);
    codec
        .encode(Message::Text("a".repeat(8_800).into()), &mut dst)
        .unwrap();
    assert!(
        dst.capacity() < 8_800 + 64,
        "not doubled: {}",
        dst.capacity()
    );
}

#[test]
fn a_drained_large_write_buffer_is_given_back_and_pending_bytes_never_are() {
    let mut buf = bytes::BytesMut::with_capacity(100 * 1024);
    buf.extend_from_slice(b"pending");
    fit_if_drained(&mut buf, 100);
    assert_eq!(&buf[..], b"pending", "bytes still to be written stay");
    assert!(buf.capacity() >= 90 * 1024);
    // Written out the way the framed writer does it: advanced past its bytes.
    bytes::Buf::advance(&mut buf, 7);
    fit_if_drained(&mut buf, 100);
    assert!((100..164).contains(&buf.capacity()), "{}", buf.capacity());
    let mut small = bytes::BytesMut::with_capacity(8 * 1024);
    fit_if_drained(&mut small, 100);
    assert!(
        small.capacity() >= 8 * 1024,
        "a buffer of append size is kept"
    );
    // Through the codec: a large message, drained, then a small one.
    let mut codec = LimitedCodec::new(Codec::new(), 1 << 20);
    let mut dst = bytes::BytesMut::new();
    codec
        .encode(Message::Text("x".repeat(80 * 1024).into()), &mut dst)
        .unwrap();
    assert!(dst.capacity() >= 80 * 1024);
    let written = dst.len();
    bytes::Buf::advance(&mut dst, written);
    codec
        .encode(Message::Text("small".into()), &mut dst)
        .unwrap();
    assert!(dst.capacity() < KEEP_WRITE_BUF_BYTES, "{}", dst.capacity());
}

#[test]
fn joins_fragments() {
    let mut r = Reassembler::default();
    assert_eq!(
        r.push(Frame::Continuation(Item::FirstText(Bytes::from_static(
            b"{\"a\""
        ))))
        .unwrap(),
        ReadEvent::Nothing
    );
    assert_eq!(
        r.push(Frame::Continuation(Item::Continue(Bytes::from_static(
            b":"
        ))))
        .unwrap(),
        ReadEvent::Nothing
    );
    assert_eq!(
        r.push(Frame::Continuation(Item::Last(Bytes::from_static(b"1}"))))
            .unwrap(),
        ReadEvent::Data(Inbound::Text("{\"a\":1}".into()))
    );
    assert!(
        r.push(Frame::Continuation(Item::Continue(Bytes::new())))
            .is_err()
    );
}

#[test]
fn close_frames_carry_code_and_reason() {
    let mut r = Reassembler::default();
    assert_eq!(
        r.push(Frame::Close(None)).unwrap(),
        ReadEvent::Close(Some("1005".into()))
    );
    let bye = CloseReason {
        code: CloseCode::Normal,
        description: Some("bye".into()),
    };
    assert_eq!(
        r.push(Frame::Close(Some(bye))).unwrap(),
        ReadEvent::Close(Some("1000 bye".into()))
    );
}

#[test]
fn the_wire_block_counts_connections_and_what_they_agreed() {
    let agreed = deflate::negotiate(
        Compression::Deflate,
        &["permessage-deflate; server_max_window_bits=12; client_max_window_bits=12"],
    )
    .unwrap()
    .unwrap();
    let w = Wire::new(Compression::Deflate);
    let shared = w.clone();
    shared.record(Some(&agreed));
    w.record(Some(&agreed));
    w.record(None);
    let v = w.result_block();
    let c = &v["wire"]["compression"];
    assert_eq!(v["wire"]["tcp_nodelay"], true);
    assert_eq!(c["setting"], "deflate");
    assert_eq!(c["offered"], deflate::OFFER);
    assert_eq!(
        (c["connections"].as_u64(), c["negotiated"].as_u64()),
        (Some(3), Some(2))
    );
    assert_eq!(c["agreed"][0]["connections"], 2);
    assert_eq!(c["agreed"][0]["client_max_window_bits"], 12);
    assert_eq!(c["agreed"][0]["outbound_compressed"], true);
    let none = Wire::new(Compression::None).result_block();
    assert!(none["wire"]["compression"]["offered"].is_null());
    assert_eq!(none["wire"]["compression"]["agreed"], serde_json::json!([]));
    assert!(describe_wire(Compression::Deflate, 0).contains(deflate::OFFER));
    assert_eq!(
        describe_wire(Compression::None, 0),
        "TCP_NODELAY; no compression offered"
    );
}

#[test]
fn a_plain_client_reading_a_tls_answer_is_told_to_use_wss() {
    use actix_http::error::ParseError;
    use awc::error::{SendRequestError, WsClientError};
    let e = |p| WsClientError::SendRequest(SendRequestError::Response(p));
    let msg = scheme_hint::plain_to_tls("ws://127.0.0.1:9/x", &e(ParseError::Version)).unwrap();
    assert!(
        msg.contains("appears to speak TLS") && msg.contains("wss://"),
        "{msg}"
    );
    assert!(msg.contains("invalid HTTP version"), "{msg}");
    let msg = scheme_hint::plain_to_tls("WS://h/x", &e(ParseError::Incomplete)).unwrap();
    assert!(msg.contains("closed") && msg.contains("wss://"), "{msg}");
    // wss:// already, or an error that says nothing about TLS: awc's own text stays.
    assert_eq!(
        scheme_hint::plain_to_tls("wss://h/x", &e(ParseError::Version)),
        None
    );
    assert_eq!(
        scheme_hint::plain_to_tls("ws://h/x", &e(ParseError::Header)),
        None
    );
}

#[test]
fn a_plain_client_reset_before_an_answer_is_told_wss_may_fix_it() {
    use actix_http::error::ParseError;
    use awc::error::{SendRequestError, WsClientError};
    let reset = || std::io::Error::from(std::io::ErrorKind::ConnectionReset);
    for e in [
        WsClientError::SendRequest(SendRequestError::Response(ParseError::Io(reset()))),
        WsClientError::SendRequest(SendRequestError::Send(reset())),
    ] {
        let msg = scheme_hint::plain_to_tls("ws://h/x", &e).unwrap();
        assert!(
            msg.contains("closed") && msg.contains("if it speaks TLS"),
            "{msg}"
        );
    }
    let refused = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
    let e = WsClientError::SendRequest(SendRequestError::Send(refused));
    assert_eq!(scheme_hint::plain_to_tls("ws://h/x", &e), None);
}
