//! The `replay` workload: `[workload] recording = "DIR"` read at build (through the
//! composition root's reader), one [`ReplaySession`] per sample over the recording's
//! measured sessions in turn, the pair metrics the recording declares; and the scenario
//! `rtload run --replay DIR` builds in memory ([`scenario_text`]).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;

use super::plan::{Pair, Plan, RecordedSession};
use super::report;
use super::session::{ReplaySession, ReplayValues};
use crate::util::scenario_doc::ScenarioDoc;
use crate::util::scenario_error::ScenarioError;
use crate::workload::{
    Descriptor, DynWorkload, FlagKind, FlagSpec, Report, RunRecord, SampleRecord, SessionContext,
    Workload, WorkloadError, WorkloadInput,
};

/// `[workload]` keys of a `replay` scenario.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReplayParams {
    /// Always `"replay"`.
    pub kind: String,
    /// The recording to replay: a directory written by `rtload run SCENARIO --record
    /// DIR`, relative to the scenario file.
    pub recording: PathBuf,
    /// Path appended to a target URL that has none (default: the recorded target's path,
    /// else `/`).
    pub path: Option<String>,
    /// Seconds past a recorded session's length to wait for expected replies still
    /// missing before the session fails (default 10). Range (0, 1e6].
    pub grace_s: Option<f64>,
}

/// The command-line options of the replay workload.
pub const FLAGS: &[FlagSpec] = &[FlagSpec {
    key: "grace_s",
    flag: "replay-grace-s",
    help: "Seconds past a recorded session's length to wait for missing replies (default 10)",
    value_name: "S",
    kind: FlagKind::Float,
}];

/// A recording as the composition root reads it: the measured sessions and the recorded
/// target's path.
#[derive(Debug, Clone, Default)]
pub struct Recording {
    /// The measured sessions, by index.
    pub sessions: Vec<RecordedSession>,
    /// The path of the recorded target URL, if the manifest names one.
    pub target_path: Option<String>,
}

/// Reads a recording directory (the engine's trace reader, supplied by the registry);
/// the error names the file and the fix.
pub type ReadFn = fn(&Path) -> Result<Recording, String>;

/// A configured replay workload.
#[derive(Debug)]
pub struct ReplayWorkload {
    plan: Plan,
    pairs: Arc<[Pair]>,
    grace: Duration,
    descriptor: Descriptor,
}

/// Build from a scenario, reading the recording with `read`.
pub fn build(
    input: &WorkloadInput<'_>,
    read: ReadFn,
) -> Result<Box<dyn DynWorkload>, Vec<ScenarioError>> {
    let p: ReplayParams = input.params()?;
    let mut errors = Vec::new();
    let grace = match p.grace_s {
        Some(x) if !(x.is_finite() && x > 0.0 && x <= 1e6) => {
            let msg = format!("`grace_s` must be a number of seconds in (0, 1e6] (got {x})");
            errors.push(input.key_error("grace_s", msg));
            10.0
        }
        x => x.unwrap_or(10.0),
    };
    let dir = input.base_dir().join(&p.recording);
    let recording = read(&dir).unwrap_or_else(|m| {
        let msg = format!("cannot replay {}: {m}", dir.display());
        errors.push(input.key_error("recording", msg));
        Recording::default()
    });
    let plan = match Plan::build(&recording.sessions) {
        Ok(plan) => plan,
        Err(m) if errors.is_empty() => {
            let msg = format!("{}: {m}", dir.display());
            errors.push(input.key_error("recording", msg));
            Plan::default()
        }
        Err(_) => Plan::default(),
    };
    let path = (p.path.clone().or(recording.target_path)).unwrap_or_else(|| "/".into());
    if !path.starts_with('/') {
        let msg = format!("`path` must start with `/` (got {path:?})");
        errors.push(input.key_error("path", msg));
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    let headline = plan
        .pairs
        .first()
        .map_or_else(|| "replay_missing_replies".into(), |p| p.metric.clone());
    let samples = input.samples_requested.unwrap_or(plan.sessions.len());
    let mut descriptor = Descriptor::new(
        super::KIND,
        path,
        samples,
        report::catalogue(&plan, &headline),
    );
    let lengths: Vec<f64> = (plan.sessions.iter())
        .map(|s| s.duration.as_secs_f64())
        .collect();
    descriptor.expected_session_s = Some(lengths.iter().sum::<f64>() / lengths.len() as f64);
    descriptor.headline = headline.into();
    let metrics: Vec<&str> = plan.pairs.iter().map(|p| p.metric.as_str()).collect();
    descriptor.params = vec![
        ("recording".into(), dir.display().to_string()),
        ("recorded sessions".into(), plan.sessions.len().to_string()),
        ("grace".into(), format!("{grace} s")),
        ("metrics".into(), metrics.join(", ")),
    ];
    Ok(Box::new(ReplayWorkload {
        pairs: plan.pairs.clone().into(),
        plan,
        grace: Duration::from_secs_f64(grace),
        descriptor,
    }))
}

/// The `[load]` keys a replay keeps from the recorded scenario: what decides the arrival
/// plan (offsets are a function of them) and the concurrency.
const KEPT_LOAD_KEYS: &[&str] = &[
    "warmup_samples",
    "request_rate",
    "burstiness",
    "max_concurrency",
    "seed",
    "ramp_up_strategy",
    "ramp_up_start_rps",
    "ramp_up_end_rps",
    "shards",
    "generator_bound_ms",
    "reject_patterns",
    "series_interval_s",
];

/// The scenario `rtload run --replay DIR` runs: the recording at `dir` as a `replay`
/// workload, with the recorded scenario's (`recorded`, its TOML text) name and the
/// `[load]` keys that decide arrivals and concurrency, so sessions arrive at the recorded
/// offsets: those of the run's effective `[load]` (`effective`: the manifest's
/// `scenario.load`, the file's with the `[load]` flags given when recording applied),
/// else of the file's. No target: the caller's `--target` gives it.
pub fn scenario_text(
    dir: &Path,
    recorded: Option<&str>,
    effective: Option<&serde_json::Value>,
) -> String {
    /// What a replay reads of the recorded scenario.
    #[derive(Default, Deserialize)]
    struct Recorded {
        name: Option<String>,
        load: Option<toml::Table>,
    }
    let mut recorded: Recorded = recorded
        .and_then(|t| ScenarioDoc::parse(Path::new("scenario"), t).ok())
        .and_then(|d| d.deserialize().ok())
        .unwrap_or_default();
    if let Some(load) = effective.and_then(|v| serde_json::from_value(v.clone()).ok()) {
        recorded.load = Some(load);
    }
    let mut doc = toml::Table::new();
    let name = format!("replay-{}", recorded.name.as_deref().unwrap_or("recording"));
    doc.insert("name".into(), name.into());
    let mut workload = toml::Table::new();
    workload.insert("kind".into(), super::KIND.into());
    workload.insert("recording".into(), dir.display().to_string().into());
    doc.insert("workload".into(), workload.into());
    if let Some(load) = &recorded.load {
        let kept: toml::Table = (load.iter())
            .filter(|(k, _)| KEPT_LOAD_KEYS.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        doc.insert("load".into(), kept.into());
    }
    toml::to_string(&doc).unwrap_or_default()
}

impl Workload for ReplayWorkload {
    type Session = ReplaySession;
    fn descriptor(&self) -> &Descriptor {
        &self.descriptor
    }
    fn headline_ms(&self, rec: &SampleRecord<ReplayValues>) -> Option<f64> {
        let out = rec.output.as_ref()?;
        out.latencies
            .get(self.descriptor.headline.as_ref())?
            .first()
            .copied()
    }
    fn session(&self, ctx: &SessionContext) -> ReplaySession {
        let s = &self.plan.sessions[ctx.case_index(self.plan.sessions.len())];
        ReplaySession::new(Arc::clone(s), Arc::clone(&self.pairs), self.grace)
    }
    fn report(&self, run: RunRecord<ReplayValues>) -> Result<Box<dyn Report>, WorkloadError> {
        Ok(Box::new(report::build(&self.plan, run)))
    }
}
