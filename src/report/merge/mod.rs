//! `rtload merge`: the exact merge of the results of a sharded run (`run --shard I/N`).
//!
//! Each shard's JSON carries an `rtload_shard` tag ([`ShardTag`]: index, count, start
//! barrier, the global indices and intended release offsets of its samples, the
//! `[thresholds]`), and has its HdrHistogram interval log (`.hlog`) beside it.
//!
//! Why the `.hlog` files: they are already written by every run, in a standard format,
//! with 3 significant digits and every value of every latency series (missing values are
//! simply absent), so adding the shards' histograms gives exactly the histogram one
//! process would have recorded; percentiles are then read from that merged histogram
//! (never averaged). No new field in the JSON had to be invented for it. Counts are
//! summed, max/min/mean are exact, durations run from the earliest first release to the
//! latest end. Metric rules: see [`metrics`].

pub mod doc;
pub mod generator;
pub mod hlog;
pub mod metrics;
mod restated;
pub mod rules;
#[cfg(test)]
mod tests;
pub mod wire;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::config::thresholds::{Op, Threshold};
pub use metrics::{Hists, How};

/// The key of the shard tag in a run's JSON result (top level, so a workload's own JSON
/// dialect is left untouched).
pub const SHARD_KEY: &str = "rtload_shard";
/// The key of the scraped target timeline (`[target] metrics_url`) in a run's JSON; a
/// merged result holds a list of the shards' timelines under it.
pub const TARGET_METRICS_KEY: &str = "rtload_target_metrics";
/// The key of the merge record in a merged result.
pub const MERGE_KEY: &str = "rtload_merge";

/// Why shard results could not be merged.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    /// A file could not be read.
    #[error("cannot read {}: {msg}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        msg: String,
    },
    /// A result has no shard tag.
    #[error(
        "{}: no \"rtload_shard\" tag; merge results written by `rtload run --shard I/N --output-json …`",
        .0.display()
    )]
    NotShard(PathBuf),
    /// The shards do not form one complete run.
    #[error("{0}")]
    Inconsistent(String),
    /// Histograms could not be added.
    #[error("histograms: {0}")]
    Histogram(String),
}

/// A threshold as carried in the shard tag.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ThresholdTag {
    /// The metric name.
    pub metric: String,
    /// The operator as written (`<`, `<=`, …).
    pub op: String,
    /// The bound.
    pub bound: f64,
    /// The expression as written.
    pub expr: String,
}

/// What a shard's JSON says about its place in the run.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ShardTag {
    /// This shard's index.
    pub index: usize,
    /// The number of shards.
    pub count: usize,
    /// The scenario name.
    pub scenario: String,
    /// The start barrier (`--start-at`), unix seconds, when given.
    pub start_at_unix_s: Option<f64>,
    /// Wall time of this shard's first intended measured release (unix seconds).
    pub started_unix_s: Option<f64>,
    /// Wall time at which this shard's last measured sample ended (unix seconds).
    pub ended_unix_s: Option<f64>,
    /// Global indices of this shard's measured samples.
    pub samples: Vec<usize>,
    /// Their intended release offsets (seconds from the measured phase start).
    pub intended_release_s: Vec<f64>,
    /// Measured samples run.
    pub measured: usize,
    /// Measured samples that failed.
    pub failed: usize,
    /// The scenario's `[thresholds]`.
    pub thresholds: Vec<ThresholdTag>,
}

impl ThresholdTag {
    /// The tag of `t`.
    pub fn of(t: &Threshold) -> Self {
        ThresholdTag {
            metric: t.metric.clone(),
            op: t.op.as_str().into(),
            bound: t.bound,
            expr: t.expr.clone(),
        }
    }

    /// Back to a threshold (`None` for an unknown operator).
    pub fn to_threshold(&self) -> Option<Threshold> {
        let op = [Op::Lt, Op::Le, Op::Gt, Op::Ge, Op::Eq, Op::Ne]
            .into_iter()
            .find(|o| o.as_str() == self.op)?;
        Some(Threshold {
            metric: self.metric.clone(),
            op,
            bound: self.bound,
            expr: self.expr.clone(),
        })
    }
}

/// One shard's result: its JSON, its tag and its histograms.
#[derive(Debug, Clone)]
pub struct ShardInput {
    /// Where it came from (for messages).
    pub path: PathBuf,
    /// The result document.
    pub doc: Value,
    /// Its shard tag.
    pub tag: ShardTag,
    /// Its `.hlog` histograms, one per tag.
    pub hists: Hists,
    /// Its `.hlog` interval by interval, for the merged log.
    pub log: hlog::ShardLog,
}

/// The merged run.
#[derive(Debug, Clone)]
pub struct Merged {
    /// The merged result document (same shape as a shard's, plus `rtload_merge`), with
    /// the merged verdict, thresholds and sample counts.
    pub doc: Value,
    /// The merged flat metrics (what thresholds and `compare` read).
    pub metrics: BTreeMap<String, f64>,
    /// How each metric was obtained.
    pub how: BTreeMap<String, How>,
    /// The merged histograms.
    pub hists: Hists,
    /// The run's sample counts, summed over the shards.
    pub counts: crate::report::verdict::Counts,
    /// Each threshold with its merged measured value.
    pub verdicts: Vec<crate::config::thresholds::Verdict>,
    /// A shard was interrupted.
    pub interrupted: bool,
    /// Broken invariants of the merged result (also `rtload.warnings`).
    pub warnings: Vec<String>,
}

impl Merged {
    /// Every measured sample completed, none was interrupted and every threshold held.
    pub fn passed(&self) -> bool {
        self.counts.failed == 0 && !self.interrupted && self.verdicts.iter().all(|v| v.passed)
    }
}

/// Read one shard result and the `.hlog` beside it (IO edge).
pub fn load(path: &Path) -> Result<ShardInput, MergeError> {
    let read_err = |p: &Path, msg: String| MergeError::Read {
        path: p.to_path_buf(),
        msg,
    };
    let doc = crate::report::resultfile::read(path).map_err(|m| read_err(path, m))?;
    let tag: ShardTag = doc
        .get(SHARD_KEY)
        .cloned()
        .and_then(|t| serde_json::from_value(t).ok())
        .ok_or_else(|| MergeError::NotShard(path.to_path_buf()))?;
    let hlog = path.with_extension("hlog");
    let text = std::fs::read(&hlog).map_err(|e| read_err(&hlog, e.to_string()))?;
    let (start_unix_s, intervals) =
        crate::util::histlog::read_log(&text).map_err(|e| read_err(&hlog, e.to_string()))?;
    let mut hists = Hists::new();
    for iv in &intervals {
        metrics::add(&mut hists, &iv.tag, &iv.hist).map_err(|m| read_err(&hlog, m))?;
    }
    Ok(ShardInput {
        path: path.to_path_buf(),
        doc,
        tag,
        hists,
        log: hlog::ShardLog {
            start_unix_s,
            intervals,
        },
    })
}

/// Check that `inputs` are the shards `0..N` of one run, each once.
pub fn check_complete(inputs: &[ShardInput]) -> Result<(), MergeError> {
    let Some(first) = inputs.first() else {
        return Err(MergeError::Inconsistent("no shard results given".into()));
    };
    let n = first.tag.count;
    let mut seen = vec![None::<&Path>; n];
    for s in inputs {
        if s.tag.count != n || s.tag.scenario != first.tag.scenario {
            return Err(MergeError::Inconsistent(format!(
                "{} is shard {}/{} of scenario {:?}, but {} is shard {}/{} of {:?}; merge the shards of one run",
                s.path.display(),
                s.tag.index,
                s.tag.count,
                s.tag.scenario,
                first.path.display(),
                first.tag.index,
                n,
                first.tag.scenario
            )));
        }
        if let Some(prev) = seen[s.tag.index].replace(&s.path) {
            return Err(MergeError::Inconsistent(format!(
                "shard {}/{n} given twice: {} and {}",
                s.tag.index,
                prev.display(),
                s.path.display()
            )));
        }
    }
    let missing: Vec<String> = (0..n)
        .filter(|&i| seen[i].is_none())
        .map(|i| format!("{i}/{n}"))
        .collect();
    if !missing.is_empty() {
        return Err(MergeError::Inconsistent(format!(
            "missing shard result(s) {}; pass every shard's JSON (their .hlog files must sit beside them)",
            missing.join(", ")
        )));
    }
    Ok(())
}

/// Merge complete shard results (pure: everything is already read). `thresholds`
/// replaces the `[thresholds]` the shards carry (`rtload merge --scenario`).
pub fn merge(
    inputs: &[ShardInput],
    thresholds: Option<&[Threshold]>,
) -> Result<Merged, MergeError> {
    check_complete(inputs)?;
    let shard_hists: Vec<Hists> = inputs.iter().map(|s| s.hists.clone()).collect();
    let hists = metrics::merge_hists(&shard_hists)?;
    let shard_metrics: Vec<BTreeMap<String, f64>> =
        inputs.iter().map(|s| doc::flat_metrics(&s.doc)).collect();
    let cat = crate::workload::catalogue::Catalogue::from_result(&inputs[0].doc);
    let with_values = inputs.iter().all(|s| {
        s.doc
            .pointer(&format!(
                "/rtload/{}",
                crate::workload::results::DISTRIBUTIONS_KEY
            ))
            .is_some()
    });
    let (metrics, how, values) = match cat.as_ref().filter(|c| rules::has_rules(c) && with_values) {
        Some(cat) => {
            let values: Vec<BTreeMap<String, Vec<f64>>> = inputs
                .iter()
                .map(|s| crate::workload::results::values_of(&s.doc))
                .collect();
            let input = rules::RuleInput {
                metrics: &shard_metrics,
                values: &values,
                duration_s: doc::span(inputs).map(|(a, b)| b - a),
            };
            let out = rules::merge(cat, &input);
            (out.metrics, out.how, Some(out.values))
        }
        // Results written before merge rules: the histogram and name rules.
        None => {
            let counts = doc::catalogue_counts(&inputs[0].doc);
            let (m, h) = metrics::merge_metrics(&shard_metrics, &shard_hists, &hists, &counts);
            (m, h, None)
        }
    };
    let thresholds: Vec<Threshold> = match thresholds {
        Some(t) => t.to_vec(),
        None => inputs[0]
            .tag
            .thresholds
            .iter()
            .filter_map(ThresholdTag::to_threshold)
            .collect(),
    };
    let lookup = cat
        .as_ref()
        .map_or_else(|| metrics.clone(), |c| c.with_alias_values(&metrics));
    let verdicts = crate::config::thresholds::evaluate(&thresholds, &lookup);
    let counts = summed_counts(inputs);
    let interrupted = inputs
        .iter()
        .any(|s| s.doc.get("interrupted").and_then(Value::as_bool) == Some(true));
    let c = (
        counts.measured,
        counts.completed(),
        counts.failed,
        counts.cancelled,
    );
    let warnings = crate::workload::results::invariant_violations(&metrics, Some(c))
        .into_iter()
        .map(|v| format!("invariant broken (a bug in rtload; please report it): {v}"))
        .collect();
    let mut merged = Merged {
        doc: Value::Null,
        metrics,
        how,
        hists,
        counts,
        verdicts,
        interrupted,
        warnings,
    };
    merged.doc = doc::merged_doc(inputs, &merged, values.as_ref());
    Ok(merged)
}

/// The shards' sample counts added up (from `rtload.sample_counts`, else their tags).
fn summed_counts(inputs: &[ShardInput]) -> crate::report::verdict::Counts {
    let mut total = crate::report::verdict::Counts::default();
    for s in inputs {
        let c = crate::report::verdict::Counts::of_result(&s.doc).unwrap_or(
            crate::report::verdict::Counts {
                measured: s.tag.measured,
                failed: s.tag.failed,
                ..Default::default()
            },
        );
        total.measured += c.measured;
        total.failed += c.failed;
        total.cancelled += c.cancelled;
        total.warmup += c.warmup;
    }
    total
}

/// Write the merged result `m` to `path` (the JSON) and its merged interval log beside
/// it (`.hlog`), each atomically.
pub fn publish(m: &Merged, inputs: &[ShardInput], path: &Path) -> Result<(), MergeError> {
    let write_err = |p: &Path, msg: String| MergeError::Read {
        path: p.to_path_buf(),
        msg: format!("cannot write: {msg}"),
    };
    let mut text = serde_json::to_string_pretty(&m.doc).unwrap_or_default();
    text.push('\n');
    crate::util::write_atomic(path, text.as_bytes()).map_err(|e| write_err(path, e.to_string()))?;
    let cat = crate::workload::catalogue::Catalogue::from_result(&m.doc);
    let unit = |tag: &str| -> String {
        cat.as_ref()
            .and_then(|c| {
                c.metrics()
                    .iter()
                    .find(|i| i.distribution.as_deref() == Some(tag) && !i.name.ends_with(".count"))
                    .map(|i| i.unit.clone())
            })
            .unwrap_or_else(|| "ms".into())
    };
    let logs: Vec<hlog::ShardLog> = inputs.iter().map(|s| s.log.clone()).collect();
    let mut buf = Vec::new();
    hlog::write(&mut buf, &logs, &unit).map_err(|e| MergeError::Histogram(e.to_string()))?;
    let hlog_path = path.with_extension("hlog");
    crate::util::write_atomic(&hlog_path, &buf).map_err(|e| write_err(&hlog_path, e.to_string()))
}

impl ShardTag {
    /// The tag of a finished run: `mine` are its `(global index, intended offset)`
    /// samples, `run_start_unix_s` the wall time the engine started.
    pub fn of_run<O>(
        scenario: &str,
        shard: crate::workload::shard::Shard,
        start_at_unix_s: Option<f64>,
        mine: &[(usize, f64)],
        run: &crate::workload::RunRecord<O>,
        run_start_unix_s: f64,
        thresholds: &[Threshold],
    ) -> ShardTag {
        let measured: Vec<_> = run.samples.iter().filter(|s| !s.warmup).collect();
        let first_scheduled = measured.iter().map(|s| s.scheduled_s).reduce(f64::min);
        // With a barrier the first intended release is known exactly; without one it is
        // measured from the engine's start (a few ms after `run_start_unix_s`).
        let first = match (start_at_unix_s, mine.first()) {
            (Some(at), Some(m)) if first_scheduled.is_some() => Some(at + m.1),
            _ => first_scheduled.map(|f| run_start_unix_s + f),
        };
        ShardTag {
            index: shard.index,
            count: shard.count,
            scenario: scenario.to_string(),
            start_at_unix_s,
            started_unix_s: first,
            ended_unix_s: first.map(|f| f + run.duration_s),
            samples: mine.iter().map(|m| m.0).collect(),
            intended_release_s: mine.iter().map(|m| m.1).collect(),
            measured: measured.len(),
            failed: measured.iter().filter(|s| s.outcome.is_err()).count(),
            thresholds: thresholds.iter().map(ThresholdTag::of).collect(),
        }
    }
}
