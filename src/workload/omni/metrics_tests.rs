//! Duplex per-response and session metrics: the worked example, row JSON, the mapping to
//! request outcomes, filtering, durations and the catalogue.

use super::*;
use crate::workload::omni::bench_metrics::{Goodput, Metric, calculate};
use crate::workload::omni::metrics::stream::{
    STREAM_RTF_ORIGIN, STREAM_TTFP_ORIGIN, STREAM_TTFT_ORIGIN,
};
use serde_json::json;

fn ev(at_s: f64, event: Value) -> (f64, Value) {
    (at_s, event)
}

fn created(at: f64, id: &str) -> (f64, Value) {
    ev(
        at,
        json!({"type": "response.created", "response": {"id": id}}),
    )
}

fn text(at: f64, id: &str, delta: &str) -> (f64, Value) {
    ev(
        at,
        json!({"type": "response.audio_transcript.delta", "response_id": id, "delta": delta}),
    )
}

fn audio(at: f64, id: &str, duration_ms: f64) -> (f64, Value) {
    ev(
        at,
        json!({"type": "response.audio.delta", "response_id": id, "delta": "AAAA",
               "format": "pcm16", "sample_rate_hz": 24000,
               "metadata": {"audio_duration_ms": duration_ms}}),
    )
}

fn done(at: f64, id: &str, stage0: Value) -> (f64, Value) {
    ev(
        at,
        json!({"type": "response.done", "response": {"id": id, "status": "completed",
               "metadata": {"stage_metrics": {"0": stage0}}}}),
    )
}

/// §5.2 worked example (r1/r2 with stage-0 tokens 3 and 2).
fn worked_example() -> Vec<(f64, Value)> {
    vec![
        created(10.1, "r1"),
        text(10.2, "r1", "Hi"),
        audio(10.3, "r1", 100.0),
        done(
            10.4,
            "r1",
            json!({"num_tokens_out": 3, "vllm_ttft_ms": 5, "vllm_itls_ms": [10, 20]}),
        ),
        created(12.1, "r2"),
        text(12.2, "r2", "there"),
        audio(12.5, "r2", 200.0),
        done(
            12.6,
            "r2",
            json!({"num_tokens_out": 2, "vllm_itls_ms": [30]}),
        ),
    ]
}

#[track_caller]
fn close(a: f64, b: f64) {
    assert!((a - b).abs() < 1e-9, "{a} vs {b}");
}

#[test]
fn worked_example_rows_and_summary() {
    let m = duplex_metrics(&worked_example(), 10.0, Some("s1"));
    assert_eq!(m.rows.len(), 2);
    let r1 = m.rows[0].request_metrics.as_ref().unwrap();
    assert_eq!(
        (r1.ttft_ms, r1.ttfp_ms, r1.audio_generation_ms),
        (Some(100.0), 200.0, 200.0)
    );
    assert_eq!((r1.audio_duration_ms, r1.rtf), (100.0, Some(2.0)));
    let r2 = m.rows[1].request_metrics.as_ref().unwrap();
    assert_eq!(
        (r2.ttft_ms, r2.ttfp_ms, r2.audio_generation_ms),
        (Some(100.0), 400.0, 400.0)
    );
    assert_eq!((r2.audio_duration_ms, r2.rtf), (200.0, Some(2.0)));
    assert_eq!((m.rows[0].request_index, m.rows[1].request_index), (0, 1));
    let s = &m.summary;
    assert_eq!(s.audio_turn_count, 2);
    assert_eq!(
        (s.mean_ttft_ms, s.mean_ttfp_ms, s.mean_rtf),
        (Some(100.0), Some(300.0), Some(2.0))
    );
    assert_eq!(m.output_tokens, 5);
}

#[test]
fn row_json_shape() {
    let m = duplex_metrics(&worked_example(), 10.0, Some("s1"));
    let v = serde_json::to_value(&m.rows[0]).unwrap();
    assert_eq!(v["session_id"], "s1");
    assert_eq!(v["response_id"], "r1");
    assert_eq!(v["source"], SOURCE);
    assert_eq!(v["measurement_origin"]["ttft"], TTFT_ORIGIN);
    assert_eq!(v["ttfp_ms"], 200.0);
    assert_eq!(v["stage0_tokens"]["output_token_count"], 3);
    assert_eq!(v["stage0_tokens"]["itls_ms"], json!([10.0, 20.0]));
    assert_eq!(v["stage0_tokens"]["inter_token_interval_ms"]["p95"], 20.0);
    let s = serde_json::to_value(&m.summary).unwrap();
    // The seed-era means stay; vLLM-Omni 0.30.0's distributions and stream window follow.
    assert_eq!(
        s,
        json!({"session_id": "s1", "audio_turn_count": 2, "mean_ttft_ms": 100.0,
               "mean_ttfp_ms": 300.0, "mean_rtf": 2.0,
               "ttft_ms": {"count": 2, "mean": 100.0, "p50": 100.0, "p99": 100.0},
               "ttfp_ms": {"count": 2, "mean": 300.0, "p50": 200.0, "p99": 400.0},
               "rtf": {"count": 2, "mean": 2.0, "p50": 2.0, "p99": 2.0},
               "stages": {"0": {"ttft_ms": {"count": 2, "mean": 2.5, "p50": 0.0, "p99": 5.0}}},
               "stream_ttft_ms": 200.0, "stream_ttfp_ms": 300.0, "stream_rtf": 8.333333,
               "stream_audio_generation_ms": 2500.0, "stream_audio_duration_ms": 300.0,
               "stream_measurement_origin": {"ttft": STREAM_TTFT_ORIGIN,
                   "ttfp": STREAM_TTFP_ORIGIN, "rtf": STREAM_RTF_ORIGIN}})
    );
}

#[test]
fn rows_carry_the_0_30_keys() {
    let m = duplex_metrics(&worked_example(), 10.0, Some("s1"));
    let v = serde_json::to_value(&m.rows[0]).unwrap();
    assert_eq!(v["measurement_origin"]["tpot"], TPOT_ORIGIN);
    assert_eq!(v["measurement_origin"]["rtf"], RTF_ORIGIN);
    // Stage 0 without `vllm_tpot_ms`: the key is there, null (as 0.30.0 writes it).
    assert_eq!(v.get("tpot_ms"), Some(&Value::Null));
    assert_eq!(v["audio_underrun_s"], 0.0);
    assert_eq!(v["audio_underrun_event_count"], 0);
    assert_eq!(v["audio_continuity_ok"], true);
}

#[test]
fn session_tpot_is_over_positive_row_values_only() {
    let mut evs = worked_example();
    evs[3] = done(
        10.4,
        "r1",
        json!({"num_tokens_out": 3, "vllm_tpot_ms": 12.5}),
    );
    evs[7] = done(12.6, "r2", json!({"num_tokens_out": 2, "vllm_tpot_ms": 0}));
    let m = duplex_metrics(&evs, 10.0, None);
    assert_eq!(
        m.rows[0].request_metrics.as_ref().unwrap().tpot_ms,
        Some(Some(12.5))
    );
    assert_eq!(
        m.rows[1].request_metrics.as_ref().unwrap().tpot_ms,
        Some(Some(0.0))
    );
    let t = m.summary.tpot_ms.unwrap();
    assert_eq!((t.count, t.mean), (1, 12.5));
}

#[test]
fn stream_window_spans_every_created_response_after_the_start() {
    // Audio before the stream start does not count; a response without metadata falls
    // back to its decoded bytes (3 bytes of "AAAA" at 24 kHz = 0.0625 ms; 300.0625 is
    // exact in binary, so it rounds half to even, as Python's `round`).
    let mut evs = worked_example();
    evs.insert(0, audio(9.0, "r1", 5000.0));
    evs.push(created(13.0, "r3"));
    evs.push(ev(
        13.5,
        json!({"type": "response.audio.delta", "response_id": "r3", "delta": "AAAA"}),
    ));
    let w = duplex_metrics(&evs, 10.0, None).summary.stream.unwrap();
    assert_eq!((w.stream_ttft_ms, w.stream_ttfp_ms), (Some(200.0), 300.0));
    assert_eq!(w.stream_audio_generation_ms, 3500.0);
    assert_eq!(w.stream_audio_duration_ms, 300.062);
    assert_eq!(w.stream_rtf, Some(round_dp(3500.0 / 300.062, 6)));
    // No audio after the start: no window (the keys are absent, not zero).
    let none = duplex_metrics(&worked_example(), 20.0, None).summary;
    assert!(none.stream.is_none());
    let v = serde_json::to_value(&none).unwrap();
    assert!(v.get("stream_ttfp_ms").is_none() && v["ttfp_ms"].is_null());
}

#[test]
fn distribution_summary_is_nearest_rank() {
    let d = distribution_summary(&[4.0, 1.0, 3.0, 2.0, f64::NAN], 3).unwrap();
    assert_eq!((d.count, d.mean, d.p50, d.p99), (4, 2.5, 2.0, 4.0));
    assert!(distribution_summary(&[f64::INFINITY], 3).is_none());
    assert_eq!(
        distribution_summary(&[1.0 / 3.0], 6).unwrap().mean,
        0.333333
    );
}

#[test]
fn run_stream_summaries_skip_missing_and_negative_values() {
    let a = duplex_metrics(&worked_example(), 10.0, None).summary;
    let b = duplex_metrics(&worked_example(), 20.0, None).summary;
    let mut c = a.clone();
    if let Some(w) = c.stream.as_mut() {
        w.stream_ttft_ms = None;
        w.stream_ttfp_ms = -1.0;
    }
    let got = duplex_stream_metrics([&a, &b, &c]);
    let keys: Vec<&str> = got.iter().map(|(k, _)| *k).collect();
    assert_eq!(
        keys,
        [
            "duplex_stream_ttft_ms",
            "duplex_stream_ttfp_ms",
            "duplex_stream_rtf"
        ]
    );
    assert_eq!((got[0].1.count, got[1].1.count, got[2].1.count), (1, 1, 2));
    assert!(duplex_stream_metrics([&b]).is_empty());
}

#[test]
fn request_mapping_and_projection() {
    let m = duplex_metrics(&worked_example(), 10.0, Some("s1"));
    let case = CaseOutcome {
        success: true,
        start_s: 0.0,
        latency_s: 20.0,
        transcript: "Hi there",
        audio_bytes: 48_000,
        prompt_len: 0,
    };
    let o = request_outcome(&case, &m);
    close(o.ttft_s.unwrap(), 0.1);
    close(o.audio_ttfp_s.unwrap(), 0.3);
    close(o.audio_rtf.unwrap(), 2.0);
    close(o.audio_duration_s, 1.0);
    assert_eq!((o.audio_frames, o.output_tokens), (24_000, 5));
    assert!(o.has_duplex_session_metrics && o.tpot_measured);
    assert_eq!(o.itl_s.len(), 3);
    close(o.text_latency_s.unwrap(), 0.16);
    close(o.tpot_s().unwrap(), 0.02);
}

#[test]
fn listen_only_session_has_no_rows_and_missing_means() {
    let events = vec![ev(
        10.5,
        json!({"type": "response.listen", "response": {"metadata": {"model_listen": true}}}),
    )];
    let m = duplex_metrics(&events, 10.0, None);
    assert!(m.rows.is_empty());
    assert_eq!(m.summary.audio_turn_count, 0);
    assert_eq!(
        (
            m.summary.mean_ttft_ms,
            m.summary.mean_ttfp_ms,
            m.summary.mean_rtf
        ),
        (None, None, None)
    );
    let case = CaseOutcome {
        success: true,
        start_s: 0.0,
        latency_s: 5.0,
        transcript: "",
        audio_bytes: 0,
        prompt_len: 0,
    };
    let o = request_outcome(&case, &m);
    assert_eq!((o.ttft_s, o.audio_ttfp_s, o.audio_rtf), (None, None, None));
    assert_eq!(o.output_len(), 0);
    let bm = calculate(&[o], 1.0, &Goodput::default(), &Metric::ALL, &[99.0]);
    assert_eq!(bm.samples(Metric::Ttft), 0);
    assert!(bm.aggregates[&Metric::Ttft].mean.is_nan());
    assert!(bm.aggregates[&Metric::AudioRtf].mean.is_nan());
    assert!(bm.max_output_tokens_per_s.is_nan());
}

#[test]
fn filters_by_stream_start_and_response_id() {
    let events = vec![
        text(9.0, "r1", "early"),
        created(10.1, "r1"),
        text(10.15, "other", "x"),
        text(10.2, "r1", ""),
        text(10.25, "r1", "ok"),
        audio(10.3, "r1", 50.0),
        audio(10.6, "r1", 40.0),
    ];
    let m = duplex_metrics(&events, 10.0, None);
    let r = m.rows[0].request_metrics.as_ref().unwrap();
    assert_eq!(r.ttft_ms, Some(150.0));
    assert_eq!(r.audio_generation_ms, 500.0);
    assert_eq!(
        r.audio_duration_ms, 50.0,
        "max of cumulative metadata, not the last"
    );
    assert_eq!(r.rtf, Some(10.0));
    assert_eq!(m.rows[0].stage0_tokens, None);
    let v = serde_json::to_value(&m.rows[0]).unwrap();
    assert!(v.get("stage0_tokens").is_none());
}

#[test]
fn rows_need_created_and_audio_or_stage0() {
    let events = vec![
        created(10.1, "a"), // text only: no row
        text(10.2, "a", "hello"),
        created(10.3, "b"), // stage-0 only: row without request metrics
        done(10.4, "b", json!({"num_tokens_out": 4})),
        audio(10.5, "c", 10.0), // audio without response.created: no row
    ];
    let m = duplex_metrics(&events, 10.0, Some("s"));
    assert_eq!(m.rows.len(), 1);
    assert_eq!(
        (m.rows[0].response_id.as_str(), m.rows[0].request_index),
        ("b", 1)
    );
    assert!(m.rows[0].request_metrics.is_none());
    assert_eq!(m.summary.audio_turn_count, 1);
    assert_eq!(m.summary.mean_ttfp_ms, None);
    assert_eq!(m.output_tokens, 4);
    let v = serde_json::to_value(&m.rows[0]).unwrap();
    assert!(v.get("ttfp_ms").is_none());
}

#[test]
fn duration_from_decoded_bytes_and_aliases() {
    // 4800 bytes of PCM16 at 24 kHz = 100 ms; no metadata durations.
    let b64 = base64::engine::general_purpose::STANDARD.encode(vec![0u8; 4800]);
    let events = vec![
        created(1.0, "r"),
        ev(
            1.05,
            json!({"type": "response.output_audio_transcript.delta", "response_id": "r", "delta": "t"}),
        ),
        ev(
            1.1,
            json!({"type": "response.output_audio.delta", "response_id": "r", "audio": b64, "sample_rate_hz": 24000}),
        ),
        ev(
            1.2,
            json!({"type": "response.audio.delta", "response_id": "r", "delta": "!!notbase64"}),
        ),
    ];
    let m = duplex_metrics(&events, 0.0, None);
    let r = m.rows[0].request_metrics.as_ref().unwrap();
    assert_eq!(r.ttft_ms, Some(50.0));
    assert_eq!(r.audio_duration_ms, 100.0);
    assert_eq!(r.audio_generation_ms, 200.0);
    assert_eq!(r.rtf, Some(2.0));
}

#[test]
fn zero_duration_gives_null_rtf_and_summary_skips_it() {
    let events = vec![
        created(1.0, "r"),
        ev(
            1.1,
            json!({"type": "response.audio.delta", "response_id": "r", "delta": "AAAA",
                       "metadata": {"audio_duration_ms": 0}}),
        ),
    ];
    let m = duplex_metrics(&events, 0.0, None);
    let r = m.rows[0].request_metrics.as_ref().unwrap();
    assert_eq!((r.rtf, r.ttft_ms), (None, None));
    assert_eq!(m.summary.mean_rtf, None);
    assert_eq!(m.summary.mean_ttfp_ms, Some(100.0));
    let v = serde_json::to_value(r).unwrap();
    assert_eq!(
        (v["rtf"].clone(), v["ttft_ms"].clone()),
        (Value::Null, Value::Null)
    );
}

#[test]
fn response_id_rule() {
    assert_eq!(
        response_id(&json!({"response_id": "a", "response": {"id": "b"}})),
        Some("a")
    );
    assert_eq!(
        response_id(&json!({"response_id": 5, "response": {"id": "b"}})),
        Some("b")
    );
    assert_eq!(response_id(&json!({"response": {"id": 1}})), None);
}

#[test]
fn the_catalogue_declares_every_reported_name() {
    use crate::workload::catalogue::Direction;
    let cat = crate::workload::omni::report::catalogue(&[50.0, 99.0]);
    cat.check(crate::workload::omni::report::FAMILIES)
        .expect("every duplex metric declared");
    assert_eq!(cat.direction("audio_ttfp_ms.p99"), Direction::Lower);
    assert_eq!(cat.direction("request_throughput"), Direction::Higher);
    assert_eq!(cat.direction("ttft_ms.count"), Direction::NotAScore);
    assert_eq!(cat.headline()[0], "ttft_ms.p99");
}
