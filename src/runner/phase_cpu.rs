//! The generator's CPU per phase of a run (`rtload.phase_cpu`): what came before the live
//! phase (start-up and the workload's preparation), what opening the sessions cost within
//! it (connect, handshake, the opening messages), and what publication after it cost (the
//! workload's report and artifacts, until the result document is assembled), each per
//! session, and the whole process through publication per live session-second. The live
//! phase's own figure stays in `rtload.resources`; each figure here comes from one
//! reading, so the bench scripts print these rather than computing their own.

use serde_json::{Value, json};

use crate::engine::setup_cost::SetupCost;
use crate::workload::kit::PhaseUsage;

/// The readings the block is made of.
pub(super) struct PhaseCpu {
    /// The process's CPU seconds at the live phase's start and end (`usage`'s boundaries).
    pub(super) usage_start_cpu_s: Option<f64>,
    /// The same at its end.
    pub(super) usage_end_cpu_s: Option<f64>,
    /// The process's CPU seconds when the result document was assembled.
    pub(super) published_cpu_s: Option<f64>,
    /// What opening the sessions cost.
    pub(super) setup: SetupCost,
    /// Sessions run (warm-ups included: their CPU is in every figure too).
    pub(super) sessions: usize,
}

impl PhaseCpu {
    /// The readings for a run whose live phase `usage` covers, taking the publication
    /// reading now.
    pub(super) fn now(
        usage: &PhaseUsage,
        setup: SetupCost,
        run: &crate::workload::RunRecord,
    ) -> Self {
        Self {
            usage_start_cpu_s: usage.start.cpu_s,
            usage_end_cpu_s: usage.end.cpu_s,
            published_cpu_s: crate::workload::kit::UsageSnapshot::now().cpu_s,
            setup,
            sessions: run.samples.len(),
        }
    }

    /// `{"phase_cpu": {...}}`: `before_live`, `setup` and `publication`, each with its
    /// CPU seconds and µs per session, and `through_publication` (process CPU from its
    /// start until the result was assembled) per live session-second (`live_session_s`,
    /// `rtload.resources`' own). Missing readings are null, never zero.
    pub(super) fn block(&self, live_session_s: Option<f64>) -> Value {
        let per_session = |cpu_s: Option<f64>| {
            cpu_s
                .filter(|_| self.sessions > 0)
                .map(|c| c * 1e6 / self.sessions as f64)
        };
        let publication = self
            .published_cpu_s
            .zip(self.usage_end_cpu_s)
            .map(|(p, e)| (p - e).max(0.0));
        let setup_per =
            (self.setup.sessions > 0).then(|| self.setup.cpu_s * 1e6 / self.setup.sessions as f64);
        json!({"phase_cpu": {
            "before_live": {
                "cpu_s": self.usage_start_cpu_s,
                "cpu_us_per_session": per_session(self.usage_start_cpu_s),
            },
            "setup": {
                "cpu_s": self.setup.cpu_s,
                "sessions": self.setup.sessions,
                "cpu_us_per_session": setup_per,
            },
            "publication": {
                "cpu_s": publication,
                "cpu_us_per_session": per_session(publication),
            },
            "through_publication": {
                "cpu_s": self.published_cpu_s,
                "cpu_us_per_session_s": self.published_cpu_s
                    .zip(live_session_s.filter(|l| *l > 0.0))
                    .map(|(c, l)| c * 1e6 / l),
            },
            "sessions": self.sessions,
        }})
    }
}

#[cfg(test)]
#[path = "phase_cpu_tests.rs"]
mod tests;
