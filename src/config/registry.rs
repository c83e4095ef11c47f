//! The composition root: every workload kind rtload knows. The only file outside
//! `src/workload/` that names kinds; adding a workload is one entry here.

use crate::workload::{WorkloadKind, omni, scripted, video};

/// Every workload kind rtload knows, by name.
pub fn registry() -> &'static [WorkloadKind] {
    &[
        WorkloadKind {
            name: video::KIND,
            summary: "LingBot-World realtime video cadence (/v1/realtime/video)",
            build: video::build,
            schema: |g| crate::config::schema::kind_schema::<video::VideoParams>(g, video::KIND),
        },
        WorkloadKind {
            name: omni::KIND,
            summary: "OmniInteract duplex speech benchmark (/v1/realtime)",
            build: omni::build,
            schema: |g| {
                crate::config::schema::kind_schema::<omni::workload::OmniParams>(g, omni::KIND)
            },
        },
        WorkloadKind {
            name: scripted::KIND,
            summary: "any JSON-over-WebSocket protocol described as steps in the scenario",
            build: scripted::build,
            schema: |g| {
                crate::config::schema::kind_schema::<scripted::workload::ScriptedParams>(
                    g,
                    scripted::KIND,
                )
            },
        },
    ]
}
