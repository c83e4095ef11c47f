//! rtload's one integration test binary. Every test talks only to 127.0.0.1 (servers
//! bind port 0) and is bounded by the workload's own timeouts.

mod duplex_support;
mod support;

mod cli;
mod duplex;
mod engine;
mod layering;
mod live;
mod outputs;
mod schema;
mod shard;
mod surface;
mod sweep;
mod video_faults;
