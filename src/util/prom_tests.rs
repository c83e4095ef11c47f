//! The Prometheus text encoder and parser: gauges, counters and histograms, label
//! escaping round trips, vLLM-style series with comments skipped.

use super::*;

#[test]
fn gauges_counters_and_histograms_encode_in_the_text_format() {
    let mut h: Histogram<u64> = Histogram::new(3).unwrap();
    for us in [200, 800, 3_000, 70_000_000] {
        h.record(us).unwrap();
    }
    let mut e = Exposition::default();
    e.gauge(
        "rtload_sessions_active",
        "Sessions running now.",
        &[(&[("phase", "measured")], 3.0)],
    );
    e.counter("rtload_sessions_completed_total", "Done.", &[(&[], 7.0)]);
    e.histogram_ms("rtload_send_lateness_ms", "Lateness.", &[], &h, 70_004.0);
    let text = e.finish();
    assert!(
        text.contains("# TYPE rtload_sessions_active gauge\n"),
        "{text}"
    );
    assert!(
        text.contains("rtload_sessions_active{phase=\"measured\"} 3\n"),
        "{text}"
    );
    assert!(
        text.contains("rtload_sessions_completed_total 7\n"),
        "{text}"
    );
    assert!(
        text.contains("rtload_send_lateness_ms_bucket{le=\"0.25\"} 1\n"),
        "{text}"
    );
    assert!(
        text.contains("rtload_send_lateness_ms_bucket{le=\"1\"} 2\n"),
        "{text}"
    );
    assert!(
        text.contains("rtload_send_lateness_ms_bucket{le=\"5\"} 3\n"),
        "{text}"
    );
    assert!(
        text.contains("rtload_send_lateness_ms_bucket{le=\"60000\"} 3\n"),
        "{text}"
    );
    assert!(
        text.contains("rtload_send_lateness_ms_bucket{le=\"+Inf\"} 4\n"),
        "{text}"
    );
    assert!(
        text.contains("rtload_send_lateness_ms_sum 70004\n"),
        "{text}"
    );
    assert!(text.contains("rtload_send_lateness_ms_count 4\n"), "{text}");
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
