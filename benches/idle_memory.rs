//! What reading prepared bytes costs after they sat idle: 10,000 items of 8.6 KB (one
//! 200 ms duplex append each, 86 MB), copied out once fresh and again after the CPU spent
//! 1, 4 and 8 s on other work, kept (a) on the heap, one allocation each, as a case's
//! appends were before, and (b) packed into huge-page mappings (`rtload::bench::Packer`),
//! as they are now. On the benchmark VM the heap's copies slow down the longer they sit
//! (BENCHMARKS.md, "Prepared media on huge pages"); on bare metal both should stay flat.
//!
//!     taskset -c 1 cargo bench --bench idle_memory

use std::hint::black_box;
use std::time::{Duration, Instant};

use rtload::bench::Packer;

const ITEMS: usize = 10_000;
const ITEM_BYTES: usize = 8_600;

fn item(i: usize) -> Vec<u8> {
    vec![b'A' + (i % 26) as u8; ITEM_BYTES]
}

/// ns per copy of every item into one reused buffer, after `idle` spent spinning.
fn copy_all<'a>(items: impl Iterator<Item = &'a [u8]>, idle: Duration, out: &mut Vec<u8>) -> f64 {
    let until = Instant::now() + idle;
    while Instant::now() < until {
        std::hint::spin_loop();
    }
    let start = Instant::now();
    let mut n = 0;
    for it in items {
        out.clear();
        out.extend_from_slice(it);
        black_box(&out);
        n += 1;
    }
    start.elapsed().as_nanos() as f64 / n as f64
}

fn main() {
    let heap: Vec<Vec<u8>> = (0..ITEMS).map(item).collect();
    let mut packer = Packer::new();
    let tickets: Vec<_> = (0..ITEMS)
        .map(|i| packer.push(&item(i)).expect("pack"))
        .collect();
    let packed = packer.finish().expect("seal");
    let packed = packed.get_all(&tickets).expect("this packer's tickets");
    let mut out = Vec::with_capacity(ITEM_BYTES);
    println!("idle before the copy | heap, ns per 8.6 KB copy | huge-page mappings");
    for idle_s in [0, 1, 4, 8] {
        let idle = Duration::from_secs(idle_s);
        let h = copy_all(heap.iter().map(|v| &v[..]), idle, &mut out);
        let p = copy_all(packed.iter().map(|b| &b[..]), idle, &mut out);
        println!("{idle_s:>2} s | {h:>8.0} | {p:>8.0}");
    }
}
