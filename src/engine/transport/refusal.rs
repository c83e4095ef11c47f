//! A refused WebSocket upgrade, read on the connection that refused it.
//!
//! awc's `connect()` keeps only the status of an answer other than `101 Switching
//! Protocols`: the headers (`Retry-After`) and the body (the server's reason) are dropped
//! with the connection. Repeating the request as a plain GET to learn them would send a
//! rate-limited server twice the requests, each with the credentials. So [`ReadRefusals`]
//! sits between awc's connector and its WebSocket handshake check: when the answer to
//! the upgrade is not `101`, it reads a bounded part of the body from the same connection
//! (at most [`BODY_BYTES`] bytes, waiting at most [`BODY_WAIT`]) and fails the connect with
//! a [`Refusal`] carrying the status, `Retry-After` and the body's first characters.

use std::rc::Rc;
use std::time::Duration;

use actix_codec::Framed;
use actix_http::h1::{ClientCodec, MessageType};
use actix_service::Service;
use awc::error::SendRequestError;
use awc::{BoxedSocket, ConnectRequest, ConnectResponse};
use futures_util::StreamExt as _;
use futures_util::future::LocalBoxFuture;

/// Most body bytes read from a refused upgrade.
pub const BODY_BYTES: usize = 64 * 1024;
/// Longest wait for a refused upgrade's body after its head.
pub const BODY_WAIT: Duration = Duration::from_secs(2);
/// Longest wait before retrying a refused upgrade: a longer `Retry-After` is not waited
/// for (the session fails, saying so).
pub const MAX_RETRY_WAIT: Duration = Duration::from_secs(60);
/// Most retries `[target] retry_rejected` may allow.
pub const MAX_RETRIES: u32 = 10;
/// Characters of the body quoted in the failure message.
const QUOTE_CHARS: usize = 200;

/// What the server answered instead of `101 Switching Protocols`.
#[derive(Debug, Clone, PartialEq)]
pub struct Refusal {
    /// The HTTP status code.
    pub status: u16,
    /// The status's reason phrase (`Too Many Requests`), empty when unknown.
    pub reason: String,
    /// The `Retry-After` header, as sent.
    pub retry_after: Option<RetryAfter>,
    /// The body's first characters (`None`: no body, or none within the wait).
    pub body: Option<String>,
}

/// A `Retry-After` value (RFC 9110 §10.2.3).
#[derive(Debug, Clone, PartialEq)]
pub enum RetryAfter {
    /// A number of seconds.
    Seconds(u64),
    /// Anything else (an HTTP date), as sent.
    Other(String),
}

impl RetryAfter {
    /// Parses a header value: delta-seconds, or kept as text.
    pub fn parse(value: &str) -> Self {
        let v = value.trim();
        match v.parse::<u64>() {
            Ok(s) => RetryAfter::Seconds(s),
            Err(_) => RetryAfter::Other(crate::util::bounded::bounded(v, 64)),
        }
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the server answered the WebSocket upgrade with HTTP {}",
            self.status
        )?;
        if !self.reason.is_empty() {
            write!(f, " {}", self.reason)?;
        }
        f.write_str(" (expected 101 Switching Protocols)")?;
        match &self.retry_after {
            Some(RetryAfter::Seconds(s)) => write!(f, "; Retry-After: {s} s")?,
            Some(RetryAfter::Other(v)) => write!(f, "; Retry-After: {v}")?,
            None => {}
        }
        if let Some(body) = &self.body {
            write!(f, "; body: {body:?}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Refusal {}

/// How long to wait before retrying `refusal`, after `done` retries of the `allowed`
/// ones: the server's `Retry-After` in seconds, or (absent, or a date) 1 s doubling
/// with each retry, at most [`MAX_RETRY_WAIT`]. Only 429 and 503 (the statuses that say
/// "later") are retried. `Err` says why not: `None` when retrying was never on the
/// table (not allowed, or another status), a reason otherwise.
pub fn retry_wait(refusal: &Refusal, done: u32, allowed: u32) -> Result<Duration, Option<String>> {
    if allowed == 0 || !matches!(refusal.status, 429 | 503) {
        return Err(None);
    }
    if done >= allowed {
        return Err(Some(format!("no retry left of the {allowed} allowed")));
    }
    let wait = match refusal.retry_after {
        Some(RetryAfter::Seconds(s)) => Duration::from_secs(s),
        _ => Duration::from_secs(1u64 << done.min(6)).min(MAX_RETRY_WAIT),
    };
    if wait > MAX_RETRY_WAIT {
        return Err(Some(format!(
            "not retried: the server asks for {} s, longer than rtload waits ({} s)",
            wait.as_secs(),
            MAX_RETRY_WAIT.as_secs()
        )));
    }
    Ok(wait)
}

/// What a refused session's message adds about retrying: nothing when retrying was never
/// on the table and nothing was retried.
pub fn retry_note(why: Option<&str>, retried: u32, elapsed: Duration, allowed: u32) -> String {
    let mut note = String::new();
    if retried > 0 {
        note.push_str(&format!(
            "; refused {} times over {:.1} s (`[target] retry_rejected = {allowed}`)",
            retried + 1,
            elapsed.as_secs_f64()
        ));
    }
    if let Some(why) = why {
        note.push_str(&format!("; {why}"));
    }
    note
}

/// The body's quoted form: lossy UTF-8, trimmed, cut to [`QUOTE_CHARS`] with the
/// original length noted; `None` when empty.
pub fn quote_body(bytes: &[u8], complete: bool) -> Option<String> {
    let text = String::from_utf8_lossy(bytes);
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    let mut quoted = crate::util::bounded::bounded(text, QUOTE_CHARS);
    if !complete && quoted.chars().count() <= QUOTE_CHARS {
        quoted.push('…');
    }
    Some(quoted)
}

/// awc middleware: turns a tunnel answer other than `101` into a [`Refusal`] error,
/// read from the same connection.
pub struct ReadRefusals;

impl<S> awc::middleware::Transform<S, ConnectRequest> for ReadRefusals
where
    S: Service<ConnectRequest, Response = ConnectResponse, Error = SendRequestError> + 'static,
{
    type Transform = ReadRefusalsService<S>;

    fn new_transform(self, service: S) -> Self::Transform {
        ReadRefusalsService {
            inner: Rc::new(service),
        }
    }
}

/// The service [`ReadRefusals`] wraps awc's connector in.
pub struct ReadRefusalsService<S> {
    inner: Rc<S>,
}

impl<S> Service<ConnectRequest> for ReadRefusalsService<S>
where
    S: Service<ConnectRequest, Response = ConnectResponse, Error = SendRequestError> + 'static,
{
    type Response = ConnectResponse;
    type Error = SendRequestError;
    type Future = LocalBoxFuture<'static, Result<ConnectResponse, SendRequestError>>;

    actix_service::forward_ready!(inner);

    fn call(&self, req: ConnectRequest) -> Self::Future {
        let inner = Rc::clone(&self.inner);
        Box::pin(async move {
            match inner.call(req).await? {
                ConnectResponse::Tunnel(head, framed) if head.status.as_u16() != 101 => {
                    let refusal = read_refusal(&head, framed).await;
                    Err(SendRequestError::Custom(
                        Box::new(refusal),
                        Box::new("upgrade refused"),
                    ))
                }
                other => Ok(other),
            }
        })
    }
}

/// The status, `Retry-After` and bounded body of a refused upgrade.
async fn read_refusal(
    head: &actix_http::ResponseHead,
    framed: Framed<BoxedSocket, ClientCodec>,
) -> Refusal {
    let retry_after = head
        .headers
        .get("retry-after")
        .map(|v| RetryAfter::parse(&String::from_utf8_lossy(v.as_bytes())));
    let body = if framed.codec_ref().message_type() == MessageType::None {
        None
    } else {
        let (bytes, complete) = read_body(framed).await;
        quote_body(&bytes, complete)
    };
    Refusal {
        status: head.status.as_u16(),
        reason: head.status.canonical_reason().unwrap_or("").to_string(),
        retry_after,
        body,
    }
}

/// Up to [`BODY_BYTES`] of the body, within [`BODY_WAIT`]; `true` when it was all read.
async fn read_body(framed: Framed<BoxedSocket, ClientCodec>) -> (Vec<u8>, bool) {
    let mut payload = framed.into_map_codec(ClientCodec::into_payload_codec);
    let mut bytes = Vec::new();
    let read = async {
        loop {
            match payload.next().await {
                Some(Ok(Some(chunk))) => {
                    let room = BODY_BYTES - bytes.len();
                    bytes.extend_from_slice(&chunk[..chunk.len().min(room)]);
                    if chunk.len() >= room {
                        return false;
                    }
                }
                Some(Ok(None)) | None => return true,
                Some(Err(_)) => return false,
            }
        }
    };
    let complete = tokio::time::timeout(BODY_WAIT, read).await.unwrap_or(false);
    (bytes, complete)
}

#[cfg(test)]
#[path = "refusal_tests.rs"]
mod tests;
