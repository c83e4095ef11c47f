//! The OmniInteract duplex workload (`kind = "omniinteract"`, spec §1, §3–§5): one
//! long-lived `/v1/realtime` session per dataset video, streaming audio and frames in real
//! time while the model answers with audio and text.
//!
//! [`workload`] is the configured workload (its command-line flags in `flags`, dataset
//! selection, media preparation before timing, the output lock); [`session`] the per-case state machine built from
//! [`pacing`], [`playback`], [`ledger`] and [`url`]; [`media`] prepares inputs and
//! [`upload`] builds every append message from them before timing;
//! [`metrics`] and [`tokens`] are the duplex metric formulas; [`report`] turns a run into
//! the vllm-style summary, the saved result and the case artifacts.

pub mod artifacts;
pub mod bench_metrics;
mod capacity;
pub mod dataset;
mod flags;
pub mod ids;
pub mod ledger;
pub mod media;
pub mod metrics;
pub mod pacing;
pub mod playback;
mod ranges;
pub mod report;
pub mod session;
pub mod tokens;
pub mod upload;
pub mod url;
pub mod workload;

pub use workload::{KIND, build};
