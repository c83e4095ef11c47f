//! Generic helpers every layer may use; nothing here knows a workload, the engine or the
//! scenario layout: Python-compatible number formatting (`pyfmt`), percentiles and summaries
//! (`stats`), atomic file writes (`fs`), positioned scenario errors and section parsing
//! (`scenario_error`), the HdrHistogram interval log (`histlog`) and target URL rules
//! (`target`), text positions with close-match suggestions (`textpos`), media pacing modes
//! (`pacing`), the bounded external-command runner (`command`) and the tone-coded words
//! shared by the synthetic transcription set and the embedded server (`tonecode`), the
//! Prometheus text format (`prom`), the tiny HTTP for live metrics (`http`) and the target
//! scraper (`scrape`).

pub mod command;
pub mod fs;
pub mod histlog;
pub mod http;
pub mod pacing;
pub mod prom;
pub mod pyfmt;
pub mod scenario_error;
pub mod scrape;
pub mod stats;
pub mod target;
pub mod textpos;
pub mod tonecode;

pub use fs::write_atomic;
