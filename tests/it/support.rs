//! Test harness: write a scenario into a temp dir, run it in-process through the real
//! engine and embedded server, and read the results.

use std::path::PathBuf;

use rtload::config::scenario::{self, Overrides, Scenario};
use rtload::runner::{self, RunSummary};

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
        runner::run(&self.scenario(), Box::new(std::io::sink())).expect("run")
    }
}

/// A small, fast video scenario against the embedded server; `extra` is appended.
/// `extra` holds `[server.video]` keys (which replace the fast defaults below) and may
/// open further tables such as `[server.video.faults]`.
pub fn video(chunks: u32, samples: usize, extra: &str) -> Fixture {
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
[server.video]
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
