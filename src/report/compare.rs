//! `rtload compare BASE.json NEW.json [--max-regression 10%]`: load the flat metric maps
//! (`rtload.metrics`) of two result files, diff them metric by metric, flag changes in
//! the worse direction beyond a relative bound, and render an aligned table. Directions
//! come from the files' own metric catalogue (`rtload.metrics_catalogue`), so any
//! workload's metrics regress the right way; nothing here knows a metric by name.
//!
//! Reading the two files is the only IO here; everything else is values in, values out.
//! The caller exits 1 when [`Comparison::regressions`] is non-empty.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::config::thresholds::format_value;
use crate::workload::catalogue::{Catalogue, Direction};

/// Absolute change that counts as a worsening when the base value is 0.
const ZERO_BASE_EPSILON: f64 = 1e-12;

/// A problem loading a result file or reading a flag.
#[derive(Debug, thiserror::Error)]
pub enum CompareError {
    /// The file could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The result file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The file is not JSON.
    #[error("{}: not valid JSON: {source}", path.display())]
    Json {
        /// The result file.
        path: PathBuf,
        /// The parse error (with line and column).
        source: serde_json::Error,
    },
    /// The JSON has no `rtload.metrics` object.
    #[error("not an rtload result (no rtload.metrics): {}", path.display())]
    NotRtload {
        /// The result file.
        path: PathBuf,
    },
    /// A metric value is neither a number nor null.
    #[error("{}: rtload.metrics.{name} must be a number (got {got})", path.display())]
    BadMetric {
        /// The result file.
        path: PathBuf,
        /// The metric name.
        name: String,
        /// The offending JSON value.
        got: String,
    },
    /// A percentage flag value that is not a non-negative number.
    #[error("invalid percentage {value:?}: {why}; use e.g. 10% or 0.5%")]
    BadPercent {
        /// The text as given.
        value: String,
        /// What is wrong with it.
        why: String,
    },
}

/// Which way a metric improves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Better {
    /// Latencies, RTF (cost), failures, underruns, stalls, lateness.
    Lower,
    /// Throughput, goodput, RTFx, SLO attainment, completions, frames per second.
    Higher,
    /// Counts and configuration echoes: never a regression.
    Neither,
}

/// Whether a row's metric is in both files or only one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Presence {
    /// In both files.
    Both,
    /// Only in NEW.
    Added,
    /// Only in BASE.
    Removed,
}

/// One metric's change from BASE to NEW.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// The flat metric name.
    pub metric: String,
    /// BASE value (`None` when added).
    pub base: Option<f64>,
    /// NEW value (`None` when removed).
    pub new: Option<f64>,
    /// `new - base` when both exist.
    pub delta: Option<f64>,
    /// `delta / |base| * 100`; `Some(0)` when both are 0, `None` for any other base 0.
    pub delta_pct: Option<f64>,
    /// Which way the metric improves.
    pub better: Better,
    /// In both files or only one.
    pub presence: Presence,
    /// Worse by more than the bound, or lost in NEW (always false without a bound, for
    /// `Neither`, and for added rows).
    pub regressed: bool,
}

/// The diff of two runs, rows sorted by metric name.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// One row per metric in either file.
    pub rows: Vec<Row>,
    /// The bound in percent, if one was given.
    pub max_regression_pct: Option<f64>,
}

impl Comparison {
    /// The rows that regressed past the bound (empty without a bound).
    pub fn regressions(&self) -> Vec<&Row> {
        self.rows.iter().filter(|r| r.regressed).collect()
    }
}

/// Read a result JSON and return its `rtload.metrics` map. `null` values (how JSON
/// carries a NaN) are absent, like any other missing metric.
#[cfg(test)]
pub fn load_metrics(path: &Path) -> Result<BTreeMap<String, f64>, CompareError> {
    load_result(path).map(|(m, _)| m)
}

/// Read a result JSON: its `rtload.metrics` map (`null` values, how JSON carries a NaN,
/// are absent like any other missing metric) and its metric catalogue: its
/// `rtload.metrics_catalogue`, or for an older file the registered kind whose families
/// declare all its metrics; `None` when neither exists.
pub fn load_result(
    path: &Path,
) -> Result<(BTreeMap<String, f64>, Option<Catalogue>), CompareError> {
    let text = crate::util::fs::read_text_bounded(path, crate::util::fs::MAX_RESULT_BYTES)
        .map_err(|source| CompareError::Read {
            path: path.to_path_buf(),
            source,
        })?;
    let doc: serde_json::Value =
        crate::report::resultfile::parse_lenient(&text).map_err(|source| CompareError::Json {
            path: path.to_path_buf(),
            source,
        })?;
    let Some(metrics) = doc
        .get("rtload")
        .and_then(|r| r.get("metrics"))
        .and_then(|m| m.as_object())
    else {
        return Err(CompareError::NotRtload {
            path: path.to_path_buf(),
        });
    };
    let names: Vec<&str> = metrics.keys().map(String::as_str).collect();
    let catalogue = crate::config::registry::result_catalogue(&doc, &names);
    let mut out = BTreeMap::new();
    for (name, value) in metrics {
        match value {
            serde_json::Value::Null => {}
            serde_json::Value::Number(n) => {
                if let Some(x) = n.as_f64() {
                    out.insert(name.clone(), x);
                }
            }
            other => {
                return Err(CompareError::BadMetric {
                    path: path.to_path_buf(),
                    name: name.clone(),
                    got: other.to_string(),
                });
            }
        }
    }
    Ok((out, catalogue))
}

/// Parse a percentage: `10%`, `10`, `0.5%` (spaces allowed). Negative, non-finite or
/// non-numeric text is an error.
pub fn parse_percent(s: &str) -> Result<f64, CompareError> {
    let bad = |why: &str| CompareError::BadPercent {
        value: s.to_string(),
        why: why.to_string(),
    };
    let t = s.trim();
    let number = t.strip_suffix('%').unwrap_or(t).trim_end();
    if number.is_empty() {
        return Err(bad("no number"));
    }
    match number.parse::<f64>() {
        Ok(x) if !x.is_finite() => Err(bad("not a finite number")),
        Ok(x) if x < 0.0 => Err(bad("must not be negative")),
        Ok(x) => Ok(x),
        Err(_) => Err(bad("not a number")),
    }
}

/// Which way `metric` improves, as the result files' metric catalogue declares it
/// (undeclared metrics are never a score, so they never regress).
pub fn direction(catalogue: &Catalogue, metric: &str) -> Better {
    match catalogue.direction(metric) {
        Direction::Lower => Better::Lower,
        Direction::Higher => Better::Higher,
        Direction::NotAScore => Better::Neither,
    }
}

/// Diff `base` against `new` over the union of names. With a bound (percent), a row
/// regresses when the metric has a direction and either it got worse by more than
/// `bound`% of |base| (exactly at the bound is not a regression; a relative slack of 1e-9
/// absorbs float noise; when base is 0, any worsening beyond 1e-12 regresses), or BASE
/// has it and NEW does not (missing, NaN or ±Infinity in NEW: the number was lost). A
/// metric only NEW has never regresses.
pub fn compare(
    base: &BTreeMap<String, f64>,
    new: &BTreeMap<String, f64>,
    max_regression_pct: Option<f64>,
    catalogue: &Catalogue,
) -> Comparison {
    let names: BTreeSet<&String> = base.keys().chain(new.keys()).collect();
    let rows = names
        .into_iter()
        .map(|name| {
            row(
                direction(catalogue, name),
                name,
                base.get(name).copied(),
                new.get(name).copied(),
                max_regression_pct,
            )
        })
        .collect();
    Comparison {
        rows,
        max_regression_pct,
    }
}

fn row(
    better: Better,
    metric: &str,
    base: Option<f64>,
    new: Option<f64>,
    bound: Option<f64>,
) -> Row {
    let presence = match (base, new) {
        (Some(_), None) => Presence::Removed,
        (None, Some(_)) => Presence::Added,
        _ => Presence::Both,
    };
    let delta = base.zip(new).map(|(b, n)| n - b);
    let delta_pct = base.zip(delta).and_then(|(b, d)| {
        if b != 0.0 {
            Some(d / b.abs() * 100.0)
        } else {
            (d == 0.0).then_some(0.0)
        }
    });
    let regressed = match (base, new, delta, bound) {
        (Some(b), Some(_), Some(d), Some(pct)) => regressed(better, b, d, pct),
        // A scored metric BASE measured and NEW lacks (or has as NaN / ±Infinity, which
        // a result file carries as null): the new run lost the number, a regression.
        (Some(b), None, _, Some(_)) => b.is_finite() && better != Better::Neither,
        _ => false,
    };
    Row {
        metric: metric.to_string(),
        base,
        new,
        delta,
        delta_pct,
        better,
        presence,
        regressed,
    }
}

fn regressed(better: Better, base: f64, delta: f64, bound_pct: f64) -> bool {
    let worsening = match better {
        Better::Lower => delta,
        Better::Higher => -delta,
        Better::Neither => return false,
    };
    if worsening.is_nan() || worsening <= 0.0 {
        return false;
    }
    if base == 0.0 {
        return worsening > ZERO_BASE_EPSILON;
    }
    let worse_pct = worsening / base.abs() * 100.0;
    worse_pct - bound_pct > 1e-9 * bound_pct.max(1.0)
}

/// An aligned table sorted by metric name (numbers right-aligned, `-` for absent), then
/// a line saying how many metrics regressed past the bound.
pub fn render(cmp: &Comparison) -> String {
    let header = ["metric", "base", "new", "delta", "delta%", "better", ""];
    let mut table: Vec<[String; 7]> = vec![header.map(String::from)];
    for r in &cmp.rows {
        let opt = |x: Option<f64>| x.map_or_else(|| "-".to_string(), format_value);
        let status = match (r.presence, r.regressed) {
            (Presence::Added, _) => "added",
            (Presence::Removed, true) => "MISSING (regressed)",
            (Presence::Removed, false) => "removed",
            (Presence::Both, true) => "REGRESSED",
            (Presence::Both, false) => "",
        };
        table.push([
            r.metric.clone(),
            opt(r.base),
            opt(r.new),
            r.delta
                .map_or_else(|| "-".into(), |d| signed(d, format_value(d))),
            r.delta_pct
                .map_or_else(|| "-".into(), |p| signed(p, format!("{p:.2}%"))),
            match r.better {
                Better::Lower => "lower",
                Better::Higher => "higher",
                Better::Neither => "-",
            }
            .to_string(),
            status.to_string(),
        ]);
    }
    let mut widths = [0usize; 7];
    for line in &table {
        for (w, cell) in widths.iter_mut().zip(line) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for line in &table {
        let mut text = format!("{:<w$}", line[0], w = widths[0]);
        for i in 1..5 {
            text.push_str(&format!("  {:>w$}", line[i], w = widths[i]));
        }
        text.push_str(&format!("  {:<w$}  {}", line[5], line[6], w = widths[5]));
        out.push_str(text.trim_end());
        out.push('\n');
    }
    out.push_str(&summary(cmp));
    out.push('\n');
    out
}

fn signed(x: f64, text: String) -> String {
    if x > 0.0 { format!("+{text}") } else { text }
}

fn summary(cmp: &Comparison) -> String {
    let n = cmp.regressions().len();
    let noun = if n == 1 { "metric" } else { "metrics" };
    match cmp.max_regression_pct {
        Some(b) => format!("{n} {noun} regressed past {b}%"),
        None => {
            let rows = cmp.rows.len();
            let noun = if rows == 1 { "metric" } else { "metrics" };
            format!(
                "{rows} {noun} compared; no bound given (use --max-regression 10% to fail on \
                 regressions)"
            )
        }
    }
}

#[cfg(test)]
#[path = "compare_tests.rs"]
mod tests;
