//! The `scripted` workload (`kind = "scripted"`): any JSON-over-WebSocket realtime
//! protocol described in the scenario as steps (`send`, `stream`, `await`, `mark`,
//! `repeat`), with `fail_on` patterns and metrics declared from marks and matched events.
//!
//! [`parse`] reads the script with positions, [`script`] holds it, [`metric`] parses and
//! evaluates metric expressions, [`interp`] walks one session's steps as a sans-IO state
//! machine; [`turns`] warns when a per-turn metric missed turns; [`dataset`] loads the
//! items `stream` steps send (audio) and templates read (`${item.<field>}`). Message templates and
//! field matching are the shared pure helpers in [`crate::util`] (the embedded server's
//! `[server.scripted]` rules use the same ones).

pub mod dataset;
pub mod interp;
pub mod metric;
pub mod parse;
pub mod report;
pub mod script;
pub mod turns;
pub mod workload;

pub use workload::build;

/// The registered kind name.
pub const KIND: &str = "scripted";
