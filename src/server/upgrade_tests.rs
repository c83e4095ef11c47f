//! A request head handed back to the app reads as the one the client sent.

use super::*;
use actix_http::test::TestRequest;

#[test]
fn a_head_written_back_reads_as_the_request_it_was() {
    let req = TestRequest::with_uri("/v1/realtime?model=m&duplex=0")
        .insert_header(("upgrade", "websocket"))
        .insert_header(("sec-websocket-key", "dGhlIHNhbXBsZSBub25jZQ=="))
        .finish();
    let head = head_bytes(&req);
    let text = std::str::from_utf8(&head).unwrap();
    assert!(
        text.starts_with("GET /v1/realtime?model=m&duplex=0 HTTP/1.1\r\n"),
        "{text}"
    );
    assert!(text.contains("upgrade: websocket\r\n"), "{text}");
    assert!(
        text.contains("sec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\n"),
        "{text}"
    );
    assert!(text.ends_with("\r\n\r\n"), "{text}");
}
