//! An independent WebSocket server on raw tokio sockets, for the wire-timing tests: its
//! own RFC 6455 handshake and frame reader/writer (no actix, nothing from rtload's
//! server or crate), `TCP_NODELAY` on its side as Python's asyncio sets it, delayed ACK
//! left on (never `TCP_QUICKACK`). It stamps every inbound message with `Instant::now()`
//! the moment its last frame is complete, and every outbound one when its bytes were
//! written, and answers each protocol rtload ships on a small script ([`Script`]).

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};

/// What the server plays.
#[derive(Debug, Clone)]
pub enum Script {
    /// vLLM realtime transcription: `session.created` on connect; one
    /// `transcription.delta` `delta_after` each append's arrival; at the final commit,
    /// `transcription.done` `done_after` its arrival.
    Transcription {
        /// Delay from an append's arrival to its delta.
        delta_after: Duration,
        /// Delay from the final commit's arrival to `transcription.done`.
        done_after: Duration,
    },
    /// OmniInteract duplex: `session.created` (1000 ms units) for `session.update`; on
    /// the first append a response (`response.created`, its transcript `text_after`
    /// later, then `audio_after` after it one audio delta of `audio_ms`, then
    /// `response.done`); `committed` and a listen decision for the final commit;
    /// `session.closed` for `session.close`.
    Duplex {
        /// `response.created` → transcript delta.
        text_after: Duration,
        /// `response.created` → audio delta.
        audio_after: Duration,
        /// Audio in the one delta, ms (24 kHz PCM16).
        audio_ms: u32,
    },
    /// LingBot video cadence: for `session.start`, `video.start`, then `chunks` media
    /// chunks (metadata + binary), the first `first_after` its arrival and then one
    /// every `every`, then `session.done`.
    Video {
        /// Chunks sent.
        chunks: u32,
        /// `session.start` arrival → first chunk.
        first_after: Duration,
        /// Between chunks.
        every: Duration,
    },
    /// Answers the upgrade with this `Sec-WebSocket-Extensions` header (whatever was
    /// offered), then only reads.
    Extensions(String),
}

/// One message as the server saw it.
#[derive(Debug, Clone)]
pub struct Seen {
    /// Inbound: when its last frame was complete. Outbound: when it was written.
    pub at: Instant,
    /// From the client.
    pub inbound: bool,
    /// A text message, parsed (`Value::Null` for a binary one).
    pub msg: Value,
}

/// One connection.
#[derive(Debug, Clone)]
pub struct Conn {
    /// The request line (path and query).
    pub target: String,
    /// When the 101 answer was written.
    pub opened: Instant,
    /// Every message, in order.
    pub msgs: Vec<Seen>,
}

impl Conn {
    /// The messages from the client.
    pub fn inbound(&self) -> Vec<&Seen> {
        self.msgs.iter().filter(|m| m.inbound).collect()
    }

    /// The messages to the client.
    pub fn outbound(&self) -> Vec<&Seen> {
        self.msgs.iter().filter(|m| !m.inbound).collect()
    }
}

type Log = Arc<Mutex<Vec<Arc<Mutex<Conn>>>>>;

/// Upgrade requests still to refuse with `429 Too Many Requests` and `Retry-After: 0`,
/// and every request head seen (refused or not).
#[derive(Debug, Default)]
struct Gate {
    refuse: std::sync::atomic::AtomicUsize,
    requests: std::sync::atomic::AtomicUsize,
}

/// A running server; stopped on drop.
pub struct RawServer {
    /// Where it listens (127.0.0.1, port 0).
    pub addr: SocketAddr,
    log: Log,
    gate: Arc<Gate>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl RawServer {
    /// Listen on 127.0.0.1 (port 0) and play `script` on every connection.
    pub fn start(script: Script) -> RawServer {
        RawServer::start_refusing(script, 0)
    }

    /// As [`RawServer::start`], but the first `refuse` upgrade requests are answered
    /// `429 Too Many Requests` with `Retry-After: 0` (and a short body).
    pub fn start_refusing(script: Script, refuse: usize) -> RawServer {
        let log: Log = Arc::default();
        let gate = Arc::new(Gate {
            refuse: refuse.into(),
            ..Gate::default()
        });
        let g = Arc::clone(&gate);
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let shared = Arc::clone(&log);
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(accept_loop(script, shared, g, ready_tx, stopped));
        });
        let addr = ready_rx.recv().expect("raw server started");
        RawServer {
            addr,
            log,
            gate,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    /// Upgrade requests received so far, refused or not.
    pub fn requests(&self) -> usize {
        self.gate.requests.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Every connection so far.
    pub fn connections(&self) -> Vec<Conn> {
        let all = self.log.lock().unwrap();
        all.iter().map(|c| c.lock().unwrap().clone()).collect()
    }
}

impl Drop for RawServer {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

async fn accept_loop(
    script: Script,
    log: Log,
    gate: Arc<Gate>,
    ready: std::sync::mpsc::Sender<SocketAddr>,
    mut stopped: tokio::sync::oneshot::Receiver<()>,
) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    ready.send(listener.local_addr().unwrap()).unwrap();
    loop {
        tokio::select! {
            _ = &mut stopped => return,
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else { continue };
                let (script, log, gate) = (script.clone(), Arc::clone(&log), Arc::clone(&gate));
                tokio::spawn(async move {
                    let _ = serve(stream, script, log, gate).await;
                });
            }
        }
    }
}

/// The server's side of one connection.
async fn serve(
    stream: tokio::net::TcpStream,
    script: Script,
    log: Log,
    gate: Arc<Gate>,
) -> std::io::Result<()> {
    use std::sync::atomic::Ordering::SeqCst;
    // As Python's asyncio does; delayed ACK stays on (no TCP_QUICKACK).
    stream.set_nodelay(true)?;
    let (mut rd, mut wr) = stream.into_split();
    let mut buf = Vec::new();
    let head = read_head(&mut rd, &mut buf).await?;
    gate.requests.fetch_add(1, SeqCst);
    if gate
        .refuse
        .fetch_update(SeqCst, SeqCst, |n| n.checked_sub(1))
        .is_ok()
    {
        let body = "busy";
        let answer = format!(
            "HTTP/1.1 429 Too Many Requests\r\nRetry-After: 0\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        return wr.write_all(answer.as_bytes()).await;
    }
    let target = head.split_whitespace().nth(1).unwrap_or("").to_string();
    let key = head
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.trim()
                .eq_ignore_ascii_case("sec-websocket-key")
                .then(|| v.trim().to_string())
        })
        .ok_or_else(|| std::io::Error::other("no Sec-WebSocket-Key"))?;
    let extensions = match &script {
        Script::Extensions(e) => format!("Sec-WebSocket-Extensions: {e}\r\n"),
        _ => String::new(),
    };
    let answer = format!(
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Accept: {}\r\n{extensions}\r\n",
        accept_key(&key)
    );
    wr.write_all(answer.as_bytes()).await?;
    let conn = Arc::new(Mutex::new(Conn {
        target,
        opened: Instant::now(),
        msgs: Vec::new(),
    }));
    log.lock().unwrap().push(Arc::clone(&conn));
    let out = Out {
        wr: Arc::new(tokio::sync::Mutex::new(wr)),
        conn: Arc::clone(&conn),
    };
    let reader = Reader { rd, buf, conn };
    match script {
        Script::Transcription {
            delta_after,
            done_after,
        } => transcription(reader, out, delta_after, done_after).await,
        Script::Duplex {
            text_after,
            audio_after,
            audio_ms,
        } => duplex(reader, out, (text_after, audio_after), audio_ms).await,
        Script::Video {
            chunks,
            first_after,
            every,
        } => video(reader, out, chunks, first_after, every).await,
        Script::Extensions(_) => {
            let mut reader = reader;
            while !matches!(reader.next().await?.0, Msg::Close) {}
            out.close().await
        }
    }
}

/// `Sec-WebSocket-Accept` for `key` (RFC 6455 §4.2.2).
fn accept_key(key: &str) -> String {
    use sha1::Digest as _;
    let mut h = sha1::Sha1::new();
    h.update(key.as_bytes());
    h.update(b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11");
    base64::engine::general_purpose::STANDARD.encode(h.finalize())
}

/// The HTTP request head; what follows it stays in `buf`.
async fn read_head(rd: &mut OwnedReadHalf, buf: &mut Vec<u8>) -> std::io::Result<String> {
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).into_owned();
            buf.drain(..end + 4);
            return Ok(head);
        }
        let mut chunk = [0u8; 4096];
        let n = rd.read(&mut chunk).await?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

/// A whole client message.
enum Msg {
    Text(Value),
    Binary,
    Close,
}

/// Reads client frames (masked, possibly fragmented) into messages.
struct Reader {
    rd: OwnedReadHalf,
    buf: Vec<u8>,
    conn: Arc<Mutex<Conn>>,
}

impl Reader {
    /// The next message and when its last frame was complete (logged too).
    async fn next(&mut self) -> std::io::Result<(Msg, Instant)> {
        let mut message: Vec<u8> = Vec::new();
        let mut first_op = None;
        loop {
            let (b0, payload) = self.frame().await?;
            let at = Instant::now();
            let op = b0 & 0x0f;
            assert_eq!(b0 & 0x70, 0, "no extension was agreed: RSV bits must be 0");
            match op {
                0x8 => return Ok((Msg::Close, at)),
                0x9 | 0xa => continue,
                _ => {}
            }
            first_op = first_op.or(Some(op));
            message.extend_from_slice(&payload);
            if b0 & 0x80 == 0 {
                continue;
            }
            let msg = match first_op {
                Some(0x1) => Msg::Text(serde_json::from_slice(&message).unwrap_or(Value::Null)),
                _ => Msg::Binary,
            };
            let logged = match &msg {
                Msg::Text(v) => v.clone(),
                _ => Value::Null,
            };
            self.conn.lock().unwrap().msgs.push(Seen {
                at,
                inbound: true,
                msg: logged,
            });
            return Ok((msg, at));
        }
    }

    /// One frame: its first byte and unmasked payload.
    async fn frame(&mut self) -> std::io::Result<(u8, Vec<u8>)> {
        loop {
            if let Some((b0, len, hdr)) = header(&self.buf)
                && self.buf.len() >= hdr + len
            {
                let key: [u8; 4] = self.buf[hdr - 4..hdr].try_into().unwrap();
                let payload = (self.buf[hdr..hdr + len].iter().zip(key.iter().cycle()))
                    .map(|(b, k)| b ^ k)
                    .collect();
                self.buf.drain(..hdr + len);
                return Ok((b0, payload));
            }
            let mut chunk = vec![0u8; 64 * 1024];
            let n = self.rd.read(&mut chunk).await?;
            if n == 0 {
                return Err(std::io::ErrorKind::UnexpectedEof.into());
            }
            self.buf.extend_from_slice(&chunk[..n]);
        }
    }
}

/// A masked client frame's header at the front of `b`: (first byte, payload length,
/// header length with the mask key).
fn header(b: &[u8]) -> Option<(u8, usize, usize)> {
    let (b0, b1) = (*b.first()?, *b.get(1)?);
    assert!(b1 & 0x80 != 0, "client frames are masked");
    let (len, at) = match b1 & 0x7f {
        126 => (
            u16::from_be_bytes(b.get(2..4)?.try_into().ok()?) as usize,
            4,
        ),
        127 => (
            u64::from_be_bytes(b.get(2..10)?.try_into().ok()?) as usize,
            10,
        ),
        n => (n as usize, 2),
    };
    Some((b0, len, at + 4))
}

/// The write half, shared by the connection's delayed answers.
#[derive(Clone)]
struct Out {
    wr: Arc<tokio::sync::Mutex<OwnedWriteHalf>>,
    conn: Arc<Mutex<Conn>>,
}

impl Out {
    /// Writes one unmasked final frame and logs `msg` when it is out.
    async fn frame(&self, opcode: u8, payload: &[u8], msg: Value) -> std::io::Result<()> {
        let mut f = vec![0x80 | opcode];
        match payload.len() {
            n @ 0..=125 => f.push(n as u8),
            n @ 126..=0xffff => {
                f.push(126);
                f.extend_from_slice(&(n as u16).to_be_bytes());
            }
            n => {
                f.push(127);
                f.extend_from_slice(&(n as u64).to_be_bytes());
            }
        }
        f.extend_from_slice(payload);
        let mut wr = self.wr.lock().await;
        wr.write_all(&f).await?;
        let at = Instant::now();
        drop(wr);
        if opcode != 0x8 {
            self.conn.lock().unwrap().msgs.push(Seen {
                at,
                inbound: false,
                msg,
            });
        }
        Ok(())
    }

    async fn text(&self, v: Value) -> std::io::Result<()> {
        self.frame(0x1, v.to_string().as_bytes(), v).await
    }

    async fn binary(&self, bytes: &[u8]) -> std::io::Result<()> {
        self.frame(0x2, bytes, Value::Null).await
    }

    /// Sends `msgs` in order, the first at `at`, each later one `gap` after the last.
    fn later(&self, at: Instant, gap: Duration, msgs: Vec<Value>) {
        let out = self.clone();
        tokio::spawn(async move {
            tokio::time::sleep_until(at.into()).await;
            for (i, m) in msgs.into_iter().enumerate() {
                if i > 0 {
                    tokio::time::sleep(gap).await;
                }
                if out.text(m).await.is_err() {
                    return;
                }
            }
        });
    }

    /// Answers a close frame with one and ends the connection.
    async fn close(&self) -> std::io::Result<()> {
        self.frame(0x8, &1000u16.to_be_bytes(), Value::Null).await?;
        self.wr.lock().await.shutdown().await
    }
}

/// The message's `type`, and whether it has `final: true`.
fn kind(v: &Value) -> (&str, bool) {
    (v["type"].as_str().unwrap_or(""), v["final"] == true)
}

async fn transcription(
    mut rd: Reader,
    out: Out,
    delta_after: Duration,
    done_after: Duration,
) -> std::io::Result<()> {
    out.text(json!({"type": "session.created", "id": "raw-1", "created": 1}))
        .await?;
    let mut words = 0;
    loop {
        let (msg, at) = rd.next().await?;
        let v = match msg {
            Msg::Text(v) => v,
            Msg::Binary => continue,
            Msg::Close => return out.close().await,
        };
        match kind(&v) {
            ("input_audio_buffer.append", _) => {
                let delta = json!({"type": "transcription.delta", "delta": format!("w{words} ")});
                words += 1;
                out.later(at + delta_after, Duration::ZERO, vec![delta]);
            }
            ("input_audio_buffer.commit", true) => {
                let usage = json!({"prompt_tokens": words, "completion_tokens": words, "total_tokens": 2 * words});
                let text: Vec<String> = (0..words).map(|i| format!("w{i}")).collect();
                let done =
                    json!({"type": "transcription.done", "text": text.join(" "), "usage": usage});
                out.later(at + done_after, Duration::ZERO, vec![done]);
            }
            _ => {}
        }
    }
}

async fn duplex(
    mut rd: Reader,
    out: Out,
    (text_after, audio_after): (Duration, Duration),
    audio_ms: u32,
) -> std::io::Result<()> {
    let mut responded = false;
    loop {
        let (msg, at) = rd.next().await?;
        let v = match msg {
            Msg::Text(v) => v,
            Msg::Binary => continue,
            Msg::Close => return out.close().await,
        };
        match kind(&v) {
            ("session.update", _) => {
                let caps = json!({"capabilities": {"chunk_period_ms": 1000}});
                out.text(json!({"type": "session.created", "session": caps}))
                    .await?;
            }
            ("input_audio_buffer.append", _) if !responded => {
                responded = true;
                respond(&out, at, text_after, audio_after, audio_ms);
            }
            ("input_audio_buffer.commit", true) => {
                let listen = json!({"type": "response.listen",
                    "response": {"metadata": {"model_listen": true, "buffering": false}}});
                let committed = json!({"type": "input_audio_buffer.committed"});
                out.later(at, Duration::ZERO, vec![committed, listen]);
            }
            ("session.close", _) => out.text(json!({"type": "session.closed"})).await?,
            _ => {}
        }
    }
}

/// One response to the append that arrived `at`: created at once, its transcript
/// `text_after` and its audio `audio_after` later, then done.
fn respond(out: &Out, at: Instant, text_after: Duration, audio_after: Duration, audio_ms: u32) {
    let rid = "resp_raw_1";
    let samples = 24 * audio_ms as usize;
    let pcm: Vec<u8> = (0..samples)
        .flat_map(|i| ((((i % 48) as i16) - 24) * 500).to_le_bytes())
        .collect();
    let audio = json!({"type": "response.audio.delta", "response_id": rid, "format": "pcm16",
        "sample_rate_hz": 24000, "delta": base64::engine::general_purpose::STANDARD.encode(&pcm)});
    let text =
        json!({"type": "response.audio_transcript.delta", "response_id": rid, "delta": "hi"});
    let done = json!({"type": "response.done", "response": {"id": rid, "status": "completed"}});
    let created = json!({"type": "response.created", "response": {"id": rid}});
    out.later(at, Duration::ZERO, vec![created]);
    out.later(at + text_after, Duration::ZERO, vec![text]);
    out.later(at + audio_after, Duration::ZERO, vec![audio, done]);
}

async fn video(
    mut rd: Reader,
    out: Out,
    chunks: u32,
    first_after: Duration,
    every: Duration,
) -> std::io::Result<()> {
    loop {
        let (msg, at) = rd.next().await?;
        let v = match msg {
            Msg::Text(v) => v,
            Msg::Binary => continue,
            Msg::Close => return out.close().await,
        };
        if kind(&v).0 == "session.start" {
            let out = out.clone();
            tokio::spawn(async move {
                let _ = stream_video(&out, at, chunks, first_after, every).await;
            });
        }
    }
}

async fn stream_video(
    out: &Out,
    at: Instant,
    chunks: u32,
    first_after: Duration,
    every: Duration,
) -> std::io::Result<()> {
    let rid = "raw-video-1";
    out.text(json!({"type": "video.start", "request_id": rid, "format": "m4s"}))
        .await?;
    for i in 0..chunks {
        tokio::time::sleep_until((at + first_after + every * i).into()).await;
        let media = vec![i as u8; 2_000 + 100 * i as usize];
        out.text(
            json!({"type": "video.chunk_metadata", "request_id": rid, "kind": "media",
            "num_frames": if i == 0 { 9 } else { 12 }, "byte_length": media.len(),
            "generation_chunk_index": i}),
        )
        .await?;
        out.binary(&media).await?;
    }
    out.text(json!({"type": "session.done", "stopped": false, "chunks": chunks}))
        .await
}
