//! Benchmark of the sample start path: coordinator release → slot → sample supervisor
//! and its live phase on a shard → WebSocket connect → `session.start` → first chunk,
//! against the embedded server in-process on 127.0.0.1. Prints per-sample start latency
//! and the whole run's throughput. `cargo bench --bench start`.

use std::time::Instant;

use rtload::scenario::{self, Overrides};

fn scenario(n: usize, conc: usize) -> rtload::Scenario {
    let src = format!(
        r#"
[workload]
kind = "video-cadence"
num_chunks = 1
warmup_chunks = 0
ping_interval = 0
[load]
samples = {n}
max_concurrency = {conc}
[server.video]
first_chunk_ms = 0
chunk_interval_ms = 0
ramp_chunks = 0
trailer = false
chunk_bytes = 1024
"#
    );
    scenario::parse(
        std::path::Path::new("bench.toml"),
        &src,
        &Overrides::default(),
    )
    .unwrap_or_else(|e| panic!("{e:?}"))
}

fn pct(v: &mut [f64], p: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    v[((v.len() - 1) as f64 * p).round() as usize]
}

fn main() {
    for (n, conc) in [(200, 1), (500, 50), (1000, 200)] {
        let sc = scenario(n, conc);
        let t = Instant::now();
        let s = rtload::run(&sc, Box::new(std::io::sink())).expect("run");
        let wall = t.elapsed().as_secs_f64();
        assert!(s.passed(), "{:?}", s.failures.first());
        let rows = s.report.to_json()["rtload"]["samples"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        // Start latency: slot granted → socket connect started, per sample.
        let mut start: Vec<f64> = rows
            .iter()
            .map(|r| {
                let f = |k: &str| r[k].as_f64().unwrap_or(0.0);
                (f("started_s") - f("scheduled_s")) * 1000.0 - f("queue_wait_ms")
            })
            .collect();
        // Session duration: connect → first (only) chunk → session.done → close.
        let mut dur: Vec<f64> = rows
            .iter()
            .map(|r| {
                (r["ended_s"].as_f64().unwrap_or(0.0) - r["started_s"].as_f64().unwrap_or(0.0))
                    * 1000.0
            })
            .collect();
        println!(
            "samples={n:<5} concurrency={conc:<4} {:>8.0} samples/s | start latency p50 {:.3} ms p99 {:.3} ms | session p50 {:.3} ms p99 {:.3} ms",
            n as f64 / wall,
            pct(&mut start, 0.5),
            pct(&mut start, 0.99),
            pct(&mut dur, 0.5),
            pct(&mut dur, 0.99),
        );
    }
}
