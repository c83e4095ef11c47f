//! Scenario files (TOML): parse, validate, apply command-line overrides. Pure apart from
//! reading the file.
//!
//! A scenario is `name`, an optional `[target]` (absent = the embedded server), a
//! `[workload]` whose `kind` picks a registered workload (which parses the rest of the
//! table itself), `[load]` (samples, warm-ups, arrivals, concurrency), `[output]` and an
//! optional `[server]` table for the embedded server. Unknown keys are errors; every
//! problem is collected and reported with file:line:col, the bad value and the fix.

pub use crate::util::scenario_error::{
    ScenarioError, key_error, key_span, line_col, override_key_error, parse_section,
};
pub use crate::workload::load::{Load, LoadOverrides, MAX_RATE, MAX_SAMPLES, MAX_SHARDS, MIN_RATE};

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;

use super::collect::{collecting, sort_errors};
use super::registry::registry;
use target::max_frame_bytes;

mod target;
use crate::workload::WorkloadInput;

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
    /// `[target] ca_cert` / `insecure_skip_verify` (used by `wss://` targets).
    pub tls: crate::engine::tls::TlsOptions,
    /// `[target] max_frame_bytes`: largest inbound WebSocket frame or message (default
    /// 64 MiB), enforced from the frame header before the payload is buffered.
    pub max_frame_bytes: usize,
    /// `[target] compression` (`--compression` wins): what the handshake offers.
    pub compression: crate::engine::transport::Compression,
    /// The configured workload.
    pub workload: Arc<dyn crate::workload::DynWorkload>,
    /// Samples, arrivals, concurrency.
    pub load: Load,
    /// `[output] json`: where the workload's JSON result goes.
    pub output_json: Option<PathBuf>,
    /// `[sweep]`: run the scenario at each of these points.
    pub sweep: Option<crate::config::sweep::Sweep>,
    /// `[thresholds]`, checked against the workload's metric names.
    pub thresholds: Vec<crate::config::thresholds::Threshold>,
    /// `[target] metrics_url` and the series to keep from it.
    pub target_metrics: Option<(String, Vec<String>)>,
    /// `[server]`: the embedded server's configuration, parsed and range-checked at load
    /// (defaults when the table is absent; used only without a target).
    pub server: crate::server::ServerConfig,
    /// The file's text.
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
    /// `--ca-cert PATH` (wins over `[target] ca_cert`).
    pub ca_cert: Option<PathBuf>,
    /// `--insecure` (sets `[target] insecure_skip_verify = true`).
    pub insecure: bool,
    /// `--compression` (wins over `[target] compression`).
    pub compression: Option<crate::engine::transport::Compression>,
}

/// A scenario file as written. Sections owned by other modules are parsed from the text
/// with positions; here they only exist so unknown top-level keys are errors, and so
/// `rtload schema` can describe them with the owners' types.
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
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
    /// WebSocket handshake bound, seconds (default 10). Range (0, 1e6].
    connect_timeout_s: Option<f64>,
    /// The target's own Prometheus endpoint (plain `http://…/metrics`), scraped each
    /// second during the run; chosen series go into the JSON result.
    metrics_url: Option<String>,
    /// Series names to keep from `metrics_url` (default: vLLM's running/waiting requests
    /// and active WebSocket connections, and the embedded server's).
    metrics_series: Option<Vec<String>>,
    /// PEM file of extra CA certificates trusted for wss:// (relative to the scenario),
    /// on top of the system roots.
    ca_cert: Option<PathBuf>,
    /// Accept any server certificate (testing only; warned about loudly).
    #[serde(default)]
    insecure_skip_verify: bool,
    /// Largest inbound frame or message in bytes, checked from the frame header before
    /// the payload is buffered (default 67108864 = 64 MiB; 1..=4294967296).
    max_frame_bytes: Option<u64>,
    /// `"deflate"` (default: offer permessage-deflate as Python websockets and browsers
    /// do; used only if the server accepts) or `"none"` (offer no extension).
    compression: Option<crate::engine::transport::Compression>,
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
    parse(path, &read(path)?, ov)
}

/// [`load`] for `rtload check`: the same validation, without writing anything (an
/// OmniInteract archive is validated, not extracted).
pub fn check(path: &Path, ov: &Overrides) -> Result<Scenario, Vec<ScenarioError>> {
    parse_with(path, &read(path)?, ov, true)
}

fn read(path: &Path) -> Result<String, Vec<ScenarioError>> {
    std::fs::read_to_string(path).map_err(|e| {
        vec![ScenarioError::Read {
            path: path.to_path_buf(),
            msg: e.to_string(),
        }]
    })
}

/// Validate scenario text `src` (named `path` in errors), applying `ov`.
pub fn parse(path: &Path, src: &str, ov: &Overrides) -> Result<Scenario, Vec<ScenarioError>> {
    parse_with(path, src, ov, false)
}

/// [`parse`]; with `check_only` (`rtload check`) the workload validates without writing
/// anything.
fn parse_with(
    path: &Path,
    src: &str,
    ov: &Overrides,
    check_only: bool,
) -> Result<Scenario, Vec<ScenarioError>> {
    // A syntax error stops here; past it, every section reports (collect.rs).
    toml::from_str::<toml::Table>(src)
        .map_err(|e| vec![ScenarioError::from_toml(path, src, &e)])?;
    let (raw, mut errors) = collecting(src, |s| {
        toml::from_str::<RawScenario>(s).map_err(|e| vec![ScenarioError::from_toml(path, s, &e)])
    });
    let raw = raw.unwrap_or_default();
    let (load, e) = collecting(src, |s| crate::workload::load::parse(path, s, &ov.load));
    errors.extend(e);
    let (workload, e) = collecting(src, |s| {
        build_workload(path, s, &ov.workload, load.as_ref(), check_only)
    });
    errors.extend(e);
    let target = raw.target.as_ref();
    let connect_timeout_s = connect_timeout_s(path, src, target, &mut errors);
    let target_metrics = target_metrics(path, target, &mut errors);
    let base = path.parent().unwrap_or(Path::new("."));
    let tls = tls_options(path, src, target, ov, base, &mut errors);
    errors.extend(check_target(path, src, target, ov, workload.as_deref()));
    let output_json = output_json(path, src, &raw, ov, base, &mut errors);
    let max_frame_bytes = max_frame_bytes(path, src, target, &mut errors);
    let (server, e) = collecting(src, |s| parse_server(path, s));
    errors.extend(e);
    let sweep = crate::config::sweep::parse_table(path, src)
        .map_err(|e| errors.extend(e))
        .unwrap_or_default();
    let thresholds = crate::config::thresholds::parse(path, src)
        .map_err(|e| errors.extend(e))
        .unwrap_or_default();
    if let Some(w) = &workload {
        check_metric_names(
            path,
            src,
            w.as_ref(),
            &thresholds,
            sweep.as_ref(),
            &mut errors,
        );
    }
    let (Some(mut load), Some(workload), true) = (load, workload, errors.is_empty()) else {
        sort_errors(&mut errors);
        return Err(errors);
    };
    load.samples = workload.samples();
    Ok(Scenario {
        path: path.to_path_buf(),
        name: raw.name.unwrap_or_else(|| file_stem(path)),
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
        connect_timeout: Duration::from_secs_f64(connect_timeout_s),
        tls,
        max_frame_bytes: usize::try_from(max_frame_bytes).unwrap_or(usize::MAX),
        compression: target::compression(target, ov),
        workload,
        load,
        output_json,
        thresholds,
        target_metrics,
        sweep,
        server: server.unwrap_or_default(),
        src: Arc::from(src),
    })
}

/// The scenario's default name: its file name without the extension.
fn file_stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// `[target] metrics_url` with the series to keep (default: vLLM's); only plain
/// `http://` is supported.
fn target_metrics(
    path: &Path,
    target: Option<&RawTarget>,
    errors: &mut Vec<ScenarioError>,
) -> Option<(String, Vec<String>)> {
    let target_metrics = target.and_then(|t| t.metrics_url.clone()).map(|u| {
        let names = target
            .and_then(|t| t.metrics_series.clone())
            .unwrap_or_else(|| {
                crate::util::scrape::DEFAULT_SERIES
                    .iter()
                    .map(|s| s.to_string())
                    .collect()
            });
        (u, names)
    });
    if let Some((u, _)) = &target_metrics
        && !u.starts_with("http://")
    {
        errors.push(ScenarioError::file(
            path,
            format!(
                "[target] metrics_url must be a plain http:// URL (got {:?}); use e.g. \"http://127.0.0.1:8000/metrics\"",
                crate::util::target::redact_url(u)
            ),
        ));
    }
    target_metrics
}

/// `[target] connect_timeout_s` (default 10), range-checked into `errors`.
fn connect_timeout_s(
    path: &Path,
    src: &str,
    target: Option<&RawTarget>,
    errors: &mut Vec<ScenarioError>,
) -> f64 {
    let connect_timeout_s = target.and_then(|t| t.connect_timeout_s).unwrap_or(10.0);
    if !(connect_timeout_s.is_finite() && connect_timeout_s > 0.0 && connect_timeout_s <= 1e6) {
        errors.push(key_error(
            path,
            src,
            &["target", "connect_timeout_s"],
            format!(
                "`connect_timeout_s` must be in (0, 1e6] seconds (got {connect_timeout_s}); use e.g. 10"
            ),
        ));
    }
    connect_timeout_s
}

/// The client TLS options: `--ca-cert`/`--insecure` over `[target] ca_cert` (relative
/// to the scenario's folder `base`) and `insecure_skip_verify`; an unreadable CA file
/// is an error in `errors`.
fn tls_options(
    path: &Path,
    src: &str,
    target: Option<&RawTarget>,
    ov: &Overrides,
    base: &Path,
    errors: &mut Vec<ScenarioError>,
) -> crate::engine::tls::TlsOptions {
    let tls = crate::engine::tls::TlsOptions {
        ca_cert: ov.ca_cert.clone().or_else(|| {
            target
                .and_then(|t| t.ca_cert.as_ref())
                .map(|p| base.join(p))
        }),
        insecure_skip_verify: ov.insecure || target.is_some_and(|t| t.insecure_skip_verify),
    };
    if let Some(p) = &tls.ca_cert
        && let Err(e) = crate::engine::tls::load_ca_certs(p)
    {
        errors.push(match (&ov.ca_cert, key_span(src, "target", "ca_cert")) {
            (None, Some(span)) => ScenarioError::at(path, src, span, e.to_string()),
            (Some(_), _) => ScenarioError::file(path, format!("--ca-cert: {e}")),
            (None, None) => ScenarioError::file(path, e.to_string()),
        });
    }
    tls
}

/// `--output-json` over `[output] json` (relative to the scenario's folder `base`); an
/// unwritable path is an error in `errors`.
fn output_json(
    path: &Path,
    src: &str,
    raw: &RawScenario,
    ov: &Overrides,
    base: &Path,
    errors: &mut Vec<ScenarioError>,
) -> Option<PathBuf> {
    let output_json = ov.output_json.clone().or_else(|| {
        raw.output
            .as_ref()
            .and_then(|o| o.json.as_ref())
            .map(|p| base.join(p))
    });
    if let Some(msg) = output_json.as_deref().and_then(output_problem) {
        errors.push(match &ov.output_json {
            Some(_) => ScenarioError::Flag {
                flag: "--output-json".into(),
                msg,
            },
            None => key_error(path, src, &["output", "json"], msg),
        });
    }
    output_json
}

/// Every metric named by `[[thresholds]]` and `[sweep] headline` must be one the
/// workload `w` reports; unknown names are errors in `errors`.
fn check_metric_names(
    path: &Path,
    src: &str,
    w: &dyn crate::workload::DynWorkload,
    thresholds: &[crate::config::thresholds::Threshold],
    sweep: Option<&crate::config::sweep::Sweep>,
    errors: &mut Vec<ScenarioError>,
) {
    let names = w.catalogue().accepted_names();
    let known: Vec<&str> = names.iter().map(String::as_str).collect();
    if let Err(e) = crate::config::thresholds::check_names(path, src, thresholds, &known) {
        errors.extend(e);
    }
    if let Some(h) = sweep.and_then(|s| s.headline.as_deref())
        && !known.contains(&h)
    {
        let msg = crate::config::thresholds::unknown_metric_message(h, &known, "[sweep] headline");
        errors.push(match key_span(src, "sweep", "headline") {
            Some(span) => ScenarioError::at(path, src, span, msg),
            None => ScenarioError::file(path, msg),
        });
    }
}

fn build_workload(
    path: &Path,
    src: &str,
    overrides: &toml::Table,
    load: Option<&Load>,
    check_only: bool,
) -> Result<Arc<dyn crate::workload::DynWorkload>, Vec<ScenarioError>> {
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
                "[workload] needs `kind`; add e.g. `kind = \"{}\"` (known kinds: {})",
                registry().first().map_or("", |k| k.name),
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
        check_only,
    })
    .map(Arc::from)
}

/// `[server]` (and `[server.video]`, `[server.duplex]`, their `faults`): typed, with every
/// value out of its documented range listed at its position.
fn parse_server(path: &Path, src: &str) -> Result<crate::server::ServerConfig, Vec<ScenarioError>> {
    let cfg: crate::server::ServerConfig =
        parse_section(path, src, "server", &toml::Table::new()).map_err(|e| vec![e])?;
    let errors: Vec<ScenarioError> = cfg
        .problems()
        .into_iter()
        .map(|p| match p {
            crate::server::ServerError::Invalid { key, msg } => {
                let mut at = vec!["server"];
                at.extend(key.split('.'));
                key_error(path, src, &at, format!("[server] {msg}"))
            }
            other => ScenarioError::file(path, other.to_string()),
        })
        .collect();
    if errors.is_empty() {
        Ok(cfg)
    } else {
        Err(errors)
    }
}

/// Why the JSON result could not be written at `j` after the run (so it is refused
/// before): it is a directory, or an existing ancestor is not one.
fn output_problem(j: &Path) -> Option<String> {
    if j.is_dir() {
        return Some(format!(
            "the JSON result path {} is a directory; name a file, e.g. `json = \"result.json\"`",
            j.display()
        ));
    }
    let blocker = j
        .ancestors()
        .skip(1)
        .filter(|a| !a.as_os_str().is_empty())
        .find(|a| a.exists())
        .filter(|a| !a.is_dir())?;
    Some(format!(
        "the JSON result path {} cannot be created: {} is a file, not a directory",
        j.display(),
        blocker.display()
    ))
}

/// The target URL (when one is given) and every upgrade header, checked as the run would
/// use them.
fn check_target(
    path: &Path,
    src: &str,
    target: Option<&RawTarget>,
    ov: &Overrides,
    workload: Option<&dyn crate::workload::DynWorkload>,
) -> Vec<ScenarioError> {
    let mut errors = Vec::new();
    let url = ov.target.as_ref().or(target.and_then(|t| t.url.as_ref()));
    if let (Some(url), Some(w)) = (url, workload)
        && let Err(e) = crate::util::target::resolve_url(url, w.default_path())
    {
        errors.push(match &ov.target {
            Some(_) => ScenarioError::Flag {
                flag: "--target".into(),
                msg: e.to_string(),
            },
            None => key_error(path, src, &["target", "url"], e.to_string()),
        });
    }
    for (name, value) in target.map(|t| &t.headers).into_iter().flatten() {
        if let Some(msg) = crate::util::target::header_problem(name, value) {
            errors.push(key_error(path, src, &["target", "headers", name], msg));
        }
    }
    for (name, value) in &ov.headers {
        if let Some(msg) = crate::util::target::header_problem(name, value) {
            errors.push(ScenarioError::Flag {
                flag: "--header".into(),
                msg,
            });
        }
    }
    errors
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
