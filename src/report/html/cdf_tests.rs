//! Exact vectors for the percentile-plot numbers: counts from values and histograms,
//! Hazen positions, rank picking on the nines scale, nines ticks, marks and dot lanes.

use hdrhistogram::Histogram;

use super::*;

#[test]
fn values_become_sorted_counts_without_non_finite_ones() {
    assert_eq!(
        counts_of_values(&[3.0, f64::NAN, 1.0, 3.0, f64::INFINITY, 2.0, 1.0]),
        vec![(1.0, 2), (2.0, 1), (3.0, 2)]
    );
    assert!(counts_of_values(&[f64::NAN]).is_empty());
}

#[test]
fn histogram_buckets_become_counts_in_ms() {
    let mut h = Histogram::<u64>::new(3).expect("histogram");
    for v in [1000, 1000, 2000, 250_000] {
        h.record(v).expect("records");
    }
    // Highest equivalent values: 1000 and 2000 are exact, 250000 µs sits in a 128-wide
    // bucket at this precision.
    assert_eq!(
        counts_of_histogram(&h, 1000.0),
        vec![(1.0, 2), (2.0, 1), (250.111, 1)]
    );
}

#[test]
fn every_value_is_a_point_at_its_hazen_position() {
    let c = counts_of_values(&[10.0, 20.0, 20.0, 40.0]);
    assert_eq!(
        cdf_points(&c, 10),
        vec![(10.0, 12.5), (20.0, 37.5), (20.0, 62.5), (40.0, 87.5)]
    );
    assert_eq!(cdf_points(&[], 10), Vec::<(f64, f64)>::new());
    assert_eq!(hazen(1, 1), 50.0);
}

#[test]
fn many_values_are_thinned_evenly_on_the_nines_scale() {
    // 1000 values 1..=1000; 5 points between rank 1 (p0.05) and rank 1000 (p99.95).
    let values: Vec<f64> = (1..=1000).map(f64::from).collect();
    let pts = cdf_points(&counts_of_values(&values), 5);
    let ranks: Vec<f64> = pts.iter().map(|p| p.0).collect();
    // y from 0.000217 to 3.301 in 4 equal steps (0.825 nines apart): ranks 1, 851, 978,
    // 997, 1000 — dense in the tail, sparse in the body.
    assert_eq!(ranks, vec![1.0, 851.0, 978.0, 997.0, 1000.0]);
    assert_eq!(pts[0].1, 0.05);
    assert_eq!(pts[4].1, 99.95);
}

#[test]
fn thinning_walks_counts_not_just_values() {
    // 2000 values: 1999 × 5 ms and one 9 ms: the smallest and largest are kept.
    let pts = cdf_points(&[(5.0, 1999), (9.0, 1)], 3);
    assert_eq!(pts.first().map(|p| p.0), Some(5.0));
    assert_eq!(pts.last(), Some(&(9.0, 99.975)));
}

#[test]
fn nines_axis_reaches_what_the_values_can_show() {
    assert_eq!(nines(0.0), 0.0);
    assert!((nines(99.0) - 2.0).abs() < 1e-12);
    // 30 values: the top value at p98.33 → log10(60) = 1.78 nines, the axis top; ticks
    // up to p90 (p99 is beyond what 30 values show).
    let top = nines_top(nines(hazen(30, 30)));
    assert!((top - 60f64.log10()).abs() < 1e-12, "{top}");
    assert_eq!(nines_top(0.2), 1.0);
    assert_eq!(nines_top(f64::NAN), 1.0);
    let labels = |top| -> Vec<String> { nines_ticks(top).into_iter().map(|t| t.1).collect() };
    assert_eq!(labels(top), ["0", "50", "90"]);
    assert_eq!(labels(2.0), ["0", "50", "90", "99"]);
    assert_eq!(labels(4.0), ["0", "50", "90", "99", "99.9", "99.99"]);
    assert_eq!(labels(6.0)[0], "50");
    assert_eq!(labels(6.0).last().map(String::as_str), Some("99.9999"));
}

#[test]
fn marks_interpolate_like_the_reports() {
    let m = marks(&[10.0, 20.0, 30.0, 40.0]);
    assert_eq!(m[..2], [("p50", 25.0), ("p90", 37.0)]);
    assert!(m[2].0 == "p99" && (m[2].1 - 39.7).abs() < 1e-9, "{m:?}");
    assert_eq!(
        marks(&[7.0]),
        vec![("p50", 7.0), ("p90", 7.0), ("p99", 7.0)]
    );
    assert!(marks(&[]).is_empty());
}

#[test]
fn close_dots_stack_in_lanes() {
    assert_eq!(
        lanes(&[0.0, 2.0, 4.0, 7.0, 20.0, 20.0], 7.0),
        vec![0, 1, 2, 0, 0, 1]
    );
    assert!(lanes(&[], 7.0).is_empty());
    assert_eq!(expand(&[(1.0, 2), (3.0, 1)]), vec![1.0, 1.0, 3.0]);
    assert_eq!(total(&[(1.0, 2), (3.0, 1)]), 3);
}
