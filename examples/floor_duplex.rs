//! The floor: the cheapest client we know how to write that puts the same bytes on the
//! wire as an `omniinteract` run, used by `scripts/bench-duplex-sessions.sh --floor` to
//! state rtload's CPU cost as a ratio measured in the same run.
//!
//! Every frame is built before timing with rtload's own pure code (the dataset's cases
//! decoded by `media::prepare`, `session.update` from `DuplexSettings`, the 200 ms
//! appends with their 1 fps frames from `AppendPlan` + `append_message`), masked with the
//! all-zero key so no byte is touched while sending. During the run each session is one
//! task on a current-thread tokio runtime: a raw TCP socket, the HTTP upgrade, then
//! `write_all` of the prebuilt frames at their intended times; a second task counts the
//! inbound frames without parsing them. It sends no `playback.ack` and no completion
//! wait: after the commit it sends `session.close` and ends when the server closes.
//!
//! It prints one JSON line: CPU µs per live session-second (same definition as rtload's
//! `resources`: process CPU between the first release and the last session's end over
//! the sum of connect-to-end spans), send lateness percentiles, inbound frames and bytes.
//!
//!     floor_duplex ADDR DATASET_DIR SESSIONS [RATE_PER_S]
//!
//! ADDR must be a 127.0.0.1 address (this is a benchmark tool, not a client).

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use rtload::engine::transport::peek_header;
use rtload::workload::kit::UsageSnapshot;
use rtload::workload::omni::dataset::{Subset, layout};
use rtload::workload::omni::media::{self, MediaOptions};
use rtload::workload::omni::pacing::{AppendPlan, BYTES_PER_SECOND, append_message, streamed_len};
use rtload::workload::omni::session::DuplexSettings;
use rtload::workload::omni::url::{join_endpoint, realtime_url};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::{Instant, sleep_until};

/// The model name every session asks for.
const MODEL: &str = "openbmb/MiniCPM-o-4_5";

/// One client WebSocket frame (FIN, `opcode`), masked with the all-zero key.
fn frame(opcode: u8, payload: &[u8]) -> Bytes {
    let mut out = Vec::with_capacity(payload.len() + 14);
    out.push(0x80 | opcode);
    match payload.len() {
        n if n < 126 => out.push(0x80 | n as u8),
        n if n <= 0xFFFF => {
            out.push(0x80 | 126);
            out.extend_from_slice(&(n as u16).to_be_bytes());
        }
        n => {
            out.push(0x80 | 127);
            out.extend_from_slice(&(n as u64).to_be_bytes());
        }
    }
    out.extend_from_slice(&[0, 0, 0, 0]);
    out.extend_from_slice(payload);
    Bytes::from(out)
}

/// A case's prebuilt upload: the appends (shared by every session of the case) and the
/// commit's offset in seconds.
struct Upload {
    appends: Vec<(Duration, Bytes)>,
    commit_at: Duration,
}

fn upload(pcm: &[u8], frames: &[Option<Arc<str>>]) -> Upload {
    let len = streamed_len(pcm.len(), 1000);
    let at = |offset: usize| Duration::from_secs_f64(offset as f64 / BYTES_PER_SECOND as f64);
    let appends = AppendPlan::new(len, frames.len())
        .map(|a| {
            (
                at(a.offset),
                frame(0x1, append_message(&a, pcm, frames).0.as_bytes()),
            )
        })
        .collect();
    Upload {
        appends,
        commit_at: at(len),
    }
}

/// What one session saw.
#[derive(Default)]
struct Seen {
    lateness_ms: Vec<f64>,
    frames_in: u64,
    bytes_in: u64,
    span_s: f64,
    failed: Option<String>,
}

/// Reads server frames until a close frame or EOF: (frames, payload bytes).
async fn count_inbound(mut rd: tokio::net::tcp::OwnedReadHalf, mut buf: Vec<u8>) -> (u64, u64) {
    let (mut frames, mut bytes) = (0u64, 0u64);
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        // Every complete frame in `buf`, read with rtload's own header parser.
        while let Some((opcode, _, hdr, len)) = peek_header(&buf) {
            let end = hdr + len as usize;
            if buf.len() < end {
                break;
            }
            frames += 1;
            bytes += len;
            buf.drain(..end);
            if opcode == 0x8 {
                return (frames, bytes);
            }
        }
        match rd.read(&mut chunk).await {
            Ok(0) | Err(_) => return (frames, bytes),
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
}

/// Connects to `addr` and upgrades to the session URL rtload would use: the socket and
/// any bytes the server sent after its 101 response.
async fn upgrade(addr: &str, sid: &str) -> Result<(TcpStream, Vec<u8>), String> {
    let url = realtime_url(
        &join_endpoint(&format!("http://{addr}"), "/v1/realtime"),
        MODEL,
        sid,
    )
    .map_err(|e| e.to_string())?;
    let path = url.split_once(addr).map_or("/", |(_, p)| p).to_owned();
    let mut sock = TcpStream::connect(addr)
        .await
        .map_err(|e| format!("connect: {e}"))?;
    let _ = sock.set_nodelay(true);
    let req = format!(
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
    );
    sock.write_all(req.as_bytes())
        .await
        .map_err(|e| format!("upgrade request: {e}"))?;
    let mut head = Vec::new();
    let mut b = [0u8; 4096];
    let end = loop {
        if let Some(end) = head.windows(4).position(|w| w == b"\r\n\r\n") {
            break end;
        }
        match sock.read(&mut b).await {
            Ok(0) | Err(_) => return Err("handshake: connection ended".into()),
            Ok(n) => head.extend_from_slice(&b[..n]),
        }
    };
    if !head.starts_with(b"HTTP/1.1 101") {
        return Err(String::from_utf8_lossy(&head[..end]).into_owned());
    }
    Ok((sock, head.split_off(end + 4)))
}

/// One session: connect, upgrade, `session.update`, wait for the first server event, the
/// appends at their intended times, commit, `session.close`, until the server closes.
async fn session(addr: String, update: Bytes, up: Arc<Upload>, sid: String) -> Seen {
    let opened = Instant::now();
    let mut seen = Seen::default();
    let (sock, rest) = match upgrade(&addr, &sid).await {
        Ok(ok) => ok,
        Err(e) => {
            seen.failed = Some(e);
            return seen;
        }
    };
    let (rd, mut wr) = sock.into_split();
    // The first server frame (session.created) starts the upload, as in rtload.
    let (first_tx, first_rx) = tokio::sync::oneshot::channel::<()>();
    let reader = tokio::task::spawn_local(async move {
        let mut rd = rd;
        let mut buf = rest;
        let mut chunk = [0u8; 4096];
        while buf.len() < 2 {
            match rd.read(&mut chunk).await {
                Ok(0) | Err(_) => break,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        }
        let _ = first_tx.send(());
        count_inbound(rd, buf).await
    });
    let mut write_ok = wr.write_all(&update).await.is_ok();
    if write_ok && first_rx.await.is_ok() {
        let t0 = Instant::now();
        for (at, msg) in &up.appends {
            let due = t0 + *at;
            sleep_until(due).await;
            seen.lateness_ms.push(due.elapsed().as_secs_f64() * 1e3);
            if wr.write_all(msg).await.is_err() {
                write_ok = false;
                break;
            }
        }
        sleep_until(t0 + up.commit_at).await;
        let commit = frame(0x1, br#"{"type":"input_audio_buffer.commit","final":true}"#);
        let close = frame(0x1, br#"{"type":"session.close"}"#);
        write_ok = write_ok && wr.write_all(&commit).await.is_ok();
        write_ok = write_ok && wr.write_all(&close).await.is_ok();
    }
    let (frames_in, bytes_in) = reader.await.unwrap_or_default();
    let _ = wr.write_all(&frame(0x8, &1000u16.to_be_bytes())).await;
    let _ = wr.shutdown().await;
    seen.frames_in = frames_in;
    seen.bytes_in = bytes_in;
    seen.span_s = opened.elapsed().as_secs_f64();
    if !write_ok {
        seen.failed = Some("write".into());
    }
    seen
}

/// Exponential gaps of mean `1/rate` from a fixed-seed xorshift (the floor needs a spread,
/// not rtload's exact plan).
fn release_offsets(n: usize, rate: Option<f64>) -> Vec<Duration> {
    let Some(rate) = rate.filter(|r| r.is_finite() && *r > 0.0) else {
        return vec![Duration::ZERO; n];
    };
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut t = 0.0;
    (0..n)
        .map(|_| {
            let at = Duration::from_secs_f64(t);
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let u = ((x >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
            t += -u.ln() / rate;
            at
        })
        .collect()
}

fn pct(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[((p * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len()) - 1]
}

/// Before timing: every case decoded and every frame built, as rtload's prepare does;
/// session `i` streams case `i mod cases`.
fn build_sessions(dataset: &Path, root: &Path, n: usize) -> Vec<(Bytes, Arc<Upload>, String)> {
    let opts = MediaOptions::default();
    let mut cases = Vec::new();
    for subset in Subset::ALL {
        let dir = root.join(subset.name());
        if dir.is_dir() {
            cases.extend(layout::subset_cases(&dir, subset).expect("cases"));
        }
    }
    assert!(!cases.is_empty(), "no cases under {}", root.display());
    let uploads: Vec<Arc<Upload>> = cases
        .iter()
        .map(|c| {
            let m = media::prepare(&c.video_path, &opts).expect("media");
            Arc::new(upload(&m.pcm, &m.frames))
        })
        .collect();
    let ref_audio = media::ref_audio_data_url(&dataset.join("ref_audio.wav"))
        .expect("ref_audio.wav in the dataset dir");
    let settings = DuplexSettings::new(MODEL, ref_audio);
    (0..n)
        .map(|i| {
            let sid = format!("omniinteract:floor:{i}:0");
            let update = frame(0x1, settings.session_update(&sid).as_bytes());
            (update, Arc::clone(&uploads[i % uploads.len()]), sid)
        })
        .collect()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 3 {
        eprintln!("usage: floor_duplex 127.0.0.1:PORT DATASET_DIR SESSIONS [RATE_PER_S]");
        std::process::exit(2);
    }
    let addr = args[0].clone();
    assert!(
        addr.starts_with("127.0.0.1:"),
        "the floor only talks to 127.0.0.1"
    );
    let root = layout::data_dir(Path::new(&args[1])).expect("dataset");
    let n: usize = args[2].parse().expect("SESSIONS is a number");
    let rate: Option<f64> = args.get(3).map(|r| r.parse().expect("RATE is a number"));

    let sessions = build_sessions(Path::new(&args[1]), &root, n);
    let offsets = release_offsets(n, rate);

    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let local = tokio::task::LocalSet::new();
    let start = UsageSnapshot::now();
    let seen: Vec<Seen> = local.block_on(&rt, async move {
        let t0 = Instant::now();
        let tasks: Vec<_> = sessions
            .into_iter()
            .zip(offsets)
            .map(|((update, up, sid), at)| {
                let addr = addr.clone();
                tokio::task::spawn_local(async move {
                    sleep_until(t0 + at).await;
                    session(addr, update, up, sid).await
                })
            })
            .collect();
        let mut out = Vec::with_capacity(tasks.len());
        for t in tasks {
            out.push(t.await.unwrap_or_default());
        }
        out
    });
    let end = UsageSnapshot::now();

    print_summary(&seen, n, start, end);
}

/// The one JSON line: CPU per live session-second and per session, lateness, inbound.
fn print_summary(seen: &[Seen], n: usize, start: UsageSnapshot, end: UsageSnapshot) {
    let mut late: Vec<f64> = seen
        .iter()
        .flat_map(|s| s.lateness_ms.iter().copied())
        .collect();
    late.sort_by(f64::total_cmp);
    let live_s: f64 = seen.iter().map(|s| s.span_s).sum();
    let cpu_s = end
        .cpu_s
        .zip(start.cpu_s)
        .map(|(e, s)| e - s)
        .unwrap_or(f64::NAN);
    let failed: Vec<&str> = seen.iter().filter_map(|s| s.failed.as_deref()).collect();
    println!(
        "{}",
        serde_json::json!({
            "sessions": n,
            "failed": failed.len(),
            "first_failure": failed.first(),
            "cpu_s": cpu_s,
            "live_session_s": live_s,
            "cpu_us_per_session_s": cpu_s * 1e6 / live_s,
            "cpu_us_per_session": cpu_s * 1e6 / n as f64,
            "peak_rss_mib": end.peak_rss_bytes.map(|b| b as f64 / 1048576.0),
            "send_lateness_ms": {"p50": pct(&late, 0.5), "p99": pct(&late, 0.99), "max": pct(&late, 1.0), "count": late.len()},
            "inbound_frames": seen.iter().map(|s| s.frames_in).sum::<u64>(),
            "inbound_bytes": seen.iter().map(|s| s.bytes_in).sum::<u64>(),
        })
    );
}
