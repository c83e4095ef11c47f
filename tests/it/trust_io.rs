//! Trust under faults, IO side (issue 11): graceful interruption, frame-size limits from
//! the header, clear transport messages, `RUST_LOG`.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::Stdio;

use rtload::server::{EmbeddedServer, ServerConfig};

use crate::support::{Fixture, rtload, video};

/// A raw WebSocket peer on 127.0.0.1: completes the upgrade by hand, then runs `script`
/// on each connection (so tests can send what no real server would).
fn raw_server(script: fn(&mut TcpStream)) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for conn in listener.incoming().take(8) {
            let Ok(mut conn) = conn else { return };
            std::thread::spawn(move || script(&mut conn));
        }
    });
    port
}

/// Read the request head; return the Sec-WebSocket-Key if it is an upgrade.
fn read_head(conn: &mut TcpStream) -> Option<String> {
    let mut reader = BufReader::new(conn.try_clone().unwrap());
    let mut key = None;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return key;
        }
        if let Some((k, v)) = line.split_once(':')
            && k.eq_ignore_ascii_case("sec-websocket-key")
        {
            key = Some(v.trim().to_string());
        }
        if line == "\r\n" {
            return key;
        }
    }
}

fn upgrade(conn: &mut TcpStream) {
    let key = read_head(conn).expect("an upgrade request");
    let accept = actix_http::ws::hash_key(key.as_bytes());
    write!(
        conn,
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: {}\r\n\r\n",
        String::from_utf8_lossy(&accept)
    )
    .unwrap();
}

/// Keep the connection until the client goes away (bounded by the client's timeouts).
fn drain(conn: &mut TcpStream) {
    let mut buf = [0u8; 4096];
    while matches!(conn.read(&mut buf), Ok(n) if n > 0) {}
}

fn scenario_against(port: u16, target_extra: &str) -> Fixture {
    Fixture::new(&format!(
        r#"
name = "t"
[target]
url = "ws://127.0.0.1:{port}/v1/realtime/video"
{target_extra}
[workload]
kind = "video-cadence"
num_chunks = 3
first_chunk_timeout = 30.0
chunk_timeout = 30.0
[load]
samples = 1
"#
    ))
}

fn only_failure(fx: &Fixture) -> String {
    let summary = fx.run();
    assert_eq!(summary.failures.len(), 1, "{:?}", summary.failures);
    summary.failures[0].1.clone()
}

#[test]
fn a_huge_frame_fails_from_its_header_without_buffering_it() {
    let port = raw_server(|c| {
        upgrade(c);
        // A binary frame announcing 1 GiB, then only a little of it.
        let mut head = vec![0x82, 127];
        head.extend_from_slice(&(1u64 << 30).to_be_bytes());
        c.write_all(&head).unwrap();
        c.write_all(&[0u8; 1024]).unwrap();
        drain(c);
    });
    let msg = only_failure(&scenario_against(port, ""));
    assert!(
        msg.contains("frame of 1073741824 bytes exceeds max_frame_bytes (67108864)"),
        "{msg}"
    );
}

#[test]
fn a_message_assembled_from_continuations_is_bounded_too() {
    let port = raw_server(|c| {
        upgrade(c);
        let mut frames = vec![0x02, 126, 0x02, 0x58]; // binary, not final, 600 bytes
        frames.extend_from_slice(&[1u8; 600]);
        frames.extend_from_slice(&[0x80, 126, 0x02, 0x58]); // final continuation, 600
        c.write_all(&frames).unwrap();
        drain(c);
    });
    let msg = only_failure(&scenario_against(port, "max_frame_bytes = 1000"));
    assert!(
        msg.contains(
            "message of at least 1200 bytes (continuation frames) exceeds max_frame_bytes (1000)"
        ),
        "{msg}"
    );
}

#[test]
fn a_refused_upgrade_says_the_status_and_the_body() {
    let port = raw_server(|c| {
        read_head(c);
        let body = r#"{"error":"bad api key"}"#;
        let _ = write!(
            c,
            "HTTP/1.1 401 Unauthorized\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
    });
    let msg = only_failure(&scenario_against(port, ""));
    assert!(msg.contains("HTTP 401 Unauthorized"), "{msg}");
    assert!(msg.contains("bad api key"), "{msg}");
    assert!(!msg.contains("Invalid response status"), "{msg}");
}

#[test]
fn a_private_close_code_with_a_non_utf8_reason_is_reported_as_a_close() {
    let port = raw_server(|c| {
        upgrade(c);
        c.write_all(&[0x88, 4, 0x13, 0x87, 0xff, 0xfe]).unwrap(); // close 4999, bad UTF-8
        drain(c);
    });
    let msg = only_failure(&scenario_against(port, ""));
    assert!(!msg.contains("Bad opcode"), "{msg}");
}

#[test]
fn rust_log_reaches_an_installed_subscriber() {
    let fx = video(2, 1, "");
    let out = rtload()
        .arg("run")
        .arg(&fx.path)
        .arg("--quiet")
        .env("RUST_LOG", "rtload=debug")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("run starting"), "{stderr}");
}

#[test]
fn sigint_stops_releasing_reports_completed_sessions_and_exits_130() {
    // Sessions of ~4 s, one at a time: session 1's first chunk proves session 0 is done.
    let fx = video(20, 3, "chunk_interval_ms = 200");
    let json = fx.dir.path().join("out.json");
    let mut child = rtload()
        .arg("run")
        .arg(&fx.path)
        .args(["--max-concurrency", "1", "--print-chunks", "--quiet"])
        .args(["--grace-period", "0", "--output-json"])
        .arg(&json)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    let mut seen = false;
    let mut lines = stdout.lines();
    for line in lines.by_ref() {
        if line.unwrap().contains("session  1  chunk") {
            seen = true;
            break;
        }
    }
    assert!(seen, "the second session never streamed");
    let killed = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    for _ in lines {} // drain so the child never blocks on a full pipe
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("interrupted"), "{stderr}");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(doc["interrupted"], true);
    let rows = doc["rtload"]["samples"].as_array().unwrap();
    assert_eq!(rows.len(), 2, "session 2 never started: {rows:?}");
    assert!(rows.iter().any(|r| r["error"].is_null()), "{rows:?}");
    assert!(
        rows.iter().any(|r| r["error"]
            .as_str()
            .is_some_and(|e| e.starts_with("interrupted"))),
        "{rows:?}"
    );
    assert!(json.with_extension("hlog").is_file());
    // The cancelled session is not a failed session of the video report.
    assert_eq!(doc["rtload"]["failed_sessions"], 0, "{doc}");
    assert_eq!(doc["rtload"]["interrupted_sessions"], 1, "{doc}");
    assert_eq!(doc["config"]["sessions"], 2, "{doc}");
}

/// `sh -c` with an open-file limit, then `rtload run`.
fn run_with_ulimit(ulimit: &str, fx: &Fixture) -> std::process::Output {
    std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit {ulimit} && exec \"$0\" run \"$1\" --quiet"))
        .arg(env!("CARGO_BIN_EXE_rtload"))
        .arg(&fx.path)
        .output()
        .unwrap()
}

#[test]
fn a_low_soft_fd_limit_is_raised_to_the_hard_limit() {
    // 40 concurrent video sessions with the embedded server need ~144 descriptors.
    let out = run_with_ulimit("-Sn 64", &video(2, 40, ""));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
}

#[test]
fn a_concurrency_that_cannot_fit_the_hard_fd_limit_exits_2_before_the_run() {
    let out = run_with_ulimit("-n 64", &video(2, 40, ""));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        // Per session: its socket and the embedded server's side (video keeps no file
        // open per session), plus the reserve of 64.
        stderr.contains("max_concurrency 40 needs about 144 open files"),
        "{stderr}"
    );
    assert!(stderr.contains("ulimit -n 144"), "{stderr}");
}

#[test]
fn a_locked_output_dir_names_the_holder_and_lock_timeout_fails_fast() {
    let fx = crate::duplex_support::duplex(&crate::duplex_support::Opts::default());
    // Held the way another rtload run holds it, written here rather than borrowed: an
    // exclusive flock on the output root's lock file, which names its holder.
    let root = crate::duplex_support::out_dir(&fx);
    std::fs::create_dir_all(&root).unwrap();
    let mut held = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(root.join(".omniinteract.lock"))
        .unwrap();
    held.try_lock().expect("the lock is free before the run");
    writeln!(
        held,
        "pid {} (the test, holding the lock)",
        std::process::id()
    )
    .unwrap();
    let out = rtload()
        .arg("run")
        .arg(&fx.path)
        .args(["--quiet", "--lock-timeout", "0.2"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    let holder = format!("held by pid {}", std::process::id());
    assert!(stderr.contains("waiting for the output lock"), "{stderr}");
    assert!(stderr.contains(&holder), "{stderr}");
    assert!(
        stderr.contains("gave up after 0.2 s (--lock-timeout)"),
        "{stderr}"
    );
}

/// The kill-safety invariant: the manifest and batch summary list only complete
/// bundles. Returns how many complete bundles (`.done` plus every success file) exist.
fn assert_lists_only_complete_bundles(root: &std::path::Path) -> usize {
    use crate::duplex_support::case_dirs;
    const FILES: [&str; 5] = [
        "output.wav",
        "wav_transcript.json",
        "events.json",
        "result.json",
        ".done",
    ];
    let complete = |dir: &std::path::Path| FILES.iter().all(|f| dir.join(f).is_file());
    if let Ok(text) = std::fs::read_to_string(root.join("official_eval_manifest.jsonl")) {
        for line in text.lines() {
            let entry: serde_json::Value = serde_json::from_str(line).unwrap();
            let model = std::path::Path::new(entry["model_json"].as_str().unwrap());
            assert!(complete(model.parent().unwrap()), "manifest lists {line}");
        }
    }
    if let Ok(text) = std::fs::read_to_string(root.join("batch_summary.json")) {
        let batch: serde_json::Value = serde_json::from_str(&text).unwrap();
        for r in batch["results"].as_array().unwrap() {
            if r["success"] == true {
                let dir = std::path::Path::new(r["output_dir"].as_str().unwrap());
                assert!(complete(dir), "batch summary lists {r}");
            }
        }
    }
    case_dirs(root).iter().filter(|d| complete(&d.path)).count()
}

#[test]
fn sigkill_never_loses_complete_bundles_or_lists_incomplete_ones() {
    use crate::duplex_support::{Opts, duplex, out_dir};
    // Sessions of 6 s: the first plain progress line (at 5 s) comes mid-run, after the
    // start-of-run clearing step.
    let fx = duplex(&Opts {
        duration_ms: 6000,
        ..Opts::default()
    });
    let root = out_dir(&fx);
    let first = rtload()
        .arg("run")
        .arg(&fx.path)
        .arg("--quiet")
        .output()
        .unwrap();
    assert_eq!(
        first.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    let before = assert_lists_only_complete_bundles(&root);
    assert_eq!(before, 3);
    // Kill points set by the run's own output: at once, and at its first progress line.
    for wait_for_progress in [false, true] {
        let mut child = rtload()
            .arg("run")
            .arg(&fx.path)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = BufReader::new(child.stderr.take().unwrap());
        if wait_for_progress {
            let seen = stderr
                .lines()
                .map_while(Result::ok)
                .any(|l| l.contains("in flight"));
            assert!(seen, "no progress line");
        }
        let _ = child.kill();
        let _ = child.wait();
        let after = assert_lists_only_complete_bundles(&root);
        assert!(
            after >= before,
            "kill (after progress: {wait_for_progress}): {after} complete bundles, {before} before"
        );
    }
    // The next run completes and leaves no temp or staging files behind.
    let last = rtload()
        .arg("run")
        .arg(&fx.path)
        .arg("--quiet")
        .output()
        .unwrap();
    assert_eq!(
        last.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&last.stderr)
    );
    assert_eq!(assert_lists_only_complete_bundles(&root), 3);
    let mut stack = vec![root.clone()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            assert!(
                !name.ends_with(".tmp") && !name.ends_with(".stage"),
                "leftover {}",
                e.path().display()
            );
            if e.path().is_dir() {
                stack.push(e.path());
            }
        }
    }
}

#[test]
fn the_embedded_server_drops_a_huge_frame_from_its_header() {
    // The default limit (64 MiB) against a 1 GiB header on the video endpoint.
    server_drops_an_oversized_frame(ServerConfig::default(), "/v1/realtime/video", 1 << 30);
}

#[test]
fn the_embedded_servers_frame_limit_is_configurable() {
    // `[server] max_frame_bytes = 1000` against a 2,000-byte frame on the transcription
    // endpoint: refused from the header although the default would take it.
    let cfg = ServerConfig {
        max_frame_bytes: 1000,
        ..Default::default()
    };
    server_drops_an_oversized_frame(cfg, "/v1/realtime", 2000);
}

/// Upgrade on `path`, send a masked binary frame header announcing `announced` bytes and
/// 1 KiB of it, and expect the server to end the connection instead of waiting for the rest.
fn server_drops_an_oversized_frame(cfg: ServerConfig, path: &str, announced: u64) {
    let srv = EmbeddedServer::start(std::net::SocketAddr::from(([127, 0, 0, 1], 0)), cfg).unwrap();
    let mut c = TcpStream::connect(srv.addr()).unwrap();
    c.set_read_timeout(Some(std::time::Duration::from_secs(60)))
        .unwrap();
    write!(
        c,
        "GET {path} HTTP/1.1\r\nHost: {}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
        srv.addr()
    )
    .unwrap();
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        c.read_exact(&mut byte).unwrap();
        head.push(byte[0]);
    }
    assert!(
        head.starts_with(b"HTTP/1.1 101"),
        "{}",
        String::from_utf8_lossy(&head)
    );
    // A masked binary frame announcing `announced` bytes, then only 1 KiB of it.
    let mut frame = vec![0x82, 0x80 | 127];
    frame.extend_from_slice(&announced.to_be_bytes());
    frame.extend_from_slice(&[9, 9, 9, 9]);
    frame.extend_from_slice(&[0u8; 1024]);
    c.write_all(&frame).unwrap();
    // The server ends the connection instead of waiting for the rest.
    let mut buf = [0u8; 4096];
    loop {
        match c.read(&mut buf) {
            Ok(0) => break,
            Ok(_) => continue, // a close frame, perhaps
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => break,
            Err(e) => panic!("the server kept the connection open: {e}"),
        }
    }
    srv.stop();
}

/// Under an address-space limit (`prlimit --as`, as `ulimit -v` sets) glibc's per-thread
/// malloc arenas would reserve most of it untouched; `rtload run` starts itself again
/// with `MALLOC_ARENA_MAX=2`, says so, and the run passes inside a limit smaller than what
/// its arenas may reserve (8 per core × 64 MiB). Without a limit nothing is said.
#[test]
fn an_address_space_limit_caps_malloc_arenas_and_says_so() {
    let fx = video(3, 2, "");
    let limited = std::process::Command::new("prlimit")
        .arg(format!("--as={}", 512u64 << 20))
        .arg(env!("CARGO_BIN_EXE_rtload"))
        .arg("run")
        .arg(&fx.path)
        .env_remove("MALLOC_ARENA_MAX")
        .output()
        .expect("prlimit (util-linux) runs");
    let err = String::from_utf8_lossy(&limited.stderr);
    assert_eq!(limited.status.code(), Some(0), "{err}");
    assert!(
        err.contains("address-space limit of 512 MiB")
            && err.contains("malloc arenas capped at 2 (MALLOC_ARENA_MAX)"),
        "{err}"
    );
    let free = rtload()
        .arg("run")
        .arg(&fx.path)
        .env_remove("MALLOC_ARENA_MAX")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&free.stderr);
    assert_eq!(free.status.code(), Some(0), "{err}");
    assert!(!err.contains("address-space"), "{err}");
}
