//! What a listener hears: per response, the stutter when audio arrives slower than it
//! plays. The numbers come from the sample's playback role (the shared simulation in
//! [`crate::workload::playback`], one stream per response, started after
//! `playback_prebuffer_ms` of its audio); this module only aggregates them over the
//! responses of successful measured cases into the flat metrics, the text block and JSON.

use super::CaseRun;
use super::json::pct_label;
use crate::workload::omni::bench_metrics::{Aggregate, aggregate};
use crate::workload::results::{Recorded, Stamp};

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

/// Record each played response's stall count, stall time and time to first stall (over
/// successful measured cases, at the end of the case) into `rec`.
pub(super) fn record(rec: &mut Recorded, runs: &[CaseRun<'_>]) {
    for r in runs.iter().filter(|r| r.outcome.success) {
        let at = r.sample.ended_s;
        let starts = super::turn_starts(r.out);
        for s in r.sample.playback.iter().flat_map(|p| p.streams.iter()) {
            let stamp = Stamp {
                age_s: s.start_s,
                turn: super::turn_at(&starts, s.start_s),
            };
            let at = super::taken_at(r.sample, s.start_s, at);
            rec.push_stamped(STALL_COUNT, at, stamp, s.stall_count as f64);
            rec.push_stamped(STALL_MS, at, stamp, s.total_stall_s * 1000.0);
            if let Some(first) = s.time_to_first_stall_s {
                rec.push_stamped(FIRST_STALL_MS, at, stamp, first * 1000.0);
            }
        }
    }
}

/// The listener block of a run from its recorded values, with these percentiles.
pub(super) fn listener(rec: &Recorded, prebuffer_ms: f64, pcts: &[f64]) -> Listener {
    Listener {
        prebuffer_ms,
        responses: rec.values(STALL_COUNT).len(),
        aggregates: NAMES
            .iter()
            .map(|n| (*n, aggregate(rec.values(n), 1.0, f64::NAN, pcts)))
            .collect(),
    }
}

impl Listener {
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
