//! An independent OpenAI-Realtime-style test server (GA event names), written without
//! rtload's own server code: `session.created` on connect, `session.updated` for
//! `session.update`, `input_audio_buffer.committed` for a commit, and for
//! `response.create` a `response.created`, audio + transcript deltas and
//! `response.done`. It records every client event it got, in order.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix_web::{App, HttpRequest, HttpResponse, HttpServer, web};
use actix_ws::AggregatedMessage;
use base64::Engine as _;
use serde_json::{Value, json};

/// Client events as the server saw them.
pub type Seen = Arc<Mutex<Vec<Value>>>;

/// A running server; stopped on drop.
pub struct OpenAiServer {
    pub addr: SocketAddr,
    pub seen: Seen,
    handle: actix_web::dev::ServerHandle,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for OpenAiServer {
    fn drop(&mut self) {
        drop(self.handle.stop(false));
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Start on 127.0.0.1, port 0.
pub fn start() -> OpenAiServer {
    let seen: Seen = Arc::default();
    let (tx, rx) = std::sync::mpsc::channel();
    let seen2 = Arc::clone(&seen);
    let thread = std::thread::spawn(move || {
        actix_rt::System::new().block_on(async move {
            let data = web::Data::new(seen2);
            let server = HttpServer::new(move || {
                App::new()
                    .app_data(data.clone())
                    .route("/v1/realtime", web::get().to(endpoint))
            })
            .workers(1)
            .disable_signals()
            .bind("127.0.0.1:0")
            .unwrap();
            let addr = server.addrs()[0];
            let server = server.run();
            tx.send((addr, server.handle())).unwrap();
            let _ = server.await;
        });
    });
    let (addr, handle) = rx.recv().unwrap();
    OpenAiServer {
        addr,
        seen,
        handle,
        thread: Some(thread),
    }
}

async fn endpoint(
    req: HttpRequest,
    body: web::Payload,
    seen: web::Data<Seen>,
) -> Result<HttpResponse, actix_web::Error> {
    let (resp, mut session, stream) = actix_ws::handle(&req, body)?;
    let mut stream = stream
        .aggregate_continuations()
        .max_continuation_size(1 << 24);
    let seen = Arc::clone(&seen);
    actix_web::rt::spawn(async move {
        let send = |v: Value| v.to_string();
        let _ = session
            .text(send(json!({"type": "session.created", "event_id": "e0", "session": {"type": "realtime", "id": "s1"}})))
            .await;
        while let Some(Ok(msg)) = stream.recv().await {
            let AggregatedMessage::Text(text) = msg else {
                continue;
            };
            let Ok(ev) = serde_json::from_str::<Value>(&text) else {
                continue;
            };
            seen.lock().unwrap().push(ev.clone());
            let replies = match ev["type"].as_str().unwrap_or("") {
                "session.update" => vec![
                    json!({"type": "session.updated", "event_id": "e1", "session": ev["session"].clone()}),
                ],
                "input_audio_buffer.commit" => vec![
                    json!({"type": "input_audio_buffer.committed", "event_id": "e2", "item_id": "i1"}),
                ],
                "response.create" => {
                    let _ = session.text(send(json!({"type": "response.created", "event_id": "e3", "response": {"id": "r1", "status": "in_progress"}}))).await;
                    let audio = base64::engine::general_purpose::STANDARD.encode(vec![0u8; 4_800]);
                    for i in 0..3 {
                        tokio::time::sleep(Duration::from_millis(20)).await;
                        let _ = session.text(send(json!({"type": "response.output_audio.delta", "event_id": format!("a{i}"), "response_id": "r1", "delta": audio}))).await;
                        let _ = session.text(send(json!({"type": "response.output_audio_transcript.delta", "event_id": format!("t{i}"), "response_id": "r1", "delta": "hi "}))).await;
                    }
                    vec![
                        json!({"type": "response.done", "event_id": "e4", "response": {"id": "r1", "status": "completed"}}),
                    ]
                }
                _ => Vec::new(),
            };
            for r in replies {
                if session.text(send(r)).await.is_err() {
                    return;
                }
            }
        }
    });
    Ok(resp)
}
