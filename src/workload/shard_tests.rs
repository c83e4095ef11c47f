//! `--shard I/N` and `--start-at`: parsing, plan slices at the original offsets, split
//! warm-ups and caps.

use super::*;

#[test]
fn parse_accepts_i_of_n_and_rejects_the_rest() {
    assert_eq!(Shard::parse("2/4"), Ok(Shard { index: 2, count: 4 }));
    assert_eq!(Shard::parse(" 0 / 1 "), Ok(Shard::WHOLE));
    for bad in ["4/4", "1/0", "x/2", "1", "-1/3", ""] {
        let e = Shard::parse(bad).unwrap_err();
        assert!(e.to_string().contains("I/N"), "{bad}: {e}");
    }
}

#[test]
fn slices_partition_the_plan_at_the_original_offsets() {
    let offsets: Vec<f64> = (0..11).map(|k| k as f64 * 0.25).collect();
    let mut union: Vec<(usize, f64)> = (0..3)
        .flat_map(|i| Shard { index: i, count: 3 }.slice(&offsets))
        .collect();
    union.sort_by_key(|&(k, _)| k);
    let whole: Vec<(usize, f64)> = offsets.iter().copied().enumerate().collect();
    assert_eq!(union, whole);
    assert_eq!(Shard { index: 1, count: 3 }.indices(11), vec![1, 4, 7, 10]);
}

#[test]
fn parts_sum_to_the_total_and_caps_need_one_each() {
    for total in 0..20 {
        let sum: usize = (0..4)
            .map(|i| Shard { index: i, count: 4 }.part(total))
            .sum();
        assert_eq!(sum, total);
    }
    assert_eq!(Shard { index: 0, count: 3 }.cap(5), Ok(2));
    assert_eq!(Shard { index: 2, count: 3 }.cap(5), Ok(1));
    let e = Shard { index: 0, count: 3 }.cap(2).unwrap_err();
    assert!(e.to_string().contains("raise max_concurrency"), "{e}");
}

#[test]
fn start_at_reads_unix_seconds_and_rfc3339() {
    assert_eq!(parse_start_at("1796223600"), Ok(1_796_223_600.0));
    assert_eq!(parse_start_at("1796223600.5"), Ok(1_796_223_600.5));
    assert_eq!(parse_start_at("1970-01-01T00:00:00Z"), Ok(0.0));
    // 2026-12-02T15:00:00Z
    assert_eq!(parse_start_at("2026-12-02T15:00:00Z"), Ok(1_796_223_600.0));
    assert_eq!(
        parse_start_at("2026-12-02T16:00:00.250+01:00"),
        Ok(1_796_223_600.25)
    );
    assert_eq!(parse_start_at("2000-02-29t00:00:00z"), Ok(951_782_400.0));
    for bad in [
        "tomorrow",
        "2026-13-01T00:00:00Z",
        "2026-12-02 15:00",
        "-5",
        "NaN",
    ] {
        let e = parse_start_at(bad).unwrap_err();
        assert!(e.to_string().contains("RFC 3339"), "{bad}: {e}");
    }
}

#[test]
fn a_barrier_far_from_now_is_refused_saying_how_far() {
    let now = 1_800_000_000.0;
    assert_eq!(start_at_from("1800000100", now).unwrap(), 1_800_000_100.0);
    assert_eq!(start_at_from("1799999000", now).unwrap(), 1_799_999_000.0);
    let e = start_at_from("1", now).unwrap_err().to_string();
    assert!(e.contains("1799999999 s in the past"), "{e}");
    let e = start_at_from("99999999999999999", now)
        .unwrap_err()
        .to_string();
    assert!(e.contains("ahead (more than a week)"), "{e}");
}
