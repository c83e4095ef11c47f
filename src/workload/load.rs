//! The `[load]` table: how many samples, warm-ups, arrival process and concurrency, with
//! `vllm bench serve`'s flag names as overrides.

use std::ops::Range;

use serde::Deserialize;
use toml::Spanned;

use crate::util::scenario_doc::{ScenarioDoc, Section};
use crate::util::scenario_error::ScenarioError;
use crate::workload::plan::{ArrivalSpec, PlanError, RampStrategy, RampUp};

/// Largest `samples`, `warmup_samples` and `max_concurrency` (one million: the plan and
/// the per-sample records of a run are held in memory).
pub const MAX_SAMPLES: i64 = 1_000_000;
/// Largest `shards`.
pub const MAX_SHARDS: i64 = 1024;
/// Largest finite `request_rate` / ramp bound, requests per second.
pub const MAX_RATE: f64 = 1e9;
/// Smallest positive `request_rate` (one request per ~11.6 days).
pub const MIN_RATE: f64 = 1e-6;

/// Validated load parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct Load {
    /// `samples` / `--num-prompts` / `--sessions` as given, `None` when not given. The
    /// workload decides how many measured samples run from it (video: the request,
    /// default 1; OmniInteract: the number of selected cases): its `Descriptor::samples`.
    pub samples_requested: Option<usize>,
    /// Warm-up samples run first and excluded from metrics (`warmup_samples`,
    /// `--num-warmups`, `--warmup-sessions`). Default 0.
    pub warmup_samples: usize,
    /// Arrival process of the measured samples.
    pub arrival: ArrivalSpec,
    /// Concurrency cap (`max_concurrency`, `--max-concurrency`). Default 1, as both
    /// reference benchmarks run their sessions one at a time.
    pub max_concurrency: usize,
    /// Session shard threads (default: one per core).
    pub shards: Option<usize>,
    /// Send-lateness p99 (ms) above which the results are flagged as possibly
    /// generator-bound (`generator_bound_ms`, default
    /// `crate::workload::kit::DEFAULT_GENERATOR_BOUND_MS`).
    pub generator_bound_ms: f64,
    /// `reject_patterns`: server errors that mean "full, try later" (replacing the
    /// workload's `Descriptor::reject_patterns`; `None` = the workload's).
    pub reject_patterns: Option<Vec<crate::workload::outcome::RejectPattern>>,
}

impl Default for Load {
    /// What an absent `[load]` table means: one measured sample at a time, no warm-up,
    /// everything released at once.
    fn default() -> Self {
        Self {
            samples_requested: None,
            warmup_samples: 0,
            arrival: ArrivalSpec::default(),
            max_concurrency: 1,
            shards: None,
            generator_bound_ms: crate::workload::kit::DEFAULT_GENERATOR_BOUND_MS,
            reject_patterns: None,
        }
    }
}

/// `[load]` values given on the command line; they win over the file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LoadOverrides {
    /// `--num-prompts` / `--sessions`.
    pub num_prompts: Option<usize>,
    /// `--num-warmups` / `--warmup-sessions`.
    pub num_warmups: Option<usize>,
    /// `--request-rate` (`inf` or a number).
    pub request_rate: Option<String>,
    /// `--burstiness`.
    pub burstiness: Option<f64>,
    /// `--max-concurrency`.
    pub max_concurrency: Option<usize>,
    /// `--seed`.
    pub seed: Option<u64>,
    /// `--ramp-up-strategy`.
    pub ramp_up_strategy: Option<String>,
    /// `--ramp-up-start-rps`.
    pub ramp_up_start_rps: Option<f64>,
    /// `--ramp-up-end-rps`.
    pub ramp_up_end_rps: Option<f64>,
}

/// A TOML number written as an integer or a float, or a string (for `"inf"`).
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
enum NumOrStr {
    Int(i64),
    Float(f64),
    Str(String),
}

/// `[load]` as written (the schema of `rtload schema` is derived from this type).
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawLoad {
    /// Measured samples (`--num-prompts`); OmniInteract: a total of cases, 0 = all.
    /// Range [0, 1000000].
    #[schemars(with = "Option<u64>")]
    samples: Option<Spanned<i64>>,
    /// Warm-up samples, run first and excluded from metrics (`--num-warmups`).
    /// Range [0, 1000000].
    #[schemars(with = "Option<u64>")]
    warmup_samples: Option<Spanned<i64>>,
    /// Requests per second in [1e-6, 1e9], or "inf" (default) to release everything at
    /// once.
    #[schemars(with = "Option<NumOrStr>")]
    request_rate: Option<Spanned<NumOrStr>>,
    /// Gamma shape of the gaps, > 0: 1 = Poisson (default), "inf" = constant.
    #[schemars(with = "Option<NumOrStr>")]
    burstiness: Option<Spanned<NumOrStr>>,
    /// Cap on concurrently running samples (default 1). Range [1, 1000000].
    #[schemars(with = "Option<u64>")]
    max_concurrency: Option<Spanned<i64>>,
    /// Arrival (and dataset shuffle) seed (default 0). Range [0, 2^63-1].
    #[schemars(with = "Option<u64>")]
    seed: Option<Spanned<i64>>,
    /// "linear" or "exponential"; needs ramp_up_start_rps and ramp_up_end_rps.
    #[schemars(with = "Option<String>")]
    ramp_up_strategy: Option<Spanned<String>>,
    /// Ramp-up start rate, requests per second in [0, 1e9].
    #[schemars(with = "Option<f64>")]
    ramp_up_start_rps: Option<Spanned<NumOrStr>>,
    /// Ramp-up end rate, requests per second in (0, 1e9].
    #[schemars(with = "Option<f64>")]
    ramp_up_end_rps: Option<Spanned<NumOrStr>>,
    /// Session shard threads (default: one per core). Range [1, 1024].
    #[schemars(with = "Option<u64>")]
    shards: Option<Spanned<i64>>,
    /// Send-lateness p99 in ms above which results are flagged "generator-bound"
    /// (default 5). Range (0, 1e6].
    #[schemars(with = "Option<f64>")]
    generator_bound_ms: Option<Spanned<NumOrStr>>,
    /// Server `error` events counted as capacity rejections, not failures, e.g.
    /// `[{ code = "resource_exhausted" }, { message = "capacity_exhausted" }]` (a server
    /// error whose message holds the code as a token and contains the text). Replaces
    /// the workload's defaults; `[]` turns them off.
    #[schemars(with = "Option<Vec<crate::workload::outcome::RejectPattern>>")]
    reject_patterns: Option<Spanned<Vec<crate::workload::outcome::RejectPattern>>>,
}

/// Where a value came from, for the error message.
#[derive(Clone)]
enum Origin<'a> {
    File(Range<usize>),
    Flag(&'a str),
}

struct Ctx<'a> {
    doc: &'a ScenarioDoc<'a>,
    errors: Vec<ScenarioError>,
}

impl Ctx<'_> {
    fn err(&mut self, origin: Origin<'_>, msg: String) {
        self.errors.push(match origin {
            Origin::File(span) => self.doc.at(span, msg),
            Origin::Flag(flag) => ScenarioError::Flag {
                flag: flag.into(),
                msg,
            },
        });
    }

    /// A count in `[min, max]` from the flag (wins) or the file, else `default`.
    #[allow(clippy::too_many_arguments)]
    fn count(
        &mut self,
        v: Option<&Spanned<i64>>,
        ov: Option<usize>,
        key: &str,
        flag: &str,
        default: usize,
        (min, max): (i64, i64),
    ) -> usize {
        let range = format!("[{min}, {max}]");
        if let Some(n) = ov {
            if !(min..=max).contains(&i64::try_from(n).unwrap_or(i64::MAX)) {
                self.err(Origin::Flag(flag), format!("must be in {range} (got {n})"));
                return default;
            }
            return n;
        }
        match v {
            None => default,
            Some(s) if !(min..=max).contains(s.get_ref()) => {
                let got = *s.get_ref();
                let msg = if got < min {
                    format!(
                        "`{key}` must be ≥ {min} (got {got}); e.g. `{key} = {default}`",
                        default = default.max(min as usize)
                    )
                } else {
                    format!(
                        "`{key}` must be in {range} (got {got}); e.g. `{key} = {default}`",
                        default = default.max(min as usize)
                    )
                };
                self.err(Origin::File(s.span()), msg);
                default
            }
            Some(s) => *s.get_ref() as usize,
        }
    }

    /// An error about `[load] key`: at the flag when it came from one, else at the key.
    fn at_key(&mut self, key: &str, flag: &str, from_flag: bool, msg: String) {
        if from_flag {
            self.err(Origin::Flag(flag), msg);
        } else {
            let e = self.doc.key_error(&["load", key], msg);
            self.errors.push(e);
        }
    }

    fn number(&mut self, v: Option<&Spanned<NumOrStr>>, key: &str, allow_inf: bool) -> Option<f64> {
        let s = v?;
        match s.get_ref() {
            NumOrStr::Int(i) => Some(*i as f64),
            NumOrStr::Float(f) => Some(*f),
            NumOrStr::Str(t) if allow_inf && t.eq_ignore_ascii_case("inf") => Some(f64::INFINITY),
            NumOrStr::Str(t) => {
                let hint = if allow_inf {
                    "a number or \"inf\""
                } else {
                    "a number"
                };
                self.err(
                    Origin::File(s.span()),
                    format!("`{key}` must be {hint} (got \"{t}\")"),
                );
                None
            }
        }
    }
}

/// Parse and validate the `[load]` section, applying `ov`.
pub(crate) fn parse(section: &Section<'_>, ov: &LoadOverrides) -> Result<Load, Vec<ScenarioError>> {
    let raw: RawLoad = section.deserialize().map_err(|e| vec![e])?;
    let mut cx = Ctx {
        doc: section.doc(),
        errors: Vec::new(),
    };
    let samples_requested = (ov.num_prompts.is_some() || raw.samples.is_some()).then(|| {
        cx.count(
            raw.samples.as_ref(),
            ov.num_prompts,
            "samples",
            "--num-prompts",
            1,
            (0, MAX_SAMPLES),
        )
    });
    let warmup_samples = cx.count(
        raw.warmup_samples.as_ref(),
        ov.num_warmups,
        "warmup_samples",
        "--num-warmups",
        0,
        (0, MAX_SAMPLES),
    );
    let max_concurrency = cx.count(
        raw.max_concurrency.as_ref(),
        ov.max_concurrency,
        "max_concurrency",
        "--max-concurrency",
        1,
        (1, MAX_SAMPLES),
    );
    let shards = raw
        .shards
        .as_ref()
        .map(|_| cx.count(raw.shards.as_ref(), None, "shards", "", 1, (1, MAX_SHARDS)));
    let generator_bound_ms = generator_bound_ms(&mut cx, &raw);
    let seed = seed(&mut cx, ov, &raw);
    let rate = request_rate(&mut cx, ov, &raw);
    let burstiness = ov
        .burstiness
        .or_else(|| cx.number(raw.burstiness.as_ref(), "burstiness", true))
        .unwrap_or(1.0);
    let start = ov
        .ramp_up_start_rps
        .or_else(|| cx.number(raw.ramp_up_start_rps.as_ref(), "ramp_up_start_rps", false));
    let end = ov
        .ramp_up_end_rps
        .or_else(|| cx.number(raw.ramp_up_end_rps.as_ref(), "ramp_up_end_rps", false));
    let ramp_up = ramp_up(&mut cx, ov, &raw, start, end);
    let arrival = ArrivalSpec {
        // `inf` releases everything at once; NaN, −inf and negatives reach the plan's check.
        request_rate: rate.filter(|r| *r != f64::INFINITY),
        burstiness,
        ramp_up,
        seed,
    };
    report_plan_errors(&mut cx, ov, &arrival);
    check_rate_ranges(&mut cx, ov, arrival.request_rate, start, end);
    let reject_patterns = reject_patterns(&mut cx, &raw);
    if cx.errors.is_empty() {
        Ok(Load {
            samples_requested,
            warmup_samples,
            arrival,
            max_concurrency,
            shards,
            generator_bound_ms,
            reject_patterns,
        })
    } else {
        Err(cx.errors)
    }
}

/// `[load] generator_bound_ms` (default 5), which must be in (0, 1e6].
fn generator_bound_ms(cx: &mut Ctx<'_>, raw: &RawLoad) -> f64 {
    let v = cx
        .number(raw.generator_bound_ms.as_ref(), "generator_bound_ms", false)
        .unwrap_or(crate::workload::kit::DEFAULT_GENERATOR_BOUND_MS);
    if !(v > 0.0 && v <= 1e6) {
        cx.at_key(
            "generator_bound_ms",
            "",
            false,
            format!(
                "`generator_bound_ms` must be in (0, 1e6] ms (got {}); e.g. `generator_bound_ms = 5`",
                crate::util::textpos::num(v)
            ),
        );
    }
    v
}

/// `[load] reject_patterns`: each needs a non-empty `code` or `message`.
fn reject_patterns(
    cx: &mut Ctx<'_>,
    raw: &RawLoad,
) -> Option<Vec<crate::workload::outcome::RejectPattern>> {
    let list = raw.reject_patterns.as_ref()?;
    let empty = |s: &Option<String>| s.as_deref().is_none_or(str::is_empty);
    if list
        .get_ref()
        .iter()
        .any(|p| empty(&p.code) && empty(&p.message))
    {
        cx.err(
            Origin::File(list.span()),
            "each `reject_patterns` entry needs a non-empty `code` or `message`; e.g. \
             `reject_patterns = [{ code = \"resource_exhausted\" }]`"
                .into(),
        );
    }
    Some(list.get_ref().clone())
}

/// `--seed` over `[load] seed` (default 0); a negative seed is an error.
fn seed(cx: &mut Ctx<'_>, ov: &LoadOverrides, raw: &RawLoad) -> u64 {
    match (ov.seed, raw.seed.as_ref()) {
        (Some(s), _) => s,
        (None, Some(s)) if *s.get_ref() < 0 => {
            cx.err(
                Origin::File(s.span()),
                format!("`seed` must be ≥ 0 (got {})", s.get_ref()),
            );
            0
        }
        (None, Some(s)) => *s.get_ref() as u64,
        (None, None) => 0,
    }
}

/// `--request-rate` over `[load] request_rate`, as given (`inf` included).
fn request_rate(cx: &mut Ctx<'_>, ov: &LoadOverrides, raw: &RawLoad) -> Option<f64> {
    match &ov.request_rate {
        Some(t) if t.eq_ignore_ascii_case("inf") => Some(f64::INFINITY),
        Some(t) => match t.parse::<f64>() {
            Ok(v) => Some(v),
            Err(_) => {
                cx.err(
                    Origin::Flag("--request-rate"),
                    format!("must be a number or inf (got \"{t}\")"),
                );
                None
            }
        },
        None => cx.number(raw.request_rate.as_ref(), "request_rate", true),
    }
}

/// The ramp-up, when a strategy is set (flag over file): it needs both bounds
/// (`start`, `end`).
fn ramp_up(
    cx: &mut Ctx<'_>,
    ov: &LoadOverrides,
    raw: &RawLoad,
    start: Option<f64>,
    end: Option<f64>,
) -> Option<RampUp> {
    let strategy_origin;
    let strategy = match (&ov.ramp_up_strategy, raw.ramp_up_strategy.as_ref()) {
        (Some(s), _) => {
            strategy_origin = Origin::Flag("--ramp-up-strategy");
            Some(s.clone())
        }
        (None, Some(s)) => {
            strategy_origin = Origin::File(s.span());
            Some(s.get_ref().clone())
        }
        (None, None) => {
            strategy_origin = Origin::Flag("--ramp-up-strategy");
            None
        }
    };
    match strategy.as_deref() {
        None => None,
        Some(name) => {
            let strategy = match name {
                "linear" => Some(RampStrategy::Linear),
                "exponential" => Some(RampStrategy::Exponential),
                other => {
                    cx.err(strategy_origin.clone(), format!("unknown ramp-up strategy \"{other}\"; use \"linear\" or \"exponential\""));
                    None
                }
            };
            match (strategy, start, end) {
                (Some(strategy), Some(start_rps), Some(end_rps)) => Some(RampUp {
                    strategy,
                    start_rps,
                    end_rps,
                }),
                (Some(_), _, _) => {
                    cx.err(strategy_origin, "ramp-up needs both `ramp_up_start_rps` and `ramp_up_end_rps` (or --ramp-up-start-rps/--ramp-up-end-rps)".into());
                    None
                }
                _ => None,
            }
        }
    }
}

/// The arrival plan's own validation, each problem at the key (or flag) it is about.
fn report_plan_errors(cx: &mut Ctx<'_>, ov: &LoadOverrides, arrival: &ArrivalSpec) {
    // Burstiness, fixed rate and ramp are checked on their own as well, so independent
    // problems are all listed, each at the key it is about.
    let parts = [
        arrival.clone(),
        ArrivalSpec {
            request_rate: None,
            ramp_up: None,
            ..arrival.clone()
        },
        ArrivalSpec {
            burstiness: 1.0,
            ramp_up: None,
            ..arrival.clone()
        },
        ArrivalSpec {
            burstiness: 1.0,
            request_rate: None,
            ..arrival.clone()
        },
    ];
    let mut plan_errors: Vec<PlanError> = Vec::new();
    for e in parts
        .iter()
        .filter_map(|p| crate::workload::plan::validate(p).err())
    {
        // By text: NaN values never compare equal.
        if !plan_errors.iter().any(|p| p.to_string() == e.to_string()) {
            plan_errors.push(e);
        }
    }
    for e in plan_errors {
        let (key, flag, from_flag) = match &e {
            PlanError::RateWithRampUp { .. } | PlanError::InvalidRate { .. } => {
                ("request_rate", "--request-rate", ov.request_rate.is_some())
            }
            PlanError::InvalidBurstiness { .. } => {
                ("burstiness", "--burstiness", ov.burstiness.is_some())
            }
            PlanError::InvalidRampBound {
                field: "start_rps", ..
            }
            | PlanError::RampStartAboveEnd { .. }
            | PlanError::ExponentialZeroStart { .. } => (
                "ramp_up_start_rps",
                "--ramp-up-start-rps",
                ov.ramp_up_start_rps.is_some(),
            ),
            _ => (
                "ramp_up_end_rps",
                "--ramp-up-end-rps",
                ov.ramp_up_end_rps.is_some(),
            ),
        };
        cx.at_key(key, flag, from_flag, e.to_string());
    }
}

/// Finite rates must lie in the supported range (`request_rate` at least
/// [`MIN_RATE`], ramp bounds at least 0; all at most [`MAX_RATE`]).
fn check_rate_ranges(
    cx: &mut Ctx<'_>,
    ov: &LoadOverrides,
    request_rate: Option<f64>,
    start: Option<f64>,
    end: Option<f64>,
) {
    let rates = [
        (
            "request_rate",
            "--request-rate",
            ov.request_rate.is_some(),
            request_rate,
            MIN_RATE,
        ),
        (
            "ramp_up_start_rps",
            "--ramp-up-start-rps",
            ov.ramp_up_start_rps.is_some(),
            start,
            0.0,
        ),
        (
            "ramp_up_end_rps",
            "--ramp-up-end-rps",
            ov.ramp_up_end_rps.is_some(),
            end,
            0.0,
        ),
    ];
    for (key, flag, from_flag, v, lo) in rates {
        if let Some(v) = v.filter(|v| v.is_finite() && (*v > MAX_RATE || (*v > 0.0 && *v < lo))) {
            let range = if lo > 0.0 {
                format!("[{lo:e}, {MAX_RATE:e}] or \"inf\"")
            } else {
                format!("[0, {MAX_RATE:e}]")
            };
            cx.at_key(
                key,
                flag,
                from_flag,
                format!(
                    "{key} must be in {range} requests per second (got {})",
                    crate::util::textpos::num(v)
                ),
            );
        }
    }
}
