//! The merged wire block equals the block one process would have written over the same
//! connections: receipts from the added histograms, counts summed, settings agreed.

use std::time::Duration;

use serde_json::{Value, json};

use super::merge;
use crate::engine::transport::receipts::{Batch, Receipts};

/// A `rtload` object whose wire block holds `delays_us` (kernel-stamped) and `at_read`.
fn shard(delays_us: &[u64], at_read: u64, agreed: Value) -> Value {
    let r = Receipts::default();
    let mut b = Batch::default();
    for &us in delays_us {
        b.note(Some(Duration::from_micros(us)));
        r.add(&mut b);
    }
    for _ in 0..at_read {
        b.note(None);
    }
    r.add(&mut b);
    json!({"wire": {"tcp_nodelay": true,
        "compression": {"setting": "deflate", "offered": "permessage-deflate", "connections": 3,
            "negotiated": 2, "agreed": agreed},
        "retry_rejected": {"allowed": 1, "retried": 1},
        "receipts": r.block()}})
}

/// Each recorded bucket of a block's histogram: (its highest equivalent value, count).
fn recorded(receipts: &Value) -> Vec<(u64, u64)> {
    let text = receipts["reader_delay"]["histogram_us"].as_str().unwrap();
    let h = crate::util::histlog::decode_b64(text).unwrap();
    h.iter_recorded()
        .map(|v| (v.value_iterated_to(), v.count_at_value()))
        .collect()
}

#[test]
fn merged_receipts_are_the_one_process_block() {
    let a: Vec<u64> = (1..=700).map(|i| i * 37 % 9_000 + 5).collect();
    let b: Vec<u64> = (1..=300).map(|i| i * 1_013 % 250_000 + 40).collect();
    let one = shard(&[a.clone(), b.clone()].concat(), 5, json!([]));
    let m = merge(&[&shard(&a, 2, json!([])), &shard(&b, 3, json!([]))]).unwrap();
    let (got, want) = (&m["receipts"], &one["wire"]["receipts"]);
    assert_eq!(got["kernel_stamped"], 1000);
    assert_eq!(got["stamped_at_read"], 5);
    for k in ["count", "p50_ms", "p99_ms", "max_ms"] {
        assert_eq!(got["reader_delay"][k], want["reader_delay"][k], "{k}");
    }
    assert_eq!(
        recorded(got),
        recorded(want),
        "the same values in the histograms"
    );
    let (g, w) = (
        got["reader_delay"]["mean_ms"].as_f64().unwrap(),
        want["reader_delay"]["mean_ms"].as_f64().unwrap(),
    );
    assert!((g - w).abs() <= w * 1e-12, "{g} vs {w}");
    // One shard merges into itself.
    let s = shard(&a, 2, json!([]));
    let mut alone = merge(&[&s]).unwrap();
    assert_eq!(
        recorded(&alone["receipts"]),
        recorded(&s["wire"]["receipts"])
    );
    alone["receipts"]["reader_delay"]["histogram_us"] = Value::Null;
    let mut own = s["wire"].clone();
    own["receipts"]["reader_delay"]["histogram_us"] = Value::Null;
    assert_eq!(alone, own);
}

#[test]
fn counts_add_up_settings_agree_or_are_null() {
    let ext = |n: u64| json!([{"extension": "permessage-deflate", "server_no_context_takeover": true, "connections": n}]);
    let mut c = shard(&[10], 0, ext(2));
    let m = merge(&[&shard(&[10], 0, ext(1)), &c]).unwrap();
    assert_eq!(m["compression"]["connections"], 6);
    assert_eq!(m["compression"]["negotiated"], 4);
    assert_eq!(m["compression"]["agreed"], ext(3));
    assert_eq!(m["retry_rejected"], json!({"allowed": 1, "retried": 2}));
    assert_eq!(m["compression"]["setting"], "deflate");
    c["wire"]["compression"]["setting"] = json!("none");
    let m = merge(&[&shard(&[10], 0, ext(1)), &c]).unwrap();
    assert!(
        m["compression"]["setting"].is_null(),
        "disagreeing settings are not guessed"
    );
}

#[test]
fn a_shard_without_a_histogram_leaves_the_quantiles_missing() {
    let mut old = shard(&[100, 200], 0, json!([]));
    old["wire"]["receipts"]["reader_delay"]
        .as_object_mut()
        .unwrap()
        .remove("histogram_us");
    let m = merge(&[&old, &shard(&[300], 0, json!([]))]).unwrap();
    let d = &m["receipts"]["reader_delay"];
    assert_eq!(d["count"], 3);
    assert!(d["p99_ms"].is_null() && d["p50_ms"].is_null());
    assert_eq!(d["max_ms"], 0.3);
    assert!((d["mean_ms"].as_f64().unwrap() - 0.2).abs() < 1e-12);
    // A wire block only some shards have is not half-merged.
    assert_eq!(merge(&[&old, &json!({})]), None);
}
