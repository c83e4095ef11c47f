//! A refused WebSocket upgrade, against an independent raw-tokio HTTP server that answers
//! every request `429 Too Many Requests` with `Retry-After: 30` and a short body: each
//! session sends exactly one request (no second GET to read the body, so a rate-limited
//! server is not asked twice, and the credentials go once), and the failure names the
//! status, the 30 s and the server's text, with no secret anywhere in the outputs. With
//! `[target] retry_rejected`, a refused session is tried again after the `Retry-After`.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::raw_server::{RawServer, Script};
use crate::support::rtload;

/// What the refusing server saw: every request head.
#[derive(Default)]
struct Seen {
    heads: Mutex<Vec<String>>,
    connections: AtomicUsize,
}

/// Serves `429` with `Retry-After: 30` on 127.0.0.1 (port 0) from a thread of its own;
/// returns the address and what it saw.
fn refusing_server() -> (String, Arc<Seen>) {
    let seen = Arc::new(Seen::default());
    let (tx, rx) = std::sync::mpsc::channel();
    let s = Arc::clone(&seen);
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            tx.send(listener.local_addr().unwrap().to_string()).unwrap();
            loop {
                let (mut sock, _) = listener.accept().await.unwrap();
                s.connections.fetch_add(1, Ordering::SeqCst);
                let s = Arc::clone(&s);
                tokio::spawn(async move {
                    // One connection may carry several requests (keep-alive): read each head.
                    let mut buf = Vec::new();
                    let mut chunk = [0u8; 4096];
                    loop {
                        while let Some(end) = find(&buf, b"\r\n\r\n") {
                            let head = String::from_utf8_lossy(&buf[..end]).into_owned();
                            buf.drain(..end + 4);
                            s.heads.lock().unwrap().push(head);
                            let body = "rate limited: 3 sessions max, try later";
                            let answer = format!(
                                "HTTP/1.1 429 Too Many Requests\r\nRetry-After: 30\r\n\
                                 Content-Type: text/plain\r\nContent-Length: {}\r\n\r\n{body}",
                                body.len()
                            );
                            if sock.write_all(answer.as_bytes()).await.is_err() {
                                return;
                            }
                        }
                        match sock.read(&mut chunk).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => buf.extend_from_slice(&chunk[..n]),
                        }
                    }
                });
            }
        });
    });
    (rx.recv().unwrap(), seen)
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

#[test]
fn a_429_is_read_once_per_session_and_its_retry_after_is_shown() {
    let (addr, seen) = refusing_server();
    let dir = tempfile::tempdir().unwrap();
    let sc = dir.path().join("s.toml");
    let secret = "Zq5ecre7b0dyhe4der";
    std::fs::write(
        &sc,
        format!(
            "name = \"refused\"\n[target]\nurl = \"ws://{addr}/v1/realtime/video?model=m\"\n\
             headers = {{ \"Authorization\" = \"Bearer {secret}\" }}\n\
             [workload]\nkind = \"video-cadence\"\nnum_chunks = 3\nwarmup_chunks = 1\n\
             [load]\nsamples = 3\nmax_concurrency = 3\n"
        ),
    )
    .unwrap();
    let json = dir.path().join("r.json");
    let out = rtload()
        .arg("run")
        .arg(&sc)
        .arg("--output-json")
        .arg(&json)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");

    let heads = seen.heads.lock().unwrap().clone();
    assert_eq!(
        heads.len(),
        3,
        "one request per session, no second GET: {heads:#?}"
    );
    for h in &heads {
        let lower = h.to_ascii_lowercase();
        assert!(lower.contains("upgrade: websocket"), "{h}");
        assert_eq!(lower.matches("authorization:").count(), 1, "{h}");
    }

    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let samples = doc["rtload"]["samples"].as_array().unwrap();
    assert_eq!(samples.len(), 3);
    for s in samples {
        let msg = s["error"].as_str().unwrap_or_default();
        assert!(
            msg.contains("HTTP 429 Too Many Requests")
                && msg.contains("Retry-After: 30 s")
                && msg.contains("rate limited: 3 sessions max, try later"),
            "{s}"
        );
    }
    let shown = format!("{stdout}{stderr}");
    assert!(shown.contains("Retry-After: 30 s"), "{shown}");
    for text in [shown.as_str(), &std::fs::read_to_string(&json).unwrap()] {
        assert!(!text.contains(secret), "secret leaked: {text}");
    }
}

/// Runs a 2-session video scenario against `server` with `[target] retry_rejected =
/// retries`; returns the exit code and the JSON result.
fn run_video_against(server: &RawServer, retries: u32) -> (Option<i32>, serde_json::Value) {
    let dir = tempfile::tempdir().unwrap();
    let sc = dir.path().join("s.toml");
    std::fs::write(
        &sc,
        format!(
            "name = \"retry\"\n[target]\nurl = \"ws://{}/v1/realtime/video\"\n\
             retry_rejected = {retries}\n\
             [workload]\nkind = \"video-cadence\"\nnum_chunks = 2\nwarmup_chunks = 1\n\
             first_chunk_timeout = 30.0\nchunk_timeout = 30.0\n\
             [load]\nsamples = 2\nmax_concurrency = 1\n",
            server.addr
        ),
    )
    .unwrap();
    let json = dir.path().join("r.json");
    let out = rtload()
        .args(["run", "--quiet"])
        .arg(&sc)
        .arg("--output-json")
        .arg(&json)
        .output()
        .unwrap();
    let text = std::fs::read_to_string(&json).unwrap_or_else(|_| {
        panic!("no JSON: {}", String::from_utf8_lossy(&out.stderr));
    });
    (out.status.code(), serde_json::from_str(&text).unwrap())
}

#[test]
fn retry_rejected_retries_a_429_after_its_retry_after_and_counts_it() {
    let script = Script::Video {
        chunks: 2,
        first_after: Duration::from_millis(5),
        every: Duration::from_millis(5),
    };
    // Three refusals: the first session is refused three times, then both connect.
    let server = RawServer::start_refusing(script.clone(), 3);
    let (code, doc) = run_video_against(&server, 3);
    assert_eq!(code, Some(0), "{doc:#}");
    assert_eq!(server.requests(), 5, "3 refused + 2 accepted");
    assert_eq!(doc["rtload"]["wire"]["retry_rejected"]["allowed"], 3);
    assert_eq!(doc["rtload"]["wire"]["retry_rejected"]["retried"], 3);

    // Off (the default): the same refusal fails the session at once, one request each.
    let server = RawServer::start_refusing(script.clone(), 1);
    let (code, doc) = run_video_against(&server, 0);
    assert_eq!(code, Some(1));
    assert_eq!(server.requests(), 2);
    assert_eq!(doc["rtload"]["wire"]["retry_rejected"]["retried"], 0);

    // Out of retries: the message says how often and over how long.
    let server = RawServer::start_refusing(script, 100);
    let (code, doc) = run_video_against(&server, 2);
    assert_eq!(code, Some(1));
    assert_eq!(server.requests(), 6, "2 sessions × (1 + 2 retries)");
    for s in doc["rtload"]["samples"].as_array().unwrap() {
        let msg = s["error"].as_str().unwrap_or_default();
        assert!(
            msg.contains("HTTP 429")
                && msg.contains("refused 3 times over")
                && msg.contains("`[target] retry_rejected = 2`")
                && msg.contains("no retry left of the 2 allowed"),
            "{msg}"
        );
    }
}
