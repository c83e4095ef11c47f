//! Glue between a [`Scenario`] and a finished run: resolve the target (or start the
//! embedded server), compute the arrival plan, run the engine, build the workload's
//! report and publish the JSON result. The CLI calls this; so do the integration tests.
//!
//! This is the only client-side module that knows the embedded server exists.

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use crate::config::scenario::{Scenario, ScenarioError};
use crate::engine::{self, EngineConfig, EngineError};
use crate::server::{EmbeddedServer, ServerConfig};
use crate::util::target::{redact_text, redact_url, resolve_url};
use crate::workload::{Failure, FailureKind, Report, RunRecord};

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
    Prepare(String),
    /// The arrival plan could not be built.
    #[error("arrival plan: {0}")]
    Plan(String),
    /// The workload could not summarize the run.
    #[error("report: {0}")]
    Report(String),
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

/// A finished run.
pub struct RunSummary {
    /// The workload's report.
    pub report: Box<dyn Report>,
    /// Measured samples that failed, with their messages.
    pub failures: Vec<(usize, String)>,
    /// Those failures counted per [`crate::workload::FailureKind::label`].
    pub failures_by_kind: std::collections::BTreeMap<String, usize>,
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
    /// (see [`crate::workload::kit::generator_bound`]).
    pub generator_bound: Option<String>,
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

/// [`run_with`], stopping early when `interrupt`'s switch flips: no new samples, the
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

/// How this process takes part in a distributed run (`--shard`, `--start-at`) and what
/// it serves while running (`--metrics-addr`).
#[derive(Debug, Clone, Default)]
pub struct Distributed {
    /// The slice of the run this process executes (`None` = all of it).
    pub shard: Option<crate::workload::shard::Shard>,
    /// Unix time of the measured phase's start on every shard (`--start-at`).
    pub start_at_unix_s: Option<f64>,
    /// Serve live Prometheus metrics here while the run lasts (`--metrics-addr`).
    pub metrics_addr: Option<SocketAddr>,
    /// Told the bound address once `--metrics-addr` listens (port 0 picks one).
    pub metrics_bound: Option<crossbeam_channel::Sender<SocketAddr>>,
}

/// [`run_with`] placed by `dist` (no interruption).
pub fn run_placed(
    scenario: &Scenario,
    lines: Box<dyn Write + Send>,
    progress: Option<(crate::engine::progress::Mode, Box<dyn Write + Send>)>,
    dist: &Distributed,
) -> Result<RunSummary, RunError> {
    run_distributed(scenario, lines, progress, None, dist)
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
    let shard = dist.shard.unwrap_or(crate::workload::shard::Shard::WHOLE);
    let cap = shard
        .cap(scenario.load.max_concurrency)
        .map_err(|e| RunError::Plan(e.to_string()))?;
    let whole = crate::workload::plan::plan(scenario.load.samples, &scenario.load.arrival)
        .map_err(|e| RunError::Plan(e.to_string()))?;
    let mine = shard.slice(&whole.offsets_s);
    let workload = scenario.workload.clone();
    engine::fdlimit::ensure(scenario.load.max_concurrency, scenario.target.is_none())
        .map_err(RunError::FdLimit)?;
    let (url, server) = start_target(scenario)?;
    let tls = client_tls(&url, scenario)?;
    workload.prepare().map_err(RunError::Prepare)?;
    tracing::debug!(
        target = %redact_url(&url),
        samples = scenario.load.samples,
        warmup = scenario.load.warmup_samples,
        "run starting"
    );
    let (tx, printer) = spawn_line_printer(lines);
    let (progress_tx, progress_thread) = spawn_progress(
        progress,
        workload.headline_name(),
        scenario.load.generator_bound_ms,
    );
    let (live, metrics_server) = serve_live_metrics(dist, shard, workload.headline_name())?;
    let cfg = EngineConfig {
        url: url.clone(),
        headers: scenario.headers.clone(),
        n_warmup: shard.part(scenario.load.warmup_samples),
        offsets_s: mine.iter().map(|m| m.1).collect(),
        max_concurrency: Some(cap),
        shards: scenario.load.shards,
        connect_timeout: scenario.connect_timeout,
        tls: tls.clone(),
        max_frame_bytes: scenario.max_frame_bytes,
        request_id_prefix: request_id_prefix(),
        artifact_root: workload.artifact_root(),
        lines: Some(tx),
        progress: progress_tx,
        generator_bound_ms: scenario.load.generator_bound_ms,
        interrupt,
        placement: crate::engine::Placement {
            measured_indices: Some(mine.iter().map(|m| m.0).collect()),
            start_at_unix_s: dist.start_at_unix_s,
        },
        live,
    };
    let scraper = start_scraper(scenario)?;
    let run_start_unix_s = unix_now();
    let this_run = workload.clone().begin_run();
    let (out, usage, live_wall_s) = live_phase(cfg, this_run.clone());
    if let Some(m) = metrics_server {
        m.stop();
    }
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
        url,
        live_wall_s,
    };
    summarize(scenario, dist, shard, ran)
}

/// Runs the engine (the live phase), returning its output, the process's resource usage
/// at the phase's two boundaries, and the phase's wall seconds.
fn live_phase(
    cfg: EngineConfig,
    this_run: Arc<dyn crate::workload::WorkloadRun>,
) -> (
    Result<engine::EngineOutput, engine::EngineError>,
    (
        crate::workload::kit::UsageSnapshot,
        crate::workload::kit::UsageSnapshot,
    ),
    f64,
) {
    let usage_start = crate::workload::kit::UsageSnapshot::now();
    let started = std::time::Instant::now();
    let out = engine::run(cfg, this_run);
    let wall_s = started.elapsed().as_secs_f64();
    (
        out,
        (usage_start, crate::workload::kit::UsageSnapshot::now()),
        wall_s,
    )
}

/// The run's one TLS configuration, shared by every shard's client (`None` for `ws://`).
fn client_tls(
    url: &str,
    scenario: &Scenario,
) -> Result<Option<crate::engine::tls::ClientTls>, RunError> {
    Ok(url
        .starts_with("wss://")
        .then(|| crate::engine::tls::ClientTls::build(&scenario.tls))
        .transpose()?)
}

/// The run's target URL: the scenario's `target`, or the embedded server (started here and
/// returned, to be stopped once the run ends) when there is none.
fn start_target(scenario: &Scenario) -> Result<(String, Option<EmbeddedServer>), RunError> {
    let workload = &scenario.workload;
    Ok(match &scenario.target {
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
    })
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

/// The progress printer's channel and thread, when progress is asked for.
fn spawn_progress(
    progress: Option<(crate::engine::progress::Mode, Box<dyn Write + Send>)>,
    headline: &str,
    generator_bound_ms: f64,
) -> (
    Option<crossbeam_channel::Sender<crate::engine::progress::ProgressEvent>>,
    Option<std::thread::JoinHandle<()>>,
) {
    match progress {
        Some((mode, out)) => {
            let (tx, rx) = crossbeam_channel::unbounded();
            let headline = headline.to_string();
            (
                Some(tx),
                Some(crate::engine::progress::spawn_printer(
                    mode,
                    rx,
                    out,
                    headline,
                    Some(generator_bound_ms),
                )),
            )
        }
        None => (None, None),
    }
}

/// The target-metrics scraper, started when the scenario names a metrics endpoint.
fn start_scraper(scenario: &Scenario) -> Result<Option<crate::util::scrape::Scraper>, RunError> {
    Ok(match &scenario.target_metrics {
        Some((u, names)) => Some(
            crate::util::scrape::Scraper::start(u.clone(), redact_url(u), names.clone())
                .map_err(|e| RunError::Server(format!("metrics scraper: {e}")))?,
        ),
        None => None,
    })
}

/// Waits for the line printer and, if there is one, the progress printer to finish.
fn join_printers(
    printer: std::thread::JoinHandle<()>,
    progress_thread: Option<std::thread::JoinHandle<()>>,
) {
    let _ = printer.join();
    if let Some(t) = progress_thread {
        let _ = t.join();
    }
}

/// The failures counted by kind, keyed by the kind's name.
fn count_kinds(failures: &[(usize, Failure)]) -> std::collections::BTreeMap<String, usize> {
    crate::workload::outcome::count_by_kind(failures.iter().map(|(_, f)| f.kind))
        .into_iter()
        .map(|(k, n)| (k.to_string(), n))
        .collect()
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
    /// Resource usage before and after the run.
    usage: (
        crate::workload::kit::UsageSnapshot,
        crate::workload::kit::UsageSnapshot,
    ),
    /// The target's scraped metrics, if any.
    target_timeline: Option<crate::util::scrape::Timeline>,
    /// Whether the run used TLS.
    tls: bool,
    /// The target URL.
    url: String,
    /// Wall seconds the engine ran (the live phase), for the generator's core share.
    live_wall_s: f64,
}

/// "results may be generator-bound: …" when the run's send lateness p99 exceeded
/// `[load] generator_bound_ms` or the generator used ≥ 90 % of a core in the live phase.
fn generator_bound(
    run: &RunRecord,
    usage: (
        crate::workload::kit::UsageSnapshot,
        crate::workload::kit::UsageSnapshot,
    ),
    live_wall_s: f64,
    scenario: &Scenario,
) -> Option<String> {
    use crate::workload::kit;
    let (_, lateness) = kit::wait_and_lateness(run);
    kit::generator_bound(
        lateness["p99_ms"].as_f64(),
        kit::core_share(usage.0, usage.1, live_wall_s),
        scenario.load.generator_bound_ms,
    )
}

/// Sets interrupt-cancelled samples apart from `failures`, returning their indices.
fn take_cancelled(failures: &mut Vec<(usize, Failure)>) -> Vec<usize> {
    let cancelled_idx: Vec<usize> = failures
        .iter()
        .filter(|(_, f)| f.kind == FailureKind::Interrupted)
        .map(|(i, _)| *i)
        .collect();
    failures.retain(|(_, f)| f.kind != FailureKind::Interrupted);
    cancelled_idx
}

/// Builds the run's report, failures and verdicts, writes the JSON result when asked, and
/// returns the summary.
fn summarize(
    scenario: &Scenario,
    dist: &Distributed,
    shard: crate::workload::shard::Shard,
    ran: Ran,
) -> Result<RunSummary, RunError> {
    let mut out = ran.out;
    out.run.load = Some(scenario.load.clone());
    let (mut failures, measured) = failures(&out.run);
    // Samples cancelled by an interrupt are their own outcome, not failures.
    let cancelled_idx = take_cancelled(&mut failures);
    let cancelled = cancelled_idx.len();
    let interrupted = out.interrupted;
    let engine_series = engine_series(&out.run);
    let generator_bound = generator_bound(&out.run, ran.usage, ran.live_wall_s, scenario);
    let tag = crate::report::merge::ShardTag::of_run(
        &scenario.name,
        shard,
        dist.start_at_unix_s,
        &ran.mine,
        &out.run,
        ran.run_start_unix_s,
        &scenario.thresholds,
    );
    let generator_run = out.run.clone();
    let achieved = crate::workload::kit::Achieved::of(&out.run);
    let measured_idx: Vec<usize> = out
        .run
        .samples
        .iter()
        .filter(|s| !s.warmup)
        .map(|s| s.idx)
        .collect();
    let report = ran.this_run.report(out.run).map_err(RunError::Report)?;
    add_report_failures(
        &mut failures,
        report.as_ref(),
        &measured_idx,
        &cancelled_idx,
    );
    let failures_by_kind = count_kinds(&failures);
    let failures: Vec<(usize, String)> =
        failures.into_iter().map(|(i, f)| (i, f.message)).collect();
    // A shard's own numbers say nothing about the run's: `rtload merge` evaluates the
    // thresholds (carried in the shard tag) on the merged result.
    let verdicts = if shard.count > 1 {
        Vec::new()
    } else {
        crate::config::thresholds::evaluate(&scenario.thresholds, &report.metrics())
    };
    let summary = RunSummary {
        report,
        failures,
        failures_by_kind,
        measured,
        artifact_errors: out.artifact_errors,
        json_path: scenario.output_json.clone(),
        verdicts,
        url: ran.url,
        interrupted,
        cancelled,
        warmup: scenario.load.warmup_samples,
        achieved,
        generator_bound,
    };
    if let Some(path) = &summary.json_path {
        let extras = ResultExtras {
            generator_run,
            usage: ran.usage,
            tag,
            target_timeline: ran.target_timeline,
            engine_series,
            run_start_unix_s: ran.run_start_unix_s,
            tls: ran.tls,
        };
        write_result(path, scenario, dist, &summary, extras)?;
    }
    Ok(summary)
}

/// What the JSON result needs beyond the summary.
struct ResultExtras {
    /// The engine's run record, for the generator block.
    generator_run: RunRecord,
    /// Resource usage before and after the run.
    usage: (
        crate::workload::kit::UsageSnapshot,
        crate::workload::kit::UsageSnapshot,
    ),
    /// This shard's tag (written only for a sharded run).
    tag: crate::report::merge::ShardTag,
    /// The target's scraped metrics, if any.
    target_timeline: Option<crate::util::scrape::Timeline>,
    /// The engine's own histogram series.
    engine_series: Vec<crate::util::histlog::Series>,
    /// Unix time the run started.
    run_start_unix_s: f64,
    /// Whether the run used TLS.
    tls: bool,
}

/// Builds the JSON result document (report, catalogue, generator, verdict, TLS, interrupt,
/// shard and target-metrics blocks) and publishes it with the series to `path`.
fn write_result(
    path: &std::path::Path,
    scenario: &Scenario,
    dist: &Distributed,
    summary: &RunSummary,
    extras: ResultExtras,
) -> Result<(), RunError> {
    let report = &summary.report;
    let interrupted = summary.interrupted;
    let mut doc = report.to_json();
    scenario.workload.catalogue().write_into(&mut doc);
    let block = crate::workload::kit::generator_block(
        &extras.generator_run,
        &summary.failures_by_kind,
        extras.usage.0,
        extras.usage.1,
    );
    crate::workload::kit::merge_into(&mut doc, block);
    crate::workload::kit::merge_into(&mut doc, summary.achieved.to_json());
    crate::workload::kit::merge_into(
        &mut doc,
        serde_json::json!({ "generator_bound": summary.generator_bound }),
    );
    let passed = summary.failures.is_empty()
        && summary.artifact_errors.is_empty()
        && summary.verdicts.iter().all(|v| v.passed);
    crate::workload::kit::merge_into(
        &mut doc,
        verdict_block(
            &summary.verdicts,
            passed,
            interrupted,
            (summary.measured, summary.failures.len(), summary.cancelled),
            scenario,
        ),
    );
    if extras.tls {
        crate::workload::kit::merge_into(&mut doc, crate::engine::tls::result_block(&scenario.tls));
    }
    if interrupted && let Some(obj) = doc.as_object_mut() {
        obj.insert("interrupted".into(), serde_json::Value::Bool(true));
    }
    // Only a sharded run is tagged: a plain run keeps the reference's exact layout.
    if let (Some(obj), true) = (doc.as_object_mut(), dist.shard.is_some()) {
        obj.insert(
            crate::report::merge::SHARD_KEY.into(),
            serde_json::to_value(&extras.tag).unwrap_or_default(),
        );
    }
    if let (Some(obj), Some(tl)) = (doc.as_object_mut(), &extras.target_timeline) {
        obj.insert(
            crate::report::merge::TARGET_METRICS_KEY.into(),
            serde_json::to_value(tl).unwrap_or_default(),
        );
    }
    let mut series = report.series();
    series.extend(extras.engine_series);
    publish(
        path,
        &redact_text(&report.json_text(&doc)),
        &series,
        extras.run_start_unix_s,
        interrupted,
    )
}

/// The result's verdict: `verdict` (`passed` / `failed` / `interrupted`), every threshold
/// with its measured value (`null` when the run has no such metric) and whether it held,
/// and the sample counts, so a report can open with them.
fn verdict_block(
    verdicts: &[crate::config::thresholds::Verdict],
    passed: bool,
    interrupted: bool,
    (measured, failed, cancelled): (usize, usize, usize),
    scenario: &Scenario,
) -> serde_json::Value {
    let word = match (interrupted, passed) {
        (true, _) => "interrupted",
        (false, true) => "passed",
        (false, false) => "failed",
    };
    let thresholds: Vec<serde_json::Value> = verdicts
        .iter()
        .map(|v| {
            serde_json::json!({
                "metric": v.threshold.metric,
                "expr": v.threshold.expr,
                "measured": v.measured.filter(|m| m.is_finite()),
                "passed": v.passed,
            })
        })
        .collect();
    serde_json::json!({
        "verdict": word,
        "thresholds": thresholds,
        "sample_counts": {
            "measured": measured,
            "completed": measured.saturating_sub(failed + cancelled),
            "failed": failed,
            "cancelled": cancelled,
            "warmup": scenario.load.warmup_samples,
        },
    })
}

fn unix_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

type LiveParts = (
    Option<Arc<crate::engine::live::LiveMetrics>>,
    Option<crate::util::http::MetricsServer>,
);

/// Start the `--metrics-addr` endpoint over fresh live tallies, when asked.
fn serve_live_metrics(
    dist: &Distributed,
    shard: crate::workload::shard::Shard,
    headline: &str,
) -> Result<LiveParts, RunError> {
    let Some(addr) = dist.metrics_addr else {
        return Ok((None, None));
    };
    let live = Arc::new(crate::engine::live::LiveMetrics::new(
        headline,
        (shard.count > 1).then(|| shard.to_string()),
    ));
    let from = Arc::clone(&live);
    let render: crate::util::http::Render = Arc::new(move || from.render());
    let srv =
        crate::util::http::MetricsServer::start(addr, render).map_err(|e| RunError::Metrics {
            addr,
            msg: e.to_string(),
        })?;
    if let Some(tx) = &dist.metrics_bound {
        let _ = tx.send(srv.addr());
    }
    Ok((Some(live), Some(srv)))
}

/// Failures only the report could see (e.g. too few chunks for the metrics) count like
/// any other: in the summary, the per-kind counts and the exit code. `measured_idx` maps
/// a position among measured samples to its sample index.
fn add_report_failures(
    failures: &mut Vec<(usize, Failure)>,
    report: &dyn Report,
    measured_idx: &[usize],
    cancelled_idx: &[usize],
) {
    for (pos, msg) in report.report_failures() {
        let idx = measured_idx.get(pos).copied().unwrap_or(pos);
        if !failures.iter().any(|(i, _)| *i == idx) && !cancelled_idx.contains(&idx) {
            failures.push((idx, Failure::new(FailureKind::Report, msg)));
        }
    }
    failures.sort_by_key(|(i, _)| *i);
}

/// Write the result JSON text to `path` and the interval log beside it (`.hlog`), each
/// atomically.
fn publish(
    path: &std::path::Path,
    text: &str,
    series: &[crate::util::histlog::Series],
    run_start_unix_s: f64,
    interrupted: bool,
) -> Result<(), RunError> {
    let fail = |p: &std::path::Path, e: &dyn std::fmt::Display| RunError::Output {
        path: p.to_path_buf(),
        msg: e.to_string(),
    };
    crate::util::write_atomic(path, text.as_bytes()).map_err(|e| fail(path, &e))?;
    let hlog = path.with_extension("hlog");
    let mut buf = Vec::new();
    if interrupted {
        buf.extend_from_slice(b"#[Interrupted: true]\n");
    }
    crate::util::histlog::write_interval_log(&mut buf, run_start_unix_s, 1.0, series)
        .map_err(|e| fail(&hlog, &e))?;
    crate::util::write_atomic(&hlog, &buf).map_err(|e| fail(&hlog, &e))
}

/// The embedded server's configuration: `[server]`, already validated at load.
fn embedded_config(scenario: &Scenario) -> Result<ServerConfig, RunError> {
    Ok(scenario.server.clone())
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
    if s.target
        .as_deref()
        .is_some_and(|t| resolve_url(t, w.default_path()).is_ok_and(|u| u.starts_with("wss://")))
    {
        row("tls", s.tls.describe());
    } else if s.tls != crate::engine::tls::TlsOptions::default() {
        row("tls", "not used (plain ws:// target)".to_string());
    }
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
    let cat = w.catalogue();
    let headline: Vec<String> = cat
        .headline()
        .iter()
        .filter_map(|h| cat.get(h))
        .map(|m| format!("{} ({}, {})", m.name, m.unit, direction_words(m.direction)))
        .collect();
    row(
        "metrics",
        format!(
            "{} reported; headline: {}",
            cat.metrics().len(),
            headline.join(", ")
        ),
    );
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

/// How a direction reads in `check` output.
pub fn direction_words(d: crate::workload::catalogue::Direction) -> &'static str {
    use crate::workload::catalogue::Direction;
    match d {
        Direction::Lower => "lower is better",
        Direction::Higher => "higher is better",
        Direction::NotAScore => "not a score",
    }
}

/// The generator's own series: queue wait per sample (at its release), send lateness
/// per scheduled message (at its sample's start), and the duration of every completed
/// sample (connect → end) at its end: the per-interval count of
/// [`crate::util::histlog::COMPLETED_TAG`] is the completions per second the HTML report draws.
fn engine_series(run: &RunRecord) -> Vec<crate::util::histlog::Series> {
    let measured = run.samples.iter().filter(|s| !s.warmup);
    let completed = measured
        .clone()
        .filter(|s| s.outcome.is_ok())
        .map(|s| (s.ended_s, (s.ended_s - s.started_s) * 1000.0))
        .collect();
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
        crate::util::histlog::Series::micros(crate::util::histlog::COMPLETED_TAG, completed),
    ]
}

fn failures(run: &RunRecord) -> (Vec<(usize, Failure)>, usize) {
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

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::add_report_failures;
    use crate::workload::{Failure, FailureKind, Report};

    /// A report that found failures of its own (measured positions 0 and 2).
    struct LateFailures;

    impl Report for LateFailures {
        fn render_text(&self) -> String {
            String::new()
        }
        fn to_json(&self) -> serde_json::Value {
            serde_json::Value::Null
        }
        fn metrics(&self) -> BTreeMap<String, f64> {
            BTreeMap::new()
        }
        fn report_failures(&self) -> Vec<(usize, String)> {
            vec![(0, "too few chunks".into()), (2, "too few chunks".into())]
        }
    }

    /// Issue 11 item 8: failures only the report can see count like any other, as kind
    /// `report`, at the sample index of their measured position — but never twice for a
    /// sample that already failed, and never for one an interrupt cancelled.
    #[test]
    fn report_time_failures_count_once_with_their_kind() {
        // Warm-up at index 0; measured samples are indices 1, 2, 3.
        let measured_idx = [1, 2, 3];
        let mut failures = vec![(3, Failure::new(FailureKind::Timeout, "late"))];
        add_report_failures(&mut failures, &LateFailures, &measured_idx, &[]);
        let got: Vec<(usize, FailureKind)> = failures.iter().map(|(i, f)| (*i, f.kind)).collect();
        assert_eq!(got, [(1, FailureKind::Report), (3, FailureKind::Timeout)]);
        let mut failures = Vec::new();
        add_report_failures(&mut failures, &LateFailures, &measured_idx, &[1]);
        let got: Vec<(usize, FailureKind)> = failures.iter().map(|(i, f)| (*i, f.kind)).collect();
        assert_eq!(got, [(3, FailureKind::Report)]);
    }
}
