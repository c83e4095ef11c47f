//! The engine: runs a workload's sessions against a target under an arrival plan.
//!
//! Runtime arrangement (see ARCHITECTURE.md): a small multi-threaded tokio runtime hosts
//! the [`coordinator`]; session shards — one OS thread each with a current-thread runtime
//! and `LocalSet` (ractor's `ThreadLocalActorSpawner`) — host the [`sample`] supervisors,
//! each with its live phase ([`session`]: the session and its [`reader`], [`sender`] and
//! [`playback`] roles); [`writer`] threads publish artifacts. The engine never interprets
//! a payload: that is the workload's [`crate::workload::Session`].

pub mod control;
pub mod coordinator;
pub mod fdlimit;
pub mod interrupt;
pub mod lateness;
pub mod live;
pub mod playback;
pub mod progress;
pub mod reader;
pub mod record;
pub mod sample;
pub mod sender;
pub mod session;
pub mod setup_cost;
pub mod timer;
pub mod tls;
pub mod transport;
pub mod wake;
pub mod writer;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use ractor::Actor;
use ractor::thread_local::ThreadLocalActorSpawner;

use crate::workload::{RunRecord, WorkloadRun};
use coordinator::{CoordArgs, CoordMsg, Coordinator};

/// How one run is executed. (No `Debug`: `headers` may hold secrets.)
#[derive(Clone)]
pub struct EngineConfig {
    /// The resolved WebSocket URL.
    pub url: String,
    /// Upgrade headers (may hold secrets; never logged or saved).
    pub headers: Vec<(String, String)>,
    /// Warm-up samples, run first, excluded from metrics.
    pub n_warmup: usize,
    /// Release offsets of the measured samples (seconds from the measured phase start).
    pub offsets_s: Vec<f64>,
    /// How long each measured sample's session is held from its open (aligned with
    /// `offsets_s`; empty or `None`: as long as its media). See [`SessionContext`]'s
    /// `hold_s`.
    ///
    /// [`SessionContext`]: crate::workload::SessionContext
    pub holds_s: Vec<Option<f64>>,
    /// Concurrency cap; `None` = unlimited.
    pub max_concurrency: Option<usize>,
    /// Session shards (`None` = one per core).
    pub shards: Option<usize>,
    /// Handshake bound per session.
    pub connect_timeout: Duration,
    /// Client TLS for `wss://` targets (built once per run); `None` for `ws://`.
    pub tls: Option<tls::ClientTls>,
    /// Largest inbound frame or reassembled message, checked from the frame header.
    pub max_frame_bytes: usize,
    /// What the handshake offers (`permessage-deflate`), and the run's tally of what the
    /// server agreed to (`rtload.wire` in the result).
    pub wire: transport::Wire,
    /// Prefix of measured request ids.
    pub request_id_prefix: String,
    /// Where artifacts are published, when the run publishes any.
    pub artifact_root: Option<PathBuf>,
    /// Where each session's wire trace and the manifest are published (`--record DIR`),
    /// when the run records.
    pub record: Option<record::RecordTo>,
    /// Receives live log lines (`--print-chunks`), when set.
    pub lines: Option<crossbeam_channel::Sender<String>>,
    /// Receives progress events (sample started / ended), when set.
    pub progress: Option<crossbeam_channel::Sender<crate::engine::progress::ProgressEvent>>,
    /// Sends later than this many ms count as late in the progress events (the
    /// "generator-bound" warning; `[load] generator_bound_ms`).
    pub generator_bound_ms: f64,
    /// Graceful interruption (e.g. by SIGINT), when the caller offers one.
    pub interrupt: Option<interrupt::Interrupt>,
    /// Where this run's samples sit in a distributed run (default: the whole run, now).
    pub placement: Placement,
    /// Live tallies for `--metrics-addr`, when served.
    pub live: Option<Arc<live::LiveMetrics>>,
    /// What classifies each sample as it ends (good, degraded, rejected, failed) for
    /// progress and the live tallies (default: no patterns, no SLO).
    pub rules: Arc<crate::workload::outcome::Rules>,
}

/// A shard's place in a distributed run (`--shard`, `--start-at`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Placement {
    /// The whole run's index of each measured sample (request ids and dataset cases use
    /// it); `None` = `0..n`.
    pub measured_indices: Option<Vec<usize>>,
    /// Unix time at which the measured phase's clock starts (release offsets are relative
    /// to it); `None` = as soon as the warm-ups are done.
    pub start_at_unix_s: Option<f64>,
}

/// A failure of the engine itself (not of a sample: those are recorded outcomes).
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The control-plane runtime could not start.
    #[error("cannot start the runtime: {0}")]
    Runtime(#[from] std::io::Error),
    /// The coordinator could not start or vanished.
    #[error("coordinator failed: {0}")]
    Coordinator(String),
}

/// What came out of a run besides the samples: artifact (and trace) write errors.
#[derive(Debug)]
pub struct EngineOutput {
    /// Every sample, warm-ups flagged; each one's send lateness still as its sender
    /// handed it over (read it back with
    /// [`crate::workload::spool::lateness::restore_run`] before reading the values).
    pub run: RunRecord,
    /// Artifact and trace files that could not be written (path: error).
    pub artifact_errors: Vec<String>,
    /// What the reader must know about the run's own outputs (a recording's cut traces,
    /// media its listeners did not play: [`crate::workload::playback::past_window_note`]).
    pub warnings: Vec<String>,
    /// The run was interrupted: only samples that had started are in `run`.
    pub interrupted: bool,
    /// What opening the sessions cost ([`setup_cost`]); `None` where no session ran
    /// here (a result recomputed from a recording).
    pub setup: Option<setup_cost::SetupCost>,
}

/// The control-plane runtime and the session shards (`shards`, else one per core).
fn runtimes(
    shards: Option<usize>,
) -> std::io::Result<(tokio::runtime::Runtime, Vec<ThreadLocalActorSpawner>)> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("rtload-control")
        .enable_all()
        .build()?;
    let n_shards =
        shards.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let shards = (0..n_shards.max(1))
        .map(|_| ThreadLocalActorSpawner::new())
        .collect();
    Ok((rt, shards))
}

/// Run `workload` as `cfg` says and return every sample's record. Blocks the caller.
pub fn run(cfg: EngineConfig, workload: Arc<dyn WorkloadRun>) -> Result<EngineOutput, EngineError> {
    let (rt, shards) = runtimes(cfg.shards)?;
    let writer = (cfg.artifact_root.clone()).map(|root| writer::Writer::start(root, 2));
    let recording = cfg.record.clone().map(record::Running::start);
    let total = cfg.n_warmup + cfg.offsets_s.len();
    let interrupt = cfg.interrupt.clone();
    let switch = interrupt.as_ref().map(|i| i.switch.clone());
    let (tx, rx) = tokio::sync::oneshot::channel();
    let setup_cost = setup_cost::SetupTally::default();
    let args = CoordArgs {
        workload,
        url: cfg.url.clone(),
        headers: cfg.headers.clone(),
        n_warmup: cfg.n_warmup,
        offsets_s: cfg.offsets_s.clone(),
        holds_s: cfg.holds_s.clone(),
        max_concurrency: cfg.max_concurrency.unwrap_or(total.max(1)).max(1),
        shards,
        connect_timeout: cfg.connect_timeout,
        tls: cfg.tls.clone(),
        max_frame_bytes: cfg.max_frame_bytes,
        wire: cfg.wire.clone(),
        request_id_prefix: cfg.request_id_prefix.clone(),
        writer: writer.as_ref().map(writer::Writer::handle),
        lines: cfg.lines.clone(),
        record: recording.as_ref().map(record::Running::recorder),
        progress: cfg.progress.clone(),
        generator_bound_ms: cfg.generator_bound_ms,
        placement: cfg.placement.clone(),
        live: cfg.live.clone(),
        rules: Arc::clone(&cfg.rules),
        setup_cost: setup_cost.clone(),
        done: tx,
    };
    let run = rt.block_on(async move {
        let (coord, handle) = Actor::spawn(None, Coordinator, args)
            .await
            .map_err(|e| EngineError::Coordinator(e.to_string()))?;
        coord
            .cast(CoordMsg::Begin)
            .map_err(|e| EngineError::Coordinator(e.to_string()))?;
        let watcher = interrupt.map(|i| {
            let coord = coord.clone();
            tokio::spawn(async move {
                i.switch.triggered().await;
                let _ = coord.cast(CoordMsg::Interrupt { grace: i.grace });
                i.switch.cancelled().await;
                let _ = coord.cast(CoordMsg::CancelNow);
            })
        });
        let run = rx.await.map_err(|_| {
            EngineError::Coordinator("the coordinator stopped without a result".into())
        })?;
        let _ = handle.await;
        if let Some(w) = watcher {
            w.abort();
        }
        Ok::<_, EngineError>(run)
    })?;

    let artifact_errors = writer.map(writer::Writer::finish).unwrap_or_default();
    // A trace or manifest not written fails the run like any artifact.
    let interrupted = switch.is_some_and(|s| s.is_triggered());
    let (trace_errors, mut warnings) =
        (recording.map(|r| r.finish(&cfg.wire, interrupted))).unwrap_or_default();
    let played = run.samples.iter().filter_map(|s| s.playback.as_ref());
    warnings.extend(crate::workload::playback::past_window_note(played));
    Ok(EngineOutput {
        run,
        artifact_errors: [artifact_errors, trace_errors].concat(),
        warnings,
        interrupted,
        setup: Some(setup_cost.cost()),
    })
}
