use super::*;

fn unit(stream: u64, index: u64, arrival_s: f64, duration_s: f64) -> PlayUnit {
    PlayUnit {
        stream,
        index,
        arrival_s,
        duration_s,
    }
}

#[test]
fn an_even_cadence_costs_one_header_per_stream_and_8_bytes_per_unit() {
    let mut log = UnitLog::default();
    let spoken: Vec<_> = (0..100).map(|k| unit(3, 0, 0.1 * k as f64, 0.02)).collect();
    let video: Vec<_> = (0..100)
        .map(|k| unit(0, k, 10.0 + 0.05 * k as f64, 0.05))
        .collect();
    for u in spoken.iter().chain(&video) {
        log.push(*u);
    }
    assert_eq!(log.runs.len(), 2);
    assert!(matches!(&log.durations, Durations::Runs(r) if r.len() == 2));
    assert_eq!(log.len(), 200);
    assert_eq!(log.units(), [spoken, video].concat());
}

#[test]
fn durations_that_keep_changing_are_kept_one_per_unit() {
    let mut log = UnitLog::default();
    let pushed: Vec<_> = (0..100)
        .map(|k| unit(0, k, k as f64, (k % 2) as f64))
        .collect();
    for u in &pushed {
        log.push(*u);
    }
    assert!(matches!(&log.durations, Durations::Each(e) if e.len() == 100));
    assert_eq!(log.units(), pushed);
}

proptest::proptest! {
    /// Whatever the streams, indices (out of order, repeated, huge) and durations
    /// (repeated or changing), the log gives back exactly what was pushed.
    #[test]
    fn gives_back_exactly_what_was_pushed(
        raw in proptest::collection::vec(
            (
                0..4u64,
                proptest::prop_oneof![0..8u64, proptest::num::u64::ANY],
                0.0..1e4f64,
                proptest::prop_oneof![3 => proptest::strategy::Just(0.02), 1 => 0.0..1.0f64],
            ),
            0..300,
        ),
    ) {
        let pushed: Vec<_> = raw.iter().map(|&(s, i, a, d)| unit(s, i, a, d)).collect();
        let mut log = UnitLog::default();
        for u in &pushed {
            log.push(*u);
        }
        proptest::prop_assert_eq!(log.is_empty(), pushed.is_empty());
        proptest::prop_assert_eq!(log.units(), pushed);
    }
}
