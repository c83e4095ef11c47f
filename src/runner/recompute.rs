//! `rtload report --recompute DIR`: every metric and the verdict of a recorded run,
//! from its trace alone. The scenario is the manifest's recorded text under the flags
//! the run was given (`scenario.flags`, see `recorded_flags`), its inputs the
//! files the manifest names, each checked against its recorded sha256 (the sessions are
//! made from them, as in the run); each recorded session is then driven again in
//! virtual time by `engine::record::drive`, and the records go through the run's own
//! path — the workload's report, the failures and classes, the thresholds, the JSON
//! result — so the figures and the exit code are the run's.
//!
//! What the trace cannot hold is absent, never zero: the generator's resources (RSS,
//! CPU; so the CPU half of the generator-bound warning), the connections' negotiated
//! compression (`rtload.wire`) and a scraped target's metrics; the time the run
//! published its result is not either (a workload's own `timestamp` is the recompute's).
//! The JSON result says so in `rtload.recomputed`. A workload that writes its own
//! outputs writes them into a scratch folder this time (its `Descriptor::output_keys`),
//! removed once the report is made, so the recorded run's are left alone.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::{Distributed, Ran, RunError, RunSummary};
use crate::config::scenario::{Overrides, Scenario, ScenarioError, WorkloadFlag};
use crate::engine::record::drive::{DriveError, drive};
use crate::engine::record::read::{Trace, TraceError};
use crate::engine::{EngineOutput, record};
use crate::workload::{RunRecord, SampleRecord, SessionContext, WorkloadError};

/// What the recompute leaves absent, as `rtload.recomputed.absent` and the CLI's note say.
pub const ABSENT: [&str; 6] = [
    "rtload.resources' CPU and RSS figures (the generator's own: not in a trace; null)",
    "rtload.soak.resources (the same, per interval)",
    "rtload.phase_cpu (the generator's CPU per phase: not in a trace)",
    "rtload.wire (the negotiated compression and how receipts were stamped: connection \
facts, not in a trace)",
    "rtload.target_metrics (the target's scraped /metrics: not in a trace)",
    "the run's wall-clock publication time (a result's own `timestamp`, where its workload \
writes one, is the recompute's)",
];

/// Why a recording could not be recomputed.
#[derive(Debug, thiserror::Error)]
pub enum RecomputeError {
    /// The recording could not be read.
    #[error(transparent)]
    Trace(#[from] TraceError),
    /// A session could not be driven again, or diverged.
    #[error(transparent)]
    Drive(#[from] DriveError),
    /// The manifest lacks what a recompute needs, or its workload cannot be run again.
    #[error("{path}: {msg}")]
    Manifest {
        /// `DIR/manifest.json`.
        path: PathBuf,
        /// What is missing and the fix.
        msg: String,
    },
    /// An input file is missing or changed since the recording.
    #[error("{}", .0.join("\n"))]
    Inputs(Vec<String>),
    /// The recorded scenario no longer loads.
    #[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))]
    Scenario(Vec<ScenarioError>),
    /// The workload could not prepare its inputs.
    #[error("{0}")]
    Prepare(WorkloadError),
    /// The run's own path (report, JSON result) failed.
    #[error(transparent)]
    Run(#[from] RunError),
}

/// A recomputed run: its summary (what `rtload run` prints and exits by) and the
/// scenario it was recomputed under.
pub struct Recomputed {
    /// The summary, as the run's.
    pub summary: RunSummary,
    /// The recorded scenario.
    pub scenario: Scenario,
    /// Where a workload that writes its own outputs wrote them this time (the report
    /// names it): a scratch folder, removed before the recompute returns. `None` when it
    /// writes none.
    pub scratch: Option<PathBuf>,
}

/// Recomputes the run recorded in `dir` (see the module header); the JSON result goes
/// to `output_json` when given (never to the recorded run's own path).
pub fn recompute(dir: &Path, output_json: Option<&Path>) -> Result<Recomputed, RecomputeError> {
    let trace = Trace::open(dir)?;
    let m = &trace.manifest;
    let scratch = Scratch::create().map_err(|e| RecomputeError::Manifest {
        path: dir.join("manifest.json"),
        msg: format!("cannot create a scratch folder for the workload's outputs: {e}"),
    })?;
    let mut scenario = recorded_scenario(&trace, &scratch.0)?;
    scenario.set_output_json(output_json.map(Path::to_path_buf));
    let workload = scenario.workload().clone();
    let prepared = workload.prepare().map_err(RecomputeError::Prepare)?;
    let this_run = workload.clone().begin_run();
    // Each measured session's hold, as the run's engine was given it.
    let holds: Vec<Option<f64>> =
        crate::workload::plan::plan(scenario.samples(), &scenario.load().arrival)
            .map(|p| {
                p.offsets_s
                    .iter()
                    .map(|o| scenario.load().hold_of(*o))
                    .collect()
            })
            .unwrap_or_default();
    let run = drive_all(&trace, &*this_run, workload.playback_config(), &holds)?;
    let interrupted = m["run"]["interrupted"].as_bool().unwrap_or(false);
    let mine = (run.samples.iter())
        .filter_map(|s| Some((s.session?, s.scheduled_s)))
        .collect();
    let recomputed = json!({"recomputed": {
        "from": dir.display().to_string(),
        "absent": ABSENT,
    }});
    let ran = Ran {
        out: EngineOutput {
            run,
            artifact_errors: Vec::new(),
            warnings: Vec::new(),
            interrupted,
            setup: None,
        },
        this_run,
        mine,
        run_start_unix_s: m["run"]["start_unix_s"].as_f64().unwrap_or(0.0),
        usage: crate::workload::kit::PhaseUsage::default(),
        target_timeline: None,
        tls: m["target"]["url"]
            .as_str()
            .is_some_and(|u| u.starts_with("wss:")),
        wire: recomputed,
        url: m["target"]["url"].as_str().unwrap_or_default().to_string(),
        live_wall_s: 0.0,
        prepared,
        switch: None,
    };
    let shard = crate::workload::shard::Shard::WHOLE;
    let summary = super::summary::summarize(&scenario, &Distributed::default(), shard, ran)?;
    let d = scenario.workload().descriptor();
    let wrote = d.output_dir.is_some() || d.artifact_root.is_some();
    Ok(Recomputed {
        summary,
        scratch: wrote.then(|| scratch.0.clone()),
        scenario,
    })
}

/// The scenario `trace` recorded, under the flags the run was given, its inputs checked
/// (see [`scenario_for`]).
fn recorded_scenario(trace: &Trace, scratch: &Path) -> Result<Scenario, RecomputeError> {
    let m = &trace.manifest;
    let mpath = trace.dir.join("manifest.json");
    let manifest_error = |msg: String| RecomputeError::Manifest {
        path: mpath.clone(),
        msg,
    };
    let (path, text) = match (
        m["scenario"]["path"].as_str(),
        m["scenario"]["text"].as_str(),
    ) {
        (Some(p), Some(t)) => (PathBuf::from(p), t),
        _ => {
            return Err(manifest_error(
                "no scenario text: a scenario built in code cannot be recomputed".into(),
            ));
        }
    };
    verify_inputs(&path, &m["inputs"])?;
    let (load, flags) =
        super::recorded_flags::from_manifest(&m["scenario"]["flags"]).map_err(manifest_error)?;
    let ov = Overrides {
        load,
        workload: flags,
        ..Overrides::default()
    };
    scenario_for(&path, text, ov, scratch, &mpath)
}

/// The recorded scenario (`text` at `path`) under the recorded flags `ov`. A workload
/// that writes its own outputs runs again with each place it writes (its
/// `Descriptor::output_keys`, set through its kind's flag for each) in `scratch`, so the
/// recorded run's outputs are left alone; one that cannot be pointed there is refused.
fn scenario_for(
    path: &Path,
    text: &str,
    mut ov: Overrides,
    scratch: &Path,
    mpath: &Path,
) -> Result<Scenario, RecomputeError> {
    let parse = |ov: &Overrides| {
        crate::config::scenario::parse(path, text, ov).map_err(RecomputeError::Scenario)
    };
    let scenario = parse(&ov)?;
    let d = scenario.workload().descriptor();
    let outputs = |d: &crate::workload::Descriptor| {
        (d.artifact_root.iter().chain(&d.output_dir))
            .find(|o| !o.starts_with(scratch))
            .cloned()
    };
    let Some(out) = outputs(d) else {
        return Ok(scenario);
    };
    let kind = (crate::config::registry::registry().iter()).find(|k| k.name == d.kind);
    let redirects: Option<Vec<WorkloadFlag>> = (d.output_keys.iter())
        .map(|key| {
            let spec = kind?.flags.iter().find(|f| f.key == *key)?;
            Some(WorkloadFlag {
                flag: spec.flag.to_string(),
                values: vec![scratch.join(key).display().to_string()],
            })
        })
        .collect();
    let refused = |out: &Path| RecomputeError::Manifest {
        path: mpath.to_path_buf(),
        msg: format!(
            "the scenario's workload writes its own outputs under {}: a recompute would \
clear and rewrite the recorded run's, so it is refused (recompute a run that saves no \
artifacts)",
            out.display()
        ),
    };
    let Some(redirects) = redirects.filter(|r| !r.is_empty()) else {
        return Err(refused(&out));
    };
    ov.workload
        .retain(|f| !redirects.iter().any(|r| r.flag == f.flag));
    ov.workload.extend(redirects);
    let again = parse(&ov)?;
    match outputs(again.workload().descriptor()) {
        Some(out) => Err(refused(&out)),
        None => Ok(again),
    }
}

/// A folder of the recompute's own under the temporary directory, removed with it: where
/// a workload that writes its own outputs writes them when run again.
struct Scratch(PathBuf);

impl Scratch {
    fn create() -> std::io::Result<Scratch> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let dir =
            std::env::temp_dir().join(format!("rtload-recompute-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        Ok(Scratch(dir))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Every input the manifest names is where it was, with the bytes it had: each one
/// missing or changed is an error naming it.
fn verify_inputs(scenario: &Path, inputs: &Value) -> Result<(), RecomputeError> {
    let base = scenario.parent().unwrap_or(Path::new("."));
    let mut errors = Vec::new();
    for i in inputs.as_array().into_iter().flatten() {
        let (Some(rel), Some(want)) = (i["path"].as_str(), i["sha256"].as_str()) else {
            continue;
        };
        // A workload flag's path is relative to the directory the run ran in (the
        // recompute's own, as README says), the file's to the scenario.
        let p = match i["relative_to"].as_str() {
            Some("cwd") => PathBuf::from(rel),
            _ => base.join(rel),
        };
        match std::fs::read(&p) {
            Ok(bytes) if record::hex(&Sha256::digest(&bytes)) == want => {}
            Ok(_) => errors.push(format!(
                "{}: input `{}` changed since the recording (its sha256 is not the recorded \
{want}): restore the recorded file, or record the run again",
                p.display(),
                i["key"].as_str().unwrap_or("workload")
            )),
            Err(e) => errors.push(format!(
                "{}: input `{}` of the recording: {e} (run the recompute from the directory \
the run ran in, with its inputs in place)",
                p.display(),
                i["key"].as_str().unwrap_or("workload")
            )),
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(RecomputeError::Inputs(errors))
    }
}

/// Every recorded session driven again, as the coordinator would have returned them.
fn drive_all(
    trace: &Trace,
    run: &dyn crate::workload::WorkloadRun,
    playback: crate::workload::playback::PlaybackConfig,
    holds: &[Option<f64>],
) -> Result<RunRecord, RecomputeError> {
    let m = &trace.manifest;
    let prefix = m["run"]["request_id_prefix"].as_str().unwrap_or_default();
    let global: Option<Vec<usize>> =
        serde_json::from_value(m["run"]["measured_indices"].clone()).ok();
    let recorded = m["totals"]["sessions"].as_u64().unwrap_or(0);
    if recorded != trace.sessions.len() as u64 {
        return Err(RecomputeError::Manifest {
            path: trace.dir.join("manifest.json"),
            msg: format!(
                "the manifest counts {recorded} sessions, {} holds {}: a recompute needs \
every session file",
                trace.dir.join("sessions").display(),
                trace.sessions.len()
            ),
        });
    }
    let n_warmup = trace.sessions.iter().filter(|s| s.warmup).count();
    let url = m["target"]["url"].as_str().unwrap_or_default().to_string();
    let origin = tokio::time::Instant::now();
    let mut samples: Vec<SampleRecord> = Vec::with_capacity(trace.sessions.len());
    for s in &trace.sessions {
        let measured_index = (!s.warmup).then(|| {
            let local = s.idx.saturating_sub(n_warmup);
            (global.as_ref())
                .and_then(|g| g.get(local).copied())
                .unwrap_or(local)
        });
        let ctx = SessionContext {
            idx: s.idx,
            warmup: s.warmup,
            url: url.clone(),
            request_id: measured_index.map(|k| format!("{prefix}{k}")),
            measured_index,
            hold_s: (!s.warmup)
                .then(|| holds.get(s.idx - n_warmup).copied().flatten())
                .flatten(),
        };
        let session = run.session(&ctx);
        let mut rec = drive(s, session, playback, origin, &|ev| trace.payload(ev))?;
        rec.session = measured_index;
        samples.push(rec);
    }
    let measured = samples.iter().filter(|s| !s.warmup);
    let first = measured
        .clone()
        .map(|s| s.scheduled_s)
        .fold(f64::INFINITY, f64::min);
    let last = measured.clone().map(|s| s.ended_s).fold(0.0, f64::max);
    let duration_s = if measured.count() == 0 {
        0.0
    } else {
        (last - first).max(0.0)
    };
    Ok(RunRecord {
        samples,
        duration_s,
        endpoint: url,
        load: None,
        interrupted: m["run"]["interrupted"].as_bool().unwrap_or(false),
        measured_indices: global,
    })
}
