use proptest::strategy::Strategy;

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
fn an_even_cadence_costs_one_run_per_stream() {
    let mut log = UnitLog::default();
    let spoken: Vec<_> = (0..100).map(|k| unit(3, 0, 0.1 * k as f64, 0.02)).collect();
    let video: Vec<_> = (0..100)
        .map(|k| unit(0, k, 10.0 + 0.05 * k as f64, 0.05))
        .collect();
    for u in spoken.iter().chain(&video) {
        log.push(*u);
    }
    assert_eq!(log.run_count(), 2);
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
    /// Arrivals stamped as whole nanoseconds (kept as steps), negative, huge or
    /// fractional ones (kept whole) interleaved: every one comes back bit for bit.
    #[test]
    fn arrivals_come_back_bit_for_bit(
        raw in proptest::collection::vec(
            proptest::prop_oneof![
                4 => (0..700_000_000_000u64)
                    .prop_map(|n| std::time::Duration::from_nanos(n).as_secs_f64()),
                1 => proptest::num::f64::ANY,
                1 => proptest::prop_oneof![
                    proptest::strategy::Just(-0.0),
                    proptest::strategy::Just(4.0e9),
                    proptest::strategy::Just(1e-10)
                ],
            ],
            0..200,
        ),
    ) {
        let mut log = UnitLog::default();
        for (k, a) in raw.iter().enumerate() {
            log.push(unit(k as u64 / 3, 0, *a, 0.1));
        }
        let back: Vec<u64> = log.units().iter().map(|u| u.arrival_s.to_bits()).collect();
        let want: Vec<u64> = raw.iter().map(|a| a.to_bits()).collect();
        proptest::prop_assert_eq!(back, want);
    }

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

#[test]
fn arrivals_as_the_playback_role_stamps_them_cost_about_five_bytes() {
    // 1,000 responses of 5 units 100 ms apart, arrivals as whole nanoseconds since the
    // socket opened (what `Duration::as_secs_f64` gives), with a little jitter.
    let at = |ns: u64| std::time::Duration::from_nanos(ns).as_secs_f64();
    let mut pushed = Vec::new();
    for r in 0..1000u64 {
        for k in 0..5u64 {
            let ns = r * 1_000_000_000 + k * 100_000_000 + (r * 7919 + k * 104_729) % 1_000_003;
            pushed.push(unit(r + 1, 0, at(ns), 0.1));
        }
    }
    let mut log = UnitLog::default();
    for u in &pushed {
        log.push(*u);
    }
    assert_eq!(log.units(), pushed);
    let per_response = log.heap_bytes() as f64 / 1000.0;
    assert!(per_response <= 64.0, "{per_response} bytes per response");
}
