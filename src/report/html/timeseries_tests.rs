//! Exact vectors for time-series buckets: the grid, zero counts versus missing
//! percentiles, several intervals in one slot, and wide buckets for long runs.

use hdrhistogram::Histogram;

use super::*;

fn iv(tag: &str, start_s: f64, values_us: &[u64]) -> Interval {
    let mut hist = Histogram::<u64>::new(3).expect("histogram");
    hist.auto(true);
    for &v in values_us {
        hist.record(v).expect("records");
    }
    Interval {
        tag: tag.into(),
        start_s,
        length_s: 1.0,
        hist,
    }
}

/// (start, length, count, p50, p99) of one bucket.
type Row = (f64, f64, u64, Option<f64>, Option<f64>);

fn rows(b: &[Bucket]) -> Vec<Row> {
    b.iter()
        .map(|b| (b.start_s, b.length_s, b.count, b.p50, b.p99))
        .collect()
}

#[test]
fn empty_slots_count_zero_and_have_no_percentiles() {
    let log = [
        // Below 2048 µs every value is its own bucket: percentiles come back exact.
        iv("done", 1.0, &[1000, 2000]),
        iv("lat", 0.0, &[100_000]),
        iv("done", 3.0, &[1500]),
    ];
    // The grid runs from 0 to the end of the last interval of any tag: 4 slots.
    assert_eq!(grid(&log), Some((1.0, 4)));
    assert_eq!(
        rows(&buckets(&log, "done", 1000.0, 100)),
        vec![
            (0.0, 1.0, 0, None, None),
            (1.0, 1.0, 2, Some(1.0), Some(2.0)),
            (2.0, 1.0, 0, None, None),
            (3.0, 1.0, 1, Some(1.5), Some(1.5)),
        ]
    );
    let b = buckets(&log, "done", 1000.0, 100);
    assert_eq!((b[1].mid_s(), b[1].rate()), (1.5, 2.0));
    assert!(has_tag(&log, "lat") && !has_tag(&log, "nope"));
}

#[test]
fn intervals_of_one_slot_are_added() {
    // Two shards' logs read together: both have an interval starting at 0.
    let log = [iv("lat", 0.0, &[1000]), iv("lat", 0.0, &[2000, 2000])];
    assert_eq!(
        rows(&buckets(&log, "lat", 1000.0, 100)),
        vec![(0.0, 1.0, 3, Some(2.0), Some(2.0))]
    );
}

#[test]
fn long_runs_get_wider_buckets_of_whole_slots() {
    let log: Vec<Interval> = (0..10).map(|k| iv("done", f64::from(k), &[1000])).collect();
    // 10 slots, at most 4 buckets: 3 slots per bucket; the last one ends with the run.
    let b = buckets(&log, "done", 1000.0, 4);
    assert_eq!(
        b.iter().map(|b| (b.start_s, b.count)).collect::<Vec<_>>(),
        vec![(0.0, 3), (3.0, 3), (6.0, 3), (9.0, 1)]
    );
    assert_eq!((b[0].length_s, b[0].rate()), (3.0, 1.0));
    assert_eq!((b[3].length_s, b[3].rate()), (1.0, 1.0));
}

#[test]
fn no_intervals_no_buckets() {
    assert_eq!(grid(&[]), None);
    assert!(buckets(&[], "done", 1000.0, 100).is_empty());
}
