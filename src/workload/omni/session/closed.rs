//! The reference client's words when the server closes the socket under it. Its upload
//! loop sends the next append (or the commit) on a closed connection, and the Python
//! `websockets` library raises `ConnectionClosed`, whose `str()` the reference reports:
//! `received 1000 (OK); then sent 1000 (OK)` (the client echoes the server's close frame),
//! or `no close frame received or sent` when the TCP connection just ended.

/// The failure message when the server closed the socket with `reason` (its close frame),
/// while the case's audio was still `streaming` or after. While uploading, the
/// reference's next send hits the closed socket and it reports the library's exception;
/// while waiting, its reader-stopped message. The reference's words first (what `vllm
/// bench` users grep for), then what happened in plain words, with the close code the
/// server sent.
pub(super) fn message(streaming: bool, reason: Option<&str>) -> String {
    match (streaming, reason) {
        (true, r) => format!(
            "{} (the server closed the WebSocket while the case's audio was still streaming)",
            send_after_close(r)
        ),
        (false, Some(r)) => format!(
            "Realtime WebSocket closed before the requested event arrived (the server closed with {})",
            describe(r)
        ),
        (false, None) => "Realtime WebSocket closed before the requested event arrived".into(),
    }
}

/// The `websockets` explanation of a close code (`Close.__str__`).
fn explanation(code: u16) -> &'static str {
    match code {
        1000 => "OK",
        1001 => "going away",
        1002 => "protocol error",
        1003 => "unsupported data",
        1005 => "no status received [internal]",
        1006 => "abnormal closure [internal]",
        1007 => "invalid frame payload data",
        1008 => "policy violation",
        1009 => "message too big",
        1010 => "mandatory extension",
        1011 => "internal error",
        1012 => "service restart",
        1013 => "try again later",
        1014 => "bad gateway",
        1015 => "TLS handshake failure [internal]",
        3000..=3999 => "registered",
        4000..=4999 => "private use",
        _ => "unknown",
    }
}

/// `str(ConnectionClosed)` for a send after the server's close: `close` is the transport's
/// `"<code>[ <reason>]"` of the server's close frame, `None` when none arrived.
pub(super) fn send_after_close(close: Option<&str>) -> String {
    match close.and_then(frame) {
        Some(frame) => format!("received {frame}; then sent {frame}"),
        None => "no close frame received or sent".into(),
    }
}

/// A close as `4999 (private use) gone away` (the code, what it means, the reason), or
/// the text as given when it is not a code.
pub(super) fn describe(close: &str) -> String {
    frame(close).unwrap_or_else(|| close.to_string())
}

/// `code (meaning) reason` of a close given as `code reason`.
fn frame(close: &str) -> Option<String> {
    let (code, reason) = close.split_once(' ').unwrap_or((close, ""));
    let code = code.parse::<u16>().ok()?;
    let mut frame = format!("{code} ({})", explanation(code));
    if !reason.is_empty() {
        frame.push(' ');
        frame.push_str(reason);
    }
    Some(frame)
}

#[cfg(test)]
#[path = "closed_tests.rs"]
mod tests;
