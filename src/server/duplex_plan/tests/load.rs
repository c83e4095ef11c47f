//! `[server.load]` in the duplex plan: a response scheduled under load factor `f` has its
//! first delta `first_response_delay_ms * f` after the trigger and its deltas
//! `delta_ms * rtf * f` apart, and its stage metrics say so.

use super::*;

/// The dues of the response the 0.2 s append at 200 ms triggers, with load `f`, and its
/// last delta's stage metrics.
fn response_under(f: f64) -> (Vec<Duration>, Value) {
    let mut plan = plan_with(fast());
    plan.start();
    plan.set_load(f);
    plan.on_event(
        "input_audio_buffer.append",
        &append_event(6400, 6400, 0),
        ms(200),
    );
    let timeline = drain(&mut plan);
    let audio: Vec<&(Duration, Action)> = timeline
        .iter()
        .filter(|(_, a)| event(a)["type"] == "response.audio.delta")
        .collect();
    let stage = event(&audio.last().unwrap().1)["vllm_omni"]["stage_metrics"]["0"].clone();
    (audio.iter().map(|(d, _)| *d).collect(), stage)
}

#[test]
fn load_stretches_first_response_delay_and_delta_gaps() {
    for (f, first, gap) in [(1.0, 230.0, 2.0), (2.0, 260.0, 4.0), (3.5, 305.0, 7.0)] {
        let (dues, stage) = response_under(f);
        assert_eq!(dues.len(), 3);
        for (k, due) in dues.iter().enumerate() {
            let want = Duration::from_secs_f64((first + gap * k as f64) / 1000.0);
            assert!(
                due.abs_diff(want) < Duration::from_micros(10),
                "f {f} k {k}: {due:?}"
            );
        }
        assert!((stage["vllm_ttft_ms"].as_f64().unwrap() - 30.0 * f).abs() < 1e-9);
        assert!((stage["vllm_tpot_ms"].as_f64().unwrap() - gap).abs() < 1e-9);
    }
}

#[test]
fn a_load_below_one_is_no_speed_up() {
    assert_eq!(response_under(0.5).0, response_under(1.0).0);
}
