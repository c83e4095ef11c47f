//! Step windows: each step's own refusals, the failures inside it, the sessions it
//! held, and the values taken within it.

use super::*;

const STEPS: Steps = Steps {
    sessions: 2,
    every_s: 10.0,
};

fn sample(order: usize, started_s: f64, ended_s: f64, class: Class) -> StepSample {
    StepSample {
        order,
        scheduled_s: 1.0 + 10.0 * (order / 2) as f64,
        started_s,
        ended_s,
        class: Some(class),
    }
}

#[test]
fn each_window_holds_its_own_refusals_failures_sessions_and_values() {
    // Steps released at 1, 11, 21; sessions held to 31. At the third step one session
    // is refused and one fails at 25.
    let samples = [
        sample(0, 1.0, 31.0, Class::Good),
        sample(1, 1.0, 31.0, Class::Degraded),
        sample(2, 11.0, 31.0, Class::Good),
        sample(3, 11.0, 31.0, Class::Good),
        sample(4, 21.0, 21.0, Class::Rejected),
        sample(5, 21.0, 25.0, Class::Failed),
    ];
    let mut rec = Recorded::default();
    for (at, v) in [(2.0, 100.0), (12.0, 150.0), (13.0, 170.0), (22.0, 400.0)] {
        rec.push("ttfp_ms", at, v);
    }
    rec.push("ttfp_ms", 31.0, 999.0); // after the last step: in no window
    let w = windows(STEPS, &samples, &rec);
    assert_eq!(w.len(), 3);
    assert_eq!(
        w.iter().map(|w| (w.from_s, w.to_s)).collect::<Vec<_>>(),
        [(1.0, 11.0), (11.0, 21.0), (21.0, 31.0)]
    );
    assert_eq!(w.iter().map(|w| w.sessions).collect::<Vec<_>>(), [2, 4, 6]);
    assert_eq!(w.iter().map(|w| w.peak).collect::<Vec<_>>(), [2, 4, 5]);
    let c = w[2].classes;
    assert_eq!((c.good, c.degraded, c.rejected, c.failed), (4, 0, 1, 1));
    assert_eq!((w[0].classes.good, w[0].classes.failed), (2, 0));
    assert_eq!(w[0].metrics["ttfp_ms.count"], 1.0);
    assert_eq!(w[1].metrics["ttfp_ms.max"], 170.0);
    assert_eq!(w[2].metrics["ttfp_ms.max"], 400.0);
    assert_eq!(w[2].metrics["ttfp_ms.count"], 1.0);
}

#[test]
fn a_window_without_values_has_no_statistics_never_zeros() {
    let samples = [sample(0, 1.0, 11.0, Class::Good)];
    let mut rec = Recorded::default();
    rec.declare("ttfp_ms", "ms");
    let w = windows(STEPS, &samples, &rec);
    assert_eq!(w.len(), 1);
    assert_eq!((w[0].from_s, w[0].to_s), (1.0, 11.0));
    assert!(w[0].metrics.is_empty(), "{:?}", w[0].metrics);
}
