//! Parameter sweeps as specified: the `--sweep PARAM=V1,V2,...` flag (parsed here) and
//! the scenario's `[sweep]` table (parsed in `table`), validated into a [`Sweep`], and its
//! expansion into points (samples per point, closed loop, labels, file stems). Pure: the
//! batch runner runs one point per value; the capacity (knee), the table and the JSON of a
//! finished sweep belong to the report layer (`report/sweep.rs`).

use std::fmt;

use serde_json::{Value, json};

use crate::config::scenario::{MAX_RATE, MAX_SAMPLES, MIN_RATE};

mod table;

pub use table::parse_table;

/// The load parameter a sweep varies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SweepParam {
    /// `max_concurrency`: the concurrency cap (whole numbers ≥ 1).
    MaxConcurrency,
    /// `request_rate`: arrivals per second (> 0, or `inf` for all at once).
    RequestRate,
}

impl SweepParam {
    /// Every parameter, in the order they are listed in messages.
    pub const ALL: [SweepParam; 2] = [SweepParam::MaxConcurrency, SweepParam::RequestRate];

    /// The name used in flags, TOML and reports: `max_concurrency` / `request_rate`.
    pub fn name(self) -> &'static str {
        match self {
            SweepParam::MaxConcurrency => "max_concurrency",
            SweepParam::RequestRate => "request_rate",
        }
    }

    /// The parameter called `name`, if any.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.name() == name)
    }

    /// A point value as text: `4` for concurrency, `2.5` or `inf` for a rate. Suitable for
    /// the `--request-rate` override, which takes text.
    pub fn format_value(self, v: f64) -> String {
        match self {
            _ if v.is_infinite() => "inf".into(),
            SweepParam::MaxConcurrency => format!("{}", v.round()),
            SweepParam::RequestRate => format!("{v}"),
        }
    }

    /// A point value as JSON: an integer for concurrency, a number for a rate, the string
    /// `"inf"` for an unlimited rate (JSON has no infinity).
    pub fn json_value(self, v: f64) -> Value {
        match self {
            _ if v.is_infinite() => json!("inf"),
            SweepParam::MaxConcurrency => json!(v.round() as u64),
            SweepParam::RequestRate => json!(v),
        }
    }

    fn example(self, origin: Origin) -> &'static str {
        match (self, origin) {
            (SweepParam::MaxConcurrency, Origin::Flag) => "1,2,4,8",
            (SweepParam::RequestRate, Origin::Flag) => "1,2.5,inf",
            (SweepParam::MaxConcurrency, Origin::File) => "`values = [1, 2, 4, 8]`",
            (SweepParam::RequestRate, Origin::File) => "`values = [1, 2.5, inf]`",
        }
    }
}

impl fmt::Display for SweepParam {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A validated sweep: the parameter and its strictly increasing values.
#[derive(Debug, Clone, PartialEq)]
pub struct Sweep {
    /// The varied parameter.
    pub param: SweepParam,
    /// Point values, strictly increasing; whole numbers ≥ 1 for `max_concurrency`, > 0
    /// (`f64::INFINITY` allowed, last) for `request_rate`. Never empty.
    pub values: Vec<f64>,
    /// `[sweep] headline`: the metric to feature (e.g. `ttft_ms.p99`). Not checked against
    /// the workload's metric names here; the flag form never sets it.
    pub headline: Option<String>,
    /// `[sweep] samples_per_point`: measured samples each point runs. `None` (absent):
    /// a `max_concurrency` point runs `max(samples, 4 × concurrency)` so it can reach and
    /// hold its concurrency, a `request_rate` point the scenario's `samples`. `Some(0)`:
    /// no scaling (every point runs the scenario's `samples`). `Some(n)`: every point `n`.
    pub samples_per_point: Option<usize>,
}

/// How many sessions per unit of concurrency a `max_concurrency` point runs by default.
pub const SAMPLES_PER_SLOT: usize = 4;

impl Sweep {
    /// The measured samples the point at `value` runs, given the scenario's `samples`.
    pub fn point_samples(&self, samples: usize, value: f64) -> usize {
        match (self.samples_per_point, self.param) {
            (Some(0), _) => samples,
            (Some(n), _) => n,
            (None, SweepParam::MaxConcurrency) => {
                let want = (value.max(1.0) as usize).saturating_mul(SAMPLES_PER_SLOT);
                samples.max(want.min(MAX_SAMPLES as usize))
            }
            (None, SweepParam::RequestRate) => samples,
        }
    }

    /// True when each point releases its sessions all at once and lets the concurrency cap
    /// pace them (closed loop), so a `max_concurrency` point can hold its concurrency
    /// whatever the scenario's `request_rate`: every `max_concurrency` sweep unless
    /// scaling is off (`samples_per_point = 0` runs the scenario as written).
    pub fn closed_loop(&self) -> bool {
        self.param == SweepParam::MaxConcurrency && self.samples_per_point != Some(0)
    }

    /// What each point will run, one line per point, as `rtload check` prints it, e.g.
    /// `max_concurrency=4: 16 measured samples (scaled from 3: 4 per concurrency slot)`.
    pub fn describe_points(&self, samples: usize) -> Vec<String> {
        self.values
            .iter()
            .map(|&v| {
                let n = self.point_samples(samples, v);
                let why = match self.samples_per_point {
                    Some(0) => "scenario `samples`; scaling off (`samples_per_point = 0`)".into(),
                    Some(_) => "`[sweep] samples_per_point`".to_string(),
                    None if n != samples => {
                        format!("scaled from {samples}: {SAMPLES_PER_SLOT} per concurrency slot")
                    }
                    None => "scenario `samples`".into(),
                };
                let short = if self.param == SweepParam::MaxConcurrency && (n as f64) < v {
                    "; fewer samples than the concurrency: cannot reach it"
                } else {
                    ""
                };
                let arrivals = if self.closed_loop() {
                    ", released at once (closed loop: the cap paces them)"
                } else {
                    ""
                };
                format!(
                    "{}: {n} measured samples ({why}){arrivals}{short}",
                    point_label(self, v)
                )
            })
            .collect()
    }
}

/// A problem with the `--sweep` flag. Messages name the bad value and the fix.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SweepError {
    /// No `=` between the parameter and the values.
    #[error(
        "--sweep: expected PARAM=V1,V2,... (got \"{0}\"); use e.g. --sweep max_concurrency=1,2,4,8"
    )]
    Syntax(String),
    /// The parameter is not one we can sweep.
    #[error("--sweep: unknown parameter \"{0}\"; use max_concurrency or request_rate")]
    UnknownParam(String),
    /// A bad, missing or out-of-order value.
    #[error("--sweep: {0}")]
    Value(String),
}

#[derive(Clone, Copy)]
enum Origin {
    Flag,
    File,
}

/// One value as written: its literal text and what it parsed as.
enum Lit<'a> {
    Int(i64),
    Float(f64),
    Text(&'a str),
    Other,
}

/// Check one value; the error message quotes `text` (as typed) and gives the fix.
fn check_value(param: SweepParam, lit: Lit<'_>, text: &str, origin: Origin) -> Result<f64, String> {
    let name = param.name();
    let eg = param.example(origin);
    match param {
        SweepParam::MaxConcurrency => {
            let n = match lit {
                Lit::Int(n) => Some(n),
                Lit::Text(t) if matches!(origin, Origin::Flag) => t.trim().parse::<i64>().ok(),
                Lit::Text(_) | Lit::Float(_) | Lit::Other => None,
            };
            match n {
                None => Err(format!(
                    "{name} value `{text}` is not an integer; use integers ≥ 1, e.g. {eg}"
                )),
                Some(n) if n < 1 => Err(format!(
                    "{name} value `{text}` must be ≥ 1; use integers ≥ 1, e.g. {eg}"
                )),
                Some(n) if n > MAX_SAMPLES => Err(format!(
                    "{name} value `{text}` is out of range; use integers in [1, {MAX_SAMPLES}], e.g. {eg}"
                )),
                Some(n) => Ok(n as f64),
            }
        }
        SweepParam::RequestRate => {
            let v = match lit {
                Lit::Int(n) => Some(n as f64),
                Lit::Float(f) => Some(f),
                Lit::Text(t) if t.trim().eq_ignore_ascii_case("inf") => Some(f64::INFINITY),
                Lit::Text(t) if matches!(origin, Origin::Flag) => t.trim().parse::<f64>().ok(),
                Lit::Text(_) | Lit::Other => None,
            };
            match v {
                None => Err(format!(
                    "{name} value `{text}` is not a number; use requests/s > 0 or inf, e.g. {eg}"
                )),
                Some(v) if v.is_nan() || v <= 0.0 => Err(format!(
                    "{name} value `{text}` must be > 0; use requests/s > 0 or inf, e.g. {eg}"
                )),
                Some(v) if v.is_finite() && !(MIN_RATE..=MAX_RATE).contains(&v) => Err(format!(
                    "{name} value `{text}` is out of range; use requests/s in [{MIN_RATE:e}, {MAX_RATE:e}] or inf, e.g. {eg}"
                )),
                Some(v) => Ok(v),
            }
        }
    }
}

/// The index of the first value not above its predecessor, with the message.
fn check_order(
    param: SweepParam,
    values: &[f64],
    texts: &[&str],
    origin: Origin,
) -> Option<(usize, String)> {
    let i = (1..values.len()).find(|&i| values[i] <= values[i - 1])?;
    Some((
        i,
        format!(
            "{} values must be strictly increasing (`{}` follows `{}`); list each value once, \
             in ascending order, e.g. {}",
            param.name(),
            texts[i],
            texts[i - 1],
            param.example(origin)
        ),
    ))
}

/// Parse `--sweep max_concurrency=1,2,4,8` or `--sweep request_rate=1,2.5,inf` (the text
/// after the flag).
pub fn parse_flag(s: &str) -> Result<Sweep, SweepError> {
    let (name, list) = s
        .split_once('=')
        .ok_or_else(|| SweepError::Syntax(s.into()))?;
    let name = name.trim();
    let param = SweepParam::from_name(name).ok_or_else(|| SweepError::UnknownParam(name.into()))?;
    if list.trim().is_empty() {
        return Err(SweepError::Value(format!(
            "{name} needs at least one value; use e.g. --sweep {name}={}",
            param.example(Origin::Flag)
        )));
    }
    let texts: Vec<&str> = list.split(',').map(str::trim).collect();
    let mut values = Vec::with_capacity(texts.len());
    for t in &texts {
        if t.is_empty() {
            return Err(SweepError::Value(format!(
                "empty value in `{}`; separate values with single commas, e.g. {name}={}",
                list.trim(),
                param.example(Origin::Flag)
            )));
        }
        values.push(check_value(param, Lit::Text(t), t, Origin::Flag).map_err(SweepError::Value)?);
    }
    if let Some((_, msg)) = check_order(param, &values, &texts, Origin::Flag) {
        return Err(SweepError::Value(msg));
    }
    Ok(Sweep {
        param,
        values,
        headline: None,
        samples_per_point: None,
    })
}

/// A point's human label, e.g. `max_concurrency=4`, `request_rate=inf`.
pub fn point_label(sweep: &Sweep, value: f64) -> String {
    format!("{}={}", sweep.param, sweep.param.format_value(value))
}

/// A file-name-safe label, e.g. `max_concurrency_4`, `request_rate_2p5`,
/// `request_rate_inf` (only `[A-Za-z0-9_]`).
pub fn point_file_stem(sweep: &Sweep, value: f64) -> String {
    let v: String = sweep
        .param
        .format_value(value)
        .chars()
        .map(|c| match c {
            '.' => 'p',
            '-' => 'm',
            c if c.is_ascii_alphanumeric() => c,
            _ => '_',
        })
        .collect();
    format!("{}_{v}", sweep.param)
}

#[cfg(test)]
mod tests;
