//! The `replay` workload (`kind = "replay"`): the client side of a recording
//! (`rtload run SCENARIO --record DIR`) sent again, byte for byte and at its recorded
//! offsets from each session's open, to any server, for any protocol, with no scenario
//! of the original kind. What it measures is declared from the recording itself: for
//! each client message type X whose first server message after it in the recording was
//! of type Y, the latency from X's intended send to the first live Y after it.
//!
//! [`plan`] turns recorded events into what one session sends and expects (pure),
//! [`session`] replays one session as a sans-IO state machine, [`report`] pools the
//! measured sessions, [`workload`] reads `[workload]` and builds it. The recording is
//! read by the composition root (`config::registry`) with the one trace reader and handed
//! over as plain [`plan::RecordedSession`]s: a kind never imports the engine.

pub mod plan;
pub mod report;
pub mod session;
pub mod workload;

#[cfg(test)]
mod tests;

pub use workload::{build, scenario_text};

/// The registered kind name.
pub const KIND: &str = "replay";
