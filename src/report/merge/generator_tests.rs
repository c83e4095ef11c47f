//! Tests for the merged generator block's per-phase CPU.

use serde_json::json;

use super::phase_cpu;

fn shard(before: f64, setup: f64, publication: f64, through: f64, n: u64) -> serde_json::Value {
    json!({"phase_cpu": {
        "before_live": {"cpu_s": before},
        "setup": {"cpu_s": setup, "sessions": n},
        "publication": {"cpu_s": publication},
        "through_publication": {"cpu_s": through},
        "sessions": n,
    }})
}

#[test]
fn shards_phases_add_up_and_per_session_is_recomputed() {
    let (a, b) = (
        shard(1.0, 0.1, 2.0, 4.0, 1000),
        shard(0.5, 0.1, 1.0, 2.0, 1000),
    );
    let m = phase_cpu(&[&a, &b], Some(12_000.0));
    assert_eq!(m["sessions"], 2000);
    assert_eq!(m["before_live"]["cpu_s"], 1.5);
    assert_eq!(m["before_live"]["cpu_us_per_session"], 750.0);
    assert_eq!(m["setup"]["sessions"], 2000);
    assert_eq!(m["setup"]["cpu_us_per_session"], 100.0);
    assert_eq!(m["publication"]["cpu_us_per_session"], 1500.0);
    assert_eq!(m["through_publication"]["cpu_us_per_session_s"], 500.0);
}

#[test]
fn a_shard_without_a_reading_makes_the_merged_one_null() {
    let a = shard(1.0, 0.1, 2.0, 4.0, 10);
    let mut b = shard(1.0, 0.1, 2.0, 4.0, 10);
    b["phase_cpu"]["publication"]["cpu_s"] = serde_json::Value::Null;
    let m = phase_cpu(&[&a, &b], None);
    assert!(m["publication"]["cpu_s"].is_null());
    assert!(m["publication"]["cpu_us_per_session"].is_null());
    assert!(m["through_publication"]["cpu_us_per_session_s"].is_null());
    assert_eq!(m["before_live"]["cpu_s"], 2.0);
}
