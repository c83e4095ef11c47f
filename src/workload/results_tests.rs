use super::*;

#[test]
fn flat_json_and_series_read_the_same_values() {
    let mut r = Recorded::default();
    r.declare("ttft_ms", "ms");
    r.declare("empty_ms", "ms");
    for (i, v) in [40.0, 10.0, f64::NAN, 30.0, 20.0].into_iter().enumerate() {
        r.push("ttft_ms", i as f64, v);
    }
    let flat = r.flat();
    assert_eq!(flat["ttft_ms.count"], 4.0);
    assert_eq!(flat["ttft_ms.p50"], 25.0);
    assert_eq!(flat["ttft_ms.min"], 10.0);
    assert_eq!(flat["ttft_ms.max"], 40.0);
    assert!(
        !flat.keys().any(|k| k.starts_with("empty_ms")),
        "missing, never zero"
    );
    let json = r.to_json();
    assert_eq!(json["ttft_ms"], serde_json::json!([40.0, 10.0, 30.0, 20.0]));
    assert_eq!(json["empty_ms"], serde_json::json!([]));
    let doc = serde_json::json!({"rtload": {"distributions": json}});
    assert_eq!(values_of(&doc)["ttft_ms"], r.values("ttft_ms"));
    let series = r.series();
    let t = series.iter().find(|s| s.tag == "ttft_ms").unwrap();
    assert_eq!(t.samples.len(), 4);
    assert_eq!(t.unit, "ms");
}

#[test]
fn asked_percentiles_are_flat_names() {
    let mut r = Recorded::new(&[99.0, 50.0, 99.9, 50.0]);
    assert_eq!(r.percents(), [50.0, 99.0, 99.9]);
    r.extend("x", 0.0, [1.0, 2.0]);
    let flat = r.flat();
    assert!(flat.contains_key("x.p99.9") && flat.contains_key("x.p50"));
    assert!(!flat.contains_key("x.p90"));
}

#[test]
fn invariants_name_what_is_out_of_order_and_counts_that_do_not_add_up() {
    let mut r = Recorded::new(&[50.0, 90.0, 99.0]);
    r.extend("x", 0.0, [3.0, 1.0, 2.0, 10.0]);
    let mut m = r.flat();
    m.insert("completed".into(), 4.0);
    assert!(invariant_violations(&m, Some((5, 4, 1, 0))).is_empty());
    m.insert("x.p90".into(), 100.0);
    let v = invariant_violations(&m, Some((5, 3, 1, 0)));
    assert!(v.iter().any(|l| l.starts_with("x: p90 100 > p99")), "{v:?}");
    assert!(
        v.iter().any(|l| l.starts_with("sample counts: measured 5")),
        "{v:?}"
    );
    assert!(
        v.iter().any(|l| l.starts_with("metric completed 4")),
        "{v:?}"
    );
}
