//! Refusing a WebSocket session beyond `[server] max_sessions`, the way real servers
//! do (see [`RefuseWith`]): an HTTP answer to the upgrade (429 or 503, `Retry-After`,
//! a vLLM-style JSON error body), or an accepted upgrade that is closed at once with 1013
//! (try again later), after vLLM-Omni's `resource_exhausted` error event when asked.
//!
//! vLLM-Omni 0.30 (`DuplexSessionManager.open`) refuses a duplex session past
//! `duplex_max_sessions` with `DuplexSessionError("duplex_session_capacity_exhausted:
//! limit=N", code="resource_exhausted", retryable=True)`, which its WebSocket handler
//! sends in answer to the client's `session.update` as
//! `{"type":"error","event_id":…,"error":{"type":"rate_limit_error",
//! "code":"resource_exhausted","message":"duplex_session_capacity_exhausted: limit=N"}}`
//! and then returns without closing (its own client closes on that error). This server
//! closes with 1013 right after the event, so a client that waits for `session.created`
//! learns the refusal at once. vLLM itself has no session limit (requests queue); the
//! HTTP answers are what a gateway in front of it, or vLLM's proposed overload answer,
//! return.

use std::time::Duration;

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use actix_ws::{CloseCode, CloseReason};

use super::config::RefuseWith;
use super::metrics::Endpoint;

/// How this server refuses: the mode (per endpoint when unset), the limit and
/// `Retry-After`, and how long an `error_event` refusal waits for the first message.
pub(crate) struct Refuser {
    /// `[server] refuse_with`.
    pub(crate) how: Option<RefuseWith>,
    /// `[server] max_sessions` (for the messages).
    pub(crate) limit: u64,
    /// `[server] retry_after_s`.
    pub(crate) retry_after_s: u32,
    /// `[server] idle_timeout_s`.
    pub(crate) idle: Duration,
    /// `[server] max_frame_bytes`: the first message a refusal reads may be as large as
    /// an admitted session's (a `session.update` carries its reference audio).
    pub(crate) max_inbound: usize,
}

impl Refuser {
    /// The refusal of a session on `ep`, as an error whose response actix sends: the HTTP
    /// refusal itself, or the `101` of an upgrade whose socket a task of its own refuses.
    pub(crate) fn refuse(
        &self,
        req: &HttpRequest,
        body: web::Payload,
        ep: Endpoint,
    ) -> actix_web::Error {
        let duplex = matches!(ep, Endpoint::Duplex);
        let how = self.how.unwrap_or(RefuseWith::default_for(duplex));
        let status = match how {
            RefuseWith::Http429 => StatusCode::TOO_MANY_REQUESTS,
            RefuseWith::Http503 => StatusCode::SERVICE_UNAVAILABLE,
            RefuseWith::Close1013 | RefuseWith::ErrorEvent => {
                return match self.in_band(req, body, how, duplex) {
                    Ok(response) => refused(response),
                    Err(err) => err,
                };
            }
        };
        let body = http_body(status, self.limit, self.retry_after_s);
        let response = HttpResponse::build(status)
            .insert_header(("Retry-After", self.retry_after_s.to_string()))
            .content_type("application/json")
            .body(body);
        refused(response)
    }

    /// Accepts the upgrade and refuses on the socket: `error_event` sends vLLM-Omni's
    /// event (on the duplex endpoint in answer to the first message, as vLLM-Omni
    /// does), then both modes close with 1013.
    fn in_band(
        &self,
        req: &HttpRequest,
        body: web::Payload,
        how: RefuseWith,
        duplex: bool,
    ) -> Result<HttpResponse, actix_web::Error> {
        let (response, mut session, stream) = actix_ws::handle(req, body)?;
        let mut stream = stream
            .max_frame_size(self.max_inbound)
            .aggregate_continuations()
            .max_continuation_size(self.max_inbound);
        let limit = self.limit;
        let idle = self.idle;
        actix_web::rt::spawn(async move {
            if how == RefuseWith::ErrorEvent {
                if duplex {
                    // vLLM-Omni reads the `session.update` before it opens the session.
                    let _ = tokio::time::timeout(idle, stream.recv()).await;
                }
                let _ = session.text(error_event(duplex, limit)).await;
            }
            let reason = CloseReason {
                code: CloseCode::Again,
                description: Some(format!(
                    "server at capacity: max_sessions = {limit} sessions are open; try again later"
                )),
            };
            let _ = session.close(Some(reason)).await;
        });
        Ok(response)
    }
}

/// An error that makes actix answer with `response`.
fn refused(response: HttpResponse) -> actix_web::Error {
    actix_web::error::InternalError::from_response("session refused: server at capacity", response)
        .into()
}

/// The JSON body of an HTTP refusal, in vLLM's `ErrorResponse` shape and key order.
pub(crate) fn http_body(status: StatusCode, limit: u64, retry_after_s: u32) -> String {
    let kind = if status == StatusCode::TOO_MANY_REQUESTS {
        "rate_limit_error"
    } else {
        "server_overloaded"
    };
    format!(
        r#"{{"error":{{"message":"server at capacity: max_sessions = {limit} WebSocket sessions are open; retry after {retry_after_s} s","type":"{kind}","param":null,"code":{}}}}}"#,
        status.as_u16()
    )
}

/// vLLM-Omni's capacity error event, in its key order (`duplex_` prefix on the duplex
/// endpoint, the protocol it comes from).
pub(crate) fn error_event(duplex: bool, limit: u64) -> String {
    let prefix = if duplex { "duplex_" } else { "" };
    format!(
        r#"{{"type":"error","event_id":"event_capacity_exhausted","error":{{"type":"rate_limit_error","code":"resource_exhausted","message":"{prefix}session_capacity_exhausted: limit={limit}"}}}}"#
    )
}

#[cfg(test)]
#[path = "refuse_tests.rs"]
mod tests;
