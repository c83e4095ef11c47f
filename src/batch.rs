//! Running many scenarios or many points of one: `rtload suite` (scenario files one
//! after another, one summary table, JUnit XML) and sweeps (one scenario at each value of
//! `max_concurrency` or `request_rate`, capacity = the knee) and `rtload capacity` (one
//! run per step of a search for the largest concurrency that holds the SLO). Glue over
//! [`runner`].

use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::config::scenario::{self, Overrides, Scenario};
use crate::config::sweep::{Sweep, SweepParam};
use crate::engine::interrupt::Interrupt;
use crate::report::capacity::{self, Bounds, Criteria, Outcome, Search, Step};
use crate::report::suite::{Breach, ScenarioOutcome, Status};
use crate::report::sweep::{Check, PointResult, progress_line};
use crate::runner::{self, RunError, RunSummary};

#[path = "batch_ramp.rs"]
mod ramp;

/// Run every scenario at `paths` (directories expand to their `*.toml`) one after another.
/// Configuration errors become `Status::Error` outcomes; the suite goes on.
pub fn run_suite(paths: &[PathBuf], quiet: bool) -> Result<Vec<ScenarioOutcome>, String> {
    let files = crate::report::suite::expand_paths(paths).map_err(|e| e.to_string())?;
    let mut out = Vec::with_capacity(files.len());
    for path in files {
        let started = Instant::now();
        let name = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let outcome = match scenario::load(&path, &Overrides::default()) {
            Err(errors) => error_outcome(
                name,
                &path,
                errors
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join("\n"),
            ),
            Ok(sc) => match run_quiet(&sc, quiet) {
                Ok(s) => outcome_of(&sc, &s, started.elapsed().as_secs_f64()),
                Err(e) => error_outcome(sc.name().to_string(), &path, e.to_string()),
            },
        };
        out.push(outcome);
    }
    Ok(out)
}

fn run_quiet(sc: &Scenario, quiet: bool) -> Result<RunSummary, RunError> {
    run_point(sc, quiet, None)
}

fn run_point(
    sc: &Scenario,
    quiet: bool,
    interrupt: Option<Interrupt>,
) -> Result<RunSummary, RunError> {
    let lines: Box<dyn std::io::Write + Send> = if quiet {
        Box::new(std::io::sink())
    } else {
        Box::new(std::io::stderr())
    };
    runner::run_interruptible(sc, lines, None, interrupt)
}

fn error_outcome(name: String, path: &Path, msg: String) -> ScenarioOutcome {
    ScenarioOutcome {
        name,
        path: path.to_path_buf(),
        duration_s: 0.0,
        status: Status::Error(msg),
        failed_samples: Vec::new(),
        measured: 0,
        breaches: Vec::new(),
        headline: Vec::new(),
        classes: Default::default(),
    }
}

/// One finished scenario as the suite reports it.
pub fn outcome_of(sc: &Scenario, s: &RunSummary, duration_s: f64) -> ScenarioOutcome {
    let breaches: Vec<Breach> = s
        .verdicts
        .iter()
        .filter(|v| !v.passed)
        .map(|v| Breach {
            metric: v.threshold.metric.clone(),
            expr: v.threshold.expr.clone(),
            measured: v.measured,
        })
        .collect();
    let metrics = s.report.metrics();
    let headline = sc
        .workload()
        .catalogue()
        .headline()
        .iter()
        .filter_map(|k| metrics.get(k).map(|v| (k.clone(), *v)))
        .collect();
    let mut failed_samples = s.failures.clone();
    failed_samples.extend(
        s.artifact_errors
            .iter()
            .map(|e| (usize::MAX, format!("artifact: {e}"))),
    );
    ScenarioOutcome {
        name: sc.name().to_string(),
        path: sc.path().to_path_buf(),
        duration_s,
        status: if s.passed() {
            Status::Passed
        } else {
            Status::Failed
        },
        failed_samples,
        measured: s.measured,
        breaches,
        headline,
        classes: s.outcomes,
    }
}

/// A finished sweep.
pub struct SweepRun {
    /// Each point's metrics and verdict, in value order.
    pub points: Vec<PointResult>,
    /// The knee: the highest value whose thresholds (and all lower points') held, the
    /// point reaching its value with the generator keeping up; `None` when no threshold
    /// judged the points (see [`crate::report::sweep::capacity`]).
    pub capacity: Option<f64>,
    /// Files written: each point's result, `sweep.json`, `sweep.html`.
    pub files: Vec<PathBuf>,
    /// A signal stopped the sweep: `points` are the ones that finished before it (the
    /// interrupted point's own result file is written, marked interrupted, and listed in
    /// `files`); `sweep.json` says `"interrupted": true`.
    pub interrupted: bool,
}

/// Run `sc` at each point of `sweep` (with [`Sweep::point_samples`] measured samples),
/// writing results under `dir`. Each point records the load it actually reached.
pub fn run_sweep(
    sc: &Scenario,
    sweep: &Sweep,
    dir: &Path,
    quiet: bool,
) -> Result<SweepRun, RunError> {
    run_sweep_interruptible(sc, sweep, dir, quiet, None, &mut |_| {})
}

/// [`run_sweep`], stopping when `interrupt`'s switch flips: the current point ends as an
/// interrupted run (grace period, then its in-flight sessions cancelled), no further point
/// starts, and what finished is written. `progress` gets one line when each point starts
/// (`point 2 of 4: max_concurrency=2 …`) and one with its verdict when it ends (see
/// [`crate::report::sweep::progress_line`]); the library prints nothing itself.
pub fn run_sweep_interruptible(
    sc: &Scenario,
    sweep: &Sweep,
    dir: &Path,
    quiet: bool,
    interrupt: Option<Interrupt>,
    progress: &mut dyn FnMut(&str),
) -> Result<SweepRun, RunError> {
    // The sweep owns its directory: create it up front (the default `sweep-<name>` is
    // relative and usually new).
    std::fs::create_dir_all(dir).map_err(|e| RunError::Output {
        path: dir.to_path_buf(),
        msg: format!("cannot create the sweep directory: {e}"),
    })?;
    let mut points = Vec::new();
    let mut files = Vec::new();
    let mut interrupted = false;
    let of = sweep.values.len();
    for (i, &value) in sweep.values.iter().enumerate() {
        if interrupt.as_ref().is_some_and(|i| i.switch.is_triggered()) {
            interrupted = true;
            break;
        }
        progress(&progress_line(sweep, i + 1, of, value, None));
        let (point, file) = point_scenario(sc, sweep, value, dir);
        let s = run_point(&point, quiet, interrupt.clone())?;
        files.push(file);
        if s.interrupted {
            interrupted = true;
            break;
        }
        let result = point_result(sc, sweep, value, &s);
        progress(&progress_line(sweep, i + 1, of, value, Some(&result)));
        points.push(result);
    }
    let capacity = crate::report::sweep::capacity(&points);
    files.extend(write_sweep(sc, sweep, dir, &points, capacity, interrupted)?);
    Ok(SweepRun {
        points,
        capacity,
        files,
        interrupted,
    })
}

/// Write `sweep.json` and `sweep.html` under `dir`; returns the files written.
fn write_sweep(
    sc: &Scenario,
    sweep: &Sweep,
    dir: &Path,
    points: &[PointResult],
    capacity: Option<f64>,
    interrupted: bool,
) -> Result<Vec<PathBuf>, RunError> {
    // Without a `[sweep] headline` (the flag form never sets one) feature the workload's
    // first headline metric, so sweep.json/sweep.html always have a curve to draw.
    let mut featured = sweep.clone();
    if featured.headline.is_none() {
        featured.headline = sc.workload().catalogue().headline().first().cloned();
    }
    let catalogue = sc.workload().catalogue();
    let mut doc =
        crate::report::sweep::sweep_json(&featured, points, catalogue.unit_rate(), capacity);
    catalogue.write_into(&mut doc);
    if interrupted && let Some(obj) = doc.as_object_mut() {
        obj.insert("interrupted".into(), serde_json::Value::Bool(true));
    }
    let json_path = dir.join("sweep.json");
    write(
        &json_path,
        &(serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n"),
    )?;
    let mut files = vec![json_path];
    if let Ok(html) = crate::report::html::render_html(&[("sweep.json".to_string(), doc)]) {
        let html_path = dir.join("sweep.html");
        write(&html_path, &html)?;
        files.push(html_path);
    }
    Ok(files)
}

/// The scenario of sweep point `value`: `sc` with its samples and swept parameter set
/// (closed-loop sweeps drop the arrival rate), writing its JSON to the returned file.
fn point_scenario(sc: &Scenario, sweep: &Sweep, value: f64, dir: &Path) -> (Scenario, PathBuf) {
    let file = dir.join(format!(
        "{}.json",
        crate::config::sweep::point_file_stem(sweep, value)
    ));
    (point_scenario_to(sc, sweep, value, &file), file)
}

/// [`point_scenario`] writing its JSON to `file`.
fn point_scenario_to(sc: &Scenario, sweep: &Sweep, value: f64, file: &Path) -> Scenario {
    let mut load = sc.load().clone();
    if sweep.closed_loop() {
        load.arrival.request_rate = None;
        load.arrival.ramp_up = None;
    }
    match sweep.param {
        SweepParam::MaxConcurrency => load.max_concurrency = value as usize,
        SweepParam::RequestRate => load.arrival.request_rate = value.is_finite().then_some(value),
    }
    sc.to_builder()
        .samples(sweep.point_samples(sc.samples(), value))
        .load(load)
        .output_json(file.to_path_buf())
        .build()
}

/// The result of sweep point `value` from its run summary `s`: its metrics, every
/// threshold with its measured value, failures, the load it reached, whether the
/// generator bound it (the run JSON's own `generator_bound`) and the workload's own unit
/// rate (from `sc`'s catalogue).
fn point_result(sc: &Scenario, sweep: &Sweep, value: f64, s: &RunSummary) -> PointResult {
    let a = s.achieved;
    // The workload's metrics and the outcome classes' (`good`, `rejected_ratio`, …): the
    // same values the run's JSON and thresholds read.
    let mut metrics = s.report.metrics();
    metrics.extend(s.outcomes.metrics());
    PointResult {
        value,
        unit_rate: crate::report::sweep::unit_rate_of(
            &metrics,
            sc.workload().catalogue().unit_rate(),
        ),
        metrics,
        passed: s.passed(),
        checks: Check::of(&s.verdicts),
        failed_samples: s.failures.len(),
        artifact_errors: s.artifact_errors.len(),
        generator_bound: s.generator_bound.clone(),
        achieved_concurrency: Some(a.concurrency),
        achieved_request_rate: a.request_rate,
        sessions_per_s: a.sessions_per_s,
        mean_sessions: a.mean_sessions,
        lateness_p99_ms: a.lateness_p99_ms,
        reached: crate::report::sweep::reached(
            sweep.param,
            value,
            a.concurrency,
            a.request_rate,
            a.planned_rate,
        ),
    }
}

/// A finished capacity search (`rtload capacity`).
pub struct CapacityRun {
    /// How the search ended; `None` when a signal stopped it first.
    pub outcome: Option<Outcome>,
    /// What `rtload capacity` prints: the one-sentence answer, then the per-step table.
    pub text: String,
    /// Files written: each step's result, then `capacity.json` and `capacity.html`.
    pub files: Vec<PathBuf>,
    /// A signal stopped the search: the steps that finished are in `capacity.json`.
    pub interrupted: bool,
}

/// Find the largest `max_concurrency` at which `sc`'s sessions hold the SLO: at least
/// `good_share` of the ended sessions good, none rejected, every threshold held. Each
/// step is one run of `sc` at one concurrency, scaled like a sweep point
/// ([`Sweep::point_samples`], released at once), its result written under `dir`; which
/// step comes next is [`Search`]'s (staircase from `bounds.start` up to `bounds.max`,
/// bisection, confirmation). `progress` gets a line when each step starts and one with
/// its verdict; `dir/capacity.json` holds the steps, the answer and what limited it, and
/// `dir/capacity.html` draws them.
pub fn run_capacity(
    sc: &Scenario,
    bounds: Bounds,
    good_share: f64,
    dir: &Path,
    quiet: bool,
    interrupt: Option<Interrupt>,
    progress: &mut dyn FnMut(&str),
) -> Result<CapacityRun, RunError> {
    std::fs::create_dir_all(dir).map_err(|e| RunError::Output {
        path: dir.to_path_buf(),
        msg: format!("cannot create the capacity directory: {e}"),
    })?;
    let criteria = criteria_of(sc, good_share);
    let mut search = Search::new(bounds);
    let (mut steps, mut files, mut interrupted) = (Vec::new(), Vec::new(), false);
    if let Some(st) = bounds.ramp {
        progress(&capacity::ramp_line(st, bounds.max));
        let ran = ramp::run_ramp(
            sc,
            &criteria,
            (st, bounds.max),
            dir,
            quiet,
            interrupt.clone(),
        )?;
        interrupted = !ramp::seed(ran, &mut search, &mut steps, progress);
        files.extend(steps.first().map(|s| dir.join(&s.file)));
    }
    while let Some((phase, n)) = search.next().filter(|_| !interrupted) {
        if interrupt.as_ref().is_some_and(|i| i.switch.is_triggered()) {
            interrupted = true;
            break;
        }
        let k = steps.len() + 1;
        progress(&capacity::progress_line(k, phase, n, None));
        let file = dir.join(format!("step-{k}-max_concurrency-{n}.json"));
        let ran = run_step(sc, &criteria, (phase, n), &file, quiet, interrupt.clone())?;
        files.push(file);
        let Some(step) = ran else {
            interrupted = true;
            break;
        };
        search.record(n, &step.verdict);
        progress(&capacity::progress_line(k, phase, n, Some(&step)));
        steps.push(step);
    }
    let outcome = search.outcome().cloned();
    let text = outcome
        .as_ref()
        .map(|o| capacity::render(&criteria, &steps, o))
        .unwrap_or_default();
    let path = dir.join("capacity.json");
    let mut doc = capacity::capacity_json(sc.name(), &criteria, bounds, &steps, outcome.as_ref());
    if interrupted && let Some(obj) = doc["capacity"].as_object_mut() {
        obj.insert("interrupted".into(), serde_json::Value::Bool(true));
    }
    sc.workload().catalogue().write_into(&mut doc);
    write(
        &path,
        &(serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n"),
    )?;
    files.push(path);
    if let Ok(html) = crate::report::html::render_html(&[("capacity.json".to_string(), doc)]) {
        write(&dir.join("capacity.html"), &html)?;
        files.push(dir.join("capacity.html"));
    }
    Ok(CapacityRun {
        outcome,
        text,
        files,
        interrupted,
    })
}

/// What each step of `sc`'s search must meet.
fn criteria_of(sc: &Scenario, good_share: f64) -> Criteria {
    Criteria {
        good_share,
        slo: (sc.slo().iter())
            .map(|t| format!("{} {}", t.metric, t.expr))
            .collect(),
        hold_s: sc.load().duration_s,
    }
}

/// One step of a capacity search: `sc` at `max_concurrency` `n`, scaled like a sweep
/// point, its result written to `file`, judged against `criteria`; `None` when a signal
/// interrupted it.
fn run_step(
    sc: &Scenario,
    criteria: &Criteria,
    (phase, n): (capacity::Phase, usize),
    file: &Path,
    quiet: bool,
    interrupt: Option<Interrupt>,
) -> Result<Option<Step>, RunError> {
    // Held sessions (`[load] duration_s`): exactly `n` sessions at once, each held the
    // whole duration, so the step holds its concurrency for that long.
    let held = sc.load().duration_s.map(|_| n);
    let sweep = Sweep {
        param: SweepParam::MaxConcurrency,
        values: vec![n as f64],
        headline: None,
        samples_per_point: held.or_else(|| sc.sweep().and_then(|s| s.samples_per_point)),
    };
    let s = run_point(
        &point_scenario_to(sc, &sweep, n as f64, file),
        quiet,
        interrupt,
    )?;
    if s.interrupted {
        return Ok(None);
    }
    let point = point_result(sc, &sweep, n as f64, &s);
    let slo_broken = slo_broken(sc, file);
    Ok(Some(Step {
        phase,
        concurrency: n,
        classes: s.outcomes,
        verdict: capacity::judge(criteria, &point, s.outcomes, &slo_broken),
        point,
        slo_broken,
        file: file
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default(),
    }))
}

/// The `[slo]` bounds (as written, `stall_count == 0`) the degraded sessions of the
/// result at `file` broke, from its `rtload.outcomes.sessions[].slo_broken`.
fn slo_broken(sc: &Scenario, file: &Path) -> Vec<String> {
    let Ok(doc) = crate::report::resultfile::read(file) else {
        return Vec::new();
    };
    let broken: Vec<String> = doc
        .pointer("/rtload/outcomes/sessions")
        .and_then(serde_json::Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|row| row.get("slo_broken")?.as_array())
        .flatten()
        .filter_map(|b| b.as_str()?.split_whitespace().next().map(str::to_string))
        .collect();
    sc.slo()
        .iter()
        .filter(|t| broken.contains(&t.metric))
        .map(|t| format!("{} {}", t.metric, t.expr))
        .collect()
}

fn write(path: &Path, text: &str) -> Result<(), RunError> {
    let text = crate::util::target::redact_text(text);
    crate::util::write_atomic(path, text.as_bytes()).map_err(|e| RunError::Output {
        path: path.to_path_buf(),
        msg: e.to_string(),
    })
}
