//! A staircase run (`rtload capacity --ramp K:T`: K sessions released every T seconds,
//! each held until the last step's end) cut into its steps. Step `j` is the window from
//! its release to the next step's, when `(j+1)·K` sessions are meant to be in flight;
//! what happened in it is read from the run's own records: the values taken in the
//! window (the same [`Recorded`] values every output reads, by the run time each was
//! taken at), the step's sessions the server refused, the sessions that failed in the
//! window and the sessions in flight. Pure: records in, windows out.
//!
//! A session is classed degraded by its per-session SLO once it ends, and held sessions
//! end after the last step: degradation is not judged per window (the search's own
//! runs judge it).

use std::collections::BTreeMap;

use super::outcome::{Class, ClassCounts};
use super::plan::Steps;
use super::results::Recorded;

/// What a step window needs of one measured session.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepSample {
    /// Its position in the arrival plan (measured order): its step is
    /// [`Steps::step_of`] of it.
    pub order: usize,
    /// Run time of its release.
    pub scheduled_s: f64,
    /// Run time it started connecting.
    pub started_s: f64,
    /// Run time it ended.
    pub ended_s: f64,
    /// Its class (`None`: cancelled by an interrupt).
    pub class: Option<Class>,
}

/// One step of a staircase run.
#[derive(Debug, Clone, PartialEq)]
pub struct StepWindow {
    /// 0-based step.
    pub step: usize,
    /// Sessions meant to be in flight: every session released up to this step.
    pub sessions: usize,
    /// Run-clock window: this step's release to the next one's.
    pub from_s: f64,
    /// See `from_s`.
    pub to_s: f64,
    /// The most measured sessions in flight at once within the window.
    pub peak: usize,
    /// `rejected`: this step's sessions the server refused; `failed`: sessions that
    /// failed within the window; `good`: sessions in flight at the window's end that
    /// did not fail. `degraded` stays 0 (see the module docs).
    pub classes: ClassCounts,
    /// Every metric's flat statistics over the values taken within the window.
    pub metrics: BTreeMap<String, f64>,
}

/// The windows of a staircase run of `samples` released by `steps`, with `rec`'s values.
pub fn windows(steps: Steps, samples: &[StepSample], rec: &Recorded) -> Vec<StepWindow> {
    let n_steps = samples
        .iter()
        .map(|s| steps.step_of(s.order) + 1)
        .max()
        .unwrap_or(0);
    let release = |j: usize| {
        samples
            .iter()
            .filter(|s| steps.step_of(s.order) == j)
            .map(|s| s.scheduled_s)
            .fold(f64::INFINITY, f64::min)
    };
    (0..n_steps)
        .map(|j| {
            let from_s = release(j);
            let next = release(j + 1);
            let to_s = if next.is_finite() {
                next
            } else {
                from_s + steps.every_s
            };
            window(steps, samples, rec, (j, from_s, to_s))
        })
        .collect()
}

fn window(
    steps: Steps,
    samples: &[StepSample],
    rec: &Recorded,
    (j, from_s, to_s): (usize, f64, f64),
) -> StepWindow {
    let mut classes = ClassCounts::default();
    for s in samples {
        match s.class {
            Some(Class::Rejected) if steps.step_of(s.order) == j => classes.rejected += 1,
            Some(Class::Failed) if (from_s..to_s).contains(&s.ended_s) => classes.failed += 1,
            Some(Class::Good | Class::Degraded) if s.started_s < to_s && s.ended_s >= to_s => {
                classes.good += 1
            }
            _ => {}
        }
    }
    StepWindow {
        step: j,
        sessions: samples
            .iter()
            .filter(|s| steps.step_of(s.order) <= j)
            .count(),
        from_s,
        to_s,
        peak: peak(samples, from_s, to_s),
        classes,
        metrics: rec.flat_between(from_s, to_s),
    }
}

/// The most sessions in flight at once within `[from_s, to_s)`: those in flight at its
/// start, then every start and end inside it in time order.
fn peak(samples: &[StepSample], from_s: f64, to_s: f64) -> usize {
    let live = |s: &&StepSample| s.class != Some(Class::Rejected);
    let mut n = samples
        .iter()
        .filter(live)
        .filter(|s| s.started_s <= from_s && s.ended_s > from_s)
        .count();
    let mut events: Vec<(f64, i32)> = Vec::new();
    for s in samples.iter().filter(live) {
        if s.started_s > from_s && s.started_s < to_s {
            events.push((s.started_s, 1));
        }
        if s.ended_s > from_s && s.ended_s < to_s {
            events.push((s.ended_s, -1));
        }
    }
    // Ends before starts at one instant: a slot handed on is not two sessions.
    events.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let mut best = n;
    for (_, d) in events {
        n = (n as i64 + i64::from(d)).max(0) as usize;
        best = best.max(n);
    }
    best
}

#[cfg(test)]
#[path = "steps_tests.rs"]
mod tests;
