//! The owned socket's halves over a loopback pair: messages split out of one read,
//! continuations joined, the frame guard's 1009 reason, one write per flush.

use super::*;
use tokio::net::{TcpListener, TcpStream};

/// A masked client frame (mask of zeros keeps the payload readable).
fn frame(b0: u8, payload: &[u8]) -> Vec<u8> {
    assert!(payload.len() < 126);
    let mut f = vec![b0, 0x80 | payload.len() as u8, 0, 0, 0, 0];
    f.extend_from_slice(payload);
    f
}

/// A reader on the server end of a loopback pair, and the client end.
async fn pair(read_ahead: &[u8], max: usize) -> (FrameReader, FrameWriter, TcpStream) {
    let lst = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let client = TcpStream::connect(lst.local_addr().unwrap()).await.unwrap();
    let (server, _) = lst.accept().await.unwrap();
    let (r, w) = server.into_split();
    let reader = FrameReader::new(r, BytesMut::from(read_ahead), max);
    (reader, FrameWriter::with_head(w, b""), client)
}

fn text_of(msg: Option<Result<AggregatedMessage, ProtocolError>>) -> String {
    match msg {
        Some(Ok(AggregatedMessage::Text(t))) => t.to_string(),
        other => panic!("not a text message: {other:?}"),
    }
}

#[actix_rt::test]
async fn messages_in_one_read_come_out_one_by_one_and_continuations_whole() {
    let mut bytes = frame(0x81, b"one");
    bytes.extend(frame(0x01, b"tw")); // text, not final
    bytes.extend(frame(0x89, b"p")); // a ping between continuation frames
    bytes.extend(frame(0x80, b"o")); // final continuation
    let (mut reader, _w, mut client) = pair(&bytes[..4], 1024).await;
    client.write_all(&bytes[4..]).await.unwrap();
    assert_eq!(text_of(reader.recv().await), "one");
    assert!(matches!(
        reader.recv().await,
        Some(Ok(AggregatedMessage::Ping(p))) if &p[..] == b"p"
    ));
    assert_eq!(text_of(reader.recv().await), "two");
    drop(client);
    assert!(reader.recv().await.is_none());
}

#[actix_rt::test]
async fn a_frame_over_the_limit_fails_from_its_header_with_the_reason() {
    let head = [0x81, 0x80 | 126, 0x04, 0x00, 0, 0, 0, 0]; // 1024 bytes announced, no payload
    let (mut reader, _w, mut client) = pair(b"", 100).await;
    client.write_all(&head).await.unwrap();
    assert!(matches!(
        reader.recv().await,
        Some(Err(ProtocolError::Overflow))
    ));
    let why = reader.refusal().expect("a reason");
    assert!(why.contains("exceeds max_frame_bytes (100)"), "{why}");
}

#[actix_rt::test]
async fn text_that_is_not_utf8_is_an_error() {
    let (mut reader, _w, mut client) = pair(b"", 1024).await;
    client.write_all(&frame(0x81, &[0xff, 0xfe])).await.unwrap();
    assert!(matches!(
        reader.recv().await,
        Some(Err(ProtocolError::Io(_)))
    ));
    assert!(reader.refusal().is_none());
}

#[actix_rt::test]
async fn one_flush_writes_every_frame_encoded_since_the_last() {
    let (_r, w, mut client) = pair(b"", 1024).await;
    let mut out = Outbound::Own(w);
    out.text("a".to_string()).await.ok().unwrap();
    out.text("bc".to_string()).await.ok().unwrap();
    out.flush().await.ok().unwrap();
    out.close(Some(CloseCode::Normal.into())).await;
    let mut got = Vec::new();
    tokio::io::AsyncReadExt::read_to_end(&mut client, &mut got)
        .await
        .unwrap();
    assert_eq!(
        got,
        [
            &[0x81, 1, b'a'][..],
            &[0x81, 2, b'b', b'c'],
            &[0x88, 2, 0x03, 0xe8]
        ]
        .concat()
    );
}

/// What actix's codec writes for `msg` (the reference for the hand-written headers).
fn codec_bytes(msg: Message) -> Vec<u8> {
    let mut out = BytesMut::new();
    Codec::new().encode(msg, &mut out).unwrap();
    out.to_vec()
}

#[test]
fn headers_match_actix_codec_at_every_length_class() {
    for len in [0, 1, 125, 126, 127, 65_535, 65_536, 70_000] {
        let payload = vec![b'x'; len];
        let text = std::str::from_utf8(&payload).unwrap();
        let mut ours = BytesMut::new();
        put_header(&mut ours, OP_TEXT, len);
        ours.extend_from_slice(&payload);
        let theirs = codec_bytes(Message::Text(ByteString::from(text.to_string())));
        assert_eq!(&ours[..], &theirs[..], "text of {len} bytes");
        let shared = SharedBinary::new(Bytes::from(payload.clone()));
        let theirs = codec_bytes(Message::Binary(Bytes::from(payload)));
        assert_eq!(&shared.frame[..], &theirs[..], "binary of {len} bytes");
        assert_eq!(shared.len(), len);
    }
}

#[actix_rt::test]
async fn shared_frames_go_out_in_order_between_own_ones_in_one_flush() {
    let (_r, w, mut client) = pair(b"", 1024).await;
    let mut out = Outbound::Own(w);
    let body = SharedBinary::new(Bytes::from(vec![7u8; 200_000]));
    // More than a socket buffer holds: read while writing.
    let writing = async {
        out.text_str("m1").await.ok().unwrap();
        out.binary(&body).await.ok().unwrap();
        out.binary(&body).await.ok().unwrap();
        out.text_str("m2").await.ok().unwrap();
        out.flush().await.ok().unwrap();
        out.text_str("after").await.ok().unwrap();
        out.close(None).await;
    };
    let mut got = Vec::new();
    let reading = tokio::io::AsyncReadExt::read_to_end(&mut client, &mut got);
    let ((), read) = tokio::join!(writing, reading);
    read.unwrap();
    let want = [
        codec_bytes(Message::Text("m1".into())),
        body.frame.to_vec(),
        body.frame.to_vec(),
        codec_bytes(Message::Text("m2".into())),
        codec_bytes(Message::Text("after".into())),
        codec_bytes(Message::Close(None)),
    ]
    .concat();
    assert_eq!(got.len(), want.len());
    assert!(got == want, "bytes differ");
}

#[actix_rt::test]
async fn text_written_in_place_gets_the_header_of_its_length_class() {
    let (_r, mut w, _client) = pair(b"", 1024).await;
    let mut want = Vec::new();
    w.push_text("m1");
    want.extend(codec_bytes(Message::Text("m1".into())));
    for len in [0, 1, 125, 126, 127, 65_535, 65_536, 70_000] {
        let text = "y".repeat(len);
        w.push_text_with(|out| {
            let _ = out.write_str(&text);
        });
        want.extend(codec_bytes(Message::Text(ByteString::from(text))));
    }
    assert!(w.out[..] == want[..], "bytes differ");
}
