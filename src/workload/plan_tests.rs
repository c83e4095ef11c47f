//! Tests for the arrival plan: §5.1 worked vectors, validation messages, deterministic
//! statistics for fixed seeds, RPS change events and the `rtload check` summary line.

use super::*;

const EPS: f64 = 1e-9;

#[track_caller]
fn check_close(got: &[f64], want: &[f64]) {
    assert_eq!(got.len(), want.len(), "length: got {got:?}, want {want:?}");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!((g - w).abs() < EPS, "index {i}: got {got:?}, want {want:?}");
    }
}

fn fixed(rate: f64, burstiness: f64, seed: u64) -> ArrivalSpec {
    ArrivalSpec {
        request_rate: Some(rate),
        burstiness,
        ramp_up: None,
        seed,
        steps: None,
    }
}

fn ramped(strategy: RampStrategy, start_rps: f64, end_rps: f64, burstiness: f64) -> ArrivalSpec {
    ArrivalSpec {
        request_rate: None,
        burstiness,
        ramp_up: Some(RampUp {
            strategy,
            start_rps,
            end_rps,
        }),
        seed: 0,
        steps: None,
    }
}

/// Gaps between releases (the first gap is the first offset).
fn gaps_of(offsets: &[f64]) -> Vec<f64> {
    let mut prev = 0.0;
    offsets
        .iter()
        .map(|&o| {
            let g = o - prev;
            prev = o;
            g
        })
        .collect()
}

fn mean_cv(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n;
    (mean, var.sqrt() / mean)
}

#[track_caller]
fn check_err(spec: &ArrivalSpec, want: &str) {
    let err = validate(spec).expect_err("spec should be rejected");
    assert_eq!(err.to_string(), want);
    let from_plan = plan(3, spec).expect_err("plan should be rejected");
    assert_eq!(from_plan.to_string(), want);
}

#[test]
fn spec_vector_rescale() {
    let got = plan_from_gaps(&[0.3, 0.6, 0.2, 0.5], 4, Some(2.0), false);
    check_close(&got, &[0.375, 1.125, 1.375, 2.0]);
}

#[test]
fn plan_from_gaps_edge_cases() {
    // Ramped: cumulative sums only, no rescale.
    check_close(
        &plan_from_gaps(&[0.3, 0.6, 0.2, 0.5], 4, None, true),
        &[0.3, 0.9, 1.1, 1.6],
    );
    // Rate inf: zeros whatever the gaps.
    check_close(&plan_from_gaps(&[0.3, 0.6], 2, None, false), &[0.0, 0.0]);
    // Last sum 0: no rescale (no division by zero).
    check_close(
        &plan_from_gaps(&[0.0, 0.0], 2, Some(2.0), false),
        &[0.0, 0.0],
    );
    // Missing gaps count as 0; extra gaps are ignored.
    check_close(&plan_from_gaps(&[1.0], 3, None, true), &[1.0, 1.0, 1.0]);
    check_close(
        &plan_from_gaps(&[1.0, 1.0, 9.0], 2, None, true),
        &[1.0, 2.0],
    );
    assert!(plan_from_gaps(&[], 0, Some(1.0), false).is_empty());
}

#[test]
fn spec_vectors_ramp_rates() {
    let linear = RampUp {
        strategy: RampStrategy::Linear,
        start_rps: 1.0,
        end_rps: 5.0,
    };
    check_close(&ramp_rates(5, &linear), &[1.0, 2.0, 3.0, 4.0, 5.0]);
    let exponential = RampUp {
        strategy: RampStrategy::Exponential,
        start_rps: 1.0,
        end_rps: 16.0,
    };
    check_close(&ramp_rates(5, &exponential), &[1.0, 2.0, 4.0, 8.0, 16.0]);
    // max(N−1, 1): a single request gets the start rate.
    check_close(&ramp_rates(1, &linear), &[1.0]);
    assert!(ramp_rates(0, &linear).is_empty());
}

#[test]
fn rate_inf_releases_everything_at_zero() {
    let p = plan(3, &ArrivalSpec::default()).expect("valid");
    check_close(&p.offsets_s, &[0.0, 0.0, 0.0]);
    assert!(p.rates_rps.iter().all(|r| r.is_infinite()));
    assert!(p.rps_change_events.is_empty());
    assert_eq!(summary(&p), "all at t=0 (rate inf), 3 releases");
}

#[test]
fn poisson_gaps_have_mean_one_over_rate_and_cv_one() {
    let n = 2000;
    let p = plan(n, &fixed(2.0, 1.0, 7)).expect("valid");
    assert_eq!(p.offsets_s.len(), n);
    assert_eq!(*p.offsets_s.last().expect("non-empty"), n as f64 / 2.0);
    assert!(p.offsets_s.windows(2).all(|w| w[0] <= w[1]), "monotone");
    let (mean, cv) = mean_cv(&gaps_of(&p.offsets_s));
    assert!((mean - 0.5).abs() < EPS, "mean {mean}");
    assert!((cv - 1.0).abs() < 0.1, "cv {cv}");
    assert!(p.rps_change_events.is_empty());
}

#[test]
fn burstiness_four_gives_cv_one_half() {
    let p = plan(2000, &fixed(2.0, 4.0, 7)).expect("valid");
    let (mean, cv) = mean_cv(&gaps_of(&p.offsets_s));
    assert!((mean - 0.5).abs() < EPS, "mean {mean}");
    assert!((cv - 0.5).abs() < 0.05, "cv {cv}");
}

#[test]
fn burstiness_inf_gives_constant_gaps() {
    let p = plan(16, &fixed(2.0, f64::INFINITY, 7)).expect("valid");
    let want: Vec<f64> = (1..=16).map(|i| i as f64 * 0.5).collect();
    check_close(&p.offsets_s, &want);
    assert_eq!(summary(&p), "constant 2.0 rps, 16 releases over 8.00 s");
}

#[test]
fn same_seed_same_plan_other_seed_other_plan() {
    let a = plan(50, &fixed(3.0, 1.0, 1)).expect("valid");
    let b = plan(50, &fixed(3.0, 1.0, 1)).expect("valid");
    let c = plan(50, &fixed(3.0, 1.0, 2)).expect("valid");
    assert_eq!(a, b);
    assert_ne!(a.offsets_s, c.offsets_s);
}

#[test]
fn single_request_is_released_at_one_over_rate() {
    let p = plan(1, &fixed(4.0, 1.0, 0)).expect("valid");
    check_close(&p.offsets_s, &[0.25]);
    assert!(
        plan(0, &fixed(4.0, 1.0, 0))
            .expect("valid")
            .offsets_s
            .is_empty()
    );
}

#[test]
fn linear_ramp_constant_gaps_and_rps_events() {
    let p = plan(5, &ramped(RampStrategy::Linear, 1.0, 5.0, f64::INFINITY)).expect("valid");
    check_close(&p.rates_rps, &[1.0, 2.0, 3.0, 4.0, 5.0]);
    // Not rescaled: cumulative 1/rate_i.
    let want = [
        1.0,
        1.5,
        1.5 + 1.0 / 3.0,
        1.75 + 1.0 / 3.0,
        1.95 + 1.0 / 3.0,
    ];
    check_close(&p.offsets_s, &want);
    let events: Vec<(u64, f64)> = p
        .rps_change_events
        .iter()
        .map(|e| (e.rps, e.timestamp_s))
        .collect();
    assert_eq!(events.len(), 5);
    assert_eq!(events[0], (1, 0.0));
    for (k, (rps, ts)) in events.iter().enumerate().skip(1) {
        assert_eq!(*rps, k as u64 + 1);
        assert!((ts - want[k]).abs() < EPS);
    }
    assert_eq!(
        summary(&p),
        "constant linear ramp 1.0→5.0 rps, 5 releases over 2.28 s"
    );
}

#[test]
fn rps_events_fill_every_integer_crossed() {
    // Rates [1, 5.5, 10]: 1 at start, 2..=5 at request 1, 6..=10 at request 2.
    let p = plan(3, &ramped(RampStrategy::Linear, 1.0, 10.0, 1.0)).expect("valid");
    let rps: Vec<u64> = p.rps_change_events.iter().map(|e| e.rps).collect();
    assert_eq!(rps, (1..=10).collect::<Vec<_>>());
    let ts: Vec<f64> = p.rps_change_events.iter().map(|e| e.timestamp_s).collect();
    assert_eq!(ts[0], 0.0);
    assert!(ts[1..5].iter().all(|&t| t == p.offsets_s[1]));
    assert!(ts[5..].iter().all(|&t| t == p.offsets_s[2]));
}

#[test]
fn exponential_ramp_events_survive_powf_rounding() {
    let p = plan(5, &ramped(RampStrategy::Exponential, 1.0, 16.0, 1.0)).expect("valid");
    let rps: Vec<u64> = p.rps_change_events.iter().map(|e| e.rps).collect();
    assert_eq!(rps, (1..=16).collect::<Vec<_>>());
    assert!(p.offsets_s.windows(2).all(|w| w[0] <= w[1]), "monotone");
}

#[test]
fn linear_ramp_from_zero_releases_first_request_immediately() {
    let p = plan(5, &ramped(RampStrategy::Linear, 0.0, 4.0, f64::INFINITY)).expect("valid");
    check_close(
        &p.offsets_s,
        &[0.0, 1.0, 1.5, 1.5 + 1.0 / 3.0, 1.75 + 1.0 / 3.0],
    );
    assert_eq!(
        p.rps_change_events[0],
        RpsChange {
            rps: 0,
            timestamp_s: 0.0
        }
    );
    assert_eq!(
        p.rps_change_events[1],
        RpsChange {
            rps: 1,
            timestamp_s: 1.0
        }
    );
    assert_eq!(p.rps_change_events.len(), 5);
}

#[test]
fn poisson_ramp_gaps_follow_the_rate() {
    // Linear 1→1 is a fixed 1 rps that is not rescaled: mean gap ≈ 1.
    let p = plan(2000, &ramped(RampStrategy::Linear, 1.0, 1.0, 1.0)).expect("valid");
    let (mean, cv) = mean_cv(&gaps_of(&p.offsets_s));
    assert!((mean - 1.0).abs() < 0.1, "mean {mean}");
    assert!((cv - 1.0).abs() < 0.1, "cv {cv}");
    assert_eq!(
        p.rps_change_events,
        [RpsChange {
            rps: 1,
            timestamp_s: 0.0
        }]
    );
}

#[test]
fn summaries() {
    let p = plan(16, &fixed(2.0, 1.0, 0)).expect("valid");
    assert_eq!(summary(&p), "poisson 2.0 rps, 16 releases over 8.00 s");
    let p = plan(4, &fixed(0.25, 4.0, 0)).expect("valid");
    assert_eq!(
        summary(&p),
        "gamma(b=4.0) 0.25 rps, 4 releases over 16.00 s"
    );
    let p = plan(3, &ramped(RampStrategy::Exponential, 1.0, 16.0, 0.5)).expect("valid");
    assert!(
        summary(&p).starts_with("gamma(b=0.5) exponential ramp 1.0→16.0 rps, 3 releases over "),
        "{}",
        summary(&p)
    );
}

#[test]
fn validation_messages() {
    check_err(
        &fixed(2.0, -1.0, 0),
        "burstiness must be > 0 (got -1); use 1.0 for Poisson arrivals",
    );
    check_err(
        &fixed(2.0, f64::NAN, 0),
        "burstiness must be > 0 (got NaN); use 1.0 for Poisson arrivals",
    );
    check_err(
        &fixed(0.0, 1.0, 0),
        "request_rate must be > 0 and finite (got 0); omit it to release everything at t=0, or use e.g. 2.0",
    );
    check_err(
        &fixed(f64::INFINITY, 1.0, 0),
        "request_rate must be > 0 and finite (got inf); omit it to release everything at t=0, or use e.g. 2.0",
    );
    let mut both = ramped(RampStrategy::Linear, 1.0, 5.0, 1.0);
    both.request_rate = Some(3.0);
    check_err(
        &both,
        "request_rate (3) cannot be combined with ramp_up; remove request_rate to ramp, or remove ramp_up for a fixed rate",
    );
    check_err(
        &ramped(RampStrategy::Linear, -1.0, 5.0, 1.0),
        "ramp_up start_rps must be finite and >= 0 (got -1); use e.g. start_rps = 1, end_rps = 10",
    );
    check_err(
        &ramped(RampStrategy::Linear, 1.0, f64::INFINITY, 1.0),
        "ramp_up end_rps must be finite and >= 0 (got inf); use e.g. start_rps = 1, end_rps = 10",
    );
    check_err(
        &ramped(RampStrategy::Linear, 5.0, 1.0, 1.0),
        "ramp_up start_rps (5) must be <= end_rps (1); swap the two values",
    );
    check_err(
        &ramped(RampStrategy::Linear, 0.0, 0.0, 1.0),
        "ramp_up end_rps must be > 0 (got 0); use e.g. end_rps = 10",
    );
    check_err(
        &ramped(RampStrategy::Exponential, 0.0, 5.0, 1.0),
        "exponential ramp_up needs start_rps > 0 (got 0); use start_rps = 1, or the linear strategy to start from 0",
    );
    assert_eq!(
        validate(&ramped(RampStrategy::Linear, 0.0, 5.0, 1.0)),
        Ok(())
    );
    assert_eq!(validate(&fixed(2.0, f64::INFINITY, 0)), Ok(()));
}

#[test]
fn ramp_strategy_serde_is_lowercase() {
    let json = serde_json::to_string(&RampStrategy::Exponential).expect("serialize");
    assert_eq!(json, "\"exponential\"");
    let back: RampStrategy = serde_json::from_str("\"linear\"").expect("deserialize");
    assert_eq!(back, RampStrategy::Linear);
}

#[test]
fn a_staircase_releases_its_sessions_together_at_each_step_and_stands_alone() {
    let spec = ArrivalSpec {
        steps: Some(Steps {
            sessions: 3,
            every_s: 2.5,
        }),
        ..ArrivalSpec::default()
    };
    let p = plan(7, &spec).expect("valid");
    assert_eq!(p.offsets_s, [0.0, 0.0, 0.0, 2.5, 2.5, 2.5, 5.0]);
    for (bad, why) in [
        (
            ArrivalSpec {
                request_rate: Some(2.0),
                ..spec.clone()
            },
            "with request_rate 2",
        ),
        (
            ArrivalSpec {
                steps: Some(Steps {
                    sessions: 0,
                    every_s: 1.0,
                }),
                ..ArrivalSpec::default()
            },
            "got 0:1",
        ),
    ] {
        let e = plan(3, &bad).unwrap_err().to_string();
        assert!(e.contains(why) && e.contains("--ramp 4:10"), "{e}");
    }
}
