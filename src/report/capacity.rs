//! `rtload capacity`: the largest `max_concurrency` at which sessions hold the SLO. The
//! pure part: what a step is judged on ([`Criteria`], [`judge`]), the search (a
//! [`Search`] says which concurrency to run next given the verdicts so far: a staircase,
//! then a bisection, then one confirming run) and its [`Outcome`]. The sentence, table
//! and `capacity.json` are in `capacity_text.rs`. The batch runner runs each step (one
//! run of the scenario, scaled like a sweep point) and hands its result here.

use crate::report::sweep::{Check, PointResult};
use crate::workload::outcome::ClassCounts;

#[path = "capacity_ramp.rs"]
mod ramp;
#[path = "capacity_text.rs"]
mod text;
pub use ramp::ramp_step;
pub use text::{
    Recorded, capacity_json, from_json, progress_line, ramp_line, render, sentence, table_rows,
};

/// What a step must meet to hold: at least `good_share` of the ended sessions good, no
/// rejection, every `[thresholds]` entry held.
#[derive(Debug, Clone, PartialEq)]
pub struct Criteria {
    /// The least share of ended sessions that must be good, in (0, 1].
    pub good_share: f64,
    /// The scenario's `[slo]` bounds as written (`stall_count == 0`): what makes a
    /// completed session degraded instead of good.
    pub slo: Vec<String>,
    /// `[load] duration_s`: each step ran exactly its concurrency of sessions at once,
    /// each held this many seconds (`None`: sessions as long as their media).
    pub hold_s: Option<f64>,
}

/// How the search is bounded: the staircase's first step and the largest concurrency it
/// tries.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bounds {
    /// The first concurrency tried (at least 1).
    pub start: usize,
    /// The largest concurrency tried (at least `start`).
    pub max: usize,
    /// `--ramp K:T`: the search starts with one staircase run, K more sessions every T
    /// seconds up to `max`, judged window by window (`None`: whole runs only).
    pub ramp: Option<crate::workload::plan::Steps>,
}

/// What one step showed.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Every criterion held.
    Holds,
    /// A criterion broke; each reason names what and by how much.
    Breaks(Vec<String>),
    /// The step says nothing about the endpoint (the generator was the bottleneck, or
    /// the step never had its concurrency in flight): the search stops.
    Inconclusive(String),
}

/// One finished step of the search.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// Which part of the search ran it.
    pub phase: Phase,
    /// The `max_concurrency` it ran at.
    pub concurrency: usize,
    /// Its measured sessions per outcome class.
    pub classes: ClassCounts,
    /// Its run's result: metrics, thresholds with measured values, generator health.
    pub point: PointResult,
    /// The `[slo]` bounds its degraded sessions broke (as written, `stall_count == 0`).
    pub slo_broken: Vec<String>,
    /// The verdict.
    pub verdict: Verdict,
    /// The step's own result file.
    pub file: String,
}

/// Judges one step run at `concurrency`: inconclusive when the generator bound it (unless
/// the server rejected sessions: its refusals break the step whatever the generator did)
/// or it never had `concurrency` sessions in flight while holding (it then proves
/// nothing); else the reasons it breaks: rejections, a good share below the criterion (with the
/// degraded sessions and the SLO bounds they broke, and the failed ones), thresholds
/// with their measured values, artifacts not written.
pub fn judge(
    c: &Criteria,
    point: &PointResult,
    classes: ClassCounts,
    slo_broken: &[String],
) -> Verdict {
    // The server's own refusals are evidence whatever the generator did; any other
    // break, or a hold, of a generator-bound step may be the generator's.
    if let Some(why) = &point.generator_bound {
        if classes.rejected == 0 {
            return Verdict::Inconclusive(format!("generator-bound ({why})"));
        }
        return Verdict::Breaks(vec![
            sessions(classes.rejected, "rejected"),
            format!("also generator-bound ({why})"),
        ]);
    }
    let ended = classes.total();
    if ended == 0 {
        return Verdict::Inconclusive("no measured session ended".into());
    }
    let mut reasons = Vec::new();
    if classes.rejected > 0 {
        reasons.push(sessions(classes.rejected, "rejected"));
    }
    let share = classes.good as f64 / ended as f64;
    // Rejections alone already broke the step: the share they cost is not named twice.
    if share < c.good_share && classes.degraded + classes.failed > 0 {
        if classes.degraded > 0 {
            let slo = if slo_broken.is_empty() {
                c.slo.join(", ")
            } else {
                slo_broken.join(", ")
            };
            reasons.push(format!(
                "{} ({slo})",
                sessions(classes.degraded, "degraded")
            ));
        }
        if classes.failed > 0 {
            reasons.push(sessions(classes.failed, "failed"));
        }
        reasons.push(format!(
            "good {} < {}",
            percent(share),
            percent(c.good_share)
        ));
    }
    reasons.extend(broken_checks(&point.checks));
    if point.artifact_errors > 0 {
        reasons.push(format!("{} artifacts not written", point.artifact_errors));
    }
    match () {
        _ if !reasons.is_empty() => Verdict::Breaks(reasons),
        _ if !point.reached => Verdict::Inconclusive(format!(
            "never had {} sessions in flight (peak {})",
            point.value,
            point.achieved_concurrency.unwrap_or(0)
        )),
        _ => Verdict::Holds,
    }
}

/// `1 rejected session`, `3 degraded sessions`.
fn sessions(n: usize, class: &str) -> String {
    format!("{n} {class} session{}", if n == 1 { "" } else { "s" })
}

/// Each threshold that did not hold, as `audio_rtf.p99 = 1.42 (< 1)`.
fn broken_checks(checks: &[Check]) -> Vec<String> {
    checks
        .iter()
        .filter(|c| !c.passed)
        .map(|c| match c.measured.filter(|m| m.is_finite()) {
            Some(m) => format!(
                "{} = {} ({})",
                c.metric,
                crate::config::thresholds::format_value(m),
                c.expr
            ),
            None => format!("{} missing ({})", c.metric, c.expr),
        })
        .collect()
}

/// A share as a percentage: `99%`, `97.5%`.
pub fn percent(share: f64) -> String {
    let p = share * 100.0;
    if (p - p.round()).abs() < 1e-9 {
        format!("{p:.0}%")
    } else {
        format!("{p:.1}%")
    }
}

/// Which part of the search a step belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// One step window of the one staircase run (`--ramp K:T`) that starts the search.
    Ramp,
    /// Doubling from the start until a step breaks.
    Staircase,
    /// Halving the gap between the last holding and the first breaking concurrency.
    Bisect,
    /// Running the answer once more.
    Confirm,
}

impl Phase {
    /// `staircase`, `bisect`, `confirm`.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Ramp => "ramp",
            Phase::Staircase => "staircase",
            Phase::Bisect => "bisect",
            Phase::Confirm => "confirm",
        }
    }

    /// The phase named `name` ([`Phase::name`]).
    pub fn from_name(name: &str) -> Option<Phase> {
        [Phase::Ramp, Phase::Staircase, Phase::Bisect, Phase::Confirm]
            .into_iter()
            .find(|p| p.name() == name)
    }
}

/// How the search ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// `sessions` held (twice: found and confirmed). `limit` is the lowest concurrency
    /// that broke; `None` when every step up to the search's `max` held.
    Capacity {
        /// The capacity.
        sessions: usize,
        /// The lowest concurrency that broke.
        limit: Option<usize>,
    },
    /// Even the lowest concurrency tried (`at`, 1 unless the search never got that
    /// low) broke.
    None {
        /// The concurrency that broke.
        at: usize,
    },
    /// A step at `at` was inconclusive (generator-bound): the search stopped with the
    /// capacity at least `at_least` (0: nothing held yet).
    Stopped {
        /// The inconclusive step's concurrency.
        at: usize,
        /// The highest concurrency that held before it.
        at_least: usize,
    },
}

/// The search: which concurrency to run next given the verdicts so far. A staircase
/// `start, 2·start, 4·start, …` capped at `max` until a step breaks, then a bisection
/// between the highest holding and the lowest breaking concurrency until they are
/// adjacent, then the answer runs once more: holding again it is the capacity; breaking,
/// it becomes the lowest breaking concurrency and the bisection resumes below it. An
/// inconclusive step stops the search.
#[derive(Debug, Clone)]
pub struct Search {
    bounds: Bounds,
    /// Every concurrency that held (confirmations that broke removed).
    held: Vec<usize>,
    /// The lowest concurrency that broke.
    broke: Option<usize>,
    done: Option<Outcome>,
}

impl Search {
    /// A search within `bounds`.
    pub fn new(bounds: Bounds) -> Search {
        let start = bounds.start.max(1);
        Search {
            bounds: Bounds {
                start,
                max: bounds.max.max(start),
                ramp: bounds.ramp,
            },
            held: Vec::new(),
            broke: None,
            done: None,
        }
    }

    /// The highest concurrency that held (0: none).
    fn lo(&self) -> usize {
        self.held.iter().copied().max().unwrap_or(0)
    }

    /// The next step to run (its phase and concurrency); `None` when the search is over.
    pub fn next(&self) -> Option<(Phase, usize)> {
        if self.done.is_some() {
            return None;
        }
        let lo = self.lo();
        match self.broke {
            None if lo == 0 => Some((Phase::Staircase, self.bounds.start)),
            None if lo >= self.bounds.max => Some((Phase::Confirm, lo)),
            None => Some((Phase::Staircase, (lo * 2).min(self.bounds.max))),
            Some(hi) if hi - lo > 1 => Some((Phase::Bisect, lo + (hi - lo) / 2)),
            Some(_) => Some((Phase::Confirm, lo)),
        }
    }

    /// Records the verdict of the step [`Search::next`] gave at `concurrency`.
    pub fn record(&mut self, concurrency: usize, verdict: &Verdict) {
        let confirming = matches!(self.next(), Some((Phase::Confirm, c)) if c == concurrency);
        match verdict {
            Verdict::Inconclusive(_) => {
                self.done = Some(Outcome::Stopped {
                    at: concurrency,
                    at_least: self.lo(),
                });
            }
            Verdict::Holds if confirming => {
                self.done = Some(Outcome::Capacity {
                    sessions: concurrency,
                    limit: self.broke,
                });
            }
            Verdict::Holds => self.held.push(concurrency),
            Verdict::Breaks(_) => {
                self.held.retain(|&c| c < concurrency);
                self.broke = Some(self.broke.map_or(concurrency, |b| b.min(concurrency)));
                if self.lo() == 0 && concurrency == 1 {
                    self.done = Some(Outcome::None { at: 1 });
                }
            }
        }
    }

    /// Takes a staircase run's step windows, in order, as evidence before the search's
    /// own steps: each window that held is a concurrency that held; the first that broke
    /// is the lowest that broke and ends the evidence, as does an inconclusive one (it
    /// proves nothing, so the search goes on with its own runs from what held). The
    /// search then bisects between them and confirms with whole runs. Returns how many
    /// windows were taken.
    pub fn seed(&mut self, windows: &[(usize, Verdict)]) -> usize {
        let mut taken = 0;
        for (n, v) in windows {
            taken += 1;
            match v {
                Verdict::Holds => self.held.push((*n).min(self.bounds.max)),
                Verdict::Breaks(_) => {
                    self.broke = Some(self.broke.map_or(*n, |b| b.min(*n)));
                    self.held.retain(|&c| c < *n);
                    break;
                }
                Verdict::Inconclusive(_) => break,
            }
        }
        if self.broke == Some(1) && self.lo() == 0 {
            self.done = Some(Outcome::None { at: 1 });
        }
        taken
    }

    /// How the search ended (`None` while it goes on).
    pub fn outcome(&self) -> Option<&Outcome> {
        self.done.as_ref()
    }
}

#[cfg(test)]
#[path = "capacity_tests.rs"]
mod tests;
