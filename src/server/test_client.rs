//! A small `awc` WebSocket client for the embedded server's own end-to-end tests: read
//! events in order, send JSON, read until the server closes.

use awc::error::WsProtocolError;
use awc::ws::{CloseReason, Frame, Message};
use bytes::Bytes;
use futures_util::{Sink, SinkExt, Stream, StreamExt};
use serde_json::Value;

/// One thing the client saw.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Ev {
    Json(Value),
    Bin(Bytes),
    Close(Option<CloseReason>),
    /// The stream ended without a close frame.
    End,
}

impl Ev {
    /// A short name for assertions: the JSON `type`, `bin:<len>`, `close` or `end`.
    pub(super) fn kind(&self) -> String {
        match self {
            Ev::Json(v) => v["type"].as_str().unwrap_or("?").to_string(),
            Ev::Bin(b) => format!("bin:{}", b.len()),
            Ev::Close(_) => "close".to_string(),
            Ev::End => "end".to_string(),
        }
    }

    /// The JSON event (panics on anything else).
    pub(super) fn json(&self) -> &Value {
        match self {
            Ev::Json(v) => v,
            other => panic!("expected JSON, got {other:?}"),
        }
    }

    /// The JSON event without its `server_sent_at_s` stamp.
    pub(super) fn bare(&self) -> Value {
        let mut v = self.json().clone();
        v.as_object_mut().map(|m| m.remove("server_sent_at_s"));
        v
    }
}

/// A connected test client; `skip_binary` drops binary frames (duplex has none to check).
pub(super) struct Client<S = actix_codec::Framed<awc::BoxedSocket, awc::ws::Codec>> {
    ws: S,
    skip_binary: bool,
}

/// A client of the video endpoint at `addr`.
pub(super) async fn connect_video(addr: std::net::SocketAddr) -> Client {
    connect(format!("ws://{addr}{}", super::VIDEO_PATH), false).await
}

/// A client of the duplex endpoint at `addr`, with the query the benchmark client sends.
pub(super) async fn connect_duplex(addr: std::net::SocketAddr) -> Client {
    let query = "duplex=1&model=m&minicpmo45_native_duplex=1&autostart=0\
                 &session_id=omniinteract%3Asub%3Abench-0%3A1";
    connect(format!("ws://{addr}{}?{query}", super::DUPLEX_PATH), true).await
}

/// A client of the transcription endpoint: `path` and `query` as given (no `duplex=1`
/// unless the query says so).
pub(super) async fn connect_path(addr: std::net::SocketAddr, path_and_query: &str) -> Client {
    connect(format!("ws://{addr}{path_and_query}"), true).await
}

/// Connect to `url`.
async fn connect(url: String, skip_binary: bool) -> Client {
    let (_resp, ws) = awc::Client::new()
        .ws(url)
        .max_frame_size(16 * 1024 * 1024)
        .connect()
        .await
        .expect("connect");
    Client { ws, skip_binary }
}

impl<S> Client<S>
where
    S: Stream<Item = Result<Frame, WsProtocolError>>
        + Sink<Message, Error = WsProtocolError>
        + Unpin,
{
    /// Send `event` as a text frame.
    pub(super) async fn send(&mut self, event: Value) {
        self.ws
            .send(Message::Text(event.to_string().into()))
            .await
            .expect("send");
    }

    /// Send a close frame with `code`.
    pub(super) async fn send_close(&mut self, code: awc::ws::CloseCode) {
        self.ws
            .send(Message::Close(Some(code.into())))
            .await
            .expect("send close");
    }

    /// The next event, skipping pings, pongs and (with `skip_binary`) binary frames.
    pub(super) async fn next(&mut self) -> Ev {
        loop {
            match self.ws.next().await {
                None | Some(Err(_)) => return Ev::End,
                Some(Ok(Frame::Text(t))) => {
                    return Ev::Json(serde_json::from_slice(&t).expect("server sent JSON"));
                }
                Some(Ok(Frame::Binary(b))) if !self.skip_binary => return Ev::Bin(b),
                Some(Ok(Frame::Close(reason))) => return Ev::Close(reason),
                Some(Ok(Frame::Ping(_) | Frame::Pong(_) | Frame::Binary(_))) => {}
                Some(Ok(Frame::Continuation(_))) => panic!("unexpected continuation"),
            }
        }
    }

    /// Reads into `seen` until `done(seen)` holds or the server closes.
    pub(super) async fn read_until(&mut self, seen: &mut Vec<Ev>, done: impl Fn(&[Ev]) -> bool) {
        while !done(seen) {
            let ev = self.next().await;
            let last = matches!(ev, Ev::Close(_) | Ev::End);
            seen.push(ev);
            if last {
                return;
            }
        }
    }

    /// Sends `event` and returns the message of the `error` event that must answer it.
    pub(super) async fn error_for(&mut self, event: Value) -> String {
        self.send(event).await;
        let ev = self.next().await;
        assert_eq!(ev.kind(), "error", "{ev:?}");
        ev.json()["message"].as_str().unwrap().to_string()
    }

    /// Reads until the server closes (the close or end is the last element).
    pub(super) async fn rest(&mut self) -> Vec<Ev> {
        let mut out = Vec::new();
        self.read_until(&mut out, |seen| {
            matches!(seen.last(), Some(Ev::Close(_) | Ev::End))
        })
        .await;
        out
    }
}
