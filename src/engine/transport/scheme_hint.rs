//! A plain `ws://` client talking to a TLS port: awc sees the server's TLS alert or
//! handshake record (`0x15 0x03 …`, `0x16 0x03 …`) where an HTTP status line should be and
//! says only "invalid HTTP version specified", or sees the connection closed (OpenSSL: reset) unanswered.
//! [`plain_to_tls`] names the likely cause and the fix. (The reverse, `wss://` to a
//! plain port, reads as a rustls message error; `super::super::tls::explain` names it.)

use actix_http::error::ParseError;
use awc::error::{SendRequestError, WsClientError};

/// Whether `url` is a plain (`ws://`, `http://`) URL.
pub fn is_plain(url: &str) -> bool {
    let lower = url.trim_start().to_ascii_lowercase();
    lower.starts_with("ws://") || lower.starts_with("http://")
}

/// The failure text for `err` on a plain `url` when it suggests a TLS server; `None`
/// otherwise (the caller keeps awc's text). Pure.
pub fn plain_to_tls(url: &str, err: &WsClientError) -> Option<String> {
    if !is_plain(url) {
        return None;
    }
    let WsClientError::SendRequest(send) = err else {
        return None;
    };
    let dropped = |io: &std::io::Error| {
        matches!(
            io.kind(),
            std::io::ErrorKind::ConnectionReset | std::io::ErrorKind::UnexpectedEof
        )
    };
    match send {
        // Not "HTTP/": what a TLS server answers a plain request with is a TLS record.
        SendRequestError::Response(parse @ ParseError::Version) => Some(format!(
            "the server's answer to the upgrade is not HTTP ({parse}): it appears to speak \
             TLS; connect with wss:// instead of ws://"
        )),
        SendRequestError::Response(parse @ ParseError::Incomplete) => Some(closed(parse)),
        SendRequestError::Response(parse @ ParseError::Io(io)) if dropped(io) => {
            Some(closed(parse))
        }
        SendRequestError::Send(io) if dropped(io) => Some(closed(io)),
        _ => None,
    }
}

/// The text for a connection closed (or reset) before any answer.
fn closed(why: &dyn std::fmt::Display) -> String {
    format!(
        "the server closed the connection without answering the upgrade ({why}); if it \
         speaks TLS, connect with wss:// instead of ws://"
    )
}
