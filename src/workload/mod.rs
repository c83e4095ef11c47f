//! The workload seam: what the engine asks of a protocol, and what a registered kind is.
//!
//! The engine (coordinator, shards, sample actors) knows nothing of any one protocol. A
//! workload is a library type behind [`Workload`]: it prepares its samples before timing,
//! makes one pure [`Session`] state machine per sample (inbound events and timer wake-ups
//! in, outbound messages and observations out, no sockets), and turns the finished run
//! into a [`Report`]. Kinds are registered by name in `config::registry`.
//!
//! The worked example of a [`Session`] is in the public `rtload::workload` docs (`src/lib.rs`).
//!
//! A real workload also implements [`Workload`] (session factory + report over its
//! sessions' typed outputs) and adds a [`WorkloadKind`] entry to `config::registry`;
//! nothing in the engine changes. The engine and the runner hold it as
//! `Arc<dyn DynWorkload>` (a blanket impl; see [`erased`]), so a workload defined outside
//! this crate can also be plugged into a scenario directly.

pub mod catalogue;
pub mod env_info;
pub mod erased;
#[cfg(test)]
pub(crate) mod fuzz;
mod input;
#[cfg(test)]
pub(crate) use input::patches_of;
pub mod kit;
pub mod load;
pub mod omni;
pub mod outcome;
pub mod plan;
pub mod playback;
mod record;
pub mod replay;
pub mod results;
pub mod scripted;
pub mod shard;
pub mod soak;
pub mod spool;
pub mod steps;
pub mod transcription;
pub mod video;

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::PathBuf;

use bytes::Bytes;
use tokio::time::Instant;

use crate::util::scenario_error::ScenarioError;
/// Shared UTF-8 bytes: the text payload of [`Inbound`] and [`Outbound`] frames.
pub use bytestring::ByteString;
pub use erased::{DynSession, DynWorkload, WorkloadRun};
pub use input::{DatasetSynth, FlagKind, FlagSpec, SynthOptions, WorkloadFlag, WorkloadInput};
pub use outcome::{Failure, FailureKind};
pub use record::{RunRecord, SampleRecord};

/// A WebSocket message as the session sees it (control frames are the transport's business).
#[derive(Debug, Clone, PartialEq)]
pub enum Inbound {
    /// A text frame (the received bytes, validated UTF-8, not copied).
    Text(ByteString),
    /// A binary frame.
    Binary(Bytes),
}

/// A message the session asks the sender to write.
#[derive(Debug, Clone, PartialEq)]
pub enum Outbound {
    /// A text frame. A `ByteString` is a shared `Bytes`: a message built once (an append
    /// prepared before timing) is sent by every session with no copy.
    Text(ByteString),
    /// A binary frame.
    Binary(Bytes),
}

/// One outbound message and the time the protocol intended it to leave.
#[derive(Debug, Clone, PartialEq)]
pub struct OutMsg {
    /// What to send.
    pub msg: Outbound,
    /// When the schedule meant it to be sent; the sender records `actual - intended` as
    /// lateness. `None` for reactive messages that have no schedule.
    pub intended: Option<Instant>,
}

/// A unit of received media handed to the sample's playback role.
#[derive(Debug, Clone, PartialEq)]
pub struct MediaUnit {
    /// Receipt time of the message that carried it.
    pub at: Instant,
    /// Playable duration in seconds at the playback rate.
    pub duration_s: f64,
    /// Which stream it belongs to: streams play one after another (0 for a single stream
    /// such as a video rollout; the response ordinal for spoken responses).
    pub stream: u64,
    /// Order within the stream (chunk index); equal indices keep arrival order.
    pub index: u64,
}

/// A file the sample's artifact writer publishes after timing (temp file + rename).
#[derive(Debug, Clone)]
pub struct Artifact {
    /// Path relative to the artifact root the workload was configured with.
    pub rel_path: PathBuf,
    /// The file's bytes.
    pub body: ArtifactBody,
}

/// Where an artifact's bytes are.
#[derive(Debug, Clone)]
pub enum ArtifactBody {
    /// In memory.
    Bytes(Bytes),
    /// Spilled to a run's spool while the session ran: the writer thread copies the span
    /// out piece by piece (a recording is never held whole in memory).
    Spooled(std::sync::Arc<spool::Spool>, spool::Span),
}

/// What a session asks of its sample actors in response to one input.
#[derive(Debug, Default)]
pub struct Effects {
    /// Messages for the sender, in order.
    pub outbound: Vec<OutMsg>,
    /// Media for the playback role.
    pub media: Vec<MediaUnit>,
    /// Human-readable lines for the live log (e.g. `--print-chunks`), printed on stdout.
    pub lines: Vec<String>,
    /// The next time the session wants [`Session::on_wake`]; replaces any earlier request.
    pub wake_at: Option<Instant>,
    /// Set once the session has decided its outcome; the sample then closes the socket.
    pub finish: Option<Result<(), Failure>>,
}

impl Effects {
    /// Queue a message for the sender.
    pub fn send(&mut self, msg: Outbound, intended: Option<Instant>) {
        self.outbound.push(OutMsg { msg, intended });
    }
    /// Ask to be woken at `at` (the earliest request in one round wins).
    pub fn wake(&mut self, at: Instant) {
        self.wake_at = Some(self.wake_at.map_or(at, |w| w.min(at)));
    }
    /// End the session successfully.
    pub fn succeed(&mut self) {
        self.finish.get_or_insert(Ok(()));
    }
    /// End the session with a protocol failure (the first decision wins).
    pub fn fail(&mut self, msg: impl Into<String>) {
        self.fail_as(FailureKind::Protocol, msg);
    }
    /// End the session with a failure of `kind` (the first decision wins).
    pub fn fail_as(&mut self, kind: FailureKind, msg: impl Into<String>) {
        self.finish.get_or_insert(Err(Failure::new(kind, msg)));
    }
}

/// A secret value (API key, auth header): its `Debug` never shows it.
#[derive(Clone)]
pub struct Secret(std::sync::Arc<str>);

impl Secret {
    /// Wrap a secret.
    pub fn new(s: impl Into<std::sync::Arc<str>>) -> Self {
        Self(s.into())
    }
    /// The value, for the one place that sends it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(<redacted>)")
    }
}

/// How to open the session's socket.
#[derive(Clone, PartialEq)]
pub struct ConnectSpec {
    /// Full `ws://` or `wss://` URL.
    pub url: String,
    /// Extra upgrade headers. Values may be secrets: they are never logged or saved.
    pub headers: Vec<(String, String)>,
}

impl std::fmt::Debug for ConnectSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.headers.iter().map(|(k, _)| k.as_str()).collect();
        f.debug_struct("ConnectSpec")
            .field("url", &crate::util::target::redact_url(&self.url))
            .field("header_names", &names)
            .finish()
    }
}

/// One sample's protocol logic as a pure state machine: no sockets, no clocks of its own.
///
/// The sample supervisor calls these methods on the shard thread with receipt times taken
/// where the events happened, and carries out the returned [`Effects`].
pub trait Session: Send + 'static {
    /// The session's own record, handed back to [`Workload::report`] in its
    /// [`SampleRecord::output`].
    type Output: Send + 'static;
    /// How to open this session's socket, given the run's target (resolved URL and
    /// scenario headers). The default uses it unchanged; a protocol may add query
    /// parameters or headers (e.g. a session id, a request id).
    fn connect(&self, target: &ConnectSpec) -> ConnectSpec {
        target.clone()
    }
    /// The socket is open; send the opening messages.
    fn on_open(&mut self, now: Instant, fx: &mut Effects);
    /// One inbound message, timestamped when it was read.
    fn on_inbound(&mut self, msg: Inbound, at: Instant, fx: &mut Effects);
    /// A wake-up the session asked for with [`Effects::wake`].
    fn on_wake(&mut self, now: Instant, fx: &mut Effects);
    /// The peer closed the socket (or the read side ended) before the session finished.
    /// The default fails with the reference's message.
    fn on_closed(&mut self, _at: Instant, reason: Option<String>, fx: &mut Effects) {
        let why = reason.map(|r| format!(": {r}")).unwrap_or_default();
        fx.fail_as(
            FailureKind::ClosedEarly,
            format!("the server closed the WebSocket before the session finished{why}"),
        );
    }
    /// Files to publish once the sample has finished (off the timing path).
    fn artifacts(&mut self) -> Vec<Artifact> {
        Vec::new()
    }
    /// The headline metric so far, ms: what [`Workload::headline_ms`] would read from
    /// this session's record if it ended now (a held session's mean TTFP over the
    /// responses it had). The progress line shows it while the session is in flight; read
    /// after each inbound message, so it must be cheap. `None` (the default): none yet,
    /// or the workload shows none until the session ends.
    fn headline_so_far_ms(&self) -> Option<f64> {
        None
    }
    /// The workload-specific record of this session, handed back to [`Workload::report`].
    fn into_output(self) -> Self::Output;
}

/// A workload's session, or a fixed failure when the workload cannot build a real one
/// for a sample (it fails as soon as its socket opens, as a [`FailureKind::Report`]: the
/// sample is then a recorded failure, never a crash). Its output is `None` then.
#[derive(Debug)]
pub enum MaybeFailed<S> {
    /// A real session.
    Ready(S),
    /// The message the sample fails with.
    Failed(String),
}

impl<S: Session> Session for MaybeFailed<S> {
    type Output = Option<S::Output>;
    fn connect(&self, target: &ConnectSpec) -> ConnectSpec {
        match self {
            MaybeFailed::Ready(s) => s.connect(target),
            MaybeFailed::Failed(_) => target.clone(),
        }
    }
    fn on_open(&mut self, now: Instant, fx: &mut Effects) {
        match self {
            MaybeFailed::Ready(s) => s.on_open(now, fx),
            MaybeFailed::Failed(m) => fx.fail_as(FailureKind::Report, m.clone()),
        }
    }
    fn on_inbound(&mut self, msg: Inbound, at: Instant, fx: &mut Effects) {
        if let MaybeFailed::Ready(s) = self {
            s.on_inbound(msg, at, fx);
        }
    }
    fn on_wake(&mut self, now: Instant, fx: &mut Effects) {
        if let MaybeFailed::Ready(s) = self {
            s.on_wake(now, fx);
        }
    }
    fn on_closed(&mut self, at: Instant, reason: Option<String>, fx: &mut Effects) {
        if let MaybeFailed::Ready(s) = self {
            s.on_closed(at, reason, fx);
        }
    }
    fn artifacts(&mut self) -> Vec<Artifact> {
        match self {
            MaybeFailed::Ready(s) => s.artifacts(),
            MaybeFailed::Failed(_) => Vec::new(),
        }
    }
    fn headline_so_far_ms(&self) -> Option<f64> {
        match self {
            MaybeFailed::Ready(s) => s.headline_so_far_ms(),
            MaybeFailed::Failed(_) => None,
        }
    }
    fn into_output(self) -> Self::Output {
        match self {
            MaybeFailed::Ready(s) => Some(s.into_output()),
            MaybeFailed::Failed(_) => None,
        }
    }
}

/// A workload's summary of a run: text for people, JSON for machines, named numbers for
/// thresholds and comparisons.
pub trait Report: Send {
    /// The terminal report.
    fn render_text(&self) -> String;
    /// The workload's JSON result document.
    fn to_json(&self) -> serde_json::Value;
    /// The result file's text for `doc` (the runner's completed [`Report::to_json`];
    /// default: pretty-printed with 2 spaces and a trailing newline; a workload may need a
    /// dialect, e.g. Python's bare `NaN`).
    fn json_text(&self, doc: &serde_json::Value) -> String {
        let mut t = serde_json::to_string_pretty(doc).unwrap_or_default();
        t.push('\n');
        t
    }
    /// The run's distribution metrics, each recorded once as raw values (measured
    /// samples only): the flat `<name>.<stat>` metrics, the JSON `rtload.distributions`
    /// and the `.hlog` tags are all read from it (see `results`).
    fn recorded(&self) -> &results::Recorded;
    /// The run's scalar metrics (counts, totals, rates, ratios: everything that is not a
    /// distribution statistic); missing values are absent.
    fn scalars(&self) -> BTreeMap<String, f64>;
    /// Every flat metric (e.g. `video_rtf.mean`): the scalars plus each recorded
    /// distribution's statistics. What thresholds, `compare` and sweeps read.
    fn metrics(&self) -> BTreeMap<String, f64> {
        let mut m = self.scalars();
        m.extend(self.recorded().flat());
        m
    }
    /// Measured samples the engine saw succeed but the report failed (e.g. too few
    /// chunks for the metrics): `(sample position among measured samples, message)`.
    /// The runner counts them like any other failure (exit code 1).
    fn report_failures(&self) -> Vec<(usize, String)> {
        Vec::new()
    }
    /// Files the report had to write (artifact bundles, batch summaries, manifests) and
    /// could not, each naming the file and the OS error: every one fails the run
    /// (publication is part of the verdict).
    fn publication_errors(&self) -> Vec<String> {
        Vec::new()
    }
    /// Things the reader must know about the numbers (e.g. a per-turn metric with fewer
    /// values than completed turns); printed after the report and written as
    /// `rtload.warnings`.
    fn warnings(&self) -> Vec<String> {
        Vec::new()
    }
}

/// The typed output of workload `W`'s sessions.
pub type Output<W> = <<W as Workload>::Session as Session>::Output;

/// What a configured workload is, as data: every fact the runner, the engine, `check`
/// and the reports read, built once when the workload is configured. A workload's
/// behaviour is the few methods of [`Workload`]; everything else is here.
#[derive(Debug, Clone)]
pub struct Descriptor {
    /// The registered kind name (`video-cadence`).
    pub kind: Cow<'static, str>,
    /// Path appended to a target URL that has none (e.g. `/v1/realtime/video`).
    pub default_path: Cow<'static, str>,
    /// Human-readable resolved parameters, for `rtload check` and report headers.
    pub params: Vec<(String, String)>,
    /// Measured samples to run (one rollout, one dataset case, …).
    pub samples: usize,
    /// Every metric the report can produce for this configuration, with unit,
    /// direction, origin, merge rule and headline flag.
    pub catalogue: catalogue::Catalogue,
    /// The metric live progress shows (e.g. `ttfc`), in milliseconds.
    pub headline: Cow<'static, str>,
    /// How the playback role buffers before it starts each stream.
    pub playback: playback::PlaybackConfig,
    /// Where the workload's artifacts are published, if it publishes any.
    pub artifact_root: Option<PathBuf>,
    /// A folder the workload clears and writes itself (in `prepare` and `report`, not
    /// through the artifact writer), if any: `rtload report --recompute` will not run
    /// such a workload again over a run's outputs (see [`Self::output_keys`]).
    pub output_dir: Option<PathBuf>,
    /// The `[workload]` keys that name every place the workload writes itself (its
    /// [`Self::output_dir`], a saved result's folder), each set by one of its kind's
    /// flags: `rtload report --recompute` points each into a scratch folder of its own,
    /// so running the workload again leaves the recorded run's outputs alone. Empty: a
    /// workload with an output folder is not recomputed.
    pub output_keys: Vec<&'static str>,
    /// Files the workload may keep open for each running session (counted in the
    /// open-file budget checked before the run).
    pub files_per_session: u64,
    /// How long one session should last against a server that keeps real time, when
    /// known without running (for `rtload check`).
    pub expected_session_s: Option<f64>,
    /// Things the user should know before the run starts (printed by the CLI).
    pub warnings: Vec<String>,
    /// The server `error` events that mean "full, try later" for this workload's
    /// servers (default none); `[load] reject_patterns` replaces them.
    pub reject_patterns: Vec<outcome::RejectPattern>,
}

impl Descriptor {
    /// A descriptor with `kind`, `default_path`, `samples` and `catalogue`; headline
    /// `latency`, default playback, no artifacts, nothing else known.
    pub fn new(
        kind: impl Into<Cow<'static, str>>,
        default_path: impl Into<Cow<'static, str>>,
        samples: usize,
        mut catalogue: catalogue::Catalogue,
    ) -> Self {
        catalogue.merge(&outcome::classes_catalogue());
        Self {
            kind: kind.into(),
            default_path: default_path.into(),
            params: Vec::new(),
            samples,
            catalogue,
            headline: Cow::Borrowed("latency"),
            playback: playback::PlaybackConfig::default(),
            artifact_root: None,
            output_dir: None,
            output_keys: Vec::new(),
            files_per_session: 0,
            expected_session_s: None,
            warnings: Vec::new(),
            reject_patterns: Vec::new(),
        }
    }
}

/// Why a workload could not prepare its inputs or report a run.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum WorkloadError {
    /// Work before timing failed (decoding media, taking an output lock): a
    /// configuration error, no sample runs.
    #[error("{0}")]
    Prepare(String),
    /// The run's outputs cannot fit where they go (found before timing, so nothing ran):
    /// the run fails as a publication failure would, not as a configuration error.
    #[error("{0}")]
    NoSpace(String),
    /// The report of a finished run could not be built.
    #[error("{0}")]
    Report(String),
}

/// A configured workload: what it is ([`Descriptor`]), a session factory and a report
/// builder over its sessions' typed outputs. The engine holds it erased, as
/// `Arc<dyn DynWorkload>`.
pub trait Workload: Send + Sync + 'static {
    /// The session state machine it hands out per sample.
    type Session: Session;
    /// What this workload is (built once).
    fn descriptor(&self) -> &Descriptor;
    /// Work done once before timing starts (e.g. decoding media, taking an output
    /// lock); returns what the user should know about it. A failure is a configuration
    /// error: no sample runs.
    fn prepare(&self) -> Result<Vec<String>, WorkloadError> {
        Ok(Vec::new())
    }
    /// The session for sample `ctx.idx`.
    fn session(&self, ctx: &SessionContext) -> Self::Session;
    /// Summarize a finished run.
    fn report(&self, run: RunRecord<Output<Self>>) -> Result<Box<dyn Report>, WorkloadError>;
    /// The headline metric ([`Descriptor::headline`]) of one finished sample, in
    /// milliseconds, when it has one.
    fn headline_ms(&self, _rec: &SampleRecord<Output<Self>>) -> Option<f64> {
        None
    }
    /// The run's spool, when the workload keeps one (prepared): the engine spills each
    /// sample's send lateness there and reads it back after the run.
    fn spool(&self) -> Option<&spool::Spool> {
        None
    }
}

/// What the engine tells a workload about the sample it wants a session for.
#[derive(Debug, Clone)]
pub struct SessionContext {
    /// Sample index (warm-ups first).
    pub idx: usize,
    /// True for warm-up samples (no media collected, no artifacts).
    pub warmup: bool,
    /// The resolved WebSocket URL.
    pub url: String,
    /// The request id (`<prefix><measured index>`), `None` for warm-ups.
    pub request_id: Option<String>,
    /// Position among the measured samples (`None` for warm-ups).
    pub measured_index: Option<usize>,
    /// How long the session is held from its open, seconds (`[load] duration_s`; under
    /// a staircase arrival, the time left from its release to the run's last step's
    /// end, so every step's sessions stream until the last step has been judged).
    /// `None` for warm-ups and when nothing holds sessions: they last as their media.
    pub hold_s: Option<f64>,
}

impl SessionContext {
    /// Which of `n` prepared inputs this sample uses: measured sample `i` uses input
    /// `i`; warm-ups cycle through the inputs from the first.
    pub fn case_index(&self, n: usize) -> usize {
        self.measured_index.unwrap_or(self.idx) % n.max(1)
    }
}

impl WorkloadKind {
    /// The option `--flag` (named without dashes) of this kind, if it declares one.
    pub fn flag(&self, flag: &str) -> Option<&'static FlagSpec> {
        self.flags.iter().find(|f| f.flag == flag)
    }

    /// Whether one of this kind's families, or one of its aliases, declares `name`.
    pub fn declares(&self, name: &str) -> bool {
        let target = self
            .aliases
            .iter()
            .find(|(a, _)| *a == name)
            .map_or(name, |(_, t)| t);
        self.families.iter().any(|f| f.covers(target))
    }
}

/// Builds a workload from a scenario, or lists every problem found.
pub type BuildFn = fn(&WorkloadInput<'_>) -> Result<Box<dyn DynWorkload>, Vec<ScenarioError>>;

/// One registered workload kind.
pub struct WorkloadKind {
    /// The `kind = "..."` name.
    pub name: &'static str,
    /// One line for `--help` and errors.
    pub summary: &'static str,
    /// Build from a scenario.
    pub build: BuildFn,
    /// Its command-line options: one flag per `[workload]` key a flag may set (clap's
    /// arguments, `--help` and every error about a flag's value come from here).
    pub flags: &'static [FlagSpec],
    /// The `--help` heading of its flags (`OmniInteract workload`).
    pub flag_heading: &'static str,
    /// The test dataset `rtload dataset synth` writes for it, if any.
    pub dataset: Option<DatasetSynth>,
    /// The JSON Schema of its `[workload]` table (from the type `build` parses).
    pub schema: fn(&mut schemars::SchemaGenerator) -> schemars::Schema,
    /// Its metric families (see [`catalogue::Family`]): how result files written before
    /// the catalogue existed are read.
    pub families: &'static [catalogue::Family<'static>],
    /// Its headline metrics, in display order.
    pub headline: &'static [&'static str],
    /// Names earlier results used, each with the metric it stands for (thresholds and
    /// `compare` accept them).
    pub aliases: &'static [(&'static str, &'static str)],
    /// Its sessions go on for `[load] duration_s` when given (a soak, read from
    /// `WorkloadInput::hold_s`); a kind without it refuses `duration_s`.
    pub holds_sessions: bool,
}
