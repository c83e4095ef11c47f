//! Parameter sweeps: the `--sweep PARAM=V1,V2,...` flag and the scenario's `[sweep]` table,
//! the capacity (knee) of a finished sweep, and its table and JSON renderings. Pure: the
//! runner runs one point per value and hands the results back here.

use std::collections::BTreeMap;
use std::fmt;
use std::ops::Range;
use std::path::Path;

use serde::Deserialize;
use serde_json::{Value, json};
use toml::Spanned;

use crate::config::scenario::{MAX_RATE, MAX_SAMPLES, MIN_RATE};
use crate::util::scenario_error::{ScenarioError, key_span};

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

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSweep {
    param: Option<Spanned<String>>,
    values: Option<Spanned<Vec<Spanned<toml::Value>>>>,
    headline: Option<Spanned<String>>,
    samples_per_point: Option<Spanned<toml::Value>>,
}

#[derive(Debug, Deserialize)]
struct SweepDoc {
    sweep: Option<Spanned<RawSweep>>,
}

/// Parse the optional `[sweep]` table of scenario text `src` (named `path` in errors):
/// `param = "max_concurrency" | "request_rate"`, `values = [...]` (strictly increasing;
/// `inf` or `"inf"` allowed for `request_rate`), optional `headline = "metric"`.
/// `Ok(None)` when there is no `[sweep]`. Every problem is returned, positioned.
pub fn parse_table(path: &Path, src: &str) -> Result<Option<Sweep>, Vec<ScenarioError>> {
    let at = |span: Range<usize>, msg: String| ScenarioError::at(path, src, span, msg);
    let doc: toml::Table =
        toml::from_str(src).map_err(|e| vec![ScenarioError::from_toml(path, src, &e)])?;
    match doc.get("sweep") {
        None => return Ok(None),
        Some(toml::Value::Table(_)) => {}
        Some(other) => {
            let msg = format!(
                "`sweep` must be a table (got {}); write it as `[sweep]`",
                other.type_str()
            );
            return Err(vec![match key_span(src, "", "sweep") {
                Some(span) => at(span, msg),
                None => ScenarioError::file(path, msg),
            }]);
        }
    }
    let doc: SweepDoc =
        toml::from_str(src).map_err(|e| vec![ScenarioError::from_toml(path, src, &e)])?;
    let Some(table) = doc.sweep else {
        return Ok(None);
    };
    let header = table.span();
    let raw = table.into_inner();
    let mut errors = Vec::new();
    let param = sweep_param(raw.param.as_ref(), &header, &at, &mut errors);
    let headline = raw.headline.and_then(|h| {
        if h.get_ref().trim().is_empty() {
            errors.push(at(
                h.span(),
                "`headline` must name a metric; use e.g. `headline = \"ttft_ms.p99\"` or \
                 leave it out"
                    .into(),
            ));
            return None;
        }
        Some(h.into_inner())
    });
    let samples_per_point = samples_per_point(raw.samples_per_point, src, &at, &mut errors);
    let values = match (raw.values, param) {
        (None, _) => {
            errors.push(at(
                header,
                format!(
                    "[sweep] needs `values`; add e.g. {}",
                    param
                        .unwrap_or(SweepParam::MaxConcurrency)
                        .example(Origin::File)
                ),
            ));
            None
        }
        (Some(_), None) => None,
        (Some(vs), Some(param)) => file_values(param, vs, src, &at, &mut errors),
    };
    match (param, values) {
        (Some(param), Some(values)) if errors.is_empty() => Ok(Some(Sweep {
            param,
            values,
            headline,
            samples_per_point,
        })),
        _ => Err(errors),
    }
}

/// The `param` of a `[sweep]` table (spanning `header`), pushing an error when it is
/// missing or unknown.
fn sweep_param(
    raw_param: Option<&Spanned<String>>,
    header: &Range<usize>,
    at: &dyn Fn(Range<usize>, String) -> ScenarioError,
    errors: &mut Vec<ScenarioError>,
) -> Option<SweepParam> {
    match raw_param {
        None => {
            errors.push(at(
                header.clone(),
                "[sweep] needs `param`; add `param = \"max_concurrency\"` or \
             `param = \"request_rate\"`"
                    .into(),
            ));
            None
        }
        Some(p) => SweepParam::from_name(p.get_ref()).or_else(|| {
            errors.push(at(
                p.span(),
                format!(
                    "unknown sweep param \"{}\"; use \"max_concurrency\" or \"request_rate\"",
                    p.get_ref()
                ),
            ));
            None
        }),
    }
}

/// The optional `samples_per_point` of a `[sweep]` table, pushing an error when it is not
/// an integer in `[0, MAX_SAMPLES]`.
fn samples_per_point(
    raw: Option<Spanned<toml::Value>>,
    src: &str,
    at: &dyn Fn(Range<usize>, String) -> ScenarioError,
    errors: &mut Vec<ScenarioError>,
) -> Option<usize> {
    raw.and_then(|v| {
        let n = v
            .get_ref()
            .as_integer()
            .filter(|n| (0..=MAX_SAMPLES).contains(n));
        if n.is_none() {
            let text = src.get(v.span()).unwrap_or("?");
            errors.push(at(
                v.span(),
                format!(
                    "`samples_per_point` value `{text}` must be an integer in [0, {MAX_SAMPLES}]; \
                 use e.g. `samples_per_point = 32`, `0` to run every point with the \
                 scenario's `samples`, or leave it out for {SAMPLES_PER_SLOT} × concurrency"
                ),
            ));
        }
        n.map(|n| n as usize)
    })
}

fn file_values(
    param: SweepParam,
    vs: Spanned<Vec<Spanned<toml::Value>>>,
    src: &str,
    at: &dyn Fn(Range<usize>, String) -> ScenarioError,
    errors: &mut Vec<ScenarioError>,
) -> Option<Vec<f64>> {
    if vs.get_ref().is_empty() {
        let eg = param.example(Origin::File);
        errors.push(at(
            vs.span(),
            format!("`values` needs at least one value; use e.g. {eg}"),
        ));
        return None;
    }
    let before = errors.len();
    let mut values = Vec::new();
    let mut texts = Vec::new();
    let mut spans = Vec::new();
    for v in vs.into_inner() {
        let span = v.span();
        let text = src.get(span.clone()).unwrap_or("?");
        let lit = match v.get_ref() {
            toml::Value::Integer(n) => Lit::Int(*n),
            toml::Value::Float(f) => Lit::Float(*f),
            toml::Value::String(s) => Lit::Text(s),
            _ => Lit::Other,
        };
        match check_value(param, lit, text, Origin::File) {
            Ok(x) => values.push(x),
            Err(msg) => errors.push(at(span.clone(), msg)),
        }
        texts.push(text);
        spans.push(span);
    }
    if errors.len() > before {
        return None;
    }
    if let Some((i, msg)) = check_order(param, &values, &texts, Origin::File) {
        errors.push(at(spans[i].clone(), msg));
        return None;
    }
    Some(values)
}

/// The outcome of one sweep point.
#[derive(Debug, Clone, PartialEq)]
pub struct PointResult {
    /// The parameter value of this point.
    pub value: f64,
    /// The run's flat metric map.
    pub metrics: BTreeMap<String, f64>,
    /// Every threshold held and no measured sample failed.
    pub passed: bool,
    /// Peak measured sessions in flight at once.
    pub achieved_concurrency: Option<usize>,
    /// Measured sessions started per second (`None` under two samples).
    pub achieved_request_rate: Option<f64>,
    /// Completed measured sessions per second of run.
    pub sessions_per_s: Option<f64>,
    /// The generator's send lateness p99, ms.
    pub lateness_p99_ms: Option<f64>,
    /// The point reached its swept value (see [`reached`]).
    pub reached: bool,
}

/// Whether a point reached its swept `value`: a `max_concurrency` point when its peak
/// sessions in flight equal the value; a finite `request_rate` point when sessions
/// started at least 90% as fast as the arrival plan released them (`planned_rate`), and
/// an unlimited one always.
pub fn reached(
    param: SweepParam,
    value: f64,
    concurrency: usize,
    rate: Option<f64>,
    planned_rate: Option<f64>,
) -> bool {
    match param {
        SweepParam::MaxConcurrency => concurrency as f64 >= value,
        SweepParam::RequestRate if value.is_infinite() => true,
        SweepParam::RequestRate => match (rate, planned_rate) {
            (Some(r), Some(p)) => r >= 0.9 * p,
            _ => false,
        },
    }
}

/// The capacity of a sweep: the knee. That is the highest point value such that it *and
/// every lower point* passed and reached its swept value. A failing (or short) point caps
/// the capacity even if a higher point passes again (pass-fail-pass gives the first value):
/// a load level that only works sometimes, or was never tested, is not capacity. `None`
/// when the lowest point failed or there are no points. Points are taken in ascending
/// order of value whatever order they are given in.
pub fn capacity(points: &[PointResult]) -> Option<f64> {
    let mut sorted: Vec<&PointResult> = points.iter().collect();
    sorted.sort_by(|a, b| a.value.total_cmp(&b.value));
    sorted
        .iter()
        .take_while(|p| p.passed && p.reached)
        .last()
        .map(|p| p.value)
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

/// One table column of metric values, formatted alike: whole numbers bare if every value
/// is whole, else 3 decimals if every value is below 1, else 2 decimals; `-` when missing.
pub(crate) fn fmt_column(values: &[Option<f64>]) -> Vec<String> {
    let finite = || values.iter().flatten().filter(|v| v.is_finite());
    let whole = finite().all(|v| v.fract() == 0.0 && v.abs() < 1e15);
    let small = finite().all(|v| v.abs() < 1.0);
    let cell = |v: f64| match () {
        _ if !v.is_finite() => format!("{v}"),
        _ if whole => format!("{v:.0}"),
        _ if small => format!("{v:.3}"),
        _ => format!("{v:.2}"),
    };
    values
        .iter()
        .map(|v| v.map_or_else(|| "-".into(), cell))
        .collect()
}

/// Lay out `rows` (first row = header) as aligned columns separated by two spaces; the
/// first column is left-aligned, the others right-aligned. No trailing spaces.
pub(crate) fn align(rows: &[Vec<String>], left: &[bool]) -> String {
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let width = |c: usize| {
        rows.iter()
            .filter_map(|r| r.get(c))
            .map(|s| s.chars().count())
            .max()
            .unwrap_or(0)
    };
    let widths: Vec<usize> = (0..cols).map(width).collect();
    let mut out = String::new();
    for row in rows {
        let mut line = String::new();
        for (c, cell) in row.iter().enumerate() {
            let pad = widths[c] - cell.chars().count();
            if c > 0 {
                line.push_str("  ");
            }
            if left.get(c).copied().unwrap_or(false) {
                line.push_str(cell);
                line.push_str(&" ".repeat(pad));
            } else {
                line.push_str(&" ".repeat(pad));
                line.push_str(cell);
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// One line under the sweep table saying which way each column is better, from the
/// workload's metric catalogue (`better: ttfc_ms.mean lower is better (ms); …`).
pub fn direction_legend(
    columns: &[&str],
    catalogue: &crate::workload::catalogue::Catalogue,
) -> String {
    use crate::workload::catalogue::Direction;
    let parts: Vec<String> = columns
        .iter()
        .filter_map(|c| catalogue.get(c))
        .map(|m| {
            let way = match m.direction {
                Direction::Lower => "lower is better",
                Direction::Higher => "higher is better",
                Direction::NotAScore => "not a score",
            };
            format!("{} {way} ({})", m.name, m.unit)
        })
        .collect();
    format!("better: {}\n", parts.join("; "))
}

/// The metric columns of a sweep table (terminal and HTML alike): the `[sweep]`
/// headline, then the workload's headline metrics, then `failed`.
pub fn table_columns(headline: Option<&str>, catalogue_headline: &[String]) -> Vec<String> {
    let mut cols: Vec<String> = headline.into_iter().map(str::to_string).collect();
    for c in catalogue_headline {
        if !cols.contains(c) {
            cols.push(c.clone());
        }
    }
    cols.push("failed".into());
    cols
}

/// The rows of a sweep table, header first: the swept value, `achieved` (peak sessions in
/// flight for `max_concurrency`, sessions started/s for `request_rate`), `sessions/s`,
/// `columns` (metric names; `-` where a point lacks one), and `result` (`pass` / `FAIL`,
/// `+short` when the point did not reach its swept value).
pub fn table_rows(sweep: &Sweep, points: &[PointResult], columns: &[&str]) -> Vec<Vec<String>> {
    let mut rows = vec![
        [sweep.param.name(), "achieved", "sessions/s"]
            .into_iter()
            .map(str::to_string)
            .chain(columns.iter().map(|c| c.to_string()))
            .chain(std::iter::once("result".to_string()))
            .collect::<Vec<_>>(),
    ];
    let column = |f: &dyn Fn(&PointResult) -> Option<f64>| {
        fmt_column(&points.iter().map(f).collect::<Vec<_>>())
    };
    let achieved = column(&|p| match sweep.param {
        SweepParam::MaxConcurrency => p.achieved_concurrency.map(|c| c as f64),
        SweepParam::RequestRate => p.achieved_request_rate,
    });
    let per_s = column(&|p| p.sessions_per_s);
    let cells: Vec<Vec<String>> = columns
        .iter()
        .map(|c| column(&|p| p.metrics.get(*c).copied()))
        .collect();
    for (i, p) in points.iter().enumerate() {
        let mut row = vec![
            sweep.param.format_value(p.value),
            achieved[i].clone(),
            per_s[i].clone(),
        ];
        row.extend(cells.iter().map(|col| col[i].clone()));
        let verdict = if p.passed { "pass" } else { "FAIL" };
        row.push(if p.reached {
            verdict.to_string()
        } else {
            format!("{verdict}+short")
        });
        rows.push(row);
    }
    rows
}

/// The lines under a sweep table: the capacity, e.g. `capacity: max_concurrency = 4
/// (highest point whose thresholds all hold)`, a note when a point above a failure passed
/// again, and one naming the points that never reached their swept value.
pub fn capacity_lines(sweep: &Sweep, points: &[PointResult]) -> String {
    let mut out = String::new();
    let cap = capacity(points);
    let mut sorted: Vec<&PointResult> = points.iter().collect();
    sorted.sort_by(|a, b| a.value.total_cmp(&b.value));
    let first_fail = sorted.iter().find(|p| !p.passed || !p.reached);
    let passed_above = first_fail.and_then(|f| {
        sorted
            .iter()
            .rev()
            .find(|p| p.passed && p.reached && p.value > f.value)
    });
    let name = sweep.param.name();
    match (cap, first_fail) {
        (Some(v), _) => out.push_str(&format!(
            "capacity: {name} = {} (highest point whose thresholds all hold)\n",
            sweep.param.format_value(v)
        )),
        (None, _) if points.is_empty() => out.push_str("capacity: no points were run\n"),
        (None, Some(f)) if passed_above.is_some() => out.push_str(&format!(
            "capacity: none (the lowest point, {}, failed its thresholds)\n",
            point_label(sweep, f.value)
        )),
        (None, _) => out.push_str("capacity: none of the points held its thresholds\n"),
    }
    if let (Some(f), Some(p)) = (first_fail, passed_above) {
        out.push_str(&format!(
            "note: {} passed, but {} below it failed; capacity stops at the first failing point\n",
            point_label(sweep, p.value),
            point_label(sweep, f.value)
        ));
    }
    let short: Vec<String> = sorted
        .iter()
        .filter(|p| !p.reached)
        .map(|p| point_label(sweep, p.value))
        .collect();
    if !short.is_empty() {
        out.push_str(&format!(
            "short: {} did not reach the swept value (see `achieved`); such a point is never \
             the capacity — give it more samples (`[sweep] samples_per_point`)\n",
            short.join(", ")
        ));
    }
    out
}

/// The terminal sweep table ([`table_rows`]) followed by [`capacity_lines`].
pub fn render_table(sweep: &Sweep, points: &[PointResult], columns: &[&str]) -> String {
    let mut out = align(&table_rows(sweep, points, columns), &[true]);
    out.push_str(&capacity_lines(sweep, points));
    out
}

/// The sweep as JSON, in the shape the HTML chart reads:
/// `{"sweep": {"param", "headline" (or null), "points": [{"value", "metrics", "passed",
/// "achieved_concurrency", "achieved_request_rate", "sessions_per_s", "lateness_p99_ms",
/// "reached"}],
/// "capacity" (or null)}, "rtload": {"metrics": {"capacity": ...}}}`. Values are integers
/// for `max_concurrency`; an unlimited rate is the string `"inf"`; non-finite metrics are
/// null. `rtload.metrics` has no `capacity` key when there is none (missing, not zero).
pub fn sweep_json(sweep: &Sweep, points: &[PointResult], capacity: Option<f64>) -> Value {
    let points: Vec<Value> = points
        .iter()
        .map(|p| {
            json!({
                "value": sweep.param.json_value(p.value),
                "metrics": p.metrics,
                "passed": p.passed,
                "achieved_concurrency": p.achieved_concurrency,
                "achieved_request_rate": p.achieved_request_rate,
                "sessions_per_s": p.sessions_per_s,
                "lateness_p99_ms": p.lateness_p99_ms,
                "reached": p.reached,
            })
        })
        .collect();
    let cap = capacity.map(|c| sweep.param.json_value(c));
    let mut metrics = serde_json::Map::new();
    if let Some(c) = &cap {
        metrics.insert("capacity".into(), c.clone());
    }
    json!({
        "sweep": {
            "param": sweep.param.name(),
            "headline": sweep.headline,
            "points": points,
            "capacity": cap,
        },
        "rtload": { "metrics": metrics },
    })
}

/// Read a sweep back from [`sweep_json`]'s shape (for the HTML report): the sweep (its
/// values in point order) and its points. `None` when `doc` has no readable `sweep`.
/// A point written before `reached` was recorded counts as reached.
pub fn from_json(doc: &Value) -> Option<(Sweep, Vec<PointResult>)> {
    let sw = doc.get("sweep")?;
    let param = SweepParam::from_name(sw.get("param")?.as_str()?)?;
    let value = |v: &Value| match v {
        Value::String(s) if s == "inf" => Some(f64::INFINITY),
        v => v.as_f64(),
    };
    let mut points = Vec::new();
    for p in sw.get("points")?.as_array()? {
        let metrics = p
            .get("metrics")
            .and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .filter_map(|(k, v)| Some((k.clone(), v.as_f64()?)))
                    .collect()
            })
            .unwrap_or_default();
        points.push(PointResult {
            value: value(p.get("value")?)?,
            metrics,
            passed: p.get("passed").and_then(Value::as_bool).unwrap_or(false),
            achieved_concurrency: p
                .get("achieved_concurrency")
                .and_then(Value::as_u64)
                .map(|c| c as usize),
            achieved_request_rate: p.get("achieved_request_rate").and_then(Value::as_f64),
            sessions_per_s: p.get("sessions_per_s").and_then(Value::as_f64),
            lateness_p99_ms: p.get("lateness_p99_ms").and_then(Value::as_f64),
            reached: p.get("reached").and_then(Value::as_bool).unwrap_or(true),
        });
    }
    let sweep = Sweep {
        param,
        values: points.iter().map(|p| p.value).collect(),
        headline: sw
            .get("headline")
            .and_then(Value::as_str)
            .map(str::to_string),
        samples_per_point: None,
    };
    Some((sweep, points))
}

#[cfg(test)]
#[path = "sweep_tests.rs"]
mod tests;
