//! Generic helpers every layer may use; nothing here knows a workload, the engine or the
//! scenario layout: Python-compatible number formatting (`pyfmt`), percentiles and summaries
//! (`stats`), atomic file writes (`fs`), positioned scenario errors and section parsing
//! (`scenario_error`), the HdrHistogram interval log (`histlog`) and target URL rules
//! (`target`), text positions with close-match suggestions (`textpos`); and, shared by the
//! client side and the embedded server (which may not import each other), JSON field
//! matching (`jsonmatch`) and `${var}` message templates (`template`).

pub mod fs;
pub mod histlog;
pub mod jsonmatch;
pub mod pyfmt;
pub mod scenario_error;
pub mod stats;
pub mod target;
pub mod template;
pub mod textpos;

pub use fs::write_atomic;
