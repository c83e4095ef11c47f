//! rtload: a load generator framework for realtime streaming AI endpoints.
//!
//! A run is a scenario ([`config`]) executed by the [`engine`]: a coordinator actor
//! releases samples on an arrival plan under a concurrency cap; each sample is a supervised
//! actor tree on a session shard that hosts one pure [`workload::Session`] state machine.
//! Workloads ([`workload::video`], [`workload::omni`]) turn finished runs into reports;
//! [`report`] compares and renders result files. The embedded reference [`server`] is the
//! default target. [`runner`] (one run) and [`batch`] (suites, sweeps) glue these together
//! for the CLI. Layers and what may import what: ARCHITECTURE.md.

pub mod batch;
pub mod config;
pub mod engine;
pub mod report;
pub mod runner;
pub mod server;
pub mod util;
pub mod workload;
