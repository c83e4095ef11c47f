//! rtload: a load generator framework for realtime streaming AI endpoints.
//!
//! A run is a [`scenario`] (TOML) executed by the [`engine`]: a coordinator actor releases
//! samples on an arrival [`plan`] under a concurrency cap; each sample is a supervised
//! actor tree on a session shard that hosts one pure [`workload::Session`] state machine.
//! Workloads ([`workload::video`]) turn finished runs into reports. The embedded reference
//! [`server`] is the default target. [`runner`] glues these together for the CLI.

pub mod artifacts;
pub mod batch;
pub mod bench_metrics;
pub mod compare;
pub mod dataset;
pub mod engine;
pub mod histlog;
pub mod html;
pub mod plan;
pub mod playback;
pub mod progress;
pub mod pyfmt;
pub mod resultfile;
pub mod runner;
pub mod scenario;
pub mod schema;
pub mod server;
pub mod stats;
pub mod suite;
pub mod sweep;
pub mod target;
pub mod thresholds;
pub mod util;
pub mod workload;
