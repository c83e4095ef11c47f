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
    /// `duration_s`: hold each session this long (a soak); `None` = a session ends when
    /// its media does. Only kinds whose sessions can go on (`Descriptor::holds_sessions`)
    /// accept it.
    pub duration_s: Option<f64>,
    /// `series_interval_s`: the period of the run's time series — the generator's RSS
    /// and CPU per interval of the live phase, and metrics per interval of session age
    /// (default [`DEFAULT_SERIES_INTERVAL_S`], at least 1 s: one reading per interval is
    /// kept for the whole run).
    pub series_interval_s: f64,
}

impl Load {
    /// How long a measured session released at `offset_s` is held from its open:
    /// `duration_s`, or under a staircase arrival (`arrival.steps`) what is left of it
    /// from the session's release, so every step's sessions end together.
    pub fn hold_of(&self, offset_s: f64) -> Option<f64> {
        let d = self.duration_s?;
        Some(match self.arrival.steps {
            Some(_) => (d - offset_s).max(0.0),
            None => d,
        })
    }
}

/// Default `series_interval_s`: a minute.
pub const DEFAULT_SERIES_INTERVAL_S: f64 = 60.0;
/// Largest `duration_s` and `series_interval_s`: a week.
pub const MAX_DURATION_S: f64 = 604_800.0;

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
            duration_s: None,
            series_interval_s: DEFAULT_SERIES_INTERVAL_S,
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
    /// `--duration-s`.
    pub duration_s: Option<f64>,
    /// `--series-interval-s`.
    pub series_interval_s: Option<f64>,
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
    /// Hold each session this many seconds (a soak): an OmniInteract session speaks
    /// turns until one ends at or after it. Range (0, 604800].
    #[schemars(with = "Option<f64>")]
    duration_s: Option<Spanned<NumOrStr>>,
    /// Period of the run's time series in seconds (default 60): RSS and CPU per interval
    /// of the live phase, metrics per interval of session age. Range [1, 604800].
    #[schemars(with = "Option<f64>")]
    series_interval_s: Option<Spanned<NumOrStr>>,
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
        steps: None,
    };
    report_plan_errors(&mut cx, ov, &arrival);
    check_rate_ranges(&mut cx, ov, arrival.request_rate, start, end);
    let reject_patterns = reject_patterns(&mut cx, &raw);
    let (duration_s, series_interval_s) = soak_times(&mut cx, ov, &raw);
    if cx.errors.is_empty() {
        Ok(Load {
            samples_requested,
            warmup_samples,
            arrival,
            max_concurrency,
            shards,
            generator_bound_ms,
            reject_patterns,
            duration_s,
            series_interval_s,
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

/// `[load] duration_s` (none by default) and `series_interval_s` (default
/// [`DEFAULT_SERIES_INTERVAL_S`]).
fn soak_times(cx: &mut Ctx<'_>, ov: &LoadOverrides, raw: &RawLoad) -> (Option<f64>, f64) {
    let duration = (ov.duration_s, raw.duration_s.as_ref());
    let duration_s = seconds(
        cx,
        duration,
        ("duration_s", "--duration-s"),
        (0.0, false),
        600.0,
    );
    let interval = (ov.series_interval_s, raw.series_interval_s.as_ref());
    let every = DEFAULT_SERIES_INTERVAL_S;
    let keys = ("series_interval_s", "--series-interval-s");
    // At least a second: one reading per interval is kept for the whole run.
    let series_interval_s = seconds(cx, interval, keys, (1.0, true), every).unwrap_or(every);
    (duration_s, series_interval_s)
}

/// A `[load]` time in seconds from its flag (wins) or the file, which must be in (`min`,
/// [`MAX_DURATION_S`]] (`[min, …]` when `closed`); `example` is what the error suggests.
fn seconds(
    cx: &mut Ctx<'_>,
    (flag_value, v): (Option<f64>, Option<&Spanned<NumOrStr>>),
    (key, flag): (&str, &str),
    (min, closed): (f64, bool),
    example: f64,
) -> Option<f64> {
    let s = flag_value.or_else(|| cx.number(v, key, false))?;
    let above = if closed { s >= min } else { s > min };
    if above && s <= MAX_DURATION_S {
        return Some(s);
    }
    let open = if closed { "[" } else { "(" };
    cx.at_key(
        key,
        flag,
        flag_value.is_some(),
        format!(
            "`{key}` must be in {open}{}, {}] seconds (got {}); e.g. `{key} = {}`",
            crate::util::textpos::num(min),
            crate::util::textpos::num(MAX_DURATION_S),
            crate::util::textpos::num(s),
            crate::util::textpos::num(example)
        ),
    );
    None
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

#[path = "load_rates.rs"]
mod rates;
use rates::{check_rate_ranges, ramp_up, report_plan_errors};
