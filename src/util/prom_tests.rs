//! The Prometheus text encoder and parser: gauges, counters and histograms, label
//! escaping round trips, vLLM-style series with comments skipped.

use super::*;

#[test]
fn gauges_counters_and_histograms_encode_in_the_text_format() {
    let mut h = Buckets::new(LATENCY_BUCKETS_S);
    // 200 µs, 800 µs, 3 ms, a value on a bound (counted in it), 70 s (only in +Inf), a
    // negative lateness (in the first bucket) and a NaN (not a measurement).
    for s in [0.0002, 0.0008, 0.003, 0.005, 70.0, -0.001, f64::NAN] {
        h.observe(s);
    }
    assert_eq!(h.count(), 6);
    assert!((h.sum() - 70.008).abs() < 1e-12, "{}", h.sum());
    let mut e = Exposition::default();
    e.gauge(
        "rtload_sessions_active",
        "Sessions running now.",
        &[(&[("phase", "measured")], 3.0)],
    );
    e.counter("rtload_sessions_completed_total", "Done.", &[(&[], 7.0)]);
    e.histogram("rtload_send_lateness_seconds", "Lateness.", &[], &h);
    let text = e.finish();
    for want in [
        "# TYPE rtload_sessions_active gauge\n",
        "rtload_sessions_active{phase=\"measured\"} 3\n",
        "rtload_sessions_completed_total 7\n",
        "# TYPE rtload_send_lateness_seconds histogram\n",
        "rtload_send_lateness_seconds_bucket{le=\"0.0001\"} 1\n",
        "rtload_send_lateness_seconds_bucket{le=\"0.00025\"} 2\n",
        "rtload_send_lateness_seconds_bucket{le=\"0.001\"} 3\n",
        "rtload_send_lateness_seconds_bucket{le=\"0.005\"} 5\n",
        "rtload_send_lateness_seconds_bucket{le=\"60\"} 5\n",
        "rtload_send_lateness_seconds_bucket{le=\"+Inf\"} 6\n",
        "rtload_send_lateness_seconds_count 6\n",
    ] {
        assert!(text.contains(want), "missing {want}in\n{text}");
    }
    let sum = parse_samples(&text)
        .into_iter()
        .find(|(s, _)| s == "rtload_send_lateness_seconds_sum")
        .unwrap()
        .1;
    assert_eq!(sum, h.sum());
}

#[test]
fn label_values_are_escaped_and_parsed_back() {
    let mut e = Exposition::default();
    e.gauge("g", "h", &[(&[("k", "a \"b\"\\ c")], f64::NAN)]);
    let text = e.finish();
    assert!(text.contains(r#"g{k="a \"b\"\\ c"} NaN"#), "{text}");
    let parsed = parse_samples(&text);
    assert_eq!(parsed.len(), 1);
    assert_eq!(parsed[0].0, r#"g{k="a \"b\"\\ c"}"#);
    assert!(parsed[0].1.is_nan());
}

#[test]
fn parse_reads_vllm_style_series_and_skips_comments() {
    let text = "# HELP vllm:num_requests_running Running.\n\
                # TYPE vllm:num_requests_running gauge\n\
                vllm:num_requests_running{model_name=\"m\"} 4.0\n\
                vllm:num_requests_waiting 0 1700000000000\n\
                broken\n\
                x_bucket{le=\"+Inf\"} +Inf\n";
    let s = parse_samples(text);
    assert_eq!(
        s[..2],
        [
            (
                "vllm:num_requests_running{model_name=\"m\"}".to_string(),
                4.0
            ),
            ("vllm:num_requests_waiting".to_string(), 0.0),
        ]
    );
    assert_eq!(s.len(), 3);
    assert_eq!(series_name(&s[0].0), "vllm:num_requests_running");
}
