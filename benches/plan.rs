//! Micro-benchmarks for the arrival plan and the CPython-compatible shuffle.
//! Plain `harness = false` loop (no bench crates): prints ns/iter for each case.
//! Run with `cargo bench --bench plan`; finishes in well under 10 s.

use std::hint::black_box;
use std::time::{Duration, Instant};

use rtload::bench::python_shuffle;
use rtload::scenario::{ArrivalSpec, RampStrategy, RampUp, plan};

/// Runs `f` for about `budget` (after a short warm-up) and prints the mean ns/iter.
fn bench(name: &str, budget: Duration, mut f: impl FnMut()) {
    for _ in 0..3 {
        f();
    }
    let start = Instant::now();
    let mut iters: u64 = 0;
    while start.elapsed() < budget {
        f();
        iters += 1;
    }
    let ns = start.elapsed().as_nanos() as f64 / iters as f64;
    println!("{name:<40} {ns:>14.0} ns/iter ({iters} iters)");
}

fn main() {
    let budget = Duration::from_millis(800);
    let n = 10_000;

    let poisson = ArrivalSpec {
        request_rate: Some(10.0),
        burstiness: 1.0,
        ramp_up: None,
        seed: 0,
        steps: None,
    };
    bench("plan n=10000 poisson", budget, || {
        let p = plan(black_box(n), black_box(&poisson));
        black_box(p.ok());
    });

    let ramp = ArrivalSpec {
        request_rate: None,
        burstiness: 1.0,
        ramp_up: Some(RampUp {
            strategy: RampStrategy::Linear,
            start_rps: 1.0,
            end_rps: 100.0,
        }),
        seed: 0,
        steps: None,
    };
    bench("plan n=10000 linear ramp 1->100", budget, || {
        let p = plan(black_box(n), black_box(&ramp));
        black_box(p.ok());
    });

    let mut items: Vec<u32> = (0..10_000).collect();
    bench("python_shuffle 10000 items", budget, || {
        python_shuffle(black_box(&mut items[..]), black_box(42));
    });
}
