//! Test harness: write a scenario into a temp dir, run it in-process through the real
//! engine and embedded server, and read the results.

use std::path::PathBuf;

use rtload::RunSummary;
use rtload::scenario::{self, Overrides, Scenario};

/// A scenario file in its own temp dir.
pub struct Fixture {
    pub dir: tempfile::TempDir,
    pub path: PathBuf,
}

impl Fixture {
    pub fn new(toml: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("scenario.toml");
        std::fs::write(&path, toml).unwrap();
        Self { dir, path }
    }

    pub fn scenario(&self) -> Scenario {
        scenario::load(&self.path, &Overrides::default()).unwrap_or_else(|e| {
            panic!(
                "scenario invalid: {}",
                e.iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join("\n")
            )
        })
    }

    pub fn run(&self) -> RunSummary {
        rtload::run(&self.scenario(), Box::new(std::io::sink())).expect("run")
    }
}

/// A small, fast video scenario against the embedded server; `extra` is appended.
/// `extra` holds `[server.video]` keys (which replace the fast defaults below) and may
/// open further tables such as `[server.video.faults]`.
pub fn video(chunks: u32, samples: usize, extra: &str) -> Fixture {
    video_with_load(chunks, samples, "", extra)
}

/// [`video`] for a capacity search: its steps judge a send lateness p99 past 1 s, not
/// 5 ms, as generator-bound. A debug build beside other tests on a 2-core machine reached
/// 8 ms once (CI), and the step was judged inconclusive; what these tests check is the
/// search, not the generator's lateness.
pub fn video_searched(chunks: u32, samples: usize, extra: &str) -> Fixture {
    video_with_load(chunks, samples, "generator_bound_ms = 1000\n", extra)
}

/// [`video`] with `load` lines added to its `[load]` table.
fn video_with_load(chunks: u32, samples: usize, load: &str, extra: &str) -> Fixture {
    let defaults: String = [
        ("first_chunk_ms", "20"),
        ("chunk_interval_ms", "5"),
        ("ramp_chunks", "0"),
    ]
    .iter()
    .filter(|(k, _)| !extra.lines().any(|l| l.trim_start().starts_with(k)))
    .map(|(k, v)| format!("{k} = {v}\n"))
    .collect();
    Fixture::new(&format!(
        r#"
name = "t"
[workload]
kind = "video-cadence"
num_chunks = {chunks}
warmup_chunks = 1
first_chunk_timeout = 30.0
chunk_timeout = 30.0
[load]
samples = {samples}
max_concurrency = {samples}
{load}[server.video]
{defaults}
{extra}
"#
    ))
}

/// Per-sample rows of the `rtload` block of a JSON result.
pub fn sample_rows(summary: &RunSummary) -> Vec<serde_json::Value> {
    summary.report.to_json()["rtload"]["samples"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// The failure messages of a run.
pub fn failure_messages(summary: &RunSummary) -> Vec<String> {
    summary.failures.iter().map(|(_, m)| m.clone()).collect()
}

/// The `rtload` binary under test.
pub fn rtload() -> std::process::Command {
    std::process::Command::new(env!("CARGO_BIN_EXE_rtload"))
}

/// `rtload serve --port 0` plus `args`; waits for the address it announces on stderr
/// (`ws://` or `wss://` per `scheme`) and returns the child and that host:port.
pub fn serve(args: &[&std::ffi::OsStr], scheme: &str) -> (std::process::Child, String) {
    let mut child = rtload()
        .args(["serve", "--port", "0"])
        .args(args)
        .stderr(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stderr.take().unwrap()),
        &mut line,
    )
    .unwrap();
    let addr = line
        .split(&format!("{scheme}://"))
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .unwrap_or_else(|| panic!("no {scheme}:// address announced: {line}"))
        .to_string();
    (child, addr)
}

/// A bare TCP listener on 127.0.0.1 standing in for a server: it records one upgrade
/// request and refuses it with a 403, so the client's session fails.
pub struct RefusingListener {
    /// Where it listens.
    pub addr: std::net::SocketAddr,
    thread: std::thread::JoinHandle<String>,
}

impl RefusingListener {
    /// Listen on a free port and wait for one connection in the background.
    pub fn start() -> Self {
        use std::io::{Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let thread = std::thread::spawn(move || {
            let (mut conn, _) = listener.accept().unwrap();
            let mut req = Vec::new();
            let mut buf = [0u8; 4096];
            while !req.windows(4).any(|w| w == b"\r\n\r\n") {
                match conn.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => req.extend_from_slice(&buf[..n]),
                }
            }
            let _ = conn.write_all(b"HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\n\r\n");
            String::from_utf8_lossy(&req).into_owned()
        });
        Self { addr, thread }
    }

    /// The request it received (empty when the client never connected: the accept is
    /// unblocked by a connection of our own so the caller's assertion reports it).
    pub fn request(self) -> String {
        if !self.thread.is_finished() {
            let _ = std::net::TcpStream::connect(self.addr);
        }
        self.thread.join().unwrap()
    }
}

/// The Python interpreter of the independent test peers (`scripts/test` builds its venv
/// from `scripts/test-requirements.txt` and exports `RTLOAD_TEST_PYTHON`). A missing
/// interpreter fails the test with the fix: the tests never skip silently.
#[allow(dead_code)]
pub fn python() -> PathBuf {
    let p = std::env::var_os("RTLOAD_TEST_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/pytest-venv/bin/python")
        });
    assert!(
        p.exists(),
        "{} missing: run the tests with scripts/test, which installs the Python test peers \
         (scripts/test-requirements.txt)",
        p.display()
    );
    p
}

/// `GET http://HOST:PORT/PATH` with HTTP/1.0 (the server closes after answering): the
/// body of a 200, else an error naming the status line. The tests' own client, so a
/// scrape checks rtload's `/metrics` endpoints with code they do not share.
pub fn http_get(url: &str, timeout: std::time::Duration) -> Result<String, String> {
    use std::io::{Read, Write};
    let rest = url.strip_prefix("http://").ok_or("not an http:// URL")?;
    let (host, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let path = if path.is_empty() { "/" } else { path };
    let addr: std::net::SocketAddr = host.parse().map_err(|e| format!("{host}: {e}"))?;
    let mut conn =
        std::net::TcpStream::connect_timeout(&addr, timeout).map_err(|e| e.to_string())?;
    conn.set_read_timeout(Some(timeout))
        .map_err(|e| e.to_string())?;
    conn.write_all(format!("GET {path} HTTP/1.0\r\nHost: {host}\r\n\r\n").as_bytes())
        .map_err(|e| e.to_string())?;
    let mut answer = String::new();
    conn.read_to_string(&mut answer)
        .map_err(|e| e.to_string())?;
    let (head, body) = answer.split_once("\r\n\r\n").ok_or("no end of headers")?;
    let status = head.lines().next().unwrap_or_default();
    match status.split(' ').nth(1) {
        Some("200") => Ok(body.to_string()),
        _ => Err(format!("answered {status:?}")),
    }
}

/// The samples of a Prometheus text exposition: each series (name plus labels exactly
/// as written) with its value; comments and blank lines skipped, a timestamp ignored.
pub fn prom_samples(text: &str) -> Vec<(String, f64)> {
    let mut out = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        // Label values may hold spaces: a series with labels ends at its closing brace.
        let split = match (line.find('{'), line.find(' ')) {
            (Some(brace), Some(space)) if brace < space => line.rfind('}').map(|c| c + 1),
            (_, space) => space,
        };
        let Some(at) = split else { continue };
        let (series, rest) = line.split_at(at);
        let Some(value) = rest.split_whitespace().next() else {
            continue;
        };
        let v = match value {
            "+Inf" => f64::INFINITY,
            "-Inf" => f64::NEG_INFINITY,
            "NaN" => f64::NAN,
            v => match v.parse() {
                Ok(v) => v,
                Err(_) => continue,
            },
        };
        out.push((series.to_string(), v));
    }
    out
}

/// Writes the test dataset of `kind` into `dir` as `rtload dataset synth --kind KIND`
/// does; what it says it wrote, line by line.
pub fn synth_dataset(
    kind: &str,
    dir: &std::path::Path,
    opts: &rtload::dataset::SynthOptions,
) -> Vec<String> {
    let synth = rtload::dataset::datasets()
        .into_iter()
        .find(|d| d.name == kind)
        .unwrap_or_else(|| panic!("no dataset kind {kind}"));
    (synth.write)(dir, opts).unwrap_or_else(|e| panic!("synth {kind}: {e}"))
}

/// The options `rtload dataset synth` uses when given no flags (its `--help` defaults).
pub fn synth_defaults() -> rtload::dataset::SynthOptions {
    rtload::dataset::SynthOptions {
        seed: 0,
        tar: false,
        mp4: false,
        cases_per_subset: 1,
        duration_ms: 3_000,
        files: 3,
        words: 6,
        words_per_second: 2.5,
        sample_rate: 16_000,
    }
}

/// `rtload run SCENARIO ARGS --output-json JSON`: the exit code, the JSON result (`Null`
/// when none was written) and stdout + stderr.
pub fn run_json(
    scenario: &std::path::Path,
    args: &[&str],
    json: &std::path::Path,
) -> (Option<i32>, serde_json::Value, String) {
    let out = rtload()
        .arg("run")
        .arg(scenario)
        .args(args)
        .arg("--output-json")
        .arg(json)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let v = std::fs::read_to_string(json).map_or(serde_json::Value::Null, |t| {
        serde_json::from_str(&t).unwrap()
    });
    (out.status.code(), v, text)
}
