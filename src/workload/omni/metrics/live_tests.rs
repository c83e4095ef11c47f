use proptest::prelude::*;
use serde_json::{Value, json};

use super::LiveTtfp;
use crate::workload::omni::metrics::{response_rows, session_summary};

/// One random event: a kind, a response among three, a payload choice.
fn event(kind: u8, rid: u8, payload: u8) -> Value {
    let id = format!("r{rid}");
    let delta = ["", "AAAA", "AA=="][payload as usize % 3];
    let bytes = [0, 4800][payload as usize % 2];
    match kind % 5 {
        0 => json!({"type": "response.created", "response": {"id": id}}),
        1 => json!({"type": "response.audio.delta", "response_id": id, "delta": delta}),
        2 => {
            json!({"type": "response.output_audio.delta", "response_id": id, "audio_bytes": bytes})
        }
        3 => {
            json!({"type": "response.audio_transcript.delta", "response_id": id, "delta": "hi"})
        }
        _ => json!({"type": "response.done", "response": {"id": id}}),
    }
}

proptest! {
    /// Random sessions (events out of order, duplicates, empty audio, events before
    /// the stream start): the live mean equals the report's, to the bit.
    #[test]
    fn live_mean_equals_the_report(
        evs in prop::collection::vec((any::<u8>(), 0u8..3, any::<u8>(), 1u32..400), 0..40),
        start_s in 0.0f64..3.0,
    ) {
        let mut at_s = 0.0;
        let mut timed = Vec::new();
        let mut live = LiveTtfp::default();
        for (kind, rid, payload, gap_ms) in evs {
            at_s += f64::from(gap_ms) / 1000.0;
            let ev = event(kind, rid, payload);
            live.observe(at_s, &ev, at_s >= start_s);
            timed.push((at_s, ev));
        }
        let rows = response_rows(&timed, start_s, None);
        let want = session_summary(&rows, None).mean_ttfp_ms;
        prop_assert_eq!(live.mean_ms().map(f64::to_bits), want.map(f64::to_bits));
    }
}

proptest! {
    /// Longer sessions over a dozen responses, the means compared after every event: the
    /// running sum and the responses waiting on an earlier one give the report's mean.
    #[test]
    fn live_mean_equals_the_report_at_every_step(
        evs in prop::collection::vec((any::<u8>(), 0u8..12, any::<u8>(), 1u32..400), 0..120),
        start_s in 0.0f64..3.0,
    ) {
        let mut at_s = 0.0;
        let mut timed = Vec::new();
        let mut live = LiveTtfp::default();
        for (kind, rid, payload, gap_ms) in evs {
            at_s += f64::from(gap_ms) / 1000.0;
            let ev = event(kind, rid, payload);
            live.observe(at_s, &ev, at_s >= start_s);
            timed.push((at_s, ev));
            let want = session_summary(&response_rows(&timed, start_s, None), None).mean_ttfp_ms;
            prop_assert_eq!(live.mean_ms().map(f64::to_bits), want.map(f64::to_bits));
        }
    }
}

#[test]
fn responses_known_out_of_order_still_sum_in_creation_order() {
    let created = |id: &str| json!({"type": "response.created", "response": {"id": id}});
    let audio =
        |id: &str| json!({"type": "response.audio.delta", "response_id": id, "delta": "AAAA"});
    // TTFPs whose float sum depends on the order: summed in creation order the mean
    // rounds to 3.541 ms; in the order they become known (b, c, d, then a: the
    // first created has the slowest first packet) to 3.542.
    let ttfp_ms = [13.792, 0.247, 0.103, 0.024];
    let ids = ["a", "b", "c", "d"];
    let mut timed = Vec::new();
    for (k, id) in ids.iter().enumerate() {
        let at_s = k as f64 / 1000.0;
        timed.push((at_s, created(id)));
        timed.push((at_s + ttfp_ms[k] / 1000.0, audio(id)));
    }
    timed.sort_by(|a, b| a.0.total_cmp(&b.0));
    timed.push((1.0, audio("a")));
    timed.push((1.1, created("b")));
    let mut live = LiveTtfp::default();
    for (at_s, ev) in &timed {
        live.observe(*at_s, ev, true);
    }
    let want = session_summary(&response_rows(&timed, 0.0, None), None).mean_ttfp_ms;
    assert_eq!(want, Some(3.541));
    assert_eq!(live.mean_ms(), want);
    assert!(live.open.is_empty(), "nothing kept for a known response");
    assert_eq!(
        live.known_count(),
        4,
        "a second create or audio adds nothing"
    );
    assert!(
        live.waiting.is_empty(),
        "all four summed once the first was known"
    );
}

proptest! {
    /// A long session that lets its older responses go (as a session's window does),
    /// some of them created without any audio: the mean is still the report's at every
    /// step, and what is kept stays bounded by the window instead of growing with every
    /// response (a response without a TTFP no longer holds every later one waiting).
    #[test]
    fn letting_responses_go_keeps_the_mean_and_bounds_what_is_kept(
        resps in prop::collection::vec((any::<bool>(), 1u32..900), 1..80),
        window in 1u32..6,
    ) {
        let (mut at_s, mut timed, mut live) = (0.0, Vec::new(), LiveTtfp::default());
        for (k, (audio, ms)) in (0u32..).zip(resps) {
            let id = format!("r{k}");
            let mut evs = vec![json!({"type": "response.created", "response": {"id": id}})];
            if audio {
                evs.push(json!({"type": "response.output_audio.delta", "response_id": id,
                                "audio_bytes": 4800}));
            }
            evs.push(json!({"type": "response.done", "response": {"id": id}}));
            for ev in evs {
                at_s += f64::from(ms) / 1000.0;
                live.observe(at_s, &ev, true);
                timed.push((at_s, ev));
            }
            live.let_go_below((k + 1).saturating_sub(window));
            let rows = response_rows(&timed, 0.0, None);
            let want = session_summary(&rows, None).mean_ttfp_ms;
            prop_assert_eq!(live.mean_ms().map(f64::to_bits), want.map(f64::to_bits));
            prop_assert!(live.created.len() <= window as usize);
            prop_assert!(live.waiting.len() <= window as usize && live.open.len() <= window as usize);
        }
    }
}
