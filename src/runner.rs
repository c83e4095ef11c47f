//! Glue between a [`Scenario`] and a finished run: resolve the target (or start the
//! embedded server), compute the arrival plan, run the engine, build the workload's
//! report and publish the JSON result. The CLI calls this; so do the integration tests.
//!
//! This is the only client-side module that knows the embedded server exists.

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;

use crate::config::scenario::{Scenario, ScenarioError};
use crate::engine::{self, EngineConfig, EngineError};
use crate::server::{EmbeddedServer, ServerConfig};
use crate::util::target::{redact_url, resolve_url};
use crate::workload::{Report, RunRecord};

/// A run that could not happen (as opposed to samples that failed, which are results).
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The scenario is invalid.
    #[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))]
    Scenario(Vec<ScenarioError>),
    /// The target URL is unusable.
    #[error(transparent)]
    Target(#[from] crate::util::target::TargetError),
    /// The embedded server could not start.
    #[error("embedded server: {0}")]
    Server(String),
    /// The engine failed.
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// The workload's preparation before timing failed.
    #[error("{0}")]
    Prepare(String),
    /// The arrival plan could not be built.
    #[error("arrival plan: {0}")]
    Plan(String),
    /// The workload could not summarize the run.
    #[error("report: {0}")]
    Report(String),
    /// The JSON result could not be written.
    #[error("cannot write {}: {msg}", path.display())]
    Output {
        /// The destination.
        path: PathBuf,
        /// The OS error.
        msg: String,
    },
}

/// A finished run.
pub struct RunSummary {
    /// The workload's report.
    pub report: Box<dyn Report>,
    /// Measured samples that failed, with their messages.
    pub failures: Vec<(usize, String)>,
    /// Measured samples in total.
    pub measured: usize,
    /// Artifact files that could not be written.
    pub artifact_errors: Vec<String>,
    /// Where the JSON result went.
    pub json_path: Option<PathBuf>,
    /// Each `[thresholds]` entry with its measured value.
    pub verdicts: Vec<crate::config::thresholds::Verdict>,
    /// The URL the run aimed at.
    pub url: String,
}

impl RunSummary {
    /// True when every measured sample succeeded and every artifact was written.
    pub fn passed(&self) -> bool {
        self.failures.is_empty()
            && self.artifact_errors.is_empty()
            && self.verdicts.iter().all(|v| v.passed)
    }
}

/// Run `scenario` to completion. `lines` receives live log lines (e.g. `--print-chunks`)
/// from a printer thread; pass `std::io::stdout()` from a CLI. No progress output.
pub fn run(scenario: &Scenario, lines: Box<dyn Write + Send>) -> Result<RunSummary, RunError> {
    run_with(scenario, lines, None)
}

/// [`run`], with live progress written to `progress` in the given mode (a CLI passes
/// stderr: stdout carries the report only).
pub fn run_with(
    scenario: &Scenario,
    lines: Box<dyn Write + Send>,
    progress: Option<(crate::engine::progress::Mode, Box<dyn Write + Send>)>,
) -> Result<RunSummary, RunError> {
    let workload = scenario.workload.clone();
    let (url, server) = match &scenario.target {
        Some(t) => (resolve_url(t, workload.default_path())?, None),
        None => {
            let cfg = embedded_config(scenario)?;
            let srv = EmbeddedServer::start(SocketAddr::from(([127, 0, 0, 1], 0)), cfg)
                .map_err(|e| RunError::Server(e.to_string()))?;
            (
                format!("ws://{}{}", srv.addr(), workload.default_path()),
                Some(srv),
            )
        }
    };
    workload.prepare().map_err(RunError::Prepare)?;
    let run_start_unix_s = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    let plan = crate::workload::plan::plan(scenario.load.samples, &scenario.load.arrival)
        .map_err(|e| RunError::Plan(e.to_string()))?;
    let (tx, rx) = crossbeam_channel::unbounded::<String>();
    let printer = std::thread::spawn(move || {
        let mut out = lines;
        for l in rx {
            let _ = writeln!(out, "{l}");
        }
        let _ = out.flush();
    });
    let (progress_tx, progress_thread) = match progress {
        Some((mode, out)) => {
            let (tx, rx) = crossbeam_channel::unbounded();
            let headline = workload.headline_name().to_string();
            (
                Some(tx),
                Some(crate::engine::progress::spawn_printer(
                    mode, rx, out, headline,
                )),
            )
        }
        None => (None, None),
    };
    let cfg = EngineConfig {
        url: url.clone(),
        headers: scenario.headers.clone(),
        n_warmup: scenario.load.warmup_samples,
        offsets_s: plan.offsets_s,
        max_concurrency: Some(scenario.load.max_concurrency),
        shards: scenario.load.shards,
        connect_timeout: scenario.connect_timeout,
        request_id_prefix: request_id_prefix(),
        artifact_root: workload.artifact_root(),
        lines: Some(tx),
        progress: progress_tx,
    };
    let out = engine::run(cfg, workload.clone());
    let _ = printer.join();
    if let Some(t) = progress_thread {
        let _ = t.join();
    }
    if let Some(s) = server {
        s.stop();
    }
    let mut out = out?;
    out.run.load = Some(scenario.load.clone());
    let (failures, measured) = failures(&out.run);
    let engine_series = engine_series(&out.run);
    let report = workload.report(out.run).map_err(RunError::Report)?;
    let verdicts = crate::config::thresholds::evaluate(&scenario.thresholds, &report.metrics());
    let json_path = scenario.output_json.clone();
    if let Some(path) = &json_path {
        let text = report.to_json_text();
        crate::util::write_atomic(path, text.as_bytes()).map_err(|e| RunError::Output {
            path: path.clone(),
            msg: e.to_string(),
        })?;
        let mut series = report.series();
        series.extend(engine_series);
        let hlog = path.with_extension("hlog");
        let mut buf = Vec::new();
        crate::util::histlog::write_interval_log(&mut buf, run_start_unix_s, 1.0, &series)
            .map_err(|e| RunError::Output {
                path: hlog.clone(),
                msg: e.to_string(),
            })?;
        crate::util::write_atomic(&hlog, &buf).map_err(|e| RunError::Output {
            path: hlog.clone(),
            msg: e.to_string(),
        })?;
    }
    Ok(RunSummary {
        report,
        failures,
        measured,
        artifact_errors: out.artifact_errors,
        json_path,
        verdicts,
        url,
    })
}

fn embedded_config(scenario: &Scenario) -> Result<ServerConfig, RunError> {
    crate::util::scenario_error::parse_section::<ServerConfig>(
        &scenario.path,
        &scenario.src,
        "server",
        &toml::Table::new(),
    )
    .map_err(|e| RunError::Scenario(vec![e]))
}

/// The resolved plan of a scenario, as `rtload check` prints it.
pub fn describe(s: &Scenario) -> String {
    let w = &s.workload;
    let target = match &s.target {
        Some(t) => resolve_url(t, w.default_path())
            .map_or_else(|e| format!("{t} (invalid: {e})"), |u| redact_url(&u)),
        None => format!(
            "embedded reference server, ws://127.0.0.1:<any free port>{}",
            w.default_path()
        ),
    };
    let mut out = format!("{} ({})\n", s.name, s.path.display());
    let mut row = |k: &str, v: String| out.push_str(&format!("  {k:<18} {v}\n"));
    row("target", target);
    row("workload", w.kind().to_string());
    for (k, v) in w.describe() {
        row(&format!("  {k}"), v);
    }
    row(
        "samples",
        format!(
            "{} measured + {} warm-up",
            s.load.samples, s.load.warmup_samples
        ),
    );
    row("concurrency", format!("at most {}", s.load.max_concurrency));
    match crate::workload::plan::plan(s.load.samples, &s.load.arrival) {
        Ok(p) => {
            row("arrivals", crate::workload::plan::summary(&p));
            let span = p.offsets_s.last().copied().unwrap_or(0.0);
            row(
                "expected",
                match w.expected_session_s() {
                    Some(one) => {
                        let waves = s.load.samples.div_ceil(s.load.max_concurrency.max(1)) as f64;
                        format!(
                            "≈ {:.1} s if the server keeps real time ({:.1} s per session, releases over {span:.1} s)",
                            (waves * one).max(span + one),
                            one
                        )
                    }
                    None => format!(
                        "at least {span:.1} s of releases; session length depends on the inputs and the server"
                    ),
                },
            );
        }
        Err(e) => row("arrivals", format!("invalid: {e}")),
    }
    if let Some(j) = &s.output_json {
        row("json result", j.display().to_string());
    }
    out
}

/// The generator's own series: queue wait per sample (at its release) and send lateness
/// per scheduled message (at its sample's start).
fn engine_series(run: &RunRecord) -> Vec<crate::util::histlog::Series> {
    let measured = run.samples.iter().filter(|s| !s.warmup);
    let waits = measured
        .clone()
        .map(|s| (s.scheduled_s, s.queue_wait_s * 1000.0))
        .collect();
    let late = measured
        .flat_map(|s| {
            s.send_lateness_s
                .iter()
                .map(move |l| (s.started_s, l * 1000.0))
        })
        .collect();
    vec![
        crate::util::histlog::Series::micros("queue_wait_ms", waits),
        crate::util::histlog::Series::micros("send_lateness_ms", late),
    ]
}

fn failures(run: &RunRecord) -> (Vec<(usize, String)>, usize) {
    let measured: Vec<_> = run.samples.iter().filter(|s| !s.warmup).collect();
    let failed = measured
        .iter()
        .filter_map(|s| s.outcome.as_ref().err().map(|e| (s.idx, e.clone())))
        .collect();
    (failed, measured.len())
}

/// `bench-<8 hex>-`, like `vllm bench serve`'s default `--request-id-prefix`.
fn request_id_prefix() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let mixed = (nanos as u64 ^ u64::from(std::process::id()).rotate_left(32))
        .wrapping_mul(0x9E37_79B9_7F4A_7C15);
    format!("bench-{:08x}-", (mixed >> 32) as u32)
}
