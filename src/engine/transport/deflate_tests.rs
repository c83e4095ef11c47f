//! The offer and its answers, inflate/deflate with and without context takeover, RSV1
//! through the codec, and a round trip through real frames.

use actix_codec::Decoder as _;
use awc::ws::{Codec, Frame};
use bytes::BytesMut;
use proptest::prelude::*;

use super::super::codec::{FrameError, LimitedCodec};
use super::*;

fn agreed(answer: &str) -> Agreed {
    negotiate(Compression::Deflate, &[answer])
        .unwrap()
        .expect("accepted")
}

const DEFAULTS: Agreed = Agreed {
    server_no_context_takeover: false,
    client_no_context_takeover: false,
    server_max_window_bits: 15,
    client_max_window_bits: 15,
};

#[test]
fn the_offer_is_the_reference_clients() {
    assert_eq!(
        Compression::default().offer(),
        Some("permessage-deflate; client_max_window_bits")
    );
    assert_eq!(Compression::None.offer(), None);
    assert_eq!(Compression::parse("none"), Ok(Compression::None));
    let e = Compression::parse("gzip").unwrap_err();
    assert!(e.contains("\"gzip\"") && e.contains("\"deflate\""), "{e}");
}

#[test]
fn accepted_answers_give_the_agreed_parameters() {
    assert_eq!(negotiate(Compression::Deflate, &[]), Ok(None));
    assert_eq!(negotiate(Compression::None, &[]), Ok(None));
    assert_eq!(negotiate(Compression::Deflate, &[""]), Ok(None));
    assert_eq!(agreed("permessage-deflate"), DEFAULTS);
    // What Python websockets' server answers by default.
    let py = agreed("permessage-deflate; server_max_window_bits=12; client_max_window_bits=12");
    assert_eq!(
        (py.server_max_window_bits, py.client_max_window_bits),
        (12, 12)
    );
    assert!(!py.server_no_context_takeover && !py.client_no_context_takeover);
    assert_eq!(
        py.describe(),
        "permessage-deflate; server_max_window_bits=12; client_max_window_bits=12"
    );
    let all = agreed(
        "Permessage-Deflate;server_no_context_takeover ; CLIENT_NO_CONTEXT_TAKEOVER; \
         client_max_window_bits=\"9\"",
    );
    assert!(all.server_no_context_takeover && all.client_no_context_takeover);
    assert_eq!(all.client_max_window_bits, 9);
    assert!(all.compresses_outbound());
    let eight = agreed("permessage-deflate; client_max_window_bits=8");
    assert!(
        !eight.compresses_outbound(),
        "zlib cannot deflate raw within 256 bytes"
    );
    assert!(Deflater::new(&eight).is_none());
}

#[test]
fn answers_the_offer_does_not_allow_are_refused_with_the_reason() {
    for (answer, why) in [
        (
            "x-webkit-deflate-frame",
            "did not offer the extension `x-webkit-deflate-frame`",
        ),
        ("permessage-deflate, permessage-deflate", "accepted twice"),
        (
            "permessage-deflate; mystery=1",
            "unknown parameter `mystery`",
        ),
        (
            "permessage-deflate; client_max_window_bits",
            "needs a value",
        ),
        (
            "permessage-deflate; server_max_window_bits",
            "needs a value",
        ),
        (
            "permessage-deflate; server_max_window_bits=7",
            "not a window size",
        ),
        (
            "permessage-deflate; client_max_window_bits=16",
            "not a window size",
        ),
        (
            "permessage-deflate; client_max_window_bits=09",
            "not a window size",
        ),
        (
            "permessage-deflate; client_max_window_bits=\"1",
            "malformed quoted value",
        ),
        (
            "permessage-deflate; server_no_context_takeover=1",
            "takes no value",
        ),
        (
            "permessage-deflate; server_no_context_takeover; server_no_context_takeover",
            "appears twice",
        ),
    ] {
        let e = negotiate(Compression::Deflate, &[answer]).unwrap_err();
        assert!(e.contains(why), "{answer}: {e}");
    }
    // Nothing offered: any extension in the answer fails the handshake.
    let e = negotiate(Compression::None, &["permessage-deflate"]).unwrap_err();
    assert!(e.contains("did not offer"), "{e}");
    // A header may repeat: two values are two extensions.
    let e = negotiate(
        Compression::Deflate,
        &["permessage-deflate", "permessage-deflate"],
    );
    assert!(e.unwrap_err().contains("twice"));
}

/// Compresses `msgs` one by one as the server would (its own deflater, `reset_each`:
/// no context takeover).
fn server_side(msgs: &[&[u8]], bits: u8, reset_each: bool) -> Vec<Vec<u8>> {
    let mut d = Deflater::new(&Agreed {
        client_no_context_takeover: reset_each,
        client_max_window_bits: bits,
        ..DEFAULTS
    })
    .unwrap();
    msgs.iter()
        .map(|m| {
            let mut out = Vec::new();
            d.deflate(m, &mut out).unwrap();
            out
        })
        .collect()
}

fn audio_like(n: usize, seed: u32) -> Vec<u8> {
    // Base64-like text of 16 symbols in a pseudo-random order: compressible by about
    // half, and only by a window that holds an earlier copy beyond that.
    let mut x = seed.wrapping_mul(2_654_435_761).wrapping_add(1);
    (0..n)
        .map(|_| {
            x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            b"ABCDEFGHabcdefgh"[(x >> 28) as usize]
        })
        .collect()
}

#[test]
fn context_takeover_carries_the_window_between_messages_and_no_takeover_does_not() {
    let m = audio_like(8_000, 1);
    let with = server_side(&[&m, &m], 15, false);
    assert!(
        with[1].len() * 4 < with[0].len(),
        "the second copy refers back: {} vs {}",
        with[1].len(),
        with[0].len()
    );
    let without = server_side(&[&m, &m], 15, true);
    assert_eq!(
        without[0], without[1],
        "each message starts from an empty window"
    );
    // The inflater keeps the window unless the server said it would not.
    let mut keep = Inflater::new(&DEFAULTS);
    for c in &with {
        assert_eq!(keep.inflate(c, true, 0, 1 << 20).unwrap(), m);
    }
    let no_ctx = Agreed {
        server_no_context_takeover: true,
        ..DEFAULTS
    };
    let mut reset = Inflater::new(&no_ctx);
    for c in &without {
        assert_eq!(reset.inflate(c, true, 0, 1 << 20).unwrap(), m);
    }
    // A reset window cannot read a message that refers back: the reset is real.
    let mut reset = Inflater::new(&no_ctx);
    assert_eq!(reset.inflate(&with[0], true, 0, 1 << 20).unwrap(), m);
    assert_ne!(reset.inflate(&with[1], true, 0, 1 << 20).ok(), Some(m));
}

#[test]
fn a_small_window_and_fragments_read_back() {
    let msgs: Vec<Vec<u8>> = (0..20)
        .map(|i| audio_like(3_000 + 97 * i, i as u32))
        .collect();
    let refs: Vec<&[u8]> = msgs.iter().map(Vec::as_slice).collect();
    for bits in [9, 12, 15] {
        let packed = server_side(&refs, bits, false);
        let mut inf = Inflater::new(&DEFAULTS);
        for (c, m) in packed.iter().zip(&msgs) {
            // Three fragments at uneven points.
            let (a, b) = (c.len() / 3, c.len() * 3 / 4);
            let mut got = inf.inflate(&c[..a], false, 0, 1 << 20).unwrap();
            got.extend(inf.inflate(&c[a..b], false, got.len(), 1 << 20).unwrap());
            got.extend(inf.inflate(&c[b..], true, got.len(), 1 << 20).unwrap());
            assert_eq!(&got, m, "{bits} bits");
        }
    }
}

#[test]
fn an_empty_message_and_a_final_block_read_back() {
    let packed = server_side(&[b"", b"x"], 15, false);
    let mut inf = Inflater::new(&DEFAULTS);
    assert_eq!(inf.inflate(&packed[0], true, 0, 10).unwrap(), b"");
    assert_eq!(inf.inflate(&packed[1], true, 0, 10).unwrap(), b"x");
    // A sender may end a message with a BFINAL block; the next starts a new stream.
    let mut fin = Vec::new();
    for m in [&b"hello hello hello"[..], b"again"] {
        let mut c = flate2::Compress::new(flate2::Compression::default(), false);
        let mut out = Vec::with_capacity(128);
        c.compress_vec(m, &mut out, flate2::FlushCompress::Finish)
            .unwrap();
        fin.push(out);
    }
    let mut inf = Inflater::new(&DEFAULTS);
    assert_eq!(
        inf.inflate(&fin[0], true, 0, 100).unwrap(),
        b"hello hello hello"
    );
    assert_eq!(inf.inflate(&fin[1], true, 0, 100).unwrap(), b"again");
}

#[test]
fn a_deflate_bomb_stops_at_the_limit() {
    let bomb = server_side(&[&vec![0u8; 20 << 20]], 15, false).remove(0);
    assert!(bomb.len() < 64 * 1024, "{}", bomb.len());
    let mut inf = Inflater::new(&DEFAULTS);
    let e = inf.inflate(&bomb, true, 0, 1 << 20).unwrap_err();
    assert_eq!(e, InflateError::TooLarge { max: 1 << 20 });
    assert_eq!(
        e.to_string(),
        "compressed message inflates past max_frame_bytes (1048576)"
    );
    // Exactly at the limit passes; one byte over does not, counting earlier fragments.
    let exact = server_side(&[&[7u8; 1000]], 15, true).remove(0);
    assert_eq!(
        Inflater::new(&DEFAULTS)
            .inflate(&exact, true, 0, 1000)
            .unwrap()
            .len(),
        1000
    );
    assert!(
        Inflater::new(&DEFAULTS)
            .inflate(&exact, true, 1, 1000)
            .is_err()
    );
    // Garbage is a clean error too.
    let e = Inflater::new(&DEFAULTS)
        .inflate(&[0xff; 40], true, 0, 1000)
        .unwrap_err();
    assert!(matches!(e, InflateError::Corrupt(_)), "{e:?}");
}

/// An unmasked server frame: `b0` (FIN, RSV1, opcode) and `payload`.
fn server_frame(b0: u8, payload: &[u8]) -> Vec<u8> {
    let mut f = vec![b0];
    match payload.len() {
        n @ 0..=125 => f.push(n as u8),
        n @ 126..=0xffff => {
            f.push(126);
            f.extend_from_slice(&(n as u16).to_be_bytes());
        }
        n => {
            f.push(127);
            f.extend_from_slice(&(n as u64).to_be_bytes());
        }
    }
    f.extend_from_slice(payload);
    f
}

fn codec(max: usize) -> LimitedCodec {
    LimitedCodec::new(Codec::new().client_mode(), max).with_deflate(&DEFAULTS)
}

fn decode_all(c: &mut LimitedCodec, bytes: &[u8]) -> Result<Vec<Frame>, FrameError> {
    let mut buf = BytesMut::from(bytes);
    let mut out = Vec::new();
    while let Some(f) = c.decode(&mut buf)? {
        out.push(f);
    }
    assert!(buf.is_empty(), "left: {buf:?}");
    Ok(out)
}

#[test]
fn the_codec_inflates_rsv1_messages_and_passes_plain_ones() {
    let msgs = [&b"{\"type\":\"a\"}"[..], b"{\"type\":\"a\"}"];
    let packed = server_side(&msgs, 15, false);
    let mut c = codec(1 << 20);
    let mut wire = server_frame(0xc1, &packed[0]); // FIN + RSV1 + text
    wire.extend(server_frame(0x81, b"plain")); // uncompressed: allowed per message
    wire.extend(server_frame(0xc2, &packed[1])); // binary, refers back to the first
    let got = decode_all(&mut c, &wire).unwrap();
    assert!(matches!(&got[0], Frame::Text(b) if &b[..] == msgs[0]));
    assert!(matches!(&got[1], Frame::Text(b) if &b[..] == b"plain"));
    assert!(matches!(&got[2], Frame::Binary(b) if &b[..] == msgs[1]));
    // Fragmented, with a ping between the fragments.
    let big = audio_like(5_000, 3);
    let p = server_side(&[&big], 15, true).remove(0);
    let mut wire = server_frame(0x41, &p[..10]); // RSV1 + text, not final
    wire.extend(server_frame(0x89, b"hi"));
    wire.extend(server_frame(0x00, &p[10..20]));
    wire.extend(server_frame(0x80, &p[20..]));
    let got = decode_all(&mut codec(1 << 20), &wire).unwrap();
    let mut r = super::super::Reassembler::default();
    let events: Vec<_> = got.into_iter().map(|f| r.push(f).unwrap()).collect();
    assert!(matches!(&events[1], super::super::ReadEvent::Ping(b) if &b[..] == b"hi"));
    match events.last().unwrap() {
        super::super::ReadEvent::Data(crate::workload::Inbound::Text(t)) => {
            assert_eq!(t.as_bytes(), &big[..]);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn rsv1_where_the_rfc_forbids_it_fails_the_read() {
    let p = server_side(&[b"x"], 15, false).remove(0);
    let cases: [(Vec<u8>, &str); 4] = [
        (server_frame(0xc9, b""), "RSV1 set on a control frame"),
        (
            [server_frame(0x41, &p), server_frame(0xc0, b"")].concat(),
            "RSV1 set on a continuation frame",
        ),
        (
            [server_frame(0x41, &p), server_frame(0x81, b"x")].concat(),
            "a new message began",
        ),
        (server_frame(0xe1, &p), "RSV2 or RSV3"),
    ];
    for (wire, why) in cases {
        let e = decode_all(&mut codec(1 << 20), &wire).unwrap_err();
        assert!(e.to_string().contains(why), "{why}: {e}");
    }
    // Without an agreement, RSV1 stays awc's protocol error.
    let mut plain = LimitedCodec::new(Codec::new().client_mode(), 1 << 20);
    let e = decode_all(&mut plain, &server_frame(0xc1, &p)).unwrap_err();
    assert!(e.to_string().contains("reserved bits"), "{e}");
    // A bomb through the codec names the limit.
    let bomb = server_side(&[&vec![b'a'; 1 << 20]], 15, false).remove(0);
    let e = decode_all(&mut codec(4096), &server_frame(0xc2, &bomb)).unwrap_err();
    assert_eq!(
        e.to_string(),
        "compressed message inflates past max_frame_bytes (4096)"
    );
}

/// What a server reads from one client frame: (RSV1, opcode, unmasked payload).
fn server_reads(frame: &[u8]) -> (bool, u8, Vec<u8>) {
    let (b0, b1) = (frame[0], frame[1]);
    assert!(b0 & 0x80 != 0 && b1 & 0x80 != 0, "final and masked");
    let (len, mut i) = match b1 & 0x7f {
        126 => (u16::from_be_bytes([frame[2], frame[3]]) as usize, 4),
        127 => (
            u64::from_be_bytes(frame[2..10].try_into().unwrap()) as usize,
            10,
        ),
        n => (n as usize, 2),
    };
    let key = [frame[i], frame[i + 1], frame[i + 2], frame[i + 3]];
    i += 4;
    assert_eq!(frame.len(), i + len);
    let payload = frame[i..]
        .iter()
        .zip(key.iter().cycle())
        .map(|(b, k)| b ^ k)
        .collect();
    (b0 & 0x40 != 0, b0 & 0x0f, payload)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// rtload's outbound path (compress → masked RSV1 frame) read by a server (unmask →
    /// inflate), and a server's fragmented compressed messages read by rtload's codec:
    /// every message comes back as it was, with context taken over throughout.
    #[test]
    fn compress_frame_parse_inflate_round_trips(
        msgs in proptest::collection::vec(proptest::collection::vec(0u8..8, 0..3000), 1..8),
        bits in 9u8..=15,
        cut in 0usize..1000,
    ) {
        let a = Agreed { client_max_window_bits: bits, ..DEFAULTS };
        let mut c = LimitedCodec::new(Codec::new().client_mode(), 1 << 20).with_deflate(&a);
        let mut server_inflater = Inflater::new(&DEFAULTS);
        for m in &msgs {
            let mut frame = Vec::new();
            c.frame_into(&mut frame, 0x2, m, rand::random()).unwrap();
            let (rsv1, opcode, payload) = server_reads(&frame);
            prop_assert!(rsv1);
            prop_assert_eq!(opcode, 0x2);
            prop_assert_eq!(&server_inflater.inflate(&payload, true, 0, 1 << 20).unwrap(), m);
        }
        let refs: Vec<&[u8]> = msgs.iter().map(Vec::as_slice).collect();
        let mut reader = codec(1 << 20);
        let mut r = super::super::Reassembler::default();
        for (p, m) in server_side(&refs, 15, false).iter().zip(&msgs) {
            let at = cut.min(p.len());
            let wire = if at == 0 || at == p.len() {
                server_frame(0xc2, p)
            } else {
                [server_frame(0x42, &p[..at]), server_frame(0x80, &p[at..])].concat()
            };
            let frames = decode_all(&mut reader, &wire).unwrap();
            let last = frames.into_iter().map(|f| r.push(f).unwrap()).last().unwrap();
            match last {
                super::super::ReadEvent::Data(crate::workload::Inbound::Binary(b)) => {
                    prop_assert_eq!(&b[..], &m[..]);
                }
                other => prop_assert!(false, "{:?}", other),
            }
        }
    }
}
