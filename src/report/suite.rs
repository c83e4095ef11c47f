//! Suites: running several scenario files in one go. Owns expanding the command-line
//! paths into scenario files, the per-scenario outcome, the summary table, the JUnit XML
//! report and the suite's exit code. Pure apart from listing directories.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::report::table::{align, fmt_column};

/// A problem turning command-line paths into scenario files.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SuiteError {
    /// The path does not exist.
    #[error(
        "{}: no such file or directory; pass scenario files (.toml) or directories holding them",
        path.display()
    )]
    NotFound {
        /// The path as given.
        path: PathBuf,
    },
    /// A directory without any `*.toml` file.
    #[error(
        "{}: directory has no *.toml scenario files; add one or pass scenario files directly",
        path.display()
    )]
    EmptyDir {
        /// The directory as given.
        path: PathBuf,
    },
    /// The path exists but could not be read.
    #[error("{}: cannot read: {msg}", path.display())]
    Io {
        /// The path as given.
        path: PathBuf,
        /// The OS error text.
        msg: String,
    },
}

/// Expand command-line `paths` into scenario files, in order: a file is taken as given; a
/// directory becomes its `*.toml` files (not recursive, dot-files skipped, sorted by file
/// name). A missing path or a directory without scenarios is an error naming it. Paths
/// given twice are kept twice.
pub fn expand_paths(paths: &[PathBuf]) -> Result<Vec<PathBuf>, SuiteError> {
    let io = |path: &Path, e: std::io::Error| match e.kind() {
        std::io::ErrorKind::NotFound => SuiteError::NotFound {
            path: path.to_path_buf(),
        },
        _ => SuiteError::Io {
            path: path.to_path_buf(),
            msg: e.to_string(),
        },
    };
    let mut out = Vec::new();
    for path in paths {
        let meta = std::fs::metadata(path).map_err(|e| io(path, e))?;
        if !meta.is_dir() {
            out.push(path.clone());
            continue;
        }
        let mut found = Vec::new();
        for entry in std::fs::read_dir(path).map_err(|e| io(path, e))? {
            let entry = entry.map_err(|e| io(path, e))?;
            let file = entry.path();
            let name = entry.file_name();
            let hidden = name.to_string_lossy().starts_with('.');
            if !hidden && file.extension().is_some_and(|x| x == "toml") && file.is_file() {
                found.push(file);
            }
        }
        if found.is_empty() {
            return Err(SuiteError::EmptyDir { path: path.clone() });
        }
        found.sort_by(|a, b| a.file_name().cmp(&b.file_name()));
        out.extend(found);
    }
    Ok(out)
}

/// How a scenario ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Status {
    /// Every threshold held and no measured sample failed.
    Passed,
    /// A threshold was breached or a sample failed (exit code 1).
    Failed,
    /// The scenario could not be loaded or run (exit code 2); the message says why.
    Error(String),
}

/// A threshold that did not hold.
#[derive(Debug, Clone, PartialEq)]
pub struct Breach {
    /// The metric name, e.g. `ttft_ms.p99`.
    pub metric: String,
    /// The threshold expression, e.g. `< 500`.
    pub expr: String,
    /// The measured value; `None` when the metric was missing.
    pub measured: Option<f64>,
}

/// The outcome of one scenario of a suite.
#[derive(Debug, Clone, PartialEq)]
pub struct ScenarioOutcome {
    /// The scenario's name.
    pub name: String,
    /// The scenario file.
    pub path: PathBuf,
    /// Wall time of the run, seconds.
    pub duration_s: f64,
    /// Passed, failed or errored.
    pub status: Status,
    /// Failed measured samples: index and message.
    pub failed_samples: Vec<(usize, String)>,
    /// Measured samples run (failed ones included).
    pub measured: usize,
    /// Thresholds that did not hold.
    pub breaches: Vec<Breach>,
    /// A few key metrics to show, in display order.
    pub headline: Vec<(String, f64)>,
    /// Measured sessions per outcome class (the run's `rtload.outcomes`).
    pub classes: crate::workload::outcome::ClassCounts,
}

impl ScenarioOutcome {
    fn samples_ok(&self) -> usize {
        self.measured.saturating_sub(self.failed_samples.len())
    }
}

/// A breach as text: `ttft_ms.p99 < 500: measured 612.400`, or `...: missing`.
pub fn describe_breach(b: &Breach) -> String {
    match b.measured {
        Some(v) => format!("{} {}: measured {v:.3}", b.metric, b.expr),
        None => format!("{} {}: missing", b.metric, b.expr),
    }
}

/// Every problem of an outcome, one line each: the error, each breached threshold
/// ([`describe_breach`]), then each failed sample (`sample 3 failed: <message>`).
pub fn describe_problems(o: &ScenarioOutcome) -> Vec<String> {
    let mut out = Vec::new();
    if let Status::Error(msg) = &o.status {
        out.push(format!("error: {msg}"));
    }
    out.extend(o.breaches.iter().map(describe_breach));
    out.extend(o.failed_samples.iter().map(|(i, msg)| failed_line(*i, msg)));
    out
}

/// `session N failed: …`, or the artifact error itself (recorded without a session).
fn failed_line(session: usize, msg: &str) -> String {
    if session == usize::MAX {
        msg.to_string()
    } else {
        format!("session {session} failed: {msg}")
    }
}

/// The summary table: one row per scenario (scenario, status, samples ok/total, duration,
/// one column per headline metric seen in any outcome, breached thresholds), then a
/// totals line. Missing cells are `-`.
pub fn render_table(outcomes: &[ScenarioOutcome]) -> String {
    let mut metrics: Vec<&str> = Vec::new();
    for (name, _) in outcomes.iter().flat_map(|o| &o.headline) {
        if !metrics.contains(&name.as_str()) {
            metrics.push(name);
        }
    }
    let mut header: Vec<String> = ["scenario", "status", "samples", "duration"]
        .map(String::from)
        .to_vec();
    header.extend(metrics.iter().map(|m| m.to_string()));
    header.push("breached".into());
    let cells: Vec<Vec<String>> = metrics
        .iter()
        .map(|m| {
            let col: Vec<Option<f64>> = outcomes
                .iter()
                .map(|o| o.headline.iter().find(|(n, _)| n == m).map(|(_, v)| *v))
                .collect();
            fmt_column(&col)
        })
        .collect();
    let mut rows = vec![header];
    for (i, o) in outcomes.iter().enumerate() {
        let errored = matches!(o.status, Status::Error(_));
        let mut row = vec![
            o.name.clone(),
            match o.status {
                Status::Passed => "pass",
                Status::Failed => "FAIL",
                Status::Error(_) => "ERROR",
            }
            .into(),
            if errored && o.measured == 0 {
                "-".into()
            } else {
                format!("{}/{}", o.samples_ok(), o.measured)
            },
            format!("{:.1}s", o.duration_s),
        ];
        row.extend(cells.iter().map(|col| col[i].clone()));
        row.push(if errored && o.breaches.is_empty() {
            "-".into()
        } else {
            o.breaches.len().to_string()
        });
        rows.push(row);
    }
    let mut out = align(&rows, &[true, true]);
    let count = |f: fn(&Status) -> bool| outcomes.iter().filter(|o| f(&o.status)).count();
    let _ = writeln!(
        out,
        "totals: {} scenarios ({} passed, {} failed, {} errors), samples {}/{} ok, {} thresholds \
         breached, {:.1}s",
        outcomes.len(),
        count(|s| *s == Status::Passed),
        count(|s| *s == Status::Failed),
        count(|s| matches!(s, Status::Error(_))),
        outcomes
            .iter()
            .map(ScenarioOutcome::samples_ok)
            .sum::<usize>(),
        outcomes.iter().map(|o| o.measured).sum::<usize>(),
        outcomes.iter().map(|o| o.breaches.len()).sum::<usize>(),
        total_time(outcomes),
    );
    out
}

fn total_time(outcomes: &[ScenarioOutcome]) -> f64 {
    outcomes.iter().map(|o| secs(o.duration_s)).sum()
}

/// A duration fit for a `time` attribute (never negative or non-finite).
fn secs(s: f64) -> f64 {
    if s.is_finite() && s > 0.0 { s } else { 0.0 }
}

/// The suite's exit code: 2 if any scenario errored (error wins), else 1 if any failed,
/// else 0 (also for no scenarios).
pub fn exit_code(outcomes: &[ScenarioOutcome]) -> u8 {
    if outcomes
        .iter()
        .any(|o| matches!(o.status, Status::Error(_)))
    {
        2
    } else if outcomes.iter().any(|o| o.status == Status::Failed) {
        1
    } else {
        0
    }
}

/// At most this many failed samples are listed in a `<failure message>` (the body lists
/// all of them).
const MESSAGE_SAMPLES: usize = 5;

/// JUnit XML for CI: `<testsuites>` holding one `<testsuite name=suite_name>` with one
/// `<testcase name=<scenario> classname="rtload.<file stem>">` per outcome. A failed
/// scenario gets `<failure>` whose message names every breached threshold (and the first
/// failed samples) and whose body lists every problem, one per line; an errored one gets
/// `<error>`. Each testcase's `<system-out>` has its samples and headline metrics.
/// Attributes and text are escaped; control characters other than tab, CR and LF are
/// dropped.
pub fn junit_xml(suite_name: &str, outcomes: &[ScenarioOutcome]) -> String {
    let failures = outcomes
        .iter()
        .filter(|o| o.status == Status::Failed)
        .count();
    let errors = outcomes
        .iter()
        .filter(|o| matches!(o.status, Status::Error(_)))
        .count();
    let counts = format!(
        "tests=\"{}\" failures=\"{failures}\" errors=\"{errors}\" time=\"{:.3}\"",
        outcomes.len(),
        total_time(outcomes)
    );
    let mut x = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(x, "<testsuites name=\"rtload\" {counts}>");
    let _ = writeln!(
        x,
        "  <testsuite name=\"{}\" {counts} skipped=\"0\">",
        attr(suite_name)
    );
    for o in outcomes {
        let stem = o
            .path
            .file_stem()
            .map_or_else(|| o.name.clone(), |s| s.to_string_lossy().into_owned());
        let _ = writeln!(
            x,
            "    <testcase name=\"{}\" classname=\"rtload.{}\" time=\"{:.3}\">",
            attr(&o.name),
            attr(&stem),
            secs(o.duration_s)
        );
        let problems = describe_problems(o);
        match &o.status {
            Status::Passed => {}
            Status::Failed => {
                let message = failure_message(o);
                let body = problems.join("\n");
                let _ = writeln!(
                    x,
                    "      <failure message=\"{}\" type=\"failure\">{}</failure>",
                    attr(&message),
                    text(&body)
                );
            }
            Status::Error(msg) => {
                let _ = writeln!(
                    x,
                    "      <error message=\"{}\" type=\"error\">{}</error>",
                    attr(msg),
                    text(&problems.join("\n"))
                );
            }
        }
        let mut out = String::new();
        if o.measured > 0 {
            let _ = writeln!(out, "samples: {}/{} ok", o.samples_ok(), o.measured);
            let c = &o.classes;
            let _ = writeln!(
                out,
                "sessions: {} good, {} degraded, {} rejected, {} failed",
                c.good, c.degraded, c.rejected, c.failed
            );
        }
        for (name, v) in &o.headline {
            let _ = writeln!(out, "{name} = {v:.3}");
        }
        if !out.is_empty() {
            let _ = writeln!(x, "      <system-out>{}</system-out>", text(&out));
        }
        x.push_str("    </testcase>\n");
    }
    x.push_str("  </testsuite>\n</testsuites>\n");
    x
}

/// One line naming every breach and the first failed samples.
fn failure_message(o: &ScenarioOutcome) -> String {
    let mut parts: Vec<String> = o.breaches.iter().map(describe_breach).collect();
    for (i, msg) in o.failed_samples.iter().take(MESSAGE_SAMPLES) {
        parts.push(failed_line(*i, msg));
    }
    let more = o.failed_samples.len().saturating_sub(MESSAGE_SAMPLES);
    if more > 0 {
        parts.push(format!("{more} more failed sessions listed below"));
    }
    if parts.is_empty() {
        parts.push("scenario failed".into());
    }
    parts.join("; ")
}

/// Characters XML 1.0 allows (minus C0/C1 controls other than tab, LF and CR).
fn keep(c: &char) -> bool {
    matches!(c, '\t' | '\n' | '\r') || !(c.is_control() || matches!(c, '\u{FFFE}' | '\u{FFFF}'))
}

/// Escape for a double-quoted attribute value (newlines and tabs kept as character
/// references so they survive attribute normalization).
fn attr(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars().filter(keep) {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            '\t' => out.push_str("&#9;"),
            c => out.push(c),
        }
    }
    out
}

/// Escape for element text.
fn text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars().filter(keep) {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\r' => out.push_str("&#13;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
#[path = "suite_tests.rs"]
mod tests;
