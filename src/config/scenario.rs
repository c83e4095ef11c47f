//! Scenarios: the validated [`Scenario`] a run executes, built from a file (`load`,
//! `check`, `parse`) or in code ([`Scenario::builder`], for a workload written in Rust).
//!
//! A scenario file is `name`, an optional `[target]` (absent = the embedded server), a
//! `[workload]` whose `kind` picks a registered workload (which reads the rest of the
//! table itself), `[load]` (samples, warm-ups, arrivals, concurrency), `[output]`, and
//! optional `[server]`, `[thresholds]` and `[sweep]` tables. The file is read and parsed
//! once ([`ScenarioDoc`]); each section's parser gets its subtree, the command line's
//! values arrive as typed patches of their section. Unknown keys are errors; every
//! problem is collected and reported with file:line:col (or the flag that set the
//! value), the bad value and the fix.

pub use crate::util::scenario_doc::{Patch, ScenarioDoc, Section};
pub use crate::util::scenario_error::ScenarioError;
pub use crate::workload::WorkloadFlag;
pub use crate::workload::load::{Load, LoadOverrides, MAX_RATE, MAX_SAMPLES, MIN_RATE};

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::config::sweep::Sweep;
use crate::config::thresholds::Threshold;
use crate::engine::tls::TlsOptions;
use crate::engine::transport::Compression;
use crate::server::ServerConfig;
use crate::workload::DynWorkload;

mod raw;
mod sections;
mod target;
mod workload;

pub(crate) use raw::RawScenario;

/// A validated scenario, ready to run.
#[derive(Clone)]
pub struct Scenario {
    path: PathBuf,
    name: String,
    target: Option<String>,
    headers: Vec<(String, String)>,
    connect_timeout: Duration,
    tls: TlsOptions,
    max_frame_bytes: usize,
    compression: Compression,
    retry_rejected: u32,
    workload: Arc<dyn DynWorkload>,
    load: Load,
    /// A sweep point's own sample count; `None` = the workload's.
    samples: Option<usize>,
    output_json: Option<PathBuf>,
    sweep: Option<Sweep>,
    thresholds: Vec<Threshold>,
    slo: Vec<Threshold>,
    target_metrics: Option<(String, Vec<String>)>,
    server: ServerConfig,
    /// The `[load]` and workload flags applied over the file (a recording's manifest
    /// keeps them, so a recompute or replay runs what the run ran).
    flags: (LoadOverrides, Vec<WorkloadFlag>),
}

impl std::fmt::Debug for Scenario {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scenario")
            .field("path", &self.path)
            .field("name", &self.name)
            .field("target", &self.target)
            .field("workload", &self.workload.kind())
            .field("load", &self.load)
            .finish_non_exhaustive()
    }
}

impl Scenario {
    /// A scenario running `workload` (its `Descriptor::samples` measured samples) against
    /// the embedded server with the defaults of an empty file: one sample at a time, no
    /// warm-ups, no thresholds, no JSON result; set the rest on the builder.
    pub fn builder(workload: Arc<dyn DynWorkload>) -> ScenarioBuilder {
        let name = workload.kind().to_string();
        ScenarioBuilder(Scenario {
            path: PathBuf::new(),
            name,
            target: None,
            headers: Vec::new(),
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            tls: TlsOptions::default(),
            max_frame_bytes: crate::engine::transport::MAX_MESSAGE_BYTES,
            compression: Compression::default(),
            retry_rejected: 0,
            workload,
            load: Load::default(),
            samples: None,
            output_json: None,
            sweep: None,
            thresholds: Vec::new(),
            slo: Vec::new(),
            target_metrics: None,
            server: ServerConfig::default(),
            flags: Default::default(),
        })
    }

    /// A builder starting from this scenario (e.g. a sweep point's).
    pub fn to_builder(&self) -> ScenarioBuilder {
        ScenarioBuilder(self.clone())
    }

    /// The file it came from (empty for a scenario built in code).
    pub fn path(&self) -> &Path {
        &self.path
    }
    /// `name`, or the file stem.
    pub fn name(&self) -> &str {
        &self.name
    }
    /// `[target] url` (or `--target`); `None` = the embedded server on 127.0.0.1:0.
    pub fn target(&self) -> Option<&str> {
        self.target.as_deref()
    }
    /// `[target] headers` and `--header`s (values may be secrets; never printed).
    pub fn headers(&self) -> &[(String, String)] {
        &self.headers
    }
    /// `[target] connect_timeout_s` (default 10 s).
    pub fn connect_timeout(&self) -> Duration {
        self.connect_timeout
    }
    /// `[target] ca_cert` / `insecure_skip_verify` (used by `wss://` targets).
    pub fn tls(&self) -> &TlsOptions {
        &self.tls
    }
    /// `[target] max_frame_bytes`: largest inbound WebSocket frame or message (default
    /// 64 MiB), enforced from the frame header before the payload is buffered.
    pub fn max_frame_bytes(&self) -> usize {
        self.max_frame_bytes
    }
    /// `[target] compression` (`--compression` wins): what the handshake offers.
    pub fn compression(&self) -> Compression {
        self.compression
    }
    /// `[target] retry_rejected`: how many times an upgrade refused with 429 or 503 is
    /// tried again after its `Retry-After` (default 0).
    pub fn retry_rejected(&self) -> u32 {
        self.retry_rejected
    }
    /// The configured workload.
    pub fn workload(&self) -> &Arc<dyn DynWorkload> {
        &self.workload
    }
    /// Warm-ups, arrivals, concurrency.
    pub fn load(&self) -> &Load {
        &self.load
    }
    /// The `[load]` and workload flags the scenario was loaded with (none for one built
    /// in code): what `rtload run --record` keeps in the manifest.
    pub(crate) fn applied_flags(&self) -> (&LoadOverrides, &[WorkloadFlag]) {
        (&self.flags.0, &self.flags.1)
    }
    /// Measured samples to run: the workload's count (its `Descriptor::samples`), or a
    /// sweep point's own.
    pub fn samples(&self) -> usize {
        self.samples.unwrap_or_else(|| self.workload.samples())
    }
    /// `[output] json` (or `--output-json`): where the JSON result goes.
    pub fn output_json(&self) -> Option<&Path> {
        self.output_json.as_deref()
    }
    /// Where the JSON result goes, replaced (`rtload report --recompute` writes its own,
    /// never the recorded run's).
    pub(crate) fn set_output_json(&mut self, path: Option<PathBuf>) {
        self.output_json = path;
    }
    /// `[sweep]`: run the scenario at each of these points.
    pub fn sweep(&self) -> Option<&Sweep> {
        self.sweep.as_ref()
    }
    /// `[thresholds]`, checked against the workload's metric names.
    pub fn thresholds(&self) -> &[Threshold] {
        &self.thresholds
    }
    /// `[slo]`: per-session bounds (names from
    /// `workload::outcome::SESSION_METRICS`); a completed session breaking one
    /// is degraded.
    pub fn slo(&self) -> &[Threshold] {
        &self.slo
    }
    /// What classifies this scenario's sessions: `[load] reject_patterns` (else the
    /// workload's) and the `[slo]` bounds.
    pub fn outcome_rules(&self) -> crate::workload::outcome::Rules {
        let reject_patterns = self
            .load
            .reject_patterns
            .clone()
            .unwrap_or_else(|| self.workload.descriptor().reject_patterns.clone());
        let slo = self
            .slo
            .iter()
            .map(|t| {
                let (op, bound) = (t.op, t.bound);
                crate::workload::outcome::SessionBound {
                    metric: t.metric.clone(),
                    expr: t.expr.clone(),
                    holds: std::sync::Arc::new(move |v| op.holds(v, bound)),
                }
            })
            .collect();
        crate::workload::outcome::Rules {
            reject_patterns,
            slo,
        }
    }
    /// `[target] metrics_url` and the series to keep from it.
    pub fn target_metrics(&self) -> Option<&(String, Vec<String>)> {
        self.target_metrics.as_ref()
    }
    /// `[server]`: the embedded server's configuration (used only without a target).
    pub fn server(&self) -> &ServerConfig {
        &self.server
    }
}

/// Builds a [`Scenario`] in code: [`Scenario::builder`], setters, [`ScenarioBuilder::build`].
#[derive(Clone)]
pub struct ScenarioBuilder(Scenario);

impl ScenarioBuilder {
    /// The scenario's file (shown by `check` and the suite table).
    pub fn path(mut self, path: impl Into<PathBuf>) -> Self {
        self.0.path = path.into();
        self
    }
    /// Its name (default: the workload kind).
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.0.name = name.into();
        self
    }
    /// The target URL (default: the embedded server).
    pub fn target(mut self, url: impl Into<String>) -> Self {
        self.0.target = Some(url.into());
        self
    }
    /// Extra upgrade headers.
    pub fn headers(mut self, headers: Vec<(String, String)>) -> Self {
        self.0.headers = headers;
        self
    }
    /// The WebSocket handshake bound.
    pub fn connect_timeout(mut self, t: Duration) -> Self {
        self.0.connect_timeout = t;
        self
    }
    /// Client TLS options for `wss://`.
    pub fn tls(mut self, tls: TlsOptions) -> Self {
        self.0.tls = tls;
        self
    }
    /// The inbound frame limit.
    pub fn max_frame_bytes(mut self, n: usize) -> Self {
        self.0.max_frame_bytes = n;
        self
    }
    /// The compression offer.
    pub fn compression(mut self, c: Compression) -> Self {
        self.0.compression = c;
        self
    }
    /// Retries of an upgrade refused with 429 or 503 (at most
    /// `crate::engine::transport::refusal::MAX_RETRIES`).
    pub fn retry_rejected(mut self, n: u32) -> Self {
        self.0.retry_rejected = n;
        self
    }
    /// The workload.
    pub fn workload(mut self, w: Arc<dyn DynWorkload>) -> Self {
        self.0.workload = w;
        self
    }
    /// Warm-ups, arrivals, concurrency.
    pub fn load(mut self, load: Load) -> Self {
        self.0.load = load;
        self
    }
    /// Measured samples, instead of the workload's count (a sweep point's).
    pub fn samples(mut self, n: usize) -> Self {
        self.0.samples = Some(n);
        self
    }
    /// Write the JSON result (and its `.hlog`) here.
    pub fn output_json(mut self, path: impl Into<PathBuf>) -> Self {
        self.0.output_json = Some(path.into());
        self
    }
    /// Pass/fail conditions on the workload's metrics.
    pub fn thresholds(mut self, t: Vec<Threshold>) -> Self {
        self.0.thresholds = t;
        self
    }
    /// Per-session SLO bounds (`[slo]`; names from
    /// `workload::outcome::SESSION_METRICS`).
    pub fn slo(mut self, t: Vec<Threshold>) -> Self {
        self.0.slo = t;
        self
    }
    /// The embedded server's configuration.
    pub fn server(mut self, s: ServerConfig) -> Self {
        self.0.server = s;
        self
    }
    /// The scenario.
    pub fn build(self) -> Scenario {
        self.0
    }
}

/// `[target] connect_timeout_s`'s default.
const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Command-line values that override the file.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    /// `--target URL`.
    pub target: Option<String>,
    /// `--output-json PATH`.
    pub output_json: Option<PathBuf>,
    /// `[load]` overrides (vllm bench serve's flag names).
    pub load: LoadOverrides,
    /// The workload flags given (e.g. `--omniinteract-timeout-s 0`): the scenario's kind
    /// types each into a patch of its `[workload]` key (a flag it does not declare is an
    /// error naming the flag).
    pub workload: Vec<WorkloadFlag>,
    /// `--header KEY=VALUE` (win over `[target] headers` on the same name).
    pub headers: Vec<(String, String)>,
    /// `--ca-cert PATH` (wins over `[target] ca_cert`).
    pub ca_cert: Option<PathBuf>,
    /// `--insecure` (sets `[target] insecure_skip_verify = true`).
    pub insecure: bool,
    /// `--compression` (wins over `[target] compression`).
    pub compression: Option<Compression>,
}

#[cfg(test)]
thread_local! {
    /// How many scenario files this thread has read (tests count reads per load).
    static READS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Read and validate the scenario at `path`, applying `ov`. Returns every problem found.
/// The file is read once and parsed once.
pub fn load(path: &Path, ov: &Overrides) -> Result<Scenario, Vec<ScenarioError>> {
    parse(path, &read(path)?, ov)
}

/// [`load`] for `rtload check`: the same validation, without writing anything (an
/// OmniInteract archive is validated, not extracted).
pub fn check(path: &Path, ov: &Overrides) -> Result<Scenario, Vec<ScenarioError>> {
    let src = read(path)?;
    let doc = ScenarioDoc::parse(path, &src).map_err(|e| vec![e])?;
    sections::scenario(&doc, ov, true)
}

fn read(path: &Path) -> Result<String, Vec<ScenarioError>> {
    #[cfg(test)]
    READS.with(|c| c.set(c.get() + 1));
    crate::util::fs::read_text_bounded(path, crate::util::fs::MAX_SCENARIO_BYTES).map_err(|e| {
        vec![ScenarioError::Read {
            path: path.to_path_buf(),
            msg: e.to_string(),
        }]
    })
}

/// Validate scenario text `src` (named `path` in errors), applying `ov`.
pub fn parse(path: &Path, src: &str, ov: &Overrides) -> Result<Scenario, Vec<ScenarioError>> {
    let doc = ScenarioDoc::parse(path, src).map_err(|e| vec![e])?;
    sections::scenario(&doc, ov, false)
}

#[cfg(test)]
mod tests;
