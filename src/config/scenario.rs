//! Scenario files (TOML): parse, validate, apply command-line overrides. Pure apart from
//! reading the file.
//!
//! A scenario is `name`, an optional `[target]` (absent = the embedded server), a
//! `[workload]` whose `kind` picks a registered workload (which parses the rest of the
//! table itself), `[load]` (samples, warm-ups, arrivals, concurrency), `[output]` and an
//! optional `[server]` table for the embedded server. Unknown keys are errors; every
//! problem is collected and reported with file:line:col, the bad value and the fix.

pub use crate::util::scenario_error::{ScenarioError, key_span, line_col, parse_section};
pub use crate::workload::load::{Load, LoadOverrides};

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;

use super::registry::registry;
use crate::workload::{Workload, WorkloadInput};

/// A validated scenario, ready to run.
#[derive(Clone)]
pub struct Scenario {
    /// The file it came from.
    pub path: PathBuf,
    /// `name`, or the file stem.
    pub name: String,
    /// `[target] url`; `None` = start the embedded server on 127.0.0.1, port 0.
    pub target: Option<String>,
    /// `[target] headers` (values may be secrets; never printed).
    pub headers: Vec<(String, String)>,
    /// `[target] connect_timeout_s` (default 10 s).
    pub connect_timeout: Duration,
    /// The configured workload.
    pub workload: Arc<dyn Workload>,
    /// Samples, arrivals, concurrency.
    pub load: Load,
    /// `[output] json`: where the workload's JSON result goes.
    pub output_json: Option<PathBuf>,
    /// `[sweep]`: run the scenario at each of these points.
    pub sweep: Option<crate::config::sweep::Sweep>,
    /// `[thresholds]`, checked against the workload's metric names.
    pub thresholds: Vec<crate::config::thresholds::Threshold>,
    /// The file's text (sections owned by other modules, like `[server]`, are parsed
    /// from it with positions).
    pub src: Arc<str>,
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

/// Command-line values that override the file.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    /// `--target URL`.
    pub target: Option<String>,
    /// `--output-json PATH`.
    pub output_json: Option<PathBuf>,
    /// `[load]` overrides (vllm bench serve's flag names).
    pub load: LoadOverrides,
    /// `[workload]` keys set by workload flags (e.g. `target_fps`).
    pub workload: toml::Table,
    /// `--header KEY=VALUE` (win over `[target] headers` on the same name).
    pub headers: Vec<(String, String)>,
}

/// A scenario file as written. Sections owned by other modules are parsed from the text
/// with positions; here they only exist so unknown top-level keys are errors, and so
/// `rtload schema` can describe them with the owners' types.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "rtload scenario")]
pub(crate) struct RawScenario {
    /// Scenario name (default: the file stem).
    name: Option<String>,
    /// Free text.
    #[serde(rename = "description")]
    _description: Option<String>,
    /// The target; omit to run against the embedded reference server.
    target: Option<RawTarget>,
    /// The workload: `kind` picks the registered workload, the other keys are its own.
    #[serde(rename = "workload")]
    #[schemars(with = "crate::config::schema::WorkloadSchema")]
    _workload: Option<toml::Value>,
    /// Samples, warm-ups, arrivals, concurrency.
    #[serde(rename = "load")]
    #[schemars(with = "Option<crate::workload::load::RawLoad>")]
    _load: Option<toml::Value>,
    /// Result files.
    output: Option<RawOutput>,
    /// The embedded reference server (used only without a target).
    #[serde(rename = "server")]
    #[schemars(with = "Option<crate::server::ServerConfig>")]
    _server: Option<toml::Table>,
    /// Pass/fail conditions: `"metric.stat" = "<op> <number>"`.
    #[serde(rename = "thresholds")]
    #[schemars(with = "Option<crate::config::schema::ThresholdsSchema>")]
    _thresholds: Option<toml::Table>,
    /// Run the scenario at several points of one parameter.
    #[serde(rename = "sweep")]
    #[schemars(with = "Option<crate::config::schema::SweepSchema>")]
    _sweep: Option<toml::Table>,
}

/// `[target]`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct RawTarget {
    /// ws://, wss://, http:// or https://; without a path the workload's default path is
    /// appended.
    url: Option<String>,
    /// Extra upgrade headers (values are never printed or saved).
    #[serde(default)]
    headers: std::collections::BTreeMap<String, String>,
    /// WebSocket handshake bound, seconds (default 10).
    connect_timeout_s: Option<f64>,
}

/// `[output]`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct RawOutput {
    /// The workload's JSON result, written atomically (relative to the scenario).
    json: Option<PathBuf>,
}

/// The document read only for `[workload] kind` (other keys are the workload's business).
#[derive(Debug, Deserialize)]
struct KindDoc {
    workload: Option<KindOnly>,
}

#[derive(Debug, Deserialize)]
struct KindOnly {
    kind: Option<toml::Spanned<String>>,
}

/// Read and validate the scenario at `path`, applying `ov`. Returns every problem found.
pub fn load(path: &Path, ov: &Overrides) -> Result<Scenario, Vec<ScenarioError>> {
    let src = std::fs::read_to_string(path).map_err(|e| {
        vec![ScenarioError::Read {
            path: path.to_path_buf(),
            msg: e.to_string(),
        }]
    })?;
    parse(path, &src, ov)
}

/// Validate scenario text `src` (named `path` in errors), applying `ov`.
pub fn parse(path: &Path, src: &str, ov: &Overrides) -> Result<Scenario, Vec<ScenarioError>> {
    let raw: RawScenario =
        toml::from_str(src).map_err(|e| vec![ScenarioError::from_toml(path, src, &e)])?;
    let mut errors = Vec::new();
    let load = crate::workload::load::parse(path, src, &ov.load)
        .map_err(|e| errors.extend(e))
        .ok();
    let workload = build_workload(path, src, &ov.workload, load.as_ref())
        .map_err(|e| errors.extend(e))
        .ok();
    let target = raw.target.as_ref();
    let connect_timeout_s = target.and_then(|t| t.connect_timeout_s).unwrap_or(10.0);
    if !(connect_timeout_s.is_finite() && connect_timeout_s > 0.0) {
        errors.push(ScenarioError::file(
            path,
            format!(
                "[target] connect_timeout_s must be > 0 (got {connect_timeout_s}); use e.g. 10"
            ),
        ));
    }
    let sweep = crate::config::sweep::parse_table(path, src)
        .map_err(|e| errors.extend(e))
        .unwrap_or_default();
    let thresholds = crate::config::thresholds::parse(path, src)
        .map_err(|e| errors.extend(e))
        .unwrap_or_default();
    if let Some(w) = &workload {
        let names = w.metric_names();
        let known: Vec<&str> = names.iter().map(String::as_str).collect();
        if let Err(e) = crate::config::thresholds::check_names(path, src, &thresholds, &known) {
            errors.extend(e);
        }
        if let Some(h) = sweep.as_ref().and_then(|s| s.headline.as_deref())
            && !known.contains(&h)
        {
            let msg =
                crate::config::thresholds::unknown_metric_message(h, &known, "[sweep] headline");
            errors.push(match key_span(src, "sweep", "headline") {
                Some(span) => ScenarioError::at(path, src, span, msg),
                None => ScenarioError::file(path, msg),
            });
        }
    }
    let (Some(mut load), Some(workload), true) = (load, workload, errors.is_empty()) else {
        // In file order: positioned errors by line and column, whole-file ones last.
        errors.sort_by_key(|e| match e {
            ScenarioError::At { line, col, .. } => (0, *line, *col),
            _ => (1, 0, 0),
        });
        return Err(errors);
    };
    load.samples = workload.samples();
    let base = path.parent().unwrap_or(Path::new("."));
    Ok(Scenario {
        path: path.to_path_buf(),
        name: raw.name.unwrap_or_else(|| {
            path.file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default()
        }),
        target: ov
            .target
            .clone()
            .or_else(|| target.and_then(|t| t.url.clone())),
        headers: merge_headers(
            target
                .map(|t| t.headers.clone().into_iter().collect())
                .unwrap_or_default(),
            &ov.headers,
        ),
        connect_timeout: Duration::from_secs_f64(connect_timeout_s.clamp(0.001, 1e6)),
        workload,
        load,
        output_json: ov
            .output_json
            .clone()
            .or_else(|| raw.output.and_then(|o| o.json).map(|p| base.join(p))),
        thresholds,
        sweep,
        src: Arc::from(src),
    })
}

fn build_workload(
    path: &Path,
    src: &str,
    overrides: &toml::Table,
    load: Option<&Load>,
) -> Result<Arc<dyn Workload>, Vec<ScenarioError>> {
    let names = || {
        registry()
            .iter()
            .map(|k| format!("\"{}\"", k.name))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let doc: KindDoc =
        toml::from_str(src).map_err(|e| vec![ScenarioError::from_toml(path, src, &e)])?;
    let kind = doc.workload.and_then(|w| w.kind);
    let Some(kind) = kind else {
        return Err(vec![ScenarioError::file(
            path,
            format!(
                "[workload] needs `kind`; add e.g. `kind = \"video-cadence\"` (known kinds: {})",
                names()
            ),
        )]);
    };
    let Some(entry) = registry().iter().find(|k| k.name == kind.get_ref()) else {
        return Err(vec![ScenarioError::at(
            path,
            src,
            kind.span(),
            format!(
                "unknown workload kind \"{}\"; known kinds: {}",
                kind.get_ref(),
                names()
            ),
        )]);
    };
    (entry.build)(&WorkloadInput {
        path,
        src,
        overrides,
        samples_requested: load.and_then(|l| l.samples_requested),
        seed: load.map_or(0, |l| l.arrival.seed),
    })
    .map(Arc::from)
}

/// File headers, then flag headers; a later name wins (case-insensitively).
fn merge_headers(
    mut file: Vec<(String, String)>,
    flags: &[(String, String)],
) -> Vec<(String, String)> {
    for (k, v) in flags {
        file.retain(|(fk, _)| !fk.eq_ignore_ascii_case(k));
        file.push((k.clone(), v.clone()));
    }
    file
}
