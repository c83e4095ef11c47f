use actix_codec::Decoder as _;
use actix_http::ws::{Codec, Frame};
use bytes::BytesMut;

use super::encode_masked;

/// What a server's codec reads back from the frame.
fn server_reads(frame: &[u8]) -> Frame {
    let mut buf = BytesMut::from(frame);
    let got = Codec::new().max_size(1 << 20).decode(&mut buf);
    assert!(buf.is_empty(), "the whole frame is consumed");
    got.unwrap().unwrap()
}

#[test]
fn every_length_form_reads_back_unmasked() {
    for len in [0, 1, 7, 8, 9, 125, 126, 127, 8_683, 65_535, 65_536, 100_003] {
        let payload: Vec<u8> = (0..len).map(|i| (i * 31 % 251) as u8).collect();
        let mut out = Vec::new();
        encode_masked(&mut out, 0x2, false, &payload, [0x12, 0x34, 0xab, 0xcd]);
        match server_reads(&out) {
            Frame::Binary(b) => assert_eq!(&b[..], &payload[..], "len {len}"),
            other => panic!("len {len}: {other:?}"),
        }
    }
}

#[test]
fn the_header_is_rfc_6455s() {
    let mut out = Vec::new();
    encode_masked(&mut out, 0x1, false, b"Hello", [0x37, 0xfa, 0x21, 0x3d]);
    // RFC 6455 §5.7's masked "Hello".
    assert_eq!(
        out,
        [
            0x81, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58
        ]
    );
    let mut out = Vec::new();
    encode_masked(&mut out, 0x1, false, &[b'a'; 300], [1, 2, 3, 4]);
    assert_eq!(out[..8], [0x81, 0xfe, 0x01, 0x2c, 1, 2, 3, 4]);
    assert_eq!(out.len(), 8 + 300);
    match server_reads(&out) {
        Frame::Text(b) => assert_eq!(&b[..], &[b'a'; 300][..]),
        other => panic!("{other:?}"),
    }
}
