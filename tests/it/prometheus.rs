//! Prometheus text as real scrapers read it: `rtload run --metrics-addr` keeps serving the
//! run's final values for `--metrics-linger` after the report (Ctrl-C ends the wait,
//! the exit status stays the run's), those values are the JSON result's own numbers, and
//! both rtload's and `rtload serve`'s `/metrics` pass `promtool check metrics` (Debian's
//! `prometheus` package, installed by `scripts/test`). `rtload serve`'s endpoint counts
//! connections and sessions on all four endpoints, opened here by a Python `websockets`
//! client (a peer we did not write).

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Stdio};
use std::time::Duration;

use crate::support::{Fixture, http_get, prom_samples, python, rtload, serve, video};

/// `promtool check metrics` on `text`: its exit code and what it printed.
fn promtool(text: &str) -> (Option<i32>, String) {
    let mut child = std::process::Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| {
            panic!(
                "promtool: {e}; run the tests with scripts/test, which installs it \
                 (apt-get install --no-install-recommends prometheus)"
            )
        });
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code(), said)
}

#[track_caller]
fn assert_promtool_clean(text: &str) {
    let (code, said) = promtool(text);
    assert_eq!(code, Some(0), "promtool check metrics: {said}\n{text}");
}

/// [`assert_promtool_clean`] for an exposition that carries vLLM's own metric names
/// (`vllm:num_requests_running`, …): promtool's linter flags every name with a colon
/// (reserved for recording rules), as it flags a real vLLM's `/metrics`; that one lint
/// on those names is allowed (exit code 3, lint problems only), anything else is not.
#[track_caller]
fn assert_promtool_clean_but_vllm_names(text: &str) {
    let (code, said) = promtool(text);
    let other: Vec<&str> = said
        .lines()
        .filter(|l| {
            !(l.starts_with("vllm:") && l.ends_with(" metric names should not contain ':'"))
        })
        .collect();
    assert!(
        matches!(code, Some(0 | 3)) && other.is_empty(),
        "promtool check metrics ({code:?}): {said}\n{text}"
    );
}

/// The value of exactly `series` (name plus labels as written).
#[track_caller]
pub(crate) fn value(text: &str, series: &str) -> f64 {
    prom_samples(text)
        .into_iter()
        .find(|(s, _)| s == series)
        .unwrap_or_else(|| panic!("no {series} in\n{text}"))
        .1
}

/// Reads `child`'s stderr until a line contains `needle`; every line read so far.
pub(crate) fn stderr_until(
    lines: &mut impl Iterator<Item = std::io::Result<String>>,
    needle: &str,
) -> String {
    let mut seen = String::new();
    for line in lines.by_ref() {
        let line = line.unwrap();
        seen.push_str(&line);
        seen.push('\n');
        if line.contains(needle) {
            return seen;
        }
    }
    panic!("stderr ended before {needle:?}:\n{seen}");
}

/// The address announced on a `live metrics: http://ADDR/metrics` line.
pub(crate) fn announced(seen: &str) -> String {
    seen.lines()
        .find_map(|l| l.strip_prefix("live metrics: http://"))
        .and_then(|r| r.split('/').next())
        .unwrap_or_else(|| panic!("no live metrics address in\n{seen}"))
        .to_string()
}

pub(crate) fn interrupt(child: &Child) {
    let killed = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
}

#[test]
fn metrics_addr_serves_the_final_values_after_the_run_as_the_json_has_them() {
    // Four measured sessions, the second of which fails (an error event after 2 chunks),
    // plus a warm-up: counts and sums of every kind to compare.
    let fx = video(
        6,
        4,
        "[server.video.faults]\nerror_after_chunks = 2\nonly_sessions = [2]\n",
    );
    let json = fx.dir.path().join("out.json");
    let mut child = rtload()
        .arg("run")
        .arg(&fx.path)
        .args(["--num-warmups", "1", "--quiet"])
        .args(["--metrics-addr", "127.0.0.1:0", "--metrics-linger", "3600"])
        .arg("--output-json")
        .arg(&json)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    // Printed after the report and the JSON result: the run is over, the endpoint lingers.
    let seen = stderr_until(&mut lines, "serving the final values");
    assert!(seen.contains("--metrics-linger"), "{seen}");
    let addr = announced(&seen);
    let text = http_get(&format!("http://{addr}/metrics"), Duration::from_secs(30)).unwrap();
    interrupt(&child);
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    let out = child.wait_with_output().unwrap();
    // Ctrl-C ended the linger; the status is the run's (a sample failed: 1), not 130.
    assert_eq!(out.status.code(), Some(1), "{seen}{}", rest.join("\n"));
    assert!(
        !rest.iter().any(|l| l.contains("in-flight sessions get")),
        "no grace-period notice for a run already over: {rest:?}"
    );
    assert_promtool_clean(&text);

    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let r = &doc["rtload"];
    let counts = &r["sample_counts"];
    assert_eq!(counts["failed"], 1, "{counts}");
    let n = |v: &serde_json::Value| v.as_f64().unwrap();
    let measured = "{phase=\"measured\"}";
    assert_eq!(
        value(&text, &format!("rtload_sessions_completed_total{measured}")),
        n(&counts["completed"])
    );
    assert_eq!(
        value(&text, "rtload_sessions_completed_total{phase=\"warmup\"}"),
        n(&counts["warmup"])
    );
    let failed: f64 = prom_samples(&text)
        .iter()
        .filter(|(s, _)| s.starts_with("rtload_sessions_failed_total{phase=\"measured\""))
        .map(|(_, v)| v)
        .sum();
    assert_eq!(failed, n(&counts["failed"]));
    assert_eq!(
        value(&text, &format!("rtload_sessions_active{measured}")),
        0.0
    );
    for (family, block) in [
        ("rtload_queue_wait_seconds", &r["queue_wait"]),
        ("rtload_send_lateness_seconds", &r["send_lateness"]),
    ] {
        let count = value(&text, &format!("{family}_count"));
        assert_eq!(count, n(&block["count"]), "{family}: {block}");
        assert!(count > 0.0, "{family}: {block}");
        // The same values summed: seconds here, a mean in ms there.
        let sum_ms = value(&text, &format!("{family}_sum")) * 1000.0;
        let json_sum_ms = n(&block["mean_ms"]) * n(&block["count"]);
        assert!(
            (sum_ms - json_sum_ms).abs() <= 1e-9 * json_sum_ms.abs().max(1.0),
            "{family}: {sum_ms} ms vs the JSON's {json_sum_ms} ms"
        );
        let inf = value(&text, &format!("{family}_bucket{{le=\"+Inf\"}}"));
        assert_eq!(inf, count, "{family}");
    }
    // Per-sample queue waits, exactly as each row has them.
    let rows_ms: f64 = r["samples"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| n(&s["queue_wait_ms"]))
        .sum();
    let sum_ms = value(&text, "rtload_queue_wait_seconds_sum") * 1000.0;
    assert!(
        (sum_ms - rows_ms).abs() <= 1e-9 * rows_ms.max(1.0),
        "{sum_ms} vs {rows_ms}"
    );
}

#[test]
fn a_zero_linger_stops_serving_with_the_run() {
    let fx = video(3, 1, "");
    let out = rtload()
        .arg("run")
        .arg(&fx.path)
        .args([
            "--quiet",
            "--metrics-addr",
            "127.0.0.1:0",
            "--metrics-linger",
            "0",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let addr = announced(&err);
    assert!(!err.contains("serving the final values"), "{err}");
    // The process has exited: nothing answers there any more.
    assert!(http_get(&format!("http://{addr}/metrics"), Duration::from_secs(5)).is_err());
}

/// Opens one session on each endpoint of the server at `addr` (video `session.start`,
/// duplex `session.update`, a transcription connection, a scripted connection at
/// `/scripted`), waits for each one's first server event, prints `/metrics` while all
/// four are open, then closes them.
const CLIENT: &str = r#"
import asyncio, json, sys, urllib.request
import websockets

addr = sys.argv[1]
opens = [
    ("/v1/realtime/video", {"type": "session.start", "width": 64, "height": 64, "num_frames": 117}),
    ("/v1/realtime?duplex=1", {"type": "session.update", "session": {"model": "m",
        "input_audio_format": "pcm16", "output_audio_format": "pcm16"}}),
    ("/v1/realtime", None),
    ("/scripted", None),
]

async def main():
    conns = []
    for path, first in opens:
        ws = await websockets.connect(f"ws://{addr}{path}", max_size=None)
        if first is not None:
            await ws.send(json.dumps(first))
        await ws.recv()
        conns.append(ws)
    text = await asyncio.to_thread(
        lambda: urllib.request.urlopen(f"http://{addr}/metrics", timeout=30).read().decode())
    sys.stdout.write(text)
    for ws in conns:
        await ws.close()

asyncio.run(main())
"#;

#[test]
fn rtload_serve_counts_every_endpoint_and_passes_promtool() {
    let fx = Fixture::new(
        "[video]\nfirst_chunk_ms = 1\nchunk_interval_ms = 1000\nramp_chunks = 0\n\
         [scripted]\npath = \"/scripted\"\n\
         [[scripted.on_connect]]\nsend = { type = \"hello\" }\n",
    );
    let (mut child, addr) = serve(&["--config".as_ref(), fx.path.as_os_str()], "ws");
    let out = std::process::Command::new(python())
        .args(["-c", CLIENT, &addr])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        out.status.success(),
        "client: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    for ep in ["video", "duplex", "transcription", "scripted_rules"] {
        let l = format!("{{endpoint=\"{ep}\"}}");
        for family in [
            "rtload_server_websocket_connections_active",
            "rtload_server_websocket_connections_total",
            "rtload_server_sessions_started_total",
        ] {
            assert_eq!(
                value(&text, &format!("{family}{l}")),
                1.0,
                "{family}{l}\n{text}"
            );
        }
    }
    assert_eq!(value(&text, "vllm:num_requests_running"), 4.0, "{text}");
    assert_eq!(value(&text, "vllm:num_requests_waiting"), 0.0, "{text}");
    assert_promtool_clean_but_vllm_names(&text);
}
