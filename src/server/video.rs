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

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use actix_web::{HttpRequest, HttpResponse, web};
use actix_ws::{AggregatedMessage, CloseCode, CloseReason, Session};
use bytes::Bytes;
use serde_json::{Value, json};
use tokio::time::{Instant, sleep_until};

use super::Flow;
use super::config::{ServerConfig, VideoServerConfig};
use super::video_plan::{
    Step, media_payload, plan_session, trailer_payload, uuid_v4, validate_start,
};

/// Route of the realtime video endpoint.
pub const VIDEO_PATH: &str = "/v1/realtime/video";

/// Shared, read-only state of the video endpoint (one per server, shared by workers).
pub(crate) struct VideoState {
    /// The server's whole config (video part plus the idle timeout).
    config: ServerConfig,
    /// Binary body of the first media chunk (starts with `ftyp`).
    first_body: Bytes,
    /// Binary body of every later media chunk.
    media_body: Bytes,
    /// Binary body of the trailer.
    trailer_body: Bytes,
    /// Sessions currently streaming (for the saturation model).
    active: AtomicU64,
}

impl VideoState {
    /// Precomputes payloads for `config`.
    pub(crate) fn new(config: &ServerConfig) -> VideoState {
        let len = config.video.chunk_bytes;
        VideoState {
            config: config.clone(),
            first_body: media_payload(true, len),
            media_body: media_payload(false, len),
            trailer_body: trailer_payload(),
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
    actix_web::rt::spawn(Connection::new(ws.session, state, ws.conn).run(ws.stream));
    Ok(ws.response)
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
/// (with its `Session`) when the loop ends.
struct Connection {
    /// Outbound half.
    session: Session,
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
    fn new(session: Session, state: web::Data<VideoState>, tally: super::ws::Conn) -> Connection {
        Connection {
            session,
            state,
            phase: Phase::AwaitingStart,
            interactions: 0,
            counted: false,
            tally,
        }
    }

    /// Runs the connection to completion.
    async fn run(mut self, mut stream: super::ws::Inbound) {
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
                        // Stream ended or protocol error: nothing more to read or say.
                        Some(Err(_)) | None => Flow::Gone,
                    }
                }
                () = sleep_until(wake) => self.on_timer().await,
            };
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
            let _ = self.session.clone().close(reason).await;
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
        let session = &mut self.session;
        let sent = match step {
            Step::Start => {
                let event =
                    json!({"type": "video.start", "request_id": request_id, "format": "m4s"});
                session.text(event.to_string()).await
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
                let meta = with_metadata
                    .then(|| media_meta(request_id, num_frames, body.len(), index, *t0));
                send_frames(session, meta, body).await
            }
            Step::Trailer { .. } => {
                let meta = trailer_meta(request_id, state.trailer_body.len(), *t0);
                send_frames(session, Some(meta), &state.trailer_body).await
            }
            Step::Error(message) => session.text(error_event(&message)).await,
            Step::Done { stopped, chunks } => {
                // Streaming is over: leave the saturation count before the client can
                // learn it, so its next session never sees this one as active.
                if std::mem::take(&mut self.counted) {
                    state.active.fetch_sub(1, Ordering::Relaxed);
                }
                let event = json!({"type": "session.done", "stopped": stopped, "chunks": chunks});
                session.text(event.to_string()).await
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
            AggregatedMessage::Ping(payload) => self.session.pong(&payload).await,
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
        match self.session.text(event.to_string()).await {
            Ok(()) => Flow::Continue,
            Err(closed) => closed.into(),
        }
    }

    async fn send_error(&mut self, message: &str) -> Flow {
        match self.session.text(error_event(message)).await {
            Ok(()) => Flow::Continue,
            Err(closed) => closed.into(),
        }
    }
}

/// The `video.chunk_metadata` event announcing media chunk `index` of `byte_length` bytes.
fn media_meta(
    request_id: &str,
    num_frames: u32,
    byte_length: usize,
    index: u32,
    t0: Instant,
) -> Value {
    json!({
        "type": "video.chunk_metadata",
        "request_id": request_id,
        "kind": "media",
        "num_frames": num_frames,
        "byte_length": byte_length,
        "generation_chunk_index": index,
        "server_sent_at_s": t0.elapsed().as_secs_f64(),
    })
}

/// The `video.chunk_metadata` event announcing the trailer of `byte_length` bytes.
fn trailer_meta(request_id: &str, byte_length: usize, t0: Instant) -> Value {
    json!({
        "type": "video.chunk_metadata",
        "request_id": request_id,
        "kind": "trailer",
        "num_frames": 0,
        "byte_length": byte_length,
        // The reference's test server sends null here.
        "generation_chunk_index": null,
        "server_sent_at_s": t0.elapsed().as_secs_f64(),
    })
}

/// Sends `meta` (if any) as text, then `body` as binary; stops at the first failure.
async fn send_frames(
    session: &mut Session,
    meta: Option<Value>,
    body: &Bytes,
) -> Result<(), actix_ws::Closed> {
    if let Some(meta) = meta {
        session.text(meta.to_string()).await?;
    }
    session.binary(body.clone()).await
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
