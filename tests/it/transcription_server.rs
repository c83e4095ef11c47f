//! An independent, minimal vLLM realtime transcription server for the end-to-end tests:
//! written from the protocol description only (it shares no code with rtload's embedded
//! server), it records every client message with its receipt time and every event it
//! sends with its send time, so tests can check rtload's wire sequence, pacing and
//! metrics against what a server saw.
//!
//! Behaviour: `session.created` on connect; one `transcription.delta` (`word<i>`) right
//! after each `input_audio_buffer.append`; `transcription.done` (the words joined,
//! usage: one prompt token per append) `DONE_DELAY` after the final commit.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use actix_web::{App, HttpRequest, HttpResponse, HttpServer, web};
use actix_ws::AggregatedMessage;
use serde_json::{Value, json};

/// Delay between the final commit's receipt and `transcription.done`.
pub const DONE_DELAY: Duration = Duration::from_millis(300);

/// One message as the server saw it.
#[derive(Debug, Clone)]
pub struct Seen {
    /// Receipt (inbound) or send (outbound) time.
    pub at: Instant,
    /// The parsed message.
    pub msg: Value,
    /// True for messages this server sent.
    pub outbound: bool,
}

/// Everything one connection saw, in order.
pub type Log = Arc<Mutex<Vec<Vec<Seen>>>>;

/// A running test server.
pub struct TestServer {
    /// Bound address.
    pub addr: SocketAddr,
    /// One log per connection.
    pub log: Log,
    handle: actix_web::dev::ServerHandle,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl TestServer {
    /// Start on 127.0.0.1, port 0.
    pub fn start() -> TestServer {
        let log: Log = Arc::default();
        let (tx, rx) = std::sync::mpsc::channel();
        let shared = Arc::clone(&log);
        let thread = std::thread::spawn(move || {
            actix_rt::System::new().block_on(async move {
                let data = web::Data::new(shared);
                let server = HttpServer::new(move || {
                    App::new()
                        .app_data(data.clone())
                        .route("/v1/realtime", web::get().to(endpoint))
                })
                .workers(1)
                .disable_signals()
                .bind(("127.0.0.1", 0))
                .expect("bind");
                let addr = server.addrs()[0];
                let server = server.run();
                tx.send((addr, server.handle())).unwrap();
                let _ = server.await;
            });
        });
        let (addr, handle) = rx.recv().expect("test server started");
        TestServer {
            addr,
            log,
            handle,
            thread: Some(thread),
        }
    }

    /// The connections' logs so far.
    pub fn connections(&self) -> Vec<Vec<Seen>> {
        self.log.lock().unwrap().clone()
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        drop(self.handle.stop(false));
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

async fn endpoint(
    req: HttpRequest,
    body: web::Payload,
    log: web::Data<Log>,
) -> Result<HttpResponse, actix_web::Error> {
    let (response, session, stream) = actix_ws::handle(&req, body)?;
    let stream = stream.max_frame_size(1 << 24).aggregate_continuations();
    let slot = {
        let mut all = log.lock().unwrap();
        all.push(Vec::new());
        all.len() - 1
    };
    actix_web::rt::spawn(connection(session, stream, Arc::clone(&log), slot));
    Ok(response)
}

async fn connection(
    mut session: actix_ws::Session,
    mut stream: actix_ws::AggregatedMessageStream,
    log: Log,
    slot: usize,
) {
    use futures_util::StreamExt as _;
    let record = |msg: Value, outbound: bool| {
        log.lock().unwrap()[slot].push(Seen {
            at: Instant::now(),
            msg,
            outbound,
        });
    };
    let created = json!({"type": "session.created", "id": "sess_test", "created": 1});
    record(created.clone(), true);
    if session.text(created.to_string()).await.is_err() {
        return;
    }
    let mut words: Vec<String> = Vec::new();
    while let Some(Ok(msg)) = stream.next().await {
        let AggregatedMessage::Text(text) = msg else {
            if matches!(msg, AggregatedMessage::Close(_)) {
                break;
            }
            continue;
        };
        let ev: Value = serde_json::from_str(&text).unwrap_or(json!({"unparsed": &*text}));
        record(ev.clone(), false);
        let reply = match ev["type"].as_str() {
            Some("input_audio_buffer.append") => {
                let word = format!("word{}", words.len());
                let delta = if words.is_empty() {
                    word.clone()
                } else {
                    format!(" {word}")
                };
                words.push(word);
                json!({"type": "transcription.delta", "delta": delta})
            }
            Some("input_audio_buffer.commit") if ev["final"] == true => {
                actix_rt::time::sleep(DONE_DELAY).await;
                let n = words.len();
                json!({"type": "transcription.done", "text": words.join(" "),
                       "usage": {"prompt_tokens": n, "completion_tokens": n, "total_tokens": 2 * n}})
            }
            _ => continue,
        };
        record(reply.clone(), true);
        if session.text(reply.to_string()).await.is_err() {
            return;
        }
    }
    let _ = session.close(None).await;
}
