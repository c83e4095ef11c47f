//! The arrival plan: when each request (session) is released, relative to the start of
//! the timed run (spec §5.1 "Arrival process", §7 item 6). Pure: a spec and a count in,
//! release offsets and integer-RPS change events out. No clocks; the engine adds the
//! offsets to its own start instant.
//!
//! Rules, as in the reference (`vllm bench serve`):
//! * rate inf (`request_rate: None`, no ramp-up) → every offset is 0.
//! * otherwise request `i` gets `rate_i` (the fixed rate, or the ramp-up rate) and a gap
//!   drawn from Gamma(shape = b, scale = 1/(rate_i·b)) (b = burstiness; b = inf → the
//!   constant `1/rate_i`). Offsets are the cumulative sums of the gaps.
//! * without ramp-up (and last offset ≠ 0) the offsets are rescaled so the last one is
//!   exactly `N / r`.
//!
//! Determinism: gaps come from `StdRng::seed_from_u64(seed)` (rand 0.9, pinned by
//! Cargo.lock), so one seed always gives one plan; numpy's stream is not reproduced.

use rand::SeedableRng;
use rand::rngs::StdRng;
use rand_distr::{Distribution, Gamma};

#[cfg(test)]
#[path = "plan_tests.rs"]
mod tests;

/// How the rate moves from `start_rps` to `end_rps` across the requests of a run.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RampStrategy {
    /// `start + (end − start)·i/max(N−1,1)`.
    Linear,
    /// `start·(end/start)^(i/max(N−1,1))`; needs `start > 0`.
    Exponential,
}

/// A ramp-up of the request rate over the whole run (replaces a fixed `request_rate`).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RampUp {
    /// Shape of the ramp.
    pub strategy: RampStrategy,
    /// Rate of the first request, in requests per second (≥ 0).
    pub start_rps: f64,
    /// Rate of the last request, in requests per second (≥ `start_rps`, > 0).
    pub end_rps: f64,
}

/// Everything that decides the arrival plan.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ArrivalSpec {
    /// Fixed rate in requests per second; `None` means inf (all released at t = 0).
    pub request_rate: Option<f64>,
    /// Gamma shape factor: 1.0 = Poisson, < 1 burstier, > 1 more regular,
    /// `f64::INFINITY` = constant gaps.
    pub burstiness: f64,
    /// Optional ramp-up; requires `request_rate` to be unset.
    pub ramp_up: Option<RampUp>,
    /// Seed of the gap sampler.
    pub seed: u64,
    /// A staircase: `sessions` released at once every `every_s` seconds (`rtload
    /// capacity --ramp`); replaces the rate, the ramp-up and the gaps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steps: Option<Steps>,
}

/// A staircase of releases: request `i` is released at `floor(i / sessions) · every_s`.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Steps {
    /// Sessions released together at each step (≥ 1).
    pub sessions: usize,
    /// Seconds between steps (> 0, finite).
    pub every_s: f64,
}

impl Steps {
    /// The step request `i` (0-based, in release order) belongs to.
    pub fn step_of(&self, i: usize) -> usize {
        i / self.sessions.max(1)
    }

    /// Release offset of step `j`, seconds.
    pub fn offset(&self, j: usize) -> f64 {
        j as f64 * self.every_s
    }
}

impl Default for ArrivalSpec {
    /// Rate inf, burstiness 1.0, no ramp-up, seed 0 (the reference defaults).
    fn default() -> Self {
        ArrivalSpec {
            request_rate: None,
            burstiness: 1.0,
            ramp_up: None,
            seed: 0,
            steps: None,
        }
    }
}

/// The integer part of the ramp-up rate reached a new value at `timestamp_s`
/// (reported as `rps_change_events: [{rps, timestamp}]`).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RpsChange {
    /// The new integer rate (floor of the request rate).
    pub rps: u64,
    /// Offset from the run start, in seconds, at which the rate took effect.
    pub timestamp_s: f64,
}

/// The resolved arrival plan of a run.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Plan {
    /// Release time of request `i`, in seconds from the run start (non-decreasing).
    pub offsets_s: Vec<f64>,
    /// Rate of request `i` in requests per second (`f64::INFINITY` for rate inf).
    pub rates_rps: Vec<f64>,
    /// Integer-RPS change events; empty without ramp-up. See [`plan`] for the rule.
    pub rps_change_events: Vec<RpsChange>,
    /// The spec the plan was built from (used by `summary`).
    pub spec: ArrivalSpec,
}

/// An arrival spec that cannot produce a plan.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PlanError {
    /// A fixed rate and a ramp-up were both given.
    #[error(
        "request_rate ({rate}) cannot be combined with ramp_up; remove request_rate to ramp, or remove ramp_up for a fixed rate"
    )]
    RateWithRampUp {
        /// The fixed rate that was given.
        rate: f64,
    },
    /// The fixed rate is not a positive finite number.
    #[error(
        "request_rate must be > 0 and finite (got {got}); omit it to release everything at t=0, or use e.g. 2.0"
    )]
    InvalidRate {
        /// The rejected value.
        got: f64,
    },
    /// A staircase is not `sessions ≥ 1` every `every_s > 0` seconds, or is combined
    /// with a rate or a ramp-up.
    #[error(
        "a staircase releases N >= 1 sessions every T > 0 seconds, alone (got {got}); e.g. --ramp 4:10, without request_rate or ramp_up"
    )]
    InvalidSteps {
        /// What was given.
        got: String,
    },
    /// Burstiness is not > 0.
    #[error("burstiness must be > 0 (got {got}); use 1.0 for Poisson arrivals")]
    InvalidBurstiness {
        /// The rejected value.
        got: f64,
    },
    /// A ramp-up bound is negative or not finite.
    #[error(
        "ramp_up {field} must be finite and >= 0 (got {got}); use e.g. start_rps = 1, end_rps = 10"
    )]
    InvalidRampBound {
        /// `start_rps` or `end_rps`.
        field: &'static str,
        /// The rejected value.
        got: f64,
    },
    /// The ramp goes down.
    #[error("ramp_up start_rps ({start}) must be <= end_rps ({end}); swap the two values")]
    RampStartAboveEnd {
        /// `start_rps`.
        start: f64,
        /// `end_rps`.
        end: f64,
    },
    /// The ramp ends at 0 rps, so no request would ever have a rate.
    #[error("ramp_up end_rps must be > 0 (got {got}); use e.g. end_rps = 10")]
    RampEndZero {
        /// The rejected value.
        got: f64,
    },
    /// Exponential ramps cannot start at 0.
    #[error(
        "exponential ramp_up needs start_rps > 0 (got {got}); use start_rps = 1, or the linear strategy to start from 0"
    )]
    ExponentialZeroStart {
        /// The rejected value.
        got: f64,
    },
}

/// Checks `spec` against the §5.1 rules: ramp-up requires `request_rate` unset;
/// `0 <= start_rps <= end_rps`, both finite; exponential `start_rps > 0`; a given
/// `request_rate` is finite and > 0; `burstiness > 0` (inf allowed).
/// Also rejects `end_rps == 0` (a ramp that never has a rate).
pub fn validate(spec: &ArrivalSpec) -> Result<(), PlanError> {
    if spec.burstiness.is_nan() || spec.burstiness <= 0.0 {
        return Err(PlanError::InvalidBurstiness {
            got: spec.burstiness,
        });
    }
    if let Some(rate) = spec.request_rate
        && (!rate.is_finite() || rate <= 0.0)
    {
        return Err(PlanError::InvalidRate { got: rate });
    }
    if let Some(st) = spec.steps
        && (st.sessions == 0
            || !st.every_s.is_finite()
            || st.every_s <= 0.0
            || spec.request_rate.is_some()
            || spec.ramp_up.is_some())
    {
        let with = match (spec.request_rate, &spec.ramp_up) {
            (Some(r), _) => format!(" with request_rate {r}"),
            (None, Some(_)) => " with ramp_up".into(),
            _ => String::new(),
        };
        return Err(PlanError::InvalidSteps {
            got: format!("{}:{}{with}", st.sessions, st.every_s),
        });
    }
    let Some(ramp) = &spec.ramp_up else {
        return Ok(());
    };
    if let Some(rate) = spec.request_rate {
        return Err(PlanError::RateWithRampUp { rate });
    }
    for (field, got) in [("start_rps", ramp.start_rps), ("end_rps", ramp.end_rps)] {
        if !got.is_finite() || got < 0.0 {
            return Err(PlanError::InvalidRampBound { field, got });
        }
    }
    if ramp.start_rps > ramp.end_rps {
        return Err(PlanError::RampStartAboveEnd {
            start: ramp.start_rps,
            end: ramp.end_rps,
        });
    }
    if ramp.end_rps == 0.0 {
        return Err(PlanError::RampEndZero { got: ramp.end_rps });
    }
    if ramp.strategy == RampStrategy::Exponential && ramp.start_rps == 0.0 {
        return Err(PlanError::ExponentialZeroStart {
            got: ramp.start_rps,
        });
    }
    Ok(())
}

/// Per-request rates of a ramp over `n` requests, progress `i/max(n−1,1)`:
/// linear `start + (end − start)·p`, exponential `start·(end/start)^p`.
pub fn ramp_rates(n: usize, ramp: &RampUp) -> Vec<f64> {
    let denom = n.saturating_sub(1).max(1) as f64;
    (0..n)
        .map(|i| {
            let progress = i as f64 / denom;
            match ramp.strategy {
                RampStrategy::Linear => ramp.start_rps + (ramp.end_rps - ramp.start_rps) * progress,
                RampStrategy::Exponential => {
                    ramp.start_rps * (ramp.end_rps / ramp.start_rps).powf(progress)
                }
            }
        })
        .collect()
}

/// The deterministic core: cumulative sums of the first `n` `gaps` (missing gaps count as
/// 0), then, when `request_rate` is `Some(r)`, `ramped` is false and the last sum is not
/// 0, a rescale so the last offset is exactly `n / r`. `request_rate: None` and not
/// `ramped` means rate inf: `n` zeros.
///
/// Example (§5.1): `n = 4`, `r = 2`, gaps `[0.3, 0.6, 0.2, 0.5]` →
/// `[0.375, 1.125, 1.375, 2.0]`.
pub fn plan_from_gaps(gaps: &[f64], n: usize, request_rate: Option<f64>, ramped: bool) -> Vec<f64> {
    if request_rate.is_none() && !ramped {
        return vec![0.0; n];
    }
    let mut acc = 0.0;
    let mut offsets: Vec<f64> = (0..n)
        .map(|i| {
            acc += gaps.get(i).copied().unwrap_or(0.0);
            acc
        })
        .collect();
    if let (Some(rate), false, Some(&last)) = (request_rate, ramped, offsets.last())
        && last != 0.0
    {
        let target = n as f64 / rate;
        let factor = target / last;
        for offset in &mut offsets {
            *offset *= factor;
        }
        // Make the documented invariant exact despite rounding in `last * factor`.
        if let Some(end) = offsets.last_mut() {
            *end = target;
        }
    }
    offsets
}

/// Builds the arrival plan of `n` requests from `spec` (validated first).
///
/// Gaps: rate 0 (only possible for the first request of a linear ramp from 0) gives a
/// gap of 0 instead of an infinite wait. RPS change events (ramp-up only), following the
/// reference: an initial event `{floor(start_rps), 0.0}`; then whenever request `i`'s
/// `floor(rate_i)` exceeds the last recorded value, one event per integer crossed, each
/// stamped with request `i`'s release offset.
pub fn plan(n: usize, spec: &ArrivalSpec) -> Result<Plan, PlanError> {
    validate(spec)?;
    if let Some(st) = spec.steps {
        return Ok(Plan {
            offsets_s: (0..n).map(|i| st.offset(st.step_of(i))).collect(),
            rates_rps: vec![st.sessions as f64 / st.every_s; n],
            rps_change_events: Vec::new(),
            spec: spec.clone(),
        });
    }
    let ramped = spec.ramp_up.is_some();
    let rates: Vec<f64> = match (&spec.ramp_up, spec.request_rate) {
        (Some(ramp), _) => ramp_rates(n, ramp),
        (None, Some(rate)) => vec![rate; n],
        (None, None) => vec![f64::INFINITY; n],
    };
    let gaps = sample_gaps(&rates, spec.burstiness, spec.seed)?;
    let offsets_s = plan_from_gaps(&gaps, n, spec.request_rate, ramped);
    let rps_change_events = match &spec.ramp_up {
        Some(ramp) => rps_changes(ramp.start_rps, &rates, &offsets_s),
        None => Vec::new(),
    };
    Ok(Plan {
        offsets_s,
        rates_rps: rates,
        rps_change_events,
        spec: spec.clone(),
    })
}

/// One gap per rate: Gamma(b, 1/(rate·b)) sampled as Gamma(b, 1)/(rate·b).
fn sample_gaps(rates: &[f64], burstiness: f64, seed: u64) -> Result<Vec<f64>, PlanError> {
    let gap = |rate: f64, unit: f64| {
        if rate.is_infinite() || rate <= 0.0 {
            0.0
        } else {
            unit / rate
        }
    };
    if burstiness.is_infinite() {
        return Ok(rates.iter().map(|&r| gap(r, 1.0)).collect());
    }
    let gamma = Gamma::new(burstiness, 1.0 / burstiness)
        .map_err(|_| PlanError::InvalidBurstiness { got: burstiness })?;
    let mut rng = StdRng::seed_from_u64(seed);
    Ok(rates
        .iter()
        .map(|&r| gap(r, gamma.sample(&mut rng)))
        .collect())
}

/// Integer part of a rate, tolerant of `3.9999999999` from `powf`/linear rounding.
fn int_rps(rate: f64) -> u64 {
    // Saturating float→int cast; rates are validated finite and >= 0.
    (rate + 1e-9).floor() as u64
}

fn rps_changes(start_rps: f64, rates: &[f64], offsets: &[f64]) -> Vec<RpsChange> {
    let mut last = int_rps(start_rps);
    let mut events = vec![RpsChange {
        rps: last,
        timestamp_s: 0.0,
    }];
    for (&rate, &offset) in rates.iter().zip(offsets) {
        let current = int_rps(rate);
        if current > last {
            events.extend((last + 1..=current).map(|rps| RpsChange {
                rps,
                timestamp_s: offset,
            }));
            last = current;
        }
    }
    events
}

/// One line describing the plan for `rtload check`, e.g.
fn releases(n: usize) -> &'static str {
    if n == 1 { "release" } else { "releases" }
}

/// `"poisson 2.0 rps, 16 releases over 8.00 s"` or `"all at t=0 (rate inf), 3 releases"`.
pub fn summary(plan: &Plan) -> String {
    let n = plan.offsets_s.len();
    let spec = &plan.spec;
    let shape = shape_name(spec.burstiness);
    let over = plan.offsets_s.last().copied().unwrap_or(0.0);
    let head = match (&spec.ramp_up, spec.request_rate) {
        (Some(ramp), _) => {
            let strategy = match ramp.strategy {
                RampStrategy::Linear => "linear",
                RampStrategy::Exponential => "exponential",
            };
            format!(
                "{shape} {strategy} ramp {}→{} rps",
                fmt_rate(ramp.start_rps),
                fmt_rate(ramp.end_rps)
            )
        }
        (None, Some(rate)) => format!("{shape} {} rps", fmt_rate(rate)),
        (None, None) => return format!("all at t=0 (rate inf), {n} {}", releases(n)),
    };
    format!("{head}, {n} {} over {over:.2} s", releases(n))
}

fn shape_name(burstiness: f64) -> String {
    if burstiness.is_infinite() {
        "constant".to_owned()
    } else if burstiness == 1.0 {
        "poisson".to_owned()
    } else {
        format!("gamma(b={})", fmt_rate(burstiness))
    }
}

/// `2.0` → "2.0", `0.25` → "0.25", `1/3` → "0.333".
fn fmt_rate(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{x:.1}")
    } else if x.abs() < 0.01 {
        format!("{x}")
    } else {
        let s = format!("{x:.3}");
        s.trim_end_matches('0').to_owned()
    }
}
