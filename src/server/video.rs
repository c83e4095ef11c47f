//! Socket side of the realtime video endpoint `/v1/realtime/video` (spec §2, server
//! role): one task per connection that `select!`s over the inbound stream and the
//! next due [`Step`] of the session plan, so pings are answered at any time and the
//! chunk schedule is absolute (never drifts). Decisions live in `video_plan`.
//!
//! Inbound events: `session.start` (validated; bad input gets an `error` event and a
//! close), `session.ping` (answered with `session.pong` immediately),
//! `session.interaction` (counted; acknowledged with `session.interaction.ack` only when
//! `video.ack_interactions` is set), anything else gets an `error` event and the socket
//! stays open. With no client message for `idle_timeout_s` while nothing is being
//! streamed (before `session.start`, or after a stall fault) the socket is closed.
//!
//! On `ws://` an admitted connection owns its socket after the handshake
//! ([`super::upgrade`], [`super::own_ws`]): what one wake-up produces (a chunk's
//! metadata and its body) goes out in one write, the bodies are frames encoded once per
//! server and shared by every session, and `server_sent_at_s` is taken as the metadata
//! goes into that write. Refused or `wss://` connections run the same loop on actix-ws.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use actix_web::{HttpRequest, HttpResponse, web};
use actix_ws::{AggregatedMessage, CloseCode, CloseReason};
use serde_json::{Value, json};
use tokio::time::{Instant, sleep_until};

use super::Flow;
use super::config::{ServerConfig, VideoServerConfig};
use super::own_ws::{Inbound, Outbound, SharedBinary};
use super::video_plan::{
    Step, media_payload, plan_session, trailer_payload, uuid_v4, validate_start,
};

/// Route of the realtime video endpoint.
pub const VIDEO_PATH: &str = "/v1/realtime/video";

/// Shared, read-only state of the video endpoint (one per server, shared by workers).
pub(crate) struct VideoState {
    /// The server's whole config (video part plus the idle timeout).
    config: ServerConfig,
    /// Binary body of the first media chunk (starts with `ftyp`), encoded once.
    first_body: SharedBinary,
    /// Binary body of every later media chunk, encoded once.
    media_body: SharedBinary,
    /// Binary body of the trailer, encoded once.
    trailer_body: SharedBinary,
    /// Sessions currently streaming (for the saturation model).
    active: AtomicU64,
}

impl VideoState {
    /// Precomputes payloads for `config`.
    pub(crate) fn new(config: &ServerConfig) -> VideoState {
        let len = config.video.chunk_bytes;
        VideoState {
            config: config.clone(),
            first_body: SharedBinary::new(media_payload(true, len)),
            media_body: SharedBinary::new(media_payload(false, len)),
            trailer_body: SharedBinary::new(trailer_payload()),
            active: AtomicU64::new(0),
        }
    }
}

/// Registers the video route on an app (called once per worker by `mod.rs`).
pub(crate) fn register(svc: &mut web::ServiceConfig, state: web::Data<VideoState>) {
    svc.app_data(state)
        .route(VIDEO_PATH, web::get().to(video_endpoint));
}

/// Upgrades the request and spawns the connection task on the worker's event loop.
async fn video_endpoint(
    req: HttpRequest,
    body: web::Payload,
    state: web::Data<VideoState>,
) -> Result<HttpResponse, actix_web::Error> {
    let ws = super::ws::accept(&req, body, super::ws::Endpoint::Video).await?;
    let conn = Connection::new(Outbound::Actix(ws.session), state, ws.conn);
    actix_web::rt::spawn(conn.run(Inbound::Actix(ws.stream)));
    Ok(ws.response)
}

/// Runs a video connection on a socket the server owns (see [`super::upgrade`]), to
/// its end.
pub(crate) async fn run_owned(
    socket: (Inbound, Outbound),
    state: web::Data<VideoState>,
    tally: super::ws::Conn,
) {
    let (inbound, out) = socket;
    Connection::new(out, state, tally).run(inbound).await;
}

/// Where a connection is in its life.
enum Phase {
    /// Waiting for `session.start`; idle timeout armed.
    AwaitingStart,
    /// Walking the session plan.
    Streaming {
        /// Receipt time of `session.start`; every `due` and `server_sent_at_s` is relative to it.
        t0: Instant,
        /// `request_id` announced in `video.start` and repeated in every metadata.
        request_id: String,
        /// Steps not yet executed.
        steps: VecDeque<Step>,
        /// Extra delay accumulated by the saturation model; added to every later `due`.
        shift: Duration,
    },
    /// A stall fault stopped the plan; idle timeout armed again, counted from
    /// the later of `since` and the last client message.
    Stalled {
        /// When the stall began.
        since: Instant,
    },
}

/// One WebSocket connection on the video endpoint. Lives in its own task; dropped
/// (with its outbound half) when the loop ends.
struct Connection {
    /// Outbound half.
    out: Outbound,
    /// A chunk's metadata text is written here (reused: no allocation per chunk).
    scratch: Vec<u8>,
    /// Shared config and payloads.
    state: web::Data<VideoState>,
    /// Current phase.
    phase: Phase,
    /// `session.interaction` events received so far.
    interactions: u32,
    /// Counted in `VideoState::active` (decremented on drop).
    counted: bool,
    /// This connection in the server's `/metrics`; numbers its session.
    tally: super::ws::Conn,
}

impl Drop for Connection {
    fn drop(&mut self) {
        if self.counted {
            self.state.active.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

impl Connection {
    fn new(out: Outbound, state: web::Data<VideoState>, tally: super::ws::Conn) -> Connection {
        Connection {
            out,
            scratch: Vec::with_capacity(256),
            state,
            phase: Phase::AwaitingStart,
            interactions: 0,
            counted: false,
            tally,
        }
    }

    /// Runs the connection to completion.
    async fn run(mut self, mut stream: Inbound) {
        let idle = Duration::from_secs_f64(self.state.config.idle_timeout_s);
        let mut last_client_msg = Instant::now();
        let flow = loop {
            let wake = self.next_wake(last_client_msg, idle);
            let flow = tokio::select! {
                biased;
                msg = stream.recv() => {
                    let received = Instant::now();
                    last_client_msg = received;
                    match msg {
                        Some(Ok(msg)) => self.on_message(msg, received).await,
                        // An oversized frame: 1009 (on an owned socket; actix's
                        // path sends its own). Else nothing more to read or say.
                        Some(Err(_)) => stream.refusal().map_or(Flow::Gone, |r| Flow::Close(Some(r))),
                        None => Flow::Gone,
                    }
                }
                () = sleep_until(wake) => self.on_timer().await,
            };
            // What this wake produced goes out in one write (an owned socket).
            if !matches!(flow, Flow::Gone) && self.out.flush().await.is_err() {
                break Flow::Gone;
            }
            if !matches!(flow, Flow::Continue) {
                break flow;
            }
        };
        tracing::debug!(
            interactions = self.interactions,
            "video connection finished"
        );
        if let Flow::Close(reason) = flow {
            // Always a status code (1000 unless the reason says otherwise): without
            // one, clients see 1005 "no status received".
            let reason = reason.or_else(|| Some(CloseCode::Normal.into()));
            self.out.close(reason).await;
        }
    }

    /// When the timer branch should fire: the next step's due time while streaming,
    /// else the idle deadline.
    fn next_wake(&self, last_client_msg: Instant, idle: Duration) -> Instant {
        let idle_deadline = last_client_msg + idle;
        match &self.phase {
            Phase::Streaming {
                t0, steps, shift, ..
            } => match steps.front() {
                Some(Step::Media { due, .. }) => *t0 + *due + *shift,
                _ => Instant::now(),
            },
            Phase::AwaitingStart => idle_deadline,
            Phase::Stalled { since } => idle_deadline.max(*since + idle),
        }
    }

    /// Timer fired: run the next step, or close an idle connection.
    async fn on_timer(&mut self) -> Flow {
        let Phase::Streaming {
            t0,
            request_id,
            steps,
            shift,
        } = &mut self.phase
        else {
            return Flow::Close(Some(CloseReason {
                code: CloseCode::Normal,
                description: Some("idle timeout".to_string()),
            }));
        };
        let Some(step) = steps.pop_front() else {
            return Flow::Close(None);
        };
        let state = &self.state;
        // Saturation: while more sessions stream than the server serves in real time,
        // the gap to the next chunk stretches by active / capacity.
        if let (Step::Media { due, .. }, Some(Step::Media { due: next, .. })) =
            (&step, steps.front())
        {
            let active = state.active.load(Ordering::Relaxed);
            let slow = slow_down(&state.config, active, &self.tally);
            *shift += next.saturating_sub(*due).mul_f64(slow - 1.0);
        }
        let out = &mut self.out;
        let sent = match step {
            Step::Start => {
                let event =
                    json!({"type": "video.start", "request_id": request_id, "format": "m4s"});
                out.text(event.to_string()).await
            }
            Step::Media {
                position,
                index,
                num_frames,
                with_metadata,
                ..
            } => {
                let body = if position == 0 {
                    &state.first_body
                } else {
                    &state.media_body
                };
                let meta = with_metadata.then_some((&**request_id, Some((index, num_frames)), *t0));
                send_chunk(out, &mut self.scratch, meta, body).await
            }
            Step::Trailer { .. } => {
                let meta = Some((&**request_id, None, *t0));
                send_chunk(out, &mut self.scratch, meta, &state.trailer_body).await
            }
            Step::Error(message) => out.text(error_event(&message)).await,
            Step::Done { stopped, chunks } => {
                // Streaming is over: leave the saturation count before the client can
                // learn it, so its next session never sees this one as active.
                if std::mem::take(&mut self.counted) {
                    state.active.fetch_sub(1, Ordering::Relaxed);
                }
                let event = json!({"type": "session.done", "stopped": stopped, "chunks": chunks});
                out.text(event.to_string()).await
            }
            Step::Close => return Flow::Close(None),
            Step::Stall => {
                self.phase = Phase::Stalled {
                    since: Instant::now(),
                };
                return Flow::Continue;
            }
        };
        match sent {
            Ok(()) => Flow::Continue,
            Err(closed) => closed.into(),
        }
    }

    /// Handles one inbound message received at `received`.
    async fn on_message(&mut self, msg: AggregatedMessage, received: Instant) -> Flow {
        let sent = match msg {
            AggregatedMessage::Text(text) => return self.on_text(&text, received).await,
            AggregatedMessage::Ping(payload) => self.out.pong(&payload).await,
            AggregatedMessage::Close(reason) => return Flow::Close(reason),
            AggregatedMessage::Pong(_) | AggregatedMessage::Binary(_) => Ok(()),
        };
        match sent {
            Ok(()) => Flow::Continue,
            Err(closed) => closed.into(),
        }
    }

    /// Handles one client JSON event.
    async fn on_text(&mut self, text: &str, received: Instant) -> Flow {
        let event: Value = match serde_json::from_str(text) {
            Ok(event) => event,
            Err(err) => return self.send_error(&format!("invalid JSON event: {err}")).await,
        };
        let Some(kind) = event.get("type").and_then(Value::as_str) else {
            return self.send_error("event has no string \"type\" field").await;
        };
        match kind {
            "session.ping" => self.send(json!({"type": "session.pong"})).await,
            "session.start" => self.on_start(&event, received).await,
            "session.interaction" => {
                self.interactions += 1;
                if !self.state.config.video.ack_interactions {
                    return Flow::Continue;
                }
                let event_id = event
                    .pointer("/interaction/event_id")
                    .cloned()
                    .unwrap_or(Value::Null);
                self.send(json!({"type": "session.interaction.ack", "event_id": event_id}))
                    .await
            }
            other => {
                self.send_error(&format!("unknown event type '{other}'"))
                    .await
            }
        }
    }

    /// Validates `session.start` and switches to streaming (or rejects and closes).
    async fn on_start(&mut self, event: &Value, received: Instant) -> Flow {
        if !matches!(self.phase, Phase::AwaitingStart) {
            return self
                .send_error("session.start was already received on this connection")
                .await;
        }
        let video = &self.state.config.video;
        let requested = match validate_start(event, video.max_frames) {
            Ok(n) => n,
            Err(message) => {
                return match self.send_error(&message).await {
                    Flow::Continue => Flow::Close(None),
                    other => other,
                };
            }
        };
        let ordinal = self.tally.session_started();
        let active = self.state.active.fetch_add(1, Ordering::Relaxed) + 1;
        self.counted = true;
        let session_cfg = VideoServerConfig {
            faults: video.faults.for_session(ordinal),
            first_chunk_ms: video.first_chunk_ms
                * slow_down(&self.state.config, active, &self.tally),
            ..video.clone()
        };
        let steps = plan_session(&session_cfg, requested, video.seed.wrapping_add(ordinal));
        self.phase = Phase::Streaming {
            shift: Duration::ZERO,
            t0: received,
            request_id: uuid_v4(rand::random()),
            steps: steps.into(),
        };
        Flow::Continue
    }

    async fn send(&mut self, event: Value) -> Flow {
        match self.out.text(event.to_string()).await {
            Ok(()) => Flow::Continue,
            Err(closed) => closed.into(),
        }
    }

    async fn send_error(&mut self, message: &str) -> Flow {
        match self.out.text(error_event(message)).await {
            Ok(()) => Flow::Continue,
            Err(closed) => closed.into(),
        }
    }
}

/// The `video.chunk_metadata` event announcing a chunk of `byte_length` bytes, written
/// into `buf` (cleared first) and returned: kind `media` with its `(index, num_frames)`,
/// or `trailer` for `None` (frames 0, index null as the reference's test server sends).
/// The same text `serde_json` gives the event as a `Value` (keys sorted), without
/// building one; `server_sent_at_s` is taken here, as the text goes into the write.
fn chunk_meta<'a>(
    buf: &'a mut Vec<u8>,
    request_id: &str,
    chunk: Option<(u32, u32)>,
    byte_length: usize,
    t0: Instant,
) -> &'a str {
    let kind = if chunk.is_some() { "media" } else { "trailer" };
    use std::io::Write as _;
    buf.clear();
    let (index, num_frames) = chunk.map_or((None, 0), |(i, n)| (Some(i), n));
    // Writing to a Vec<u8> cannot fail, nor can serializing a string or a float.
    let _ = write!(
        buf,
        "{{\"byte_length\":{byte_length},\"generation_chunk_index\":"
    );
    let _ = serde_json::to_writer(&mut *buf, &index);
    let _ = write!(
        buf,
        ",\"kind\":\"{kind}\",\"num_frames\":{num_frames},\"request_id\":"
    );
    if request_id
        .bytes()
        .any(|c| c < 0x20 || c == b'"' || c == b'\\')
    {
        let _ = serde_json::to_writer(&mut *buf, request_id);
    } else {
        // Nothing to escape (a UUID always): between quotes as it is.
        buf.push(b'"');
        buf.extend_from_slice(request_id.as_bytes());
        buf.push(b'"');
    }
    buf.extend_from_slice(b",\"server_sent_at_s\":");
    let _ = serde_json::to_writer(&mut *buf, &t0.elapsed().as_secs_f64());
    buf.extend_from_slice(b",\"type\":\"video.chunk_metadata\"}");
    // Only JSON written above: always UTF-8.
    std::str::from_utf8(buf).unwrap_or_default()
}

/// The metadata of a chunk to write: `request_id`, the media chunk's `(index,
/// num_frames)` (`None`: the trailer), and the stamps' origin.
type Meta<'a> = (&'a str, Option<(u32, u32)>, Instant);

/// Sends `meta` (if any, written into `scratch`) as text, then `body` as binary; stops
/// at the first failure.
async fn send_chunk(
    out: &mut Outbound,
    scratch: &mut Vec<u8>,
    meta: Option<Meta<'_>>,
    body: &SharedBinary,
) -> Result<(), super::own_ws::Gone> {
    if let Some((request_id, chunk, t0)) = meta {
        out.text_str(chunk_meta(scratch, request_id, chunk, body.len(), t0))
            .await?;
    }
    out.binary(body).await
}

/// `{"type":"error","message":...}` as text.
fn error_event(message: &str) -> String {
    json!({"type": "error", "message": message}).to_string()
}

/// The slow-down of a video session: `video.saturate_above_sessions` over the sessions
/// streaming now (`active`) when set, else `[server.load]` over the server's sessions.
fn slow_down(cfg: &ServerConfig, active: u64, tally: &super::ws::Conn) -> f64 {
    match cfg.video.saturate_above_sessions {
        Some(_) => saturation_factor(cfg.video.saturate_above_sessions, active),
        None => tally.load_factor(),
    }
}

/// How much slower a session runs when `active` sessions share a server that serves
/// `capacity` of them in real time: `max(1, active / capacity)`.
fn saturation_factor(capacity: Option<u32>, active: u64) -> f64 {
    match capacity {
        Some(c) if c > 0 => (active as f64 / f64::from(c)).max(1.0),
        _ => 1.0,
    }
}

#[cfg(test)]
#[path = "video_tests.rs"]
mod tests;
