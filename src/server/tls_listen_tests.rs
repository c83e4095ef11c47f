use super::*;

#[test]
fn a_handshake_record_is_tls_and_anything_else_plain() {
    assert_eq!(speaks(0x16), Speaks::Tls);
    for b in [b'G', b'P', b'O', 0x15, 0x17, 0x80, 0] {
        assert_eq!(speaks(b), Speaks::Plain, "{b:#x}");
    }
}

#[test]
fn a_head_is_complete_at_its_empty_line() {
    assert!(!head_complete(b""));
    assert!(!head_complete(b"GET / HTTP/1.1\r\nHost: x\r\n"));
    assert!(head_complete(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
}

#[test]
fn the_plain_answer_is_a_400_whose_length_matches_its_hint() {
    let a = plain_answer();
    let (head, body) = a.split_once("\r\n\r\n").unwrap();
    assert!(head.starts_with("HTTP/1.1 400 Bad Request\r\n"), "{head}");
    assert!(
        head.contains(&format!("content-length: {}", body.len())),
        "{head}"
    );
    assert!(head.contains("connection: close"), "{head}");
    assert_eq!(body, PLAIN_HINT);
    assert!(body.contains("wss://"), "{body}");
}
