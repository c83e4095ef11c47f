//! What one duplex session holds per second of its life: a measured (capturing,
//! spooled) OmniInteract session is driven without sockets through a long case at the
//! duplex bench's server cadence (one response a second: `response.created`, three
//! 100 ms audio deltas, a transcript delta, `response.done`; a wake-up every 100 ms as
//! the runtime would give it), and the heap it holds is counted by a counting global
//! allocator at two points of its life. The difference over the responses between them
//! is what a session keeps per response: the part of its memory that grows with its
//! length. Allocation counts are deterministic, so this number is exact and repeatable,
//! unlike RSS; the tables and maps grow by doublings, so the long default window is the
//! steadier figure. `cargo bench --bench session_memory [-- SECONDS]` (default 600).

use std::alloc::System;
use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use bytes::Bytes;
use rtload::bench::{CaseUpload, DuplexSession, DuplexSettings, PreparedMedia, Spool};
use rtload::workload::{Effects, Inbound, Session};
use serde_json::json;
use stats_alloc::{INSTRUMENTED_SYSTEM, StatsAlloc};
use tokio::time::Instant;

/// Every allocation of the process is counted (the session runs on this thread; the
/// spool's writer thread is flushed before each reading).
#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// Bytes and allocations held right now.
fn live() -> (isize, isize) {
    let s = GLOBAL.stats();
    (
        s.bytes_allocated as isize - s.bytes_deallocated as isize,
        s.allocations as isize - s.deallocations as isize,
    )
}

/// A response id shaped like a real server's (`resp_` and 32 hex digits).
fn rid(k: u64) -> String {
    format!("resp_{k:032x}")
}

fn main() {
    let secs: u64 = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(600);
    let tmp = tempfile::tempdir().expect("temp dir");
    let spool = Spool::create(tmp.path()).expect("spool");
    let media = PreparedMedia {
        pcm: Bytes::from(vec![0u8; secs as usize * 32_000]),
        frames: Arc::from(vec![Some(Arc::<str>::from("frame")); secs as usize]),
        duration_s: secs as f64,
    };
    let upload = Arc::new(CaseUpload::new(&media));
    let delta = base64::engine::general_purpose::STANDARD.encode(vec![1u8; 4_800]);
    let cfg = DuplexSettings::new("m", Arc::from("data:audio/wav;base64,UklGRg=="));
    let mut s = DuplexSession::new(Arc::new(cfg), upload, "omniinteract:mem:0".into(), true)
        .with_spool(spool.session(), spool.session());
    let t0 = Instant::now();
    let at = |t: f64| t0 + Duration::from_secs_f64(t);
    let mut fx = Effects::default();
    s.on_open(t0, &mut fx);
    let feed = |s: &mut DuplexSession, t: f64, v: serde_json::Value| {
        let mut fx = Effects::default();
        s.on_inbound(Inbound::Text(v.to_string().into()), at(t), &mut fx);
    };
    feed(
        &mut s,
        0.1,
        json!({"type": "session.created", "session": {}}),
    );
    let (early, late) = (secs / 5, secs - 5);
    let mut readings = Vec::new();
    for k in 1..secs {
        let t = k as f64 + 0.1;
        let id = rid(k);
        feed(
            &mut s,
            t,
            json!({"type": "response.created", "response": {"id": id}}),
        );
        for d in 0..3 {
            feed(
                &mut s,
                t + 0.02 * f64::from(d),
                json!({"type": "response.audio.delta", "response_id": id, "delta": delta,
                       "format": "pcm16", "sample_rate_hz": 24000}),
            );
        }
        feed(
            &mut s,
            t + 0.07,
            json!({"type": "response.audio_transcript.delta", "response_id": id, "delta": "Hi there."}),
        );
        feed(
            &mut s,
            t + 0.08,
            json!({"type": "response.done", "response": {"id": id, "status": "completed"}}),
        );
        for w in 1..=9 {
            let mut fx = Effects::default();
            s.on_wake(at(t + 0.1 * f64::from(w)), &mut fx);
        }
        if k == early || k == late {
            spool.flush();
            let (bytes, n) = live();
            readings.push((k, bytes, n));
        }
    }
    let [(k0, b0, n0), (k1, b1, n1)] = readings[..] else {
        panic!("two readings")
    };
    let per = (b1 - b0) as f64 / (k1 - k0) as f64;
    let per_n = (n1 - n0) as f64 / (k1 - k0) as f64;
    println!(
        "session heap: {:.1} KiB at {k0} s, {:.1} KiB at {k1} s: {per:.0} bytes in {per_n:.2} \
         allocations per response (one response a second, ids of {} bytes)",
        b0 as f64 / 1024.0,
        b1 as f64 / 1024.0,
        rid(0).len()
    );
    drop(s);
}
