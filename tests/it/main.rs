//! rtload's one integration test binary. Every test talks only to 127.0.0.1 (servers
//! bind port 0) and is bounded by the workload's own timeouts.

mod duplex_support;
mod scripted_server;
mod support;

mod cli;
mod duplex;
mod engine;
mod layering;
mod outputs;
mod schema;
mod scripted;
mod surface;
mod sweep;
mod video_faults;
