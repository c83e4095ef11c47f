//! A parsed scenario file to a [`Scenario`]: each section read from its subtree of the
//! one parsed document, every problem collected (one pass lists them all), then the
//! scenario assembled.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::raw::RawScenario;
use super::{Overrides, Scenario, ScenarioDoc, ScenarioError, Section, target, workload};
use crate::config::collect::{collecting, sort_errors};
use crate::config::sweep::Sweep;
use crate::config::thresholds::Threshold;
use crate::workload::DynWorkload;

/// The scenario of the parsed file `doc`, applying `ov`; with `check_only`
/// (`rtload check`) the workload validates without writing anything.
pub(super) fn scenario(
    doc: &ScenarioDoc<'_>,
    ov: &Overrides,
    check_only: bool,
) -> Result<Scenario, Vec<ScenarioError>> {
    let (raw, mut errors) =
        collecting(doc, |d| d.deserialize::<RawScenario>().map_err(|e| vec![e]));
    let raw = raw.unwrap_or_default();
    let (load, e) = collecting(doc, |d| {
        crate::workload::load::parse(&d.section("load"), &ov.load)
    });
    errors.extend(e);
    let (workload, e) = collecting(doc, |d| {
        workload::build(d, &ov.workload, load.as_ref(), check_only)
    });
    errors.extend(e);
    let rest = Rest::read(doc, &raw, ov, workload.as_deref(), &mut errors);
    let (Some(load), Some(workload), true) = (load, workload, errors.is_empty()) else {
        sort_errors(&mut errors);
        return Err(errors);
    };
    let target = raw.target.as_ref();
    Ok(Scenario {
        path: doc.path().to_path_buf(),
        name: raw.name.unwrap_or_else(|| file_stem(doc.path())),
        target: ov
            .target
            .clone()
            .or_else(|| target.and_then(|t| t.url.clone())),
        headers: target::headers(target, &ov.headers),
        connect_timeout: Duration::from_secs_f64(rest.connect_timeout_s),
        tls: rest.tls,
        max_frame_bytes: usize::try_from(rest.max_frame_bytes).unwrap_or(usize::MAX),
        compression: target::compression(target, ov),
        retry_rejected: rest.retry_rejected,
        workload,
        load,
        samples: None,
        output_json: rest.output_json,
        sweep: rest.sweep,
        thresholds: rest.thresholds,
        slo: rest.slo,
        target_metrics: rest.target_metrics,
        server: rest.server.unwrap_or_default(),
        flags: (ov.load.clone(), ov.workload.clone()),
    })
}

/// Every section but `[load]` and `[workload]`, read (problems into `errors`).
struct Rest {
    connect_timeout_s: f64,
    tls: crate::engine::tls::TlsOptions,
    max_frame_bytes: u64,
    retry_rejected: u32,
    target_metrics: Option<(String, Vec<String>)>,
    output_json: Option<PathBuf>,
    server: Option<crate::server::ServerConfig>,
    sweep: Option<Sweep>,
    thresholds: Vec<Threshold>,
    slo: Vec<Threshold>,
}

impl Rest {
    fn read(
        doc: &ScenarioDoc<'_>,
        raw: &RawScenario,
        ov: &Overrides,
        workload: Option<&dyn DynWorkload>,
        errors: &mut Vec<ScenarioError>,
    ) -> Self {
        let target = raw.target.as_ref();
        let connect_timeout_s = target::connect_timeout_s(doc, target, errors);
        let target_metrics = target::target_metrics(doc, target, errors);
        let tls = target::tls_options(doc, target, ov, errors);
        errors.extend(target::check_target(
            doc,
            target,
            ov,
            workload.map(|w| w.default_path()),
        ));
        let output_json = output_json(doc, raw, ov, errors);
        let max_frame_bytes = target::max_frame_bytes(doc, target, errors);
        let retry_rejected = target::retry_rejected(doc, target, errors);
        let (server, e) = collecting(doc, |d| parse_server(&d.section("server")));
        errors.extend(e);
        let sweep = crate::config::sweep::parse_table(&doc.section("sweep"))
            .map_err(|e| errors.extend(e))
            .unwrap_or_default();
        let thresholds_section = doc.section("thresholds");
        let thresholds = crate::config::thresholds::parse(&thresholds_section)
            .map_err(|e| errors.extend(e))
            .unwrap_or_default();
        if let Some(w) = workload {
            check_metric_names(&thresholds_section, w, &thresholds, sweep.as_ref(), errors);
        }
        let slo = slo(doc, errors);
        Self {
            connect_timeout_s,
            tls,
            max_frame_bytes,
            retry_rejected,
            target_metrics,
            output_json,
            server,
            sweep,
            thresholds,
            slo,
        }
    }
}

/// `[slo]`: `"<session metric>" = "<op> <number>"`, each name one of
/// `workload::outcome::SESSION_METRICS` (problems into `errors`).
fn slo(doc: &ScenarioDoc<'_>, errors: &mut Vec<ScenarioError>) -> Vec<Threshold> {
    let section = doc.section("slo");
    let slo = crate::config::thresholds::parse(&section)
        .map_err(|e| errors.extend(e))
        .unwrap_or_default();
    let known = crate::workload::outcome::SESSION_METRICS;
    for t in slo.iter().filter(|t| !known.contains(&t.metric.as_str())) {
        let msg = crate::config::thresholds::unknown_metric_message(&t.metric, &known, "[slo]");
        errors.push(doc.key_error(&["slo", t.metric.as_str()], msg));
    }
    slo
}

/// The scenario's default name: its file name without the extension.
fn file_stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// `--output-json` over `[output] json` (relative to the scenario's folder); an
/// unwritable path is an error in `errors`.
fn output_json(
    doc: &ScenarioDoc<'_>,
    raw: &RawScenario,
    ov: &Overrides,
    errors: &mut Vec<ScenarioError>,
) -> Option<PathBuf> {
    let base = doc.path().parent().unwrap_or(Path::new("."));
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
            None => doc.key_error(&["output", "json"], msg),
        });
    }
    output_json
}

/// Every metric named by `[[thresholds]]` (`thresholds`, read from `section`) and
/// `[sweep] headline` must be one the workload `w` reports; unknown names are errors in
/// `errors`.
fn check_metric_names(
    section: &Section<'_>,
    w: &dyn DynWorkload,
    thresholds: &[Threshold],
    sweep: Option<&Sweep>,
    errors: &mut Vec<ScenarioError>,
) {
    let names = w.catalogue().accepted_names();
    let known: Vec<&str> = names.iter().map(String::as_str).collect();
    if let Err(e) = crate::config::thresholds::check_names(section, thresholds, &known) {
        errors.extend(e);
    }
    if let Some(h) = sweep.and_then(|s| s.headline.as_deref())
        && !known.contains(&h)
    {
        let msg = crate::config::thresholds::unknown_metric_message(h, &known, "[sweep] headline");
        errors.push(section.doc().key_error(&["sweep", "headline"], msg));
    }
}

/// `[server]` (and `[server.video]`, `[server.duplex]`, their `faults`): typed, with every
/// value out of its documented range listed at its position.
fn parse_server(section: &Section<'_>) -> Result<crate::server::ServerConfig, Vec<ScenarioError>> {
    let cfg: crate::server::ServerConfig = section.deserialize().map_err(|e| vec![e])?;
    let doc = section.doc();
    let errors: Vec<ScenarioError> = cfg
        .problems()
        .into_iter()
        .map(|p| match p {
            crate::server::ServerError::Invalid { key, msg } => {
                let mut at = vec!["server"];
                at.extend(key.split('.'));
                doc.key_error(&at, format!("[server] {msg}"))
            }
            other => doc.file_error(other.to_string()),
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
