//! `rtload capacity --ramp K:T`: the one staircase run that starts a search. K sessions
//! are released every T seconds up to the search's `max`, each held until the last
//! step's end (`[load] duration_s` counts from the measured phase's start under a
//! staircase), so every earlier step's sessions keep streaming while the next ones
//! join. The run's result is written beside the search's steps; each step window is
//! judged from that run's own records ([`crate::workload::steps`]) into a search step.

use std::path::Path;

use crate::config::scenario::Scenario;
use crate::engine::interrupt::Interrupt;
use crate::report::capacity::{Criteria, Phase, Search, Step, progress_line, ramp_step};
use crate::runner::RunError;
use crate::workload::plan::Steps;

/// The staircase run of `sc` by `steps` up to `max` sessions, its result written under
/// `dir`: one search step per window, in order; `None` when a signal interrupted it.
pub(super) fn run_ramp(
    sc: &Scenario,
    criteria: &Criteria,
    (steps, max): (Steps, usize),
    dir: &Path,
    quiet: bool,
    interrupt: Option<Interrupt>,
) -> Result<Option<Vec<Step>>, RunError> {
    if sc.load().duration_s.is_none() {
        return Err(RunError::Plan(
            "--ramp holds every session until the last step's end: set [load] duration_s \
(or --duration-s), the hold of the search's own runs, e.g. 30"
                .into(),
        ));
    }
    let n_steps = max.div_ceil(steps.sessions.max(1));
    let name = format!(
        "ramp-{}-every-{}s-to-{max}.json",
        steps.sessions, steps.every_s
    );
    let file = dir.join(&name);
    let mut load = sc.load().clone();
    load.arrival.request_rate = None;
    load.arrival.ramp_up = None;
    load.arrival.steps = Some(steps);
    load.max_concurrency = max;
    // Held from the measured phase's start to the last step's end.
    load.duration_s = Some(n_steps as f64 * steps.every_s);
    let ramp = sc
        .to_builder()
        .samples(max)
        .load(load)
        .output_json(file)
        .build();
    let s = super::run_point(&ramp, quiet, interrupt)?;
    if s.interrupted {
        return Ok(None);
    }
    let cat = sc.workload().catalogue();
    let out = s
        .steps
        .iter()
        .map(|w| {
            let mut m = w.metrics.clone();
            m.extend(w.classes.metrics());
            m.insert(
                "failed".into(),
                (w.classes.failed + w.classes.rejected) as f64,
            );
            let m = cat.with_alias_values(&m);
            let verdicts = crate::config::thresholds::evaluate(sc.thresholds(), &m);
            ramp_step(criteria, w, m, &verdicts, s.generator_bound.clone(), &name)
        })
        .collect();
    Ok(Some(out))
}

/// Seeds `search` with the ramp's windows `ran` (up to and including the first that
/// broke or proved nothing), appending them to `steps` with a progress line each.
/// `false` when the ramp run was interrupted.
pub(super) fn seed(
    ran: Option<Vec<Step>>,
    search: &mut Search,
    steps: &mut Vec<Step>,
    progress: &mut dyn FnMut(&str),
) -> bool {
    let Some(windows) = ran else {
        return false;
    };
    let verdicts: Vec<_> = (windows.iter())
        .map(|w| (w.concurrency, w.verdict.clone()))
        .collect();
    let taken = search.seed(&verdicts);
    for w in windows.into_iter().take(taken) {
        let line = progress_line(steps.len() + 1, Phase::Ramp, w.concurrency, Some(&w));
        steps.push(w);
        progress(&line);
    }
    true
}
