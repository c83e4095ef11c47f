//! Live metrics of a running run, for `--metrics-addr`: the coordinator updates them as
//! samples start and end; [`LiveMetrics::render`] writes the Prometheus text.
//!
//! Series (names in base units, as `promtool check metrics` wants them):
//! `rtload_sessions_active{phase}`, `rtload_sessions_completed_total{phase}`,
//! `rtload_sessions_failed_total{phase,kind}` (kind: the typed failure kind's label),
//! `rtload_sessions_outcome{phase,class}` (a gauge per class: good, degraded, rejected,
//! failed; once the run is summarized the measured phase holds the result's own counts,
//! report-time failures included, which the JSON's `rtload.outcomes` has), the
//! `rtload_queue_wait_seconds` and `rtload_send_lateness_seconds` histograms (measured
//! samples), and the workload's headline metric as
//! `rtload_headline_seconds{metric="…"}` (measured samples that produced one). All carry
//! the shard when the run is one (`shard="I/N"`).
//!
//! One number, one source: the histograms observe the very values the sample records
//! hold (`queue_wait_s`, each `send_lateness_s`), which the JSON result's generator block
//! summarizes, so counts agree exactly and sums to rounding. Each send lateness is
//! observed by the sender as it records it ([`LiveMetrics::lateness`]), since a held
//! sample's values are spilled to the spool and read back only after the run.

use std::collections::BTreeMap;
use std::sync::Mutex;

use crate::util::prom::{Buckets, Exposition, LATENCY_BUCKETS_S};
use crate::workload::SampleRecord;
use crate::workload::outcome::{Class, ClassCounts};

#[cfg(test)]
#[path = "live_tests.rs"]
mod tests;

#[derive(Debug)]
struct State {
    active: [u64; 2],
    completed: [u64; 2],
    failed: BTreeMap<(usize, String), u64>,
    classes: [ClassCounts; 2],
    queue_wait: Buckets,
    lateness: Buckets,
    headline: Buckets,
}

/// The live tallies of one run (shared between the coordinator and the endpoint).
#[derive(Debug)]
pub struct LiveMetrics {
    headline: String,
    shard: Option<String>,
    state: Mutex<State>,
}

const PHASES: [&str; 2] = ["measured", "warmup"];

fn phase(warmup: bool) -> usize {
    usize::from(warmup)
}

impl LiveMetrics {
    /// Tallies for a workload whose headline metric is `headline` (e.g. `ttfc_ms`);
    /// `shard` (`"I/N"`) labels every series of a sharded run.
    pub fn new(headline: &str, shard: Option<String>) -> LiveMetrics {
        LiveMetrics {
            headline: headline.to_string(),
            shard,
            state: Mutex::new(State {
                active: [0; 2],
                completed: [0; 2],
                failed: BTreeMap::new(),
                classes: [ClassCounts::default(); 2],
                queue_wait: Buckets::new(LATENCY_BUCKETS_S),
                lateness: Buckets::new(LATENCY_BUCKETS_S),
                headline: Buckets::new(LATENCY_BUCKETS_S),
            }),
        }
    }

    fn with(&self, f: impl FnOnce(&mut State)) {
        if let Ok(mut st) = self.state.lock() {
            f(&mut st);
        }
    }

    /// A sample got its slot after waiting `queue_wait_s` past its release (the value
    /// its record keeps).
    pub fn started(&self, warmup: bool, queue_wait_s: f64) {
        self.with(|st| {
            st.active[phase(warmup)] += 1;
            if !warmup {
                st.queue_wait.observe(queue_wait_s);
            }
        });
    }

    /// A measured sample's sender recorded a send lateness of `late_s` (observed as it
    /// is recorded: the sample's values are not in memory at its end).
    pub fn lateness(&self, late_s: f64) {
        self.with(|st| st.lateness.observe(late_s));
    }

    /// A sample ended in `class` (if classified); `headline_ms` is the workload's
    /// headline value for it, if any. A failed sample is counted under its
    /// [`crate::workload::FailureKind::label`].
    pub fn ended<O>(&self, rec: &SampleRecord<O>, class: Option<Class>, headline_ms: Option<f64>) {
        let kind = rec.outcome.as_ref().err().map_or("", |f| f.kind.label());
        self.with(|st| {
            let p = phase(rec.warmup);
            if let Some(c) = class {
                st.classes[p].add(c);
            }
            st.active[p] = st.active[p].saturating_sub(1);
            if rec.outcome.is_ok() {
                st.completed[p] += 1;
            } else {
                *st.failed.entry((p, kind.to_string())).or_default() += 1;
            }
            if let Some(v) = headline_ms.filter(|_| !rec.warmup) {
                st.headline.observe(v / 1000.0);
            }
        });
    }

    /// The run's summarized class counts of the measured sessions (the JSON result's
    /// `rtload.outcomes`), replacing the live ones: what a scrape after the run reads.
    pub fn set_outcomes(&self, counts: ClassCounts) {
        self.with(|st| st.classes[phase(false)] = counts);
    }

    /// The Prometheus text of the current tallies.
    pub fn render(&self) -> String {
        let Ok(st) = self.state.lock() else {
            return String::new();
        };
        let shard: Vec<(&str, &str)> = self
            .shard
            .as_deref()
            .map(|s| ("shard", s))
            .into_iter()
            .collect();
        let with = |extra: &[(&'static str, &str)]| -> Vec<(&str, String)> {
            shard
                .iter()
                .map(|(k, v)| (*k, v.to_string()))
                .chain(extra.iter().map(|(k, v)| (*k, v.to_string())))
                .collect()
        };
        let mut e = Exposition::default();
        let per_phase = |vals: &[u64; 2]| -> Vec<(Vec<(&str, String)>, f64)> {
            (0..2)
                .map(|p| (with(&[("phase", PHASES[p])]), vals[p] as f64))
                .collect()
        };
        let gauge = per_phase(&st.active);
        put(
            &mut e,
            "gauge",
            "rtload_sessions_active",
            "Sessions running now.",
            &gauge,
        );
        let done = per_phase(&st.completed);
        put(
            &mut e,
            "counter",
            "rtload_sessions_completed_total",
            "Sessions that succeeded.",
            &done,
        );
        let failed: Vec<_> = st
            .failed
            .iter()
            .map(|((p, k), n)| (with(&[("phase", PHASES[*p]), ("kind", k)]), *n as f64))
            .collect();
        put(
            &mut e,
            "counter",
            "rtload_sessions_failed_total",
            "Sessions that failed, by kind.",
            &failed,
        );
        put_classes(&mut e, &st.classes, &with);
        let base = with(&[]);
        let b: Vec<(&str, &str)> = base.iter().map(|(k, v)| (*k, v.as_str())).collect();
        e.histogram(
            "rtload_queue_wait_seconds",
            "Slot granted minus scheduled release, measured samples (seconds).",
            &b,
            &st.queue_wait,
        );
        e.histogram(
            "rtload_send_lateness_seconds",
            "Actual minus intended send time per scheduled message, measured samples (seconds).",
            &b,
            &st.lateness,
        );
        let hl = with(&[("metric", self.headline.as_str())]);
        let hl: Vec<(&str, &str)> = hl.iter().map(|(k, v)| (*k, v.as_str())).collect();
        e.histogram(
            "rtload_headline_seconds",
            "The workload's headline metric per measured sample (seconds).",
            &hl,
            &st.headline,
        );
        e.finish()
    }
}

/// Labels of a series: the shard's (if any) and `extra`.
type Labeller<'a> = dyn Fn(&[(&'static str, &str)]) -> Vec<(&'a str, String)> + 'a;

/// The `rtload_sessions_outcome` gauge: one row per phase and class.
fn put_classes<'a>(e: &mut Exposition, classes: &[ClassCounts; 2], with: &Labeller<'a>) {
    let rows: Vec<_> = (0..2)
        .flat_map(|p| Class::ALL.iter().map(move |c| (p, *c)))
        .map(|(p, c)| {
            let labels = with(&[("phase", PHASES[p]), ("class", c.label())]);
            (labels, classes[p].get(c) as f64)
        })
        .collect();
    put(
        e,
        "gauge",
        "rtload_sessions_outcome",
        "Sessions ended per outcome class (good, degraded, rejected, failed).",
        &rows,
    );
}

fn put(
    e: &mut Exposition,
    kind: &str,
    name: &str,
    help: &str,
    rows: &[(Vec<(&str, String)>, f64)],
) {
    let owned: Vec<Vec<(&str, &str)>> = rows
        .iter()
        .map(|(ls, _)| ls.iter().map(|(k, v)| (*k, v.as_str())).collect())
        .collect();
    let samples: Vec<(&[(&str, &str)], f64)> = owned
        .iter()
        .zip(rows)
        .map(|(ls, (_, v))| (ls.as_slice(), *v))
        .collect();
    if kind == "gauge" {
        e.gauge(name, help, &samples);
    } else {
        e.counter(name, help, &samples);
    }
}
