//! Glue between a [`Scenario`] and a finished run: resolve the target (or start the
//! embedded server), compute the arrival plan, run the engine, build the workload's
//! report and publish the JSON result. The CLI calls this; so do the integration tests.
//!
//! This file owns the entry points, the live phase and its printer threads; `target`
//! resolves the target (embedded server, client TLS, scraper, `--metrics-addr`),
//! `summary` turns the engine's output into a [`RunSummary`], `result` writes the JSON
//! result and `.hlog`, `describe` prints the resolved plan for `rtload check`, and
//! `serve_replay` loads a recording for `rtload serve --replay`.
//!
//! This is the only client-side module that knows the embedded server exists.

use std::io::Write;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::config::scenario::{Scenario, ScenarioError};
use crate::engine::{self, EngineConfig, EngineError};
use crate::workload::Report;

mod describe;
mod phase_cpu;
mod recompute;
mod record;
mod recorded_flags;
mod result;
mod serve_replay;
mod summary;
mod target;

pub use describe::{describe_metrics, describe_placed};
pub use recompute::{ABSENT, RecomputeError, Recomputed, recompute};
pub use record::Record;
pub use serve_replay::load_replay;
use summary::summarize;
pub use target::{DEFAULT_METRICS_LINGER, LiveEndpoint};
use target::{client_tls, serve_live_metrics, start_scraper, start_target};

/// A run that could not happen (as opposed to samples that failed, which are results).
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The scenario is invalid.
    #[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))]
    Scenario(Vec<ScenarioError>),
    /// The target URL is unusable.
    #[error(transparent)]
    Target(#[from] crate::util::target::TargetError),
    /// The client TLS configuration could not be built.
    #[error(transparent)]
    Tls(#[from] crate::engine::tls::TlsError),
    /// The embedded server could not start.
    #[error("embedded server: {0}")]
    Server(String),
    /// The engine failed.
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// The workload's preparation before timing failed.
    #[error("{0}")]
    Prepare(crate::workload::WorkloadError),
    /// The arrival plan could not be built.
    #[error("arrival plan: {0}")]
    Plan(String),
    /// The workload could not summarize the run.
    #[error("report: {0}")]
    Report(crate::workload::WorkloadError),
    /// The planned concurrency cannot fit under the open-file limit.
    #[error("{0}")]
    FdLimit(String),
    /// The live metrics endpoint could not start.
    #[error("--metrics-addr {addr}: {msg}")]
    Metrics {
        /// The address asked for.
        addr: SocketAddr,
        /// The OS error.
        msg: String,
    },
    /// The JSON result could not be written.
    #[error("cannot write {}: {msg}", path.display())]
    Output {
        /// The destination.
        path: PathBuf,
        /// The OS error.
        msg: String,
    },
}

impl RunError {
    /// The exit code this error ends `rtload run` with: 1 when the run's outputs cannot
    /// fit where they go (the run fails, as a publication failure does; nothing ran),
    /// else 2 (usage, configuration or environment).
    pub fn exit_code(&self) -> u8 {
        match self {
            Self::Prepare(crate::workload::WorkloadError::NoSpace(_)) => 1,
            _ => 2,
        }
    }
}

/// A finished run.
pub struct RunSummary {
    /// The workload's report.
    pub report: Box<dyn Report>,
    /// Measured samples that failed, with their messages.
    pub failures: Vec<(usize, String)>,
    /// Those failures counted per [`crate::workload::FailureKind::label`].
    pub failures_by_kind: std::collections::BTreeMap<String, usize>,
    /// Measured sessions per outcome class (good, degraded, rejected, failed;
    /// interrupt-cancelled ones are in none). Rejected sessions are also in `failures`
    /// (their messages), counted apart here.
    pub outcomes: crate::workload::outcome::ClassCounts,
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
    /// The run was interrupted (SIGINT/SIGTERM): the results hold the samples that ran.
    pub interrupted: bool,
    /// Measured samples cancelled by the interruption (not counted in `failures`).
    pub cancelled: usize,
    /// Warm-up samples run before the measured ones.
    pub warmup: usize,
    /// The load the run actually reached (peak concurrency, request rates).
    pub achieved: crate::workload::kit::Achieved,
    /// "results may be generator-bound: …" when the generator itself was the bottleneck
    /// (see `crate::workload::kit::generator_bound`).
    pub generator_bound: Option<String>,
    /// What the reader must know about the numbers: the workload's warnings (e.g. a
    /// per-turn metric short of values) and any broken invariant of the result
    /// (`crate::workload::results::invariant_violations`); also `rtload.warnings`.
    pub warnings: Vec<String>,
    /// The run over time: the generator's RSS and CPU per interval, and the stamped
    /// metrics per interval of session age and per turn (`rtload.soak`; its terminal
    /// block is [`crate::workload::soak::Soak::text`]).
    pub soak: crate::workload::soak::Soak,
    /// A staircase run's steps (`rtload capacity --ramp`): each step's window with its
    /// sessions, refusals, failures and values (empty for any other arrival).
    pub steps: Vec<crate::workload::steps::StepWindow>,
    /// The terminal's line on how receipts were stamped (kernel or read) and the reader
    /// delay, read from the result's `rtload.wire.receipts` block; `None` before any
    /// receipt.
    pub receipts: Option<String>,
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
    run_interruptible(scenario, lines, progress, None)
}

/// `run_with`, stopping early when `interrupt`'s switch flips: no new samples, the
/// in-flight ones get the grace period and are then cancelled as interrupted; the JSON
/// result and `.hlog` are still written, marked `"interrupted": true`.
pub fn run_interruptible(
    scenario: &Scenario,
    lines: Box<dyn Write + Send>,
    progress: Option<(crate::engine::progress::Mode, Box<dyn Write + Send>)>,
    interrupt: Option<engine::interrupt::Interrupt>,
) -> Result<RunSummary, RunError> {
    run_distributed(
        scenario,
        lines,
        progress,
        interrupt,
        &Distributed::default(),
    )
}

/// How this process takes part in a distributed run (`--shard`, `--start-at`), what
/// it serves while running (`--metrics-addr`) and what it records (`--record`).
#[derive(Debug, Clone, Default)]
pub struct Distributed {
    /// The slice of the run this process executes (`None` = all of it).
    pub shard: Option<crate::workload::shard::Shard>,
    /// Unix time of the measured phase's start on every shard (`--start-at`).
    pub start_at_unix_s: Option<f64>,
    /// Serve live Prometheus metrics here while the run lasts (`--metrics-addr`; see
    /// [`run_serving`] to keep serving the final values after it).
    pub metrics_addr: Option<SocketAddr>,
    /// Told the bound address once `--metrics-addr` listens (port 0 picks one).
    pub metrics_bound: Option<crossbeam_channel::Sender<SocketAddr>>,
    /// Record every session's wire trace (`--record DIR`).
    pub record: Option<Record>,
}

/// [`run_interruptible`] for one shard of a distributed run: runs only the shard's slice
/// of the whole run's plan, at the plan's original offsets from the start barrier, with
/// its part of the warm-ups and of the concurrency cap; tags the JSON result with the
/// shard; serves live metrics and scrapes the target's when asked.
pub fn run_distributed(
    scenario: &Scenario,
    lines: Box<dyn Write + Send>,
    progress: Option<(crate::engine::progress::Mode, Box<dyn Write + Send>)>,
    interrupt: Option<engine::interrupt::Interrupt>,
    dist: &Distributed,
) -> Result<RunSummary, RunError> {
    run_serving(scenario, lines, progress, interrupt, dist).map(|(summary, _)| summary)
}

/// `run_distributed`, handing back the `--metrics-addr` endpoint (when one was asked
/// for) still serving the run's final values, so the caller can keep it up for scrapers
/// after reporting ([`LiveEndpoint::linger`]); dropping it stops it.
pub fn run_serving(
    scenario: &Scenario,
    lines: Box<dyn Write + Send>,
    progress: Option<(crate::engine::progress::Mode, Box<dyn Write + Send>)>,
    interrupt: Option<engine::interrupt::Interrupt>,
    dist: &Distributed,
) -> Result<(RunSummary, Option<LiveEndpoint>), RunError> {
    let shard = dist.shard.unwrap_or(crate::workload::shard::Shard::WHOLE);
    let switch = interrupt.as_ref().map(|i| i.switch.clone());
    enter(&switch, engine::interrupt::Phase::Running);
    let (cap, mine) = shard_share(scenario, shard)?;
    probe_json(scenario)?;
    let workload = scenario.workload().clone();
    let (url, server) = start_target(scenario)?;
    let tls = client_tls(&url, scenario)?;
    let wire = crate::engine::transport::Wire::new(scenario.compression())
        .with_retry_rejected(scenario.retry_rejected());
    let prepared = workload.prepare().map_err(RunError::Prepare)?;
    let prefix = request_id_prefix();
    let record = record::prepare(dist.record.as_ref(), scenario, &url, (&prefix, &mine))?;
    let (tx, printer) = spawn_line_printer(lines);
    let (progress_tx, progress_thread) = spawn_progress(progress, scenario);
    let (live, metrics_server) = serve_live_metrics(dist, shard, workload.headline_name())?;
    let mut cfg = EngineConfig {
        url: url.clone(),
        headers: scenario.headers().to_vec(),
        n_warmup: shard.part(scenario.load().warmup_samples),
        offsets_s: mine.iter().map(|m| m.1).collect(),
        holds_s: mine.iter().map(|m| scenario.load().hold_of(m.1)).collect(),
        max_concurrency: Some(cap),
        shards: scenario.load().shards,
        connect_timeout: scenario.connect_timeout(),
        tls: tls.clone(),
        max_frame_bytes: scenario.max_frame_bytes(),
        wire: wire.clone(),
        request_id_prefix: prefix,
        artifact_root: workload.artifact_root(),
        record,
        lines: Some(tx),
        progress: progress_tx,
        generator_bound_ms: scenario.load().generator_bound_ms,
        interrupt,
        placement: placement(&mine, dist),
        live: live.clone(),
        rules: Arc::new(scenario.outcome_rules()),
    };
    let scraper = start_scraper(scenario)?;
    let run_start_unix_s = unix_now();
    record::stamp_start(cfg.record.as_mut(), run_start_unix_s);
    let this_run = workload.clone().begin_run();
    let (mut out, usage, live_wall_s) = live_phase(cfg, this_run.clone(), scenario);
    enter(&switch, engine::interrupt::Phase::Publishing);
    read_lateness_back(&mut out, &*this_run);
    let target_timeline = scraper.map(crate::util::scrape::Scraper::finish);
    join_printers(printer, progress_thread);
    if let Some(s) = server {
        s.stop();
    }
    let ran = Ran {
        out: out?,
        this_run,
        mine,
        run_start_unix_s,
        usage,
        target_timeline,
        tls: tls.is_some(),
        wire: wire.result_block(),
        url,
        live_wall_s,
        prepared,
        switch: switch.clone(),
    };
    let summary = summarize(scenario, dist, shard, ran);
    if let (Some(live), Ok(s)) = (&live, &summary) {
        live.set_outcomes(s.outcomes);
    }
    enter(&switch, engine::interrupt::Phase::Over);
    Ok((summary?, metrics_server))
}

/// Where this run's measured samples sit in the whole run: their global indices (from
/// `mine`, this shard's `(index, offset)` slice) and the shared start.
fn placement(mine: &[(usize, f64)], dist: &Distributed) -> crate::engine::Placement {
    crate::engine::Placement {
        measured_indices: Some(mine.iter().map(|m| m.0).collect()),
        start_at_unix_s: dist.start_at_unix_s,
    }
}

/// Tell the run's interrupt switch (if any) where the run is, for what a signal stops.
fn enter(switch: &Option<engine::interrupt::InterruptSwitch>, phase: engine::interrupt::Phase) {
    if let Some(s) = switch {
        s.enter(phase);
    }
}

/// What `run` checks before it starts anything, for `rtload check`: the arrival plan
/// builds, the shard's share of the concurrency cap exists and the planned concurrency
/// fits under the open-file limit.
pub fn preflight(
    scenario: &Scenario,
    shard: Option<crate::workload::shard::Shard>,
) -> Result<(), RunError> {
    shard_share(
        scenario,
        shard.unwrap_or(crate::workload::shard::Shard::WHOLE),
    )
    .map(|_| ())
}

/// This shard's concurrency cap and its `(index, offset)` slice of the whole run's plan,
/// once the open-file limit is known to fit the run's sessions.
fn shard_share(
    scenario: &Scenario,
    shard: crate::workload::shard::Shard,
) -> Result<(usize, Vec<(usize, f64)>), RunError> {
    let cap = shard
        .cap(scenario.load().max_concurrency)
        .map_err(|e| RunError::Plan(e.to_string()))?;
    let whole = crate::workload::plan::plan(scenario.samples(), &scenario.load().arrival)
        .map_err(|e| RunError::Plan(e.to_string()))?;
    engine::fdlimit::ensure(
        scenario.load().max_concurrency,
        scenario.target().is_none(),
        scenario.workload().files_per_session(),
    )
    .map_err(RunError::FdLimit)?;
    outputs_writable(scenario)?;
    Ok((cap, shard.slice(&whole.offsets_s)))
}

/// A real write beside the JSON result (a full disk or a read-only mount fails it,
/// whoever runs) before the first session: the result is never lost after the run for
/// its path.
fn probe_json(scenario: &Scenario) -> Result<(), RunError> {
    match scenario.output_json() {
        Some(p) => crate::util::fs::check_writable(p).map_err(|e| RunError::Output {
            path: p.to_path_buf(),
            msg: e.to_string(),
        }),
        None => Ok(()),
    }
}

/// Every place the run will write (the JSON result and its `.hlog`, the workload's
/// artifact root) can be written by this process: checked before the first session (and
/// by `check`, which writes nothing: a permission check, no probe), so a result is never
/// lost after the run for a path that could not take it.
fn outputs_writable(scenario: &Scenario) -> Result<(), RunError> {
    let dirs = scenario
        .output_json()
        .map(|p| {
            (
                p.to_path_buf(),
                p.parent().map(std::path::Path::to_path_buf),
            )
        })
        .into_iter()
        .chain(
            scenario
                .workload()
                .artifact_root()
                .map(|r| (r.clone(), Some(r))),
        );
    for (what, dir) in dirs {
        let dir = dir
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or_else(|| ".".into());
        // The nearest directory that exists is where the missing ones will be created (a
        // relative path's last ancestor is "", the current directory).
        let existing = (dir.ancestors())
            .map(|a| {
                if a.as_os_str().is_empty() {
                    Path::new(".")
                } else {
                    a
                }
            })
            .find(|a| a.is_dir())
            .unwrap_or(Path::new("."));
        if let Err(e) = rustix::fs::access(existing, rustix::fs::Access::WRITE_OK) {
            return Err(RunError::Output {
                path: what,
                msg: format!(
                    "{} is not writable ({}); choose a writable path",
                    existing.display(),
                    std::io::Error::from(e)
                ),
            });
        }
    }
    Ok(())
}

/// Reads each sample's send lateness and spilled playback streams back (their spans
/// after the spool's flush): publication's work, outside the live phase's usage.
fn read_lateness_back(
    out: &mut Result<engine::EngineOutput, engine::EngineError>,
    run: &dyn crate::workload::WorkloadRun,
) {
    if let Ok(o) = out {
        crate::workload::spool::lateness::restore_run(&mut o.run, run.spool());
        crate::workload::spool::playback::restore_run(&mut o.run, run.spool());
    }
}

/// Runs the engine (the live phase), returning its output, the process's resource usage
/// over the phase (both boundaries, the RSS sampled in between and a reading every
/// `[load] series_interval_s`), and its wall seconds.
fn live_phase(
    cfg: EngineConfig,
    this_run: Arc<dyn crate::workload::WorkloadRun>,
    scenario: &Scenario,
) -> (
    Result<engine::EngineOutput, engine::EngineError>,
    crate::workload::kit::PhaseUsage,
    f64,
) {
    let sampler = crate::util::usage::RssSampler::start(Some(std::time::Duration::from_secs_f64(
        scenario.load().series_interval_s,
    )));
    let started = std::time::Instant::now();
    let out = engine::run(cfg, this_run);
    let wall_s = started.elapsed().as_secs_f64();
    (out, sampler.finish(), wall_s)
}

/// A thread writing each line sent on the returned channel to `lines`, flushing at the end.
fn spawn_line_printer(
    lines: Box<dyn Write + Send>,
) -> (
    crossbeam_channel::Sender<String>,
    std::thread::JoinHandle<()>,
) {
    let (tx, rx) = crossbeam_channel::unbounded::<String>();
    let printer = std::thread::spawn(move || {
        let mut out = lines;
        for l in rx {
            let _ = writeln!(out, "{l}");
        }
        let _ = out.flush();
    });
    (tx, printer)
}

/// The progress printer's channel and thread, when progress is asked for (headed by the
/// scenario's headline metric, warning past its `generator_bound_ms`).
fn spawn_progress(
    progress: Option<(crate::engine::progress::Mode, Box<dyn Write + Send>)>,
    scenario: &Scenario,
) -> (
    Option<crossbeam_channel::Sender<crate::engine::progress::ProgressEvent>>,
    Option<crate::engine::progress::Printer>,
) {
    match progress {
        Some((mode, out)) => {
            let (tx, rx) = crossbeam_channel::unbounded();
            let headline = scenario.workload().headline_name().to_string();
            (
                Some(tx),
                Some(crate::engine::progress::spawn_printer(
                    mode,
                    rx,
                    out,
                    headline,
                    Some(scenario.load().generator_bound_ms),
                )),
            )
        }
        None => (None, None),
    }
}

/// Waits for the line printer and, if there is one, the progress printer to finish.
fn join_printers(
    printer: std::thread::JoinHandle<()>,
    progress_thread: Option<crate::engine::progress::Printer>,
) {
    let _ = printer.join();
    if let Some(t) = progress_thread {
        let _ = t.finish();
    }
}

/// A finished engine run and what its summary needs besides the scenario.
struct Ran {
    /// The engine's output.
    out: engine::EngineOutput,
    /// The workload's run, which builds the report.
    this_run: Arc<dyn crate::workload::WorkloadRun>,
    /// This shard's `(index, offset)` slice of the plan.
    mine: Vec<(usize, f64)>,
    /// Unix time the run started.
    run_start_unix_s: f64,
    /// Resource usage over the live phase.
    usage: crate::workload::kit::PhaseUsage,
    /// The target's scraped metrics, if any.
    target_timeline: Option<crate::util::scrape::Timeline>,
    /// Whether the run used TLS.
    tls: bool,
    /// The result's `rtload.wire` block (what the connections negotiated).
    wire: serde_json::Value,
    /// The target URL.
    url: String,
    /// Wall seconds the engine ran (the live phase), for the generator's core share.
    live_wall_s: f64,
    /// What the workload's preparation said the user should know.
    prepared: Vec<String>,
    /// The run's interrupt switch, now in [`engine::interrupt::Phase::Publishing`]: a
    /// signal while the results are written still ends the run as interrupted.
    switch: Option<engine::interrupt::InterruptSwitch>,
}

/// Seconds since the Unix epoch (0 if the clock is before it).
fn unix_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
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

#[cfg(test)]
mod tests;
