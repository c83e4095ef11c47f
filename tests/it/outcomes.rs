//! Outcome classes end to end: a session the server refuses for capacity is *rejected*,
//! not failed (an upgrade answered `429` with `Retry-After` by the independent raw server
//! of `raw_server.rs`; a close with code 1013 and an `error` event matching the capacity
//! patterns from a second raw peer written here); a session that completes but breaks
//! an `[slo]` bound is *degraded*; thresholds read `good`, `degraded`, `rejected` and the
//! ratios; and one run's counts are the same numbers in the JSON result, the terminal
//! verdict line, the Prometheus text served after the run and the HTML report.

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::time::Duration;

use base64::Engine as _;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::duplex_support::{Opts, duplex};
use crate::prometheus::{announced, interrupt, stderr_until, value};
use crate::raw_server::{RawServer, Script};
use crate::support::{Fixture, http_get, rtload};

/// What [`Peer`] does on a connection once the client's first bytes arrived.
#[derive(Clone)]
enum Act {
    /// A close frame with code 1013 ("try again later").
    Close1013,
    /// This text frame, then a normal close (1000).
    Error(Value),
}

/// A raw tokio WebSocket peer (its own handshake and frames, nothing from rtload) on
/// 127.0.0.1 port 0: connection `i` plays `acts[i]` (the last one repeats).
struct Peer {
    addr: std::net::SocketAddr,
    _thread: std::thread::JoinHandle<()>,
}

impl Peer {
    fn start(acts: Vec<Act>) -> Peer {
        let (tx, rx) = std::sync::mpsc::channel();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                tx.send(listener.local_addr().unwrap()).unwrap();
                for i in 0.. {
                    let Ok((sock, _)) = listener.accept().await else {
                        return;
                    };
                    let act = acts[i.min(acts.len() - 1)].clone();
                    tokio::spawn(async move {
                        let _ = play(sock, act).await;
                    });
                }
            });
        });
        Peer {
            addr: rx.recv().unwrap(),
            _thread: thread,
        }
    }
}

/// Upgrade, wait for the client's first frame bytes, play `act`, then read to EOF (the
/// client answers the close and hangs up).
async fn play(mut sock: tokio::net::TcpStream, act: Act) -> std::io::Result<()> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let end = loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break end;
        }
        let n = sock.read(&mut chunk).await?;
        if n == 0 {
            return Ok(());
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..end]).into_owned();
    let key = head
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.trim()
                .eq_ignore_ascii_case("sec-websocket-key")
                .then(|| v.trim().to_string())
        })
        .unwrap_or_default();
    let answer = format!(
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Accept: {}\r\n\r\n",
        accept_key(&key)
    );
    sock.write_all(answer.as_bytes()).await?;
    if buf.len() == end + 4 && sock.read(&mut chunk).await? == 0 {
        return Ok(());
    }
    match act {
        Act::Close1013 => {
            sock.write_all(&frame(0x8, &close(1013, "try again later")))
                .await?
        }
        Act::Error(ev) => {
            sock.write_all(&frame(0x1, ev.to_string().as_bytes()))
                .await?;
            sock.write_all(&frame(0x8, &close(1000, ""))).await?;
        }
    }
    while sock.read(&mut chunk).await? > 0 {}
    Ok(())
}

/// An unmasked final server frame.
fn frame(opcode: u8, payload: &[u8]) -> Vec<u8> {
    let mut f = vec![0x80 | opcode];
    match payload.len() {
        n @ 0..=125 => f.push(n as u8),
        n => {
            f.push(126);
            f.extend_from_slice(&(n as u16).to_be_bytes());
        }
    }
    f.extend_from_slice(payload);
    f
}

fn close(code: u16, reason: &str) -> Vec<u8> {
    let mut p = code.to_be_bytes().to_vec();
    p.extend_from_slice(reason.as_bytes());
    p
}

/// `Sec-WebSocket-Accept` for `key` (RFC 6455 §4.2.2).
fn accept_key(key: &str) -> String {
    use sha1::Digest as _;
    let mut h = sha1::Sha1::new();
    h.update(key.as_bytes());
    h.update(b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11");
    base64::engine::general_purpose::STANDARD.encode(h.finalize())
}

/// A video scenario of `samples` sessions one at a time against `addr`; `extra` is
/// appended (more `[load]` keys first, then any table).
fn video_at(addr: std::net::SocketAddr, samples: usize, extra: &str) -> Fixture {
    Fixture::new(&format!(
        "name = \"outcomes\"\n[target]\nurl = \"ws://{addr}/v1/realtime/video\"\n\
         [workload]\nkind = \"video-cadence\"\nnum_chunks = 2\nwarmup_chunks = 1\n\
         first_chunk_timeout = 30.0\nchunk_timeout = 30.0\n\
         [load]\nsamples = {samples}\nmax_concurrency = 1\n{extra}"
    ))
}

const COUNTS_2_2: &str = "2 good, 0 degraded, 2 rejected, 0 failed";

#[test]
fn refused_upgrades_are_rejected_and_every_output_counts_them_alike() {
    let script = Script::Video {
        chunks: 2,
        first_after: Duration::from_millis(5),
        every: Duration::from_millis(5),
    };
    // The first two upgrades are answered 429 (Retry-After: 0), the next two served.
    let server = RawServer::start_refusing(script, 2);
    let fx = video_at(
        server.addr,
        4,
        "[thresholds]\nrejected = \"== 2\"\nrejected_ratio = \"== 0.5\"\ngood = \"== 2\"\n\
         degraded = \"== 0\"\ndegraded_ratio = \"== 0\"\n",
    );
    let json = fx.dir.path().join("out.json");
    let mut child = rtload()
        .arg("run")
        .arg(&fx.path)
        .args([
            "--quiet",
            "--metrics-addr",
            "127.0.0.1:0",
            "--metrics-linger",
            "3600",
        ])
        .arg("--output-json")
        .arg(&json)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let seen = stderr_until(&mut lines, "serving the final values");
    let prom = http_get(
        &format!("http://{}/metrics", announced(&seen)),
        Duration::from_secs(30),
    )
    .unwrap();
    interrupt(&child);
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    // A refused session is still a session the server did not serve: the run fails.
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{seen}");
    assert_eq!(server.requests(), 4);

    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let rt = &doc["rtload"];
    let o = &rt["outcomes"];
    assert_eq!(
        (&o["good"], &o["degraded"], &o["rejected"], &o["failed"]),
        (&json!(2), &json!(0), &json!(2), &json!(0)),
        "{o:#}"
    );
    let classes: Vec<&str> = o["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["class"].as_str().unwrap())
        .collect();
    assert_eq!(classes, ["rejected", "rejected", "good", "good"]);
    assert_eq!(rt["failures_by_kind"], json!({"handshake": 2}));
    for t in rt["thresholds"].as_array().unwrap() {
        assert_eq!(t["passed"], true, "{t}");
    }
    assert_eq!(rt["metrics"]["rejected_ratio"], 0.5);

    // The terminal verdict line.
    assert!(
        stdout.contains(&format!("; sessions: {COUNTS_2_2}")),
        "{stdout}"
    );
    // Prometheus, after the run: the result's own counts.
    for (class, n) in [
        ("good", 2.0),
        ("degraded", 0.0),
        ("rejected", 2.0),
        ("failed", 0.0),
    ] {
        let series = format!("rtload_sessions_outcome{{phase=\"measured\",class=\"{class}\"}}");
        assert_eq!(value(&prom, &series), n, "{class}\n{prom}");
    }
    // The HTML report of the same result.
    let html = fx.dir.path().join("out.html");
    let report = rtload()
        .args(["report"])
        .arg(&json)
        .arg("--html")
        .arg(&html)
        .output()
        .unwrap();
    assert_eq!(report.status.code(), Some(0), "{report:?}");
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains(&format!("sessions: {COUNTS_2_2}")),
        "no counts in the page"
    );
}

#[test]
fn a_1013_close_and_a_capacity_error_event_are_rejected_other_errors_fail() {
    let peer = Peer::start(vec![
        Act::Close1013,
        Act::Error(
            json!({"type": "error", "message": "duplex_session_capacity_exhausted: limit=1"}),
        ),
        Act::Error(json!({"type": "error", "message": "boom"})),
    ]);
    let fx = video_at(
        peer.addr,
        3,
        "reject_patterns = [{ message = \"capacity_exhausted\" }]\n\
         [thresholds]\nrejected = \"== 2\"\n",
    );
    let s = fx.run();
    assert_eq!(s.outcomes.rejected, 2, "{:?}", s.failures);
    assert_eq!(s.outcomes.failed, 1, "{:?}", s.failures);
    assert_eq!(s.outcomes.good, 0);
    assert_eq!(
        s.failures_by_kind.get("rejected"),
        Some(&1),
        "{:?}",
        s.failures_by_kind
    );
    assert!(s.verdicts.iter().all(|v| v.passed), "{:?}", s.verdicts);

    // Without the pattern the capacity error is a plain server error.
    let peer = Peer::start(vec![Act::Error(
        json!({"type": "error", "message": "duplex_session_capacity_exhausted: limit=1"}),
    )]);
    let s = video_at(peer.addr, 1, "").run();
    assert_eq!((s.outcomes.failed, s.outcomes.rejected), (1, 0));
}

#[test]
fn vllm_omnis_capacity_error_is_rejected_by_the_omni_defaults() {
    // What vllm-omni 0.30.0 sends for a session.update beyond max_sessions.
    let full = json!({"type": "error", "error": {"type": "rate_limit_error",
        "code": "resource_exhausted",
        "message": "duplex_session_capacity_exhausted: limit=1"}});
    let peer = Peer::start(vec![Act::Error(full)]);
    let prelude = format!("[target]\nurl = \"ws://{}/v1/realtime\"\n", peer.addr);
    let fx = duplex(&Opts {
        samples: 2,
        max_concurrency: 1,
        prelude: &prelude,
        ..Opts::default()
    });
    let s = fx.run();
    assert_eq!(s.outcomes.rejected, 2, "{:?}", s.failures);
    assert_eq!(
        s.failures_by_kind.get("server_error"),
        Some(&2),
        "{:?}",
        s.failures_by_kind
    );
}

#[test]
fn audio_slower_than_real_time_breaks_the_stall_slo_and_is_degraded() {
    // Each 50 ms delta is sent 150 ms after the previous one: every session's listener
    // runs dry (see `listener.rs`), so each completed session breaks `stall_count == 0`.
    let slo = "[slo]\nstall_count = \"== 0\"\n\
               [thresholds]\ndegraded = \"== 2\"\ndegraded_ratio = \"== 1\"\ngood = \"== 0\"\n";
    let fx = duplex(&Opts {
        samples: 2,
        max_concurrency: 2,
        server: "audio_deltas = 4\nrtf = 3.0",
        prelude: slo,
        ..Opts::default()
    });
    let s = fx.run();
    assert!(s.failures.is_empty(), "{:?}", s.failures);
    assert_eq!(s.outcomes.degraded, 2, "{:?}", s.outcomes);
    assert!(s.verdicts.iter().all(|v| v.passed), "{:?}", s.verdicts);
    // Degraded sessions completed: the run passes on its sessions.
    assert!(s.passed());
}

#[test]
fn an_unknown_slo_metric_is_a_positioned_error() {
    let fx = Fixture::new("[workload]\nkind = \"video-cadence\"\n[slo]\nstall_cont = \"== 0\"\n");
    let out = rtload().arg("check").arg(&fx.path).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("scenario.toml:4:"), "{stderr}");
    assert!(
        stderr.contains("unknown metric `stall_cont` in [slo]"),
        "{stderr}"
    );
    assert!(stderr.contains("stall_count"), "{stderr}");
}

#[test]
fn check_prints_the_slo_and_refuses_an_empty_reject_pattern() {
    let fx = Fixture::new("[workload]\nkind = \"video-cadence\"\n[slo]\nstall_count = \"== 0\"\n");
    let out = rtload().arg("check").arg(&fx.path).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.contains("a completed session breaking one is degraded"),
        "{stdout}"
    );
    assert!(stdout.contains("stall_count"), "{stdout}");

    let fx = Fixture::new(
        "[workload]\nkind = \"video-cadence\"\n[load]\nreject_patterns = [{ code = \"\" }]\n",
    );
    let out = rtload().arg("check").arg(&fx.path).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("scenario.toml:4:"), "{stderr}");
    assert!(
        stderr.contains("needs a non-empty `code` or `message`"),
        "{stderr}"
    );
}
