use super::*;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[test]
fn spec_percentile_vector() {
    let v = [40.0, 10.0, 30.0, 20.0];
    let cases = [
        (0.0, 10.0),
        (0.5, 25.0),
        (0.9, 37.0),
        (0.95, 38.5),
        (0.99, 39.7),
        (1.0, 40.0),
    ];
    for (f, want) in cases {
        let got = percentile(&v, f).unwrap();
        assert!(close(got, want), "p{f}: got {got}, want {want}");
    }
}

#[test]
fn single_value_is_itself() {
    assert_eq!(percentile(&[5.0], 0.99).unwrap(), 5.0);
    assert_eq!(percentile(&[5.0], 0.0).unwrap(), 5.0);
}

#[test]
fn percentile_errors() {
    assert_eq!(percentile(&[], 0.5), Err(StatsError::Empty));
    assert_eq!(
        percentile(&[1.0], 1.5),
        Err(StatsError::FractionOutOfRange(1.5))
    );
    assert!(matches!(
        percentile(&[1.0, 2.0], -0.1),
        Err(StatsError::FractionOutOfRange(_))
    ));
    assert!(matches!(
        percentile(&[1.0, 2.0], f64::NAN),
        Err(StatsError::FractionOutOfRange(_))
    ));
}

#[test]
fn summary_is_exact_and_absent_when_empty() {
    assert_eq!(Summary::of(&[], &STANDARD_PERCENTILES), None);
    let s = Summary::of(&[40.0, 10.0, 30.0, 20.0], &[50.0, 99.9]).unwrap();
    assert_eq!((s.count, s.mean, s.min, s.max), (4, 25.0, 10.0, 40.0));
    assert!(close(s.std, 11.180_339_887_498_949));
    assert_eq!(s.percentile(50.0), Some(25.0));
    assert!(close(s.percentile(99.9).unwrap(), 39.97));
    let names: Vec<String> = s.stats().into_iter().map(|(n, _)| n).collect();
    assert_eq!(
        names,
        ["count", "mean", "std", "min", "p50", "p99.9", "max"]
    );
}

#[test]
fn lerp_matches_numpy_from_either_end() {
    // numpy 2: percentile([0.1, 0.7], 75) == 0.5499999999999999, 25 → 0.25;
    // percentile([10, 20, 30, 40], p) for p = 90, 95, 99, 99.9 (reprs of numpy 2.4).
    assert_eq!(
        percentile(&[0.1, 0.7], 0.75).unwrap(),
        0.549_999_999_999_999_9
    );
    assert_eq!(percentile(&[0.1, 0.7], 0.25).unwrap(), 0.25);
    let v = [10.0, 20.0, 30.0, 40.0];
    let want = [
        (90.0, 37.0),
        (95.0, 38.5),
        (99.0, 39.699_999_999_999_996),
        (99.9, 39.970_000_000_000_006),
    ];
    for (p, want) in want {
        assert_eq!(percentile(&v, p / 100.0).unwrap(), want, "p{p}");
    }
}

#[test]
fn sample_std_vector() {
    let v = [10.0, 20.0, 30.0, 40.0];
    assert!((sample_std(&v) - 12.909_944_487_358_056).abs() < 1e-9);
    assert_eq!(sample_std(&[3.0]), 0.0);
    assert_eq!(sample_std(&[]), 0.0);
}

#[test]
fn population_std_and_mean() {
    let v = [10.0, 20.0, 30.0, 40.0];
    assert!((population_std(&v) - 11.180_339_887_498_949).abs() < 1e-9);
    assert_eq!(population_std(&[7.0]), 0.0);
    assert_eq!(population_std(&[]), 0.0);
    assert_eq!(mean(&v).unwrap(), 25.0);
    assert_eq!(mean(&[]), Err(StatsError::Empty));
}
