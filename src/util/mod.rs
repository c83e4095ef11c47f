//! Generic helpers every layer may use; nothing here knows a workload, the engine or the
//! scenario layout: Python-compatible number formatting (`pyfmt`), percentiles and summaries
//! (`stats`), atomic file writes (`fs`), a scenario file parsed once into its spanned tree,
//! with typed command-line patches (`scenario_doc`), positioned scenario errors
//! (`scenario_error`), the HdrHistogram interval log (`histlog`) and target URL rules
//! (`target`), text positions with close-match suggestions (`textpos`), media pacing modes
//! (`pacing`), the bounded external-command runner (`command`) and the tone-coded words
//! shared by the synthetic transcription set and the embedded server (`tonecode`), the
//! Prometheus text format (`prom`), the tiny HTTP for live metrics (`http`) and the target
//! scraper (`scrape`); and, shared by the client side and the embedded server, JSON field
//! matching (`jsonmatch`) and `${var}` message templates (`template`); WAV decoding to PCM16
//! mono at a chosen rate (`wav`), shared by the datasets that stream recorded audio; the
//! process's own CPU and memory from `/proc/self` (`usage`); text copied into outputs
//! cut to a bound with its length noted (`bounded`); the process's stop-requested flag
//! that long work outside a run checks (`cancel`); LEB128 numbers for compact exact logs
//! (`leb128`); bytes kept for a run packed into huge-page mappings (`packed`).

pub mod b64;
pub mod bounded;
pub mod cancel;
pub mod command;
pub mod fs;
pub mod grow;
pub mod histlog;
pub mod http;
pub mod jsonmatch;
pub mod leb128;
pub mod pacing;
pub mod packed;
pub mod prom;
pub mod pyfmt;
pub mod scenario_doc;
pub mod scenario_error;
pub mod scrape;
pub mod stats;
pub mod target;
pub mod template;
pub mod textpos;
pub mod tonecode;
pub mod usage;
pub mod wav;

pub use fs::write_atomic;
