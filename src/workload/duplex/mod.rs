//! The OmniInteract duplex workload (spec §1, §3–§5): one long-lived `/v1/realtime`
//! session per dataset video, streaming audio and frames in real time while the model
//! answers with audio and text.
//!
//! Tested cores so far: [`media`] (preparation before timing), [`metrics`] and
//! [`tokens`] (per-response and per-session duplex metrics, stage-0 token timing).

pub mod media;
pub mod metrics;
pub mod tokens;
