//! The receipts tally: batches fill and empty, the block's figures, the terminal line
//! read from the block.

use std::time::Duration;

use serde_json::json;

use super::*;

#[test]
fn batches_add_up_and_the_block_says_what_was_stamped() {
    let r = Receipts::default();
    let mut b = Batch::default();
    let mut full = 0;
    for i in 0..100u64 {
        let delay = (i % 10 != 0).then(|| Duration::from_micros(i * 10));
        if b.note(delay) {
            full += 1;
            r.add(&mut b);
        }
    }
    r.add(&mut b);
    assert_eq!(full, 100 / BATCH);
    let v = r.block();
    assert_eq!(v["kernel_stamped"], 90);
    assert_eq!(v["stamped_at_read"], 10);
    let d = &v["reader_delay"];
    assert_eq!(d["count"], 90);
    assert_eq!(d["max_ms"], 0.99);
    let sum_us: u64 = (0..100u64).filter(|i| i % 10 != 0).map(|i| i * 10).sum();
    assert!((d["mean_ms"].as_f64().unwrap() - sum_us as f64 / 90.0 / 1000.0).abs() < 1e-12);
    let p99 = d["p99_ms"].as_f64().unwrap();
    assert!((0.98..=0.991).contains(&p99), "{p99}");
    // Adding an empty batch changes nothing.
    r.add(&mut b);
    assert_eq!(r.block(), v);
}

#[test]
fn without_a_kernel_stamp_the_delay_is_missing_not_zero() {
    let r = Receipts::default();
    let mut b = Batch::default();
    b.note(None);
    r.add(&mut b);
    let v = r.block();
    assert_eq!(v["kernel_stamped"], 0);
    assert!(v["reader_delay"]["p99_ms"].is_null());
    assert!(v["reader_delay"]["mean_ms"].is_null());
    assert_eq!(
        text(&v).unwrap(),
        "Receipts: 0 stamped by the kernel, 1 at the read; reader delay p50 – / p99 – / max – ms\n"
    );
    assert_eq!(text(&Receipts::default().block()), None, "nothing received");
}

#[test]
fn the_line_reads_the_block() {
    let v = json!({"kernel_stamped": 5, "stamped_at_read": 0,
        "reader_delay": {"count": 5, "mean_ms": 0.1, "p50_ms": 0.05, "p99_ms": 1.25, "max_ms": 1.5}});
    assert_eq!(
        text(&v).unwrap(),
        "Receipts: 5 stamped by the kernel, 0 at the read; reader delay p50 0.050 / p99 1.250 / max 1.500 ms\n"
    );
    assert_eq!(text(&json!({})), None);
}
