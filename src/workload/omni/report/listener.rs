//! What a listener hears: per response, the stutter when audio arrives slower than it
//! plays. The numbers come from the sample's playback role (the shared simulation in
//! [`crate::workload::playback`], one stream per response, started after
//! `playback_prebuffer_ms` of its audio); this module only aggregates them over the
//! responses of successful measured cases into the flat metrics, the text block and JSON.

use std::collections::BTreeMap;

use super::CaseRun;
use super::json::pct_label;
use crate::workload::omni::bench_metrics::{Aggregate, aggregate};

/// Stall count per response.
pub const STALL_COUNT: &str = "audio_stall_count";
/// Total stall time per response, ms.
pub const STALL_MS: &str = "audio_stall_ms";
/// From playback start to the first stall, ms (responses that stalled only).
pub const FIRST_STALL_MS: &str = "audio_time_to_first_stall_ms";
/// The three metric bases, in display order.
pub const NAMES: [&str; 3] = [STALL_COUNT, STALL_MS, FIRST_STALL_MS];

/// The listener metrics of a run.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Listener {
    /// The prebuffer every response was played with, ms.
    pub prebuffer_ms: f64,
    /// Responses with audio played (over successful measured cases).
    pub responses: usize,
    /// `(name, aggregate)` per metric of [`NAMES`] (count 0: no value).
    pub aggregates: Vec<(&'static str, Aggregate)>,
}

/// Aggregate the per-response playback of `runs` with these percentiles.
pub(super) fn listener(runs: &[CaseRun<'_>], prebuffer_ms: f64, pcts: &[f64]) -> Listener {
    let streams: Vec<_> = runs
        .iter()
        .filter(|r| r.outcome.success)
        .filter_map(|r| r.sample.playback.as_ref())
        .flat_map(|p| p.streams.iter())
        .collect();
    let counts: Vec<f64> = streams.iter().map(|s| s.stall_count as f64).collect();
    let stall_ms: Vec<f64> = streams.iter().map(|s| s.total_stall_s * 1000.0).collect();
    let first: Vec<f64> = streams
        .iter()
        .filter_map(|s| s.time_to_first_stall_s)
        .map(|s| s * 1000.0)
        .collect();
    Listener {
        prebuffer_ms,
        responses: streams.len(),
        aggregates: [counts, stall_ms, first]
            .iter()
            .zip(NAMES)
            .map(|(v, n)| (n, aggregate(v, 1.0, f64::NAN, pcts)))
            .collect(),
    }
}

impl Listener {
    /// Add `<name>.{mean,median,std,count,pNN}` for every metric that has values.
    pub(super) fn put_flat(&self, m: &mut BTreeMap<String, f64>) {
        for (name, agg) in self.aggregates.iter().filter(|(_, a)| a.count > 0) {
            m.insert(format!("{name}.mean"), agg.mean);
            m.insert(format!("{name}.median"), agg.median);
            m.insert(format!("{name}.std"), agg.std);
            m.insert(format!("{name}.count"), agg.count as f64);
            for (p, v) in &agg.percentiles {
                m.insert(format!("{name}.p{}", pct_label(*p)), *v);
            }
        }
    }

    /// The terminal block.
    pub(super) fn text(&self) -> String {
        let mut t = format!("{:-^50}\n", "Listener Playback");
        let row = |t: &mut String, k: &str, v: String| t.push_str(&format!("{k:<40} {v:<10}\n"));
        row(&mut t, "Prebuffer (ms):", format!("{}", self.prebuffer_ms));
        row(&mut t, "Responses played:", self.responses.to_string());
        let labels = [
            ("Audio stalls per response", ""),
            ("Audio stall time per response", " (ms)"),
            ("Time to first stall", " (ms)"),
        ];
        for ((_, agg), (label, unit)) in self.aggregates.iter().zip(labels) {
            if agg.count == 0 {
                row(&mut t, &format!("{label}{unit}:"), "none".into());
                continue;
            }
            row(
                &mut t,
                &format!("Mean {label}{unit}:"),
                format!("{:.2}", agg.mean),
            );
            for (p, v) in &agg.percentiles {
                let l = format!("P{} {label}{unit}:", pct_label(*p));
                row(&mut t, &l, format!("{v:.2}"));
            }
        }
        t
    }
}
