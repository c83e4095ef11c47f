//! `vllm bench serve` metrics: goodput vectors, TPOT and output-length rules,
//! percentiles, missing values, throughputs, option parsing, the saved-result JSON, the
//! terminal summary and the result file name.

use super::options::{GOODPUT_KEYS, GoodputKey, MetricsError};
use super::output::{json_as_f64, json_f64};
use super::*;

#[track_caller]
fn close(a: f64, b: f64) {
    assert!((a - b).abs() < 1e-9, "{a} vs {b}");
}

fn ok() -> RequestOutcome {
    RequestOutcome {
        success: true,
        latency_s: 1.0,
        has_text: true,
        ..RequestOutcome::default()
    }
}

fn duplex(ttft: Option<f64>, ttfp: Option<f64>) -> RequestOutcome {
    RequestOutcome {
        ttft_s: ttft,
        audio_ttfp_s: ttfp,
        has_duplex_session_metrics: true,
        ..ok()
    }
}

fn goodput(items: &[&str]) -> Goodput {
    parse_goodput(&items.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap()
}

fn run(outcomes: &[RequestOutcome], g: &Goodput) -> BenchMetrics {
    calculate(outcomes, 1.0, g, &Metric::ALL, &[99.0])
}

#[test]
fn goodput_vector_measured_plus_listen_only() {
    let measured = RequestOutcome {
        output_tokens: 1,
        ..duplex(Some(0.1), Some(0.2))
    };
    let listen = RequestOutcome {
        has_text: false,
        ..duplex(None, None)
    };
    let m = run(&[measured, listen], &goodput(&["ttft:150"]));
    assert_eq!(m.request_goodput, Some(1.0));
    assert_eq!(m.samples(Metric::Ttft), 1);
    close(m.aggregates[&Metric::Ttft].mean, 100.0);
}

#[test]
fn goodput_vector_text_only_plus_audio_only() {
    let text_only = duplex(Some(0.1), None);
    let audio_only = duplex(None, Some(0.1));
    let m = run(
        &[text_only, audio_only],
        &goodput(&["ttft:500", "audio_ttft:500"]),
    );
    assert_eq!(m.request_goodput, Some(0.0));
    assert_eq!(
        (m.samples(Metric::Ttft), m.samples(Metric::AudioTtfp)),
        (1, 1)
    );
}

#[test]
fn goodput_vector_missing_tpot_plus_slow_ttft() {
    let missing_tpot = RequestOutcome {
        output_tokens: 3,
        ttft_s: Some(0.1),
        ..ok()
    };
    let slow = RequestOutcome {
        output_tokens: 5,
        ttft_s: Some(1.0),
        itl_s: vec![0.1; 4],
        ..ok()
    };
    let m = run(&[missing_tpot, slow], &goodput(&["ttft:500", "tpot:200"]));
    assert_eq!(m.request_goodput, Some(0.0));
    assert_eq!(m.samples(Metric::Tpot), 1);
    close(m.aggregates[&Metric::Tpot].mean, 100.0);
}

#[test]
fn goodput_vector_measured_zero_tpot() {
    let zero = RequestOutcome {
        output_tokens: 3,
        ttft_s: Some(0.1),
        itl_s: vec![0.0, 0.0],
        ..ok()
    };
    assert_eq!(zero.tpot_s(), Some(0.0));
    let m = run(&[zero], &goodput(&["tpot:1"]));
    assert_eq!(m.request_goodput, Some(1.0));
    assert_eq!(m.aggregates[&Metric::Tpot].mean, 0.0);
}

#[test]
fn tpot_rules() {
    let base = RequestOutcome {
        output_tokens: 5,
        ttft_s: Some(0.1),
        ..ok()
    };
    // Text-latency path.
    let t = RequestOutcome {
        text_latency_s: Some(0.18),
        tpot_measured: true,
        ..base.clone()
    };
    close(t.tpot_s().unwrap(), 0.02);
    // Measured zero from the text-latency path.
    let t = RequestOutcome {
        text_latency_s: Some(0.1),
        tpot_measured: true,
        ..base.clone()
    };
    assert_eq!(t.tpot_s(), Some(0.0));
    // Not measured: missing, never zero.
    let t = RequestOutcome {
        text_latency_s: Some(0.18),
        tpot_measured: false,
        ..base.clone()
    };
    assert_eq!(t.tpot_s(), None);
    // Negative is not a sample.
    let t = RequestOutcome {
        text_latency_s: Some(0.05),
        tpot_measured: true,
        ..base.clone()
    };
    assert_eq!(t.tpot_s(), None);
    // One token: no TPOT.
    let t = RequestOutcome {
        output_tokens: 1,
        itl_s: vec![0.1],
        ..base
    };
    assert_eq!(t.tpot_s(), None);
}

#[test]
fn output_len_rule() {
    assert_eq!(
        RequestOutcome {
            output_tokens: 7,
            ..ok()
        }
        .output_len(),
        7
    );
    assert_eq!(
        RequestOutcome {
            has_text: false,
            ..ok()
        }
        .output_len(),
        0
    );
    assert_eq!(ok().output_len(), 1);
}

#[test]
fn percentile_linear_interpolation() {
    let s = [1.0, 2.0, 3.0, 4.0];
    close(percentile(&s, 50.0), 2.5);
    close(percentile(&s, 99.0), 3.97);
    close(percentile(&s, 0.0), 1.0);
    close(percentile(&s, 100.0), 4.0);
    close(percentile(&[5.0], 90.0), 5.0);
    let a = aggregate(
        &[0.001, 0.002, 0.003, 0.004],
        1000.0,
        f64::NAN,
        &[99.0, 50.0],
    );
    close(a.mean, 2.5);
    close(a.median, 2.5);
    close(a.std, 1.25f64.sqrt()); // population std
    close(a.percentiles[0].1, 3.97);
    assert_eq!(a.count, 4);
}

#[test]
fn missing_value_rules() {
    // Non-duplex run without TTFT samples reports 0 (upstream); TPOT is always NaN.
    let m = run(
        &[RequestOutcome {
            has_text: false,
            ..ok()
        }],
        &Goodput::default(),
    );
    assert_eq!(m.aggregates[&Metric::Ttft].mean, 0.0);
    assert_eq!(m.aggregates[&Metric::Itl].percentiles[0].1, 0.0);
    assert!(m.aggregates[&Metric::Tpot].mean.is_nan());
    assert!(m.aggregates[&Metric::Tpot].std.is_nan());
    assert_eq!(m.max_output_tokens_per_s, 0.0);
    // Duplex: TTFT/ITL/TTFP/RTF NaN; E2EL and audio duration still numbers.
    let m = run(&[duplex(None, None)], &Goodput::default());
    for metric in [
        Metric::Ttft,
        Metric::Itl,
        Metric::AudioTtfp,
        Metric::AudioRtf,
        Metric::Tpot,
    ] {
        assert!(m.aggregates[&metric].median.is_nan(), "{metric:?}");
    }
    close(m.aggregates[&Metric::E2el].mean, 1000.0);
    assert_eq!(m.aggregates[&Metric::AudioDuration].mean, 0.0);
    assert!(m.max_output_tokens_per_s.is_nan());
    // Failed requests contribute nothing.
    let failed = RequestOutcome {
        success: false,
        ttft_s: Some(9.0),
        ..ok()
    };
    let m = run(&[failed, ok()], &goodput(&["e2el:2000"]));
    assert_eq!((m.completed, m.failed, m.samples(Metric::Ttft)), (1, 1, 0));
    assert_eq!(m.output_lens, vec![0, 1]);
    assert_eq!(m.request_goodput, Some(1.0));
}

#[test]
fn throughputs_and_peaks() {
    let a = RequestOutcome {
        start_s: 0.0,
        latency_s: 2.5,
        ttft_s: Some(0.2),
        itl_s: vec![0.1, 0.1, 1.0],
        output_tokens: 4,
        prompt_len: 10,
        audio_duration_s: 1.5,
        audio_frames: 36_000,
        input_audio_duration_s: 3.0,
        ..ok()
    };
    let b = RequestOutcome {
        start_s: 1.2,
        latency_s: 1.0,
        ttft_s: Some(0.1),
        output_tokens: 2,
        prompt_len: 6,
        ..ok()
    };
    let m = calculate(&[a, b], 2.0, &Goodput::default(), &Metric::DEFAULT, &[99.0]);
    assert_eq!((m.total_input, m.total_output), (16, 6));
    close(m.request_throughput, 1.0);
    close(m.output_throughput, 3.0);
    close(m.total_token_throughput, 11.0);
    close(m.audio_throughput, 0.75);
    close(m.rtfx, 1.5);
    assert_eq!(m.request_goodput, None);
    // Tokens of a at 0.2, 0.3, 0.4, 1.4; b at 1.3 -> bucket 0 has 3.
    assert_eq!(m.max_output_tokens_per_s, 3.0);
    assert_eq!(m.max_concurrent_requests, 2);
    assert_eq!(m.samples(Metric::Itl), 3);
}

#[test]
fn goodput_parsing() {
    let g = goodput(&[
        "ttft:150",
        "audio_ttft:300",
        "audio_rtf:1",
        "itl:50",
        "ttfc:2000",
        "chunk_interval:75",
    ]);
    assert_eq!(g.slos.get(&GoodputKey::AudioTtfp), Some(&300.0));
    assert_eq!(g.slos.len(), 6);
    assert_eq!(goodput(&["ttft:1", "ttft:2"]).slos[&GoodputKey::Ttft], 2.0);
    let err = parse_goodput(&["bogus:5".into()]).unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("Invalid metric name found, bogus: 5.0."),
        "{msg}"
    );
    for key in GOODPUT_KEYS {
        assert!(msg.contains(&format!("'{key}'")), "{msg}");
    }
    assert!(matches!(
        parse_goodput(&["ttft".into()]),
        Err(MetricsError::GoodputFormat(_))
    ));
    assert!(matches!(
        parse_goodput(&["ttft:x".into()]),
        Err(MetricsError::GoodputFormat(_))
    ));
    assert!(matches!(
        parse_goodput(&["a:1:2".into()]),
        Err(MetricsError::GoodputFormat(_))
    ));
    let neg = parse_goodput(&["tpot:-1".into()]).unwrap_err().to_string();
    assert_eq!(
        neg,
        "Invalid value found, tpot: -1.0. The service level objective value should be non-negative."
    );
}

#[test]
fn goodput_itl_rtf_and_video_keys() {
    let o = RequestOutcome {
        itl_s: vec![0.01, 0.04],
        audio_rtf: Some(0.8),
        ..ok()
    };
    assert_eq!(
        run(
            std::slice::from_ref(&o),
            &goodput(&["itl:50", "audio_rtf:1"])
        )
        .request_goodput,
        Some(1.0)
    );
    assert_eq!(
        run(std::slice::from_ref(&o), &goodput(&["itl:30"])).request_goodput,
        Some(0.0)
    );
    assert_eq!(
        run(std::slice::from_ref(&o), &goodput(&["audio_rtf:0.5"])).request_goodput,
        Some(0.0)
    );
    // Missing video values are never good.
    assert_eq!(
        run(std::slice::from_ref(&o), &goodput(&["ttfc:1000"])).request_goodput,
        Some(0.0)
    );
    let v = RequestOutcome {
        ttfc_s: Some(0.5),
        chunk_intervals_s: vec![0.07, 0.06],
        ..o
    };
    assert_eq!(
        run(&[v], &goodput(&["ttfc:1000", "chunk_interval:75"])).request_goodput,
        Some(1.0)
    );
}

#[test]
fn metric_and_percentile_parsing() {
    assert_eq!(
        parse_metrics("ttft, tpot,audio_rtf").unwrap(),
        vec![Metric::Ttft, Metric::Tpot, Metric::AudioRtf]
    );
    assert!(
        parse_metrics("ttft,nope")
            .unwrap_err()
            .to_string()
            .contains("audio_underrun")
    );
    assert_eq!(
        parse_percentiles("50,90, 99.9").unwrap(),
        vec![50.0, 90.0, 99.9]
    );
    assert!(parse_percentiles("101").is_err());
    assert!(parse_percentiles("x").is_err());
}

#[test]
fn python_float_repr() {
    for (x, want) in [
        (1.0, "1.0"),
        (0.1, "0.1"),
        (100.0, "100.0"),
        (1e16, "1e+16"),
        (1.5e-5, "1.5e-05"),
        (0.0001, "0.0001"),
        (123456789.125, "123456789.125"),
        (-2.5, "-2.5"),
        (f64::INFINITY, "inf"),
        (f64::NAN, "nan"),
    ] {
        assert_eq!(py_float(x), want);
    }
    assert_eq!(p_word(99.0), "99");
    assert_eq!(p_word(99.9), "99.9");
}

fn duplex_run() -> BenchMetrics {
    let a = RequestOutcome {
        output_tokens: 5,
        itl_s: vec![0.01, 0.02, 0.03],
        audio_rtf: Some(2.0),
        ..duplex(Some(0.1), Some(0.3))
    };
    let listen = RequestOutcome {
        has_text: false,
        ..duplex(None, None)
    };
    calculate(
        &[a, listen],
        2.0,
        &goodput(&["ttft:150"]),
        &[Metric::Ttft, Metric::Tpot, Metric::AudioRtf, Metric::E2el],
        &[99.0, 99.9],
    )
}

#[test]
fn json_map_keys_and_nan() {
    let m = duplex_run();
    let j = m.to_json_map();
    for key in [
        "completed",
        "failed",
        "duration",
        "request_throughput",
        "request_goodput",
        "output_throughput",
        "total_token_throughput",
        "total_input_tokens",
        "total_output_tokens",
        "total_audio_duration_s",
        "total_audio_frames",
        "audio_throughput",
        "max_output_tokens_per_s",
        "max_concurrent_requests",
        "rtfx",
        "num_ttft_samples",
        "num_tpot_samples",
        "num_itl_samples",
        "num_audio_ttfp_samples",
        "num_audio_rtf_samples",
        "mean_ttft_ms",
        "median_ttft_ms",
        "std_ttft_ms",
        "p99_ttft_ms",
        "p99.9_ttft_ms",
        "mean_tpot_ms",
        "mean_audio_rtf",
        "p99_audio_rtf",
        "mean_e2el_ms",
    ] {
        assert!(j.contains_key(key), "missing {key}");
    }
    // Not selected, or selected without samples: absent.
    assert!(!j.contains_key("mean_itl_ms") && !j.contains_key("mean_audio_ttfp_ms"));
    assert_eq!(j["completed"], 2);
    assert_eq!(j["num_ttft_samples"], 1);
    assert_eq!(j["request_goodput"], 0.5);
    assert!(json_as_f64(&j["max_output_tokens_per_s"]).unwrap().is_nan());
    close(json_as_f64(&j["mean_tpot_ms"]).unwrap(), 20.0);
    let text = to_vllm_json_string(&j);
    assert!(text.contains("\"max_output_tokens_per_s\": NaN"), "{text}");
    assert!(text.contains("\"completed\": 2, "), "{text}");
    assert!(!text.contains("rtload:"), "{text}");
    // Without goodput: null.
    let plain = calculate(&[ok()], 1.0, &Goodput::default(), &[], &[]).to_json_map();
    assert_eq!(plain["request_goodput"], serde_json::Value::Null);
    assert_eq!(plain["num_tpot_samples"], 0);
}

#[test]
fn python_json_text() {
    let mut map = serde_json::Map::new();
    map.insert("a".into(), serde_json::json!([1, 2.5, 1e-5, null, true]));
    map.insert("b".into(), serde_json::json!({"x": "é\"\n😀"}));
    map.insert("c".into(), json_f64(f64::NEG_INFINITY));
    map.insert("d".into(), serde_json::json!(3.0));
    assert_eq!(
        to_vllm_json_string(&map),
        r#"{"a": [1, 2.5, 1e-05, null, true], "b": {"x": "\u00e9\"\n\ud83d\ude00"}, "c": -Infinity, "d": 3.0}"#
    );
}

#[test]
fn summary_layout() {
    let m = duplex_run();
    let text = render_summary(
        &m,
        &SummaryHeader {
            max_concurrency: Some(1),
            request_rate: f64::INFINITY,
        },
    );
    let want = "\
============ Serving Benchmark Result ============
Successful requests:                     2         
Failed requests:                         0         
Maximum request concurrency:             1         
Benchmark duration (s):                  2.00      
Total input tokens:                      0         
Total generated tokens:                  5         
Request throughput (req/s):              1.00      
Request goodput (req/s):                 0.50      
Output token throughput (tok/s):         2.50      
Peak concurrent requests:                2.00      
Total Token throughput (tok/s):          2.50      
---------------Time to First Token----------------
Mean TTFT (ms):                          100.00    
Median TTFT (ms):                        100.00    
P99 TTFT (ms):                           100.00    
P99.9 TTFT (ms):                         100.00    
-----Time per Output Token (excl. 1st token)------
Mean TPOT (ms):                          20.00     
Median TPOT (ms):                        20.00     
P99 TPOT (ms):                           20.00     
P99.9 TPOT (ms):                         20.00     
----------------End-to-end Latency----------------
Mean E2EL (ms):                          1000.00   
Median E2EL (ms):                        1000.00   
P99 E2EL (ms):                           1000.00   
P99.9 E2EL (ms):                         1000.00   
-----------------Real Time Factor-----------------
Mean AUDIO_RTF:                          2.00      
Median AUDIO_RTF:                        2.00      
P99 AUDIO_RTF:                           2.00      
P99.9 AUDIO_RTF:                         2.00      
==================================================
";
    assert_eq!(text, want);
    let rated = render_summary(
        &m,
        &SummaryHeader {
            max_concurrency: None,
            request_rate: 2.0,
        },
    );
    assert!(rated.contains("\nRequest rate configured (RPS):           2.00      \n"));
    assert!(!rated.contains("Maximum request concurrency"));
}

#[test]
fn result_filename() {
    assert_eq!(
        default_result_filename(
            "openai-realtime-duplex",
            f64::INFINITY,
            Some(2),
            "openbmb/MiniCPM-o-4_5",
            "20250102-030405"
        ),
        "openai-realtime-duplex-infqps-concurrency2-MiniCPM-o-4_5-20250102-030405.json"
    );
    assert_eq!(
        default_result_filename("mylabel", 2.0, None, "m", "20250102-030405"),
        "mylabel-2.0qps-m-20250102-030405.json"
    );
    assert_eq!(
        default_result_filename("x", 0.5, None, "a/b/c", "t"),
        "x-0.5qps-c-t.json"
    );
}
