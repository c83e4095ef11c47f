//! rtload's one integration test binary. Every test talks only to 127.0.0.1 (servers
//! bind port 0) and is bounded by the workload's own timeouts.

mod duplex_support;
mod scripted_server;
mod support;

mod cli;
mod config_checks;
mod duplex;
mod echo_workload;
mod engine;
mod layering;
mod outputs;
mod schema;
mod scripted;
mod surface;
mod sweep;
mod tls;
mod trust_io;
mod video_faults;
