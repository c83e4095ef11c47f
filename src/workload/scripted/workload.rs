//! The `scripted` workload: `[workload]` keys, the script and dataset read at build
//! (positioned errors), audio decoded in `prepare` (before timing), one interpreter
//! session per sample, declared metrics evaluated per session.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use serde::Deserialize;
use tokio::time::Instant;

use super::dataset::{self, ItemSpec};
use super::interp::{Interp, Item, Vars};
use super::metric::Kind;
use super::parse::{self, Defaults};
use super::report::{self, SessionValues};
use super::script::Script;
use crate::util::pacing::PacingMode;
use crate::util::pacing::parse_pacing;
use crate::util::scenario_error::ScenarioError;
use crate::workload::{
    Descriptor, DynWorkload, Effects, FlagKind, FlagSpec, Inbound, Report, RunRecord, SampleRecord,
    Session, SessionContext, Workload, WorkloadError, WorkloadInput,
};

/// `[workload]` keys of a `scripted` scenario.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScriptedParams {
    /// Always `"scripted"`.
    pub kind: String,
    /// Path appended to a target URL that has none (default `/v1/realtime`).
    pub path: Option<String>,
    /// `${model}` in templates (default `"default"`).
    pub model: Option<String>,
    /// Items: a directory of WAV files (with optional `<name>.txt` reference text) or a
    /// JSONL manifest `{"audio": ..., <fields>}` (`audio` may be left out when no step
    /// streams); relative to the scenario file.
    pub dataset: Option<PathBuf>,
    /// Sample rate of the streamed PCM16 mono audio, Hz (default 16000). Range
    /// [8000, 192000].
    pub sample_rate: Option<u32>,
    /// Default pacing of `stream` steps: `"realtime"`, `"saturate"` or `"<f>x"`.
    pub pacing: Option<String>,
    /// Whole-session limit, seconds (default 600). Range (0, 1e6].
    pub timeout_s: Option<f64>,
    /// Default `await` timeout, seconds (default 30). Range (0, 1e6].
    pub await_timeout_s: Option<f64>,
    /// The declared metric live progress shows, in ms (default: the first duration).
    pub headline: Option<String>,
    /// The steps, in order: tables with one of `send`, `send_text`, `send_binary`,
    /// `stream`, `await`, `mark`, `repeat` (see README "Your own protocol").
    #[schemars(with = "Option<Vec<serde_json::Map<String, serde_json::Value>>>")]
    pub steps: Option<Vec<toml::Value>>,
    /// Patterns that fail the session, e.g. `[{ type = "error" }]`.
    #[schemars(with = "Option<Vec<serde_json::Map<String, serde_json::Value>>>")]
    pub fail_on: Option<Vec<toml::Value>>,
    /// Named event patterns recorded for metrics.
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub events: Option<toml::Table>,
    /// Declared metrics: `name = "expr"` or `name = { expr, unit, better, description }`.
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub metrics: Option<toml::Table>,
}

/// The command-line options of the scripted workload: the `vllm bench serve` names it
/// shares with the built-in kinds; each sets the `[workload]` key beside it.
pub const FLAGS: &[FlagSpec] = &[
    FlagSpec {
        key: "model",
        flag: "model",
        help: "`${model}` in templates",
        value_name: "MODEL",
        kind: FlagKind::Text,
    },
    FlagSpec {
        key: "pacing",
        flag: "pacing",
        help: "Default pacing of `stream` steps: realtime, saturate, or a speed factor like 2x",
        value_name: "MODE",
        kind: FlagKind::Text,
    },
];

/// A configured scripted workload.
#[derive(Debug)]
pub struct ScriptedWorkload {
    pub(super) params: ScriptedParams,
    pub(super) script: Arc<Script>,
    wanted: Arc<[String]>,
    items: Vec<ItemSpec>,
    sample_rate: u32,
    pacing: PacingMode,
    headline: String,
    prepared: OnceLock<Vec<Arc<Item>>>,
    descriptor: Descriptor,
}

/// Build from a scenario (registered in `config::registry`, the composition root).
pub fn build(input: &WorkloadInput<'_>) -> Result<Box<dyn DynWorkload>, Vec<ScenarioError>> {
    let p: ScriptedParams = input.params()?;
    let mut errors = Vec::new();
    let err = |key: &str, msg: String| input.key_error(key, msg);
    let pacing = parse_pacing(p.pacing.as_deref())
        .unwrap_or_else(|m| (errors.push(err("pacing", m)), PacingMode::Realtime).1);
    let secs = |errors: &mut Vec<ScenarioError>, key: &str, v: Option<f64>, default: f64| match v {
        Some(x) if !(x.is_finite() && x > 0.0 && x <= 1e6) => {
            errors.push(err(
                key,
                format!("`{key}` must be a number of seconds > 0 (got {x})"),
            ));
            Duration::from_secs_f64(default)
        }
        x => Duration::from_secs_f64(x.unwrap_or(default)),
    };
    let timeout = secs(&mut errors, "timeout_s", p.timeout_s, 600.0);
    let await_timeout = secs(&mut errors, "await_timeout_s", p.await_timeout_s, 30.0);
    let sample_rate = p.sample_rate.unwrap_or(16_000);
    if !(8_000..=192_000).contains(&sample_rate) {
        errors.push(err(
            "sample_rate",
            format!("`sample_rate` must be 8000..=192000 Hz (got {sample_rate})"),
        ));
    }
    let path = p.path.clone().unwrap_or_else(|| "/v1/realtime".into());
    if !path.starts_with('/') {
        errors.push(err(
            "path",
            format!("`path` must start with `/` (got {path:?})"),
        ));
    }
    let items = items(input, p.dataset.as_deref(), &mut errors);
    let defaults = Defaults {
        pacing,
        await_timeout,
        timeout,
        item_fields: p.dataset.as_ref().map(|_| dataset::common_fields(&items)),
    };
    let script = match parse::parse(input.section.doc(), &defaults) {
        Ok(s) => s,
        Err(mut e) => {
            errors.append(&mut e);
            Script::default()
        }
    };
    if script.streams()
        && let Err(m) = dataset::require_audio(&items)
    {
        errors.push(err("dataset", m));
    }
    let headline = resolve_headline(input, p.headline.as_ref(), &script, &mut errors);
    if !errors.is_empty() {
        return Err(errors);
    }
    let samples = input.samples_requested.unwrap_or(items.len().max(1));
    let mut descriptor = Descriptor::new(
        super::KIND,
        path,
        samples,
        report::catalogue(&script.metrics, &headline),
    );
    descriptor.headline = headline.clone().into();
    let mut w = ScriptedWorkload {
        params: p,
        wanted: script.wanted_types().into(),
        script: Arc::new(script),
        items,
        sample_rate,
        pacing,
        headline,
        prepared: OnceLock::new(),
        descriptor,
    };
    w.descriptor.params = w.params();
    Ok(Box::new(w))
}

/// The dataset's items (none without `dataset`), relative to the scenario file.
fn items(
    input: &WorkloadInput<'_>,
    dataset: Option<&Path>,
    errors: &mut Vec<ScenarioError>,
) -> Vec<ItemSpec> {
    let base = input.base_dir();
    match dataset {
        None => Vec::new(),
        Some(d) => dataset::discover(&base.join(d)).unwrap_or_else(|m| {
            errors.push(input.key_error("dataset", m));
            Vec::new()
        }),
    }
}

/// The headline metric: `headline` if the script declares it (else an error, unless
/// earlier errors make the check moot), by default the first duration metric.
fn resolve_headline(
    input: &WorkloadInput<'_>,
    headline: Option<&String>,
    script: &Script,
    errors: &mut Vec<ScenarioError>,
) -> String {
    match headline {
        Some(h) if !script.metrics.iter().any(|m| &m.name == h) && errors.is_empty() => {
            errors.push(input.key_error("headline", format!("`headline` names no declared metric (got {h:?}); declare it under [workload.metrics]")));
            String::new()
        }
        Some(h) => h.clone(),
        // The first duration metric (progress shows milliseconds).
        None => script
            .metrics
            .iter()
            .find(|m| m.unit == "ms")
            .map_or_else(|| "latency".into(), |m| m.name.clone()),
    }
}

impl ScriptedWorkload {
    fn params(&self) -> Vec<(String, String)> {
        let mut d = vec![
            ("steps".into(), self.script.steps.len().to_string()),
            ("pacing".into(), self.pacing.to_string()),
            ("sample rate".into(), format!("{} Hz", self.sample_rate)),
        ];
        if let Some(ds) = &self.params.dataset {
            d.push((
                "dataset".into(),
                format!("{} ({} items)", ds.display(), self.items.len()),
            ));
        }
        let names: Vec<&str> = self
            .script
            .metrics
            .iter()
            .map(|m| m.name.as_str())
            .collect();
        d.push(("metrics".into(), names.join(", ")));
        d
    }

    fn item(&self, ctx: &SessionContext) -> Arc<Item> {
        match self.prepared.get() {
            Some(items) if !items.is_empty() => Arc::clone(&items[ctx.case_index(items.len())]),
            _ => Arc::new(Item::default()),
        }
    }
}

impl Workload for ScriptedWorkload {
    type Session = ScriptedSession;
    fn descriptor(&self) -> &Descriptor {
        &self.descriptor
    }
    fn headline_ms(&self, rec: &SampleRecord<SessionValues>) -> Option<f64> {
        let def = self
            .script
            .metrics
            .iter()
            .find(|m| m.name == self.headline)?;
        if def.unit != "ms" {
            return None;
        }
        let out = rec.output.as_ref()?;
        out.values.get(&self.headline)?.first().copied()
    }
    fn prepare(&self) -> Result<Vec<String>, WorkloadError> {
        if self.prepared.get().is_some() {
            return Ok(Vec::new());
        }
        let mut items = Vec::with_capacity(self.items.len());
        for spec in &self.items {
            let pcm = match &spec.audio {
                Some(audio) if self.script.streams() => {
                    dataset::load_pcm(audio, self.sample_rate).map_err(WorkloadError::Prepare)?
                }
                _ => bytes::Bytes::new(),
            };
            items.push(Arc::new(Item {
                pcm,
                fields: spec.fields.clone(),
            }));
        }
        let _ = self.prepared.set(items);
        Ok(Vec::new())
    }
    fn session(&self, ctx: &SessionContext) -> ScriptedSession {
        let vars = Vars {
            model: self
                .params
                .model
                .clone()
                .unwrap_or_else(|| "default".into()),
            sample_index: ctx.measured_index.unwrap_or(ctx.idx),
            session_id: ctx
                .request_id
                .clone()
                .unwrap_or_else(|| format!("warmup-{}", ctx.idx)),
            sample_rate: self.sample_rate,
        };
        let interp = Interp::new(
            Arc::clone(&self.script),
            self.item(ctx),
            vars,
            Arc::clone(&self.wanted),
        );
        ScriptedSession {
            interp,
            script: Arc::clone(&self.script),
        }
    }
    fn report(&self, run: RunRecord<SessionValues>) -> Result<Box<dyn Report>, WorkloadError> {
        Ok(Box::new(report::build(&self.script, run)))
    }
}

/// One sample: the interpreter behind the seam.
pub struct ScriptedSession {
    interp: Interp,
    script: Arc<Script>,
}

impl Session for ScriptedSession {
    type Output = SessionValues;
    fn on_open(&mut self, now: Instant, fx: &mut Effects) {
        self.interp.start(now, fx);
    }
    fn on_inbound(&mut self, msg: Inbound, at: Instant, fx: &mut Effects) {
        if let Inbound::Text(t) = msg {
            self.interp.inbound(&t, at, fx);
        }
    }
    fn on_wake(&mut self, now: Instant, fx: &mut Effects) {
        self.interp.wake(now, fx);
    }
    fn into_output(self) -> SessionValues {
        let rec = self.interp.record();
        let mut out = SessionValues::default();
        for m in &self.script.metrics {
            let v = m.eval(rec);
            if m.anchor().is_some() && m.kind != Kind::Series {
                out.turns.insert(m.name.clone(), (v.measured, v.windows));
            }
            out.values.insert(m.name.clone(), v.values);
        }
        out
    }
}
