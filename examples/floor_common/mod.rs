//! What the floor clients share (`floor_duplex`, `floor_video`): prebuilt client frames
//! masked with the all-zero key, the raw HTTP upgrade, an inbound frame counter that
//! parses nothing but frame headers, the run harness (one current-thread runtime, every
//! session a local task released at its offset) and the one JSON summary line, with
//! CPU per live session-second defined as rtload's `resources` defines it.

use std::time::Duration;

use bytes::Bytes;
use rtload::bench::{UsageSnapshot, peek_header};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::{Instant, sleep_until};

/// One client WebSocket frame (FIN, `opcode`), masked with the all-zero key.
pub fn frame(opcode: u8, payload: &[u8]) -> Bytes {
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

/// What one session saw.
#[derive(Default)]
pub struct Seen {
    /// Each scheduled send's lateness past its intended time, ms.
    pub lateness_ms: Vec<f64>,
    /// Server frames received.
    pub frames_in: u64,
    /// Their payload bytes.
    pub bytes_in: u64,
    /// Connect to end, seconds.
    pub span_s: f64,
    /// Why the session failed, if it did.
    pub failed: Option<String>,
}

/// Reads server frames until a close frame, EOF or, when `until` is given, a text frame
/// containing it: (frames, payload bytes). Bytes are read into one reused buffer and
/// never copied: only frame headers are parsed (rtload's own parser) and payloads are
/// stepped over, except a text frame's when `until` is given (gathered to be searched).
pub async fn count_inbound(
    mut rd: tokio::net::tcp::OwnedReadHalf,
    first: Vec<u8>,
    until: Option<&[u8]>,
) -> (u64, u64) {
    let (mut frames, mut bytes) = (0u64, 0u64);
    let mut chunk = vec![0u8; 64 * 1024];
    // A header split across reads (at most 14 bytes), the payload bytes still to step
    // over, and the text payload being gathered when it is searched.
    let (mut head, mut skip, mut text): (Vec<u8>, u64, Option<Vec<u8>>) = (Vec::new(), 0, None);
    let mut pending = Some(first);
    loop {
        let n = match pending.take() {
            Some(first) => {
                let n = first.len();
                chunk[..n].copy_from_slice(&first); // the few bytes after the 101
                n
            }
            None => match rd.read(&mut chunk).await {
                Ok(0) | Err(_) => return (frames, bytes),
                Ok(n) => n,
            },
        };
        let mut at = 0;
        while at < n {
            if skip > 0 {
                let take = skip.min((n - at) as u64) as usize;
                if let Some(t) = text.as_mut() {
                    t.extend_from_slice(&chunk[at..at + take]);
                }
                (at, skip) = (at + take, skip - take as u64);
                if skip == 0
                    && let (Some(t), Some(u)) = (text.take(), until)
                    && t.windows(u.len()).any(|w| w == u)
                {
                    return (frames, bytes);
                }
                continue;
            }
            let take = (14 - head.len()).min(n - at);
            head.extend_from_slice(&chunk[at..at + take]);
            let Some((opcode, _, hdr, len)) = peek_header(&head) else {
                at += take;
                continue;
            };
            // The header ends inside what was just added: the rest is payload.
            at += hdr - (head.len() - take);
            head.clear();
            frames += 1;
            bytes += len;
            if opcode == 0x8 {
                return (frames, bytes);
            }
            skip = len;
            text = (until.is_some() && opcode == 0x1).then(Vec::new);
        }
    }
}

/// Connects to `addr` and upgrades to `path` (the path and query rtload would use): the
/// socket and any bytes the server sent after its 101 response.
pub async fn upgrade(addr: &str, path: &str) -> Result<(TcpStream, Vec<u8>), String> {
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

/// The end of every session: a close frame, shutdown, and what it saw, counted from
/// `opened`.
pub async fn close_and_tally(
    mut wr: tokio::net::tcp::OwnedWriteHalf,
    mut seen: Seen,
    (frames_in, bytes_in): (u64, u64),
    opened: Instant,
    write_ok: bool,
) -> Seen {
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
pub fn release_offsets(n: usize, rate: Option<f64>) -> Vec<Duration> {
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

/// The `p`-quantile of `sorted` (nearest rank).
pub fn pct(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[((p * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len()) - 1]
}

/// The command line every floor takes: `ADDR ARG… [RATE_PER_S]`, with `fixed` arguments
/// before the optional rate (ADDR included); exits 2 with `usage` when they are missing.
/// Returns ADDR (always 127.0.0.1), the other fixed arguments and the rate.
pub fn command_line(usage: &str, fixed: usize) -> (String, Vec<String>, Option<f64>) {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < fixed {
        eprintln!("usage: {usage}");
        std::process::exit(2);
    }
    assert!(
        args[0].starts_with("127.0.0.1:"),
        "the floor only talks to 127.0.0.1"
    );
    let rate = args
        .get(fixed)
        .map(|r| r.parse().expect("RATE is a number"));
    (args[0].clone(), args[1..fixed].to_vec(), rate)
}

/// Runs every session on one current-thread runtime, each started at its offset from the
/// first release; returns what each saw and the process usage around the run.
pub fn run_all<F, Fut>(
    sessions: Vec<F>,
    offsets: Vec<Duration>,
) -> (Vec<Seen>, UsageSnapshot, UsageSnapshot)
where
    F: FnOnce() -> Fut + 'static,
    Fut: std::future::Future<Output = Seen> + 'static,
{
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let local = tokio::task::LocalSet::new();
    let start = UsageSnapshot::now();
    let seen = local.block_on(&rt, async move {
        let t0 = Instant::now();
        let tasks: Vec<_> = sessions
            .into_iter()
            .zip(offsets)
            .map(|(session, at)| {
                tokio::task::spawn_local(async move {
                    sleep_until(t0 + at).await;
                    session().await
                })
            })
            .collect();
        let mut out = Vec::with_capacity(tasks.len());
        for t in tasks {
            out.push(t.await.unwrap_or_default());
        }
        out
    });
    (seen, start, UsageSnapshot::now())
}

/// The one JSON line: CPU per live session-second and per session, lateness, inbound.
pub fn print_summary(seen: &[Seen], n: usize, start: UsageSnapshot, end: UsageSnapshot) {
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
