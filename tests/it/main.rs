//! rtload's one integration test binary. Every test talks only to 127.0.0.1 (servers
//! bind port 0) and is bounded by the workload's own timeouts.

mod duplex_support;
mod raw_server;
mod scripted_server;
mod support;
mod transcription_server;

mod check_is_run;
mod cli;
mod config_checks;
mod differential;
mod duplex;
mod echo_workload;
mod engine;
mod fn_lengths;
mod frame_limit;
mod fresh_machine;
mod full_disk;
mod fuzz;
mod headlines;
mod layering;
mod listener;
mod live;
mod metric_origins;
mod openai_ga;
mod outputs;
mod prometheus;
mod redaction;
mod refused_upgrade;
mod schema;
mod schema_ranges;
mod scripted;
mod scripted_checks;
mod scripted_vs_builtin;
mod secrets;
mod send_order;
mod shard;
mod surface;
mod sweep;
mod tls;
mod transcription;
mod trust_interrupt;
mod trust_io;
mod video_faults;
mod wire;
mod wire_deflate;
