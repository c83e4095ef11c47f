//! Tests for reading interval logs back: what the writer wrote comes back interval by
//! interval, absolute timestamps become run-relative, garbage is an error.

use super::super::{Series, write_interval_log};
use super::*;

fn log(series: &[Series]) -> Vec<u8> {
    let mut buf = Vec::new();
    write_interval_log(&mut buf, 1_700_000_000.0, 1.0, series).expect("writes");
    buf
}

/// (tag, start_s, length_s, count, max in µs as recorded) per interval.
fn summary(iv: &[Interval]) -> Vec<(String, f64, f64, u64, u64)> {
    iv.iter()
        .map(|i| {
            (
                i.tag.clone(),
                i.start_s,
                i.length_s,
                i.hist.len(),
                i.hist.lowest_equivalent(i.hist.max()),
            )
        })
        .collect()
}

#[test]
fn reads_back_every_interval_in_file_order() {
    let text = log(&[
        Series::micros("a_ms", vec![(0.2, 1.0), (0.9, 2.0), (2.5, 3.0)]),
        Series::micros("b_ms", vec![(0.5, 10.0)]),
    ]);
    let iv = read_intervals(&text).expect("reads");
    assert_eq!(
        summary(&iv),
        vec![
            ("a_ms".into(), 0.0, 1.0, 2, 2000),
            ("b_ms".into(), 0.0, 1.0, 1, 10000),
            ("a_ms".into(), 2.0, 1.0, 1, 3000),
        ]
    );
}

#[test]
fn a_log_without_intervals_reads_as_empty() {
    let text = log(&[Series::micros("a_ms", vec![])]);
    assert!(read_intervals(&text).expect("reads").is_empty());
    assert!(read_intervals(b"").expect("reads").is_empty());
}

#[test]
fn absolute_timestamps_are_made_relative_to_start_time() {
    let text = log(&[Series::micros("a_ms", vec![(0.0, 1.0)])]);
    let text = String::from_utf8(text).expect("utf-8");
    // What a writer without BaseTime writes: StartTime and absolute interval starts.
    let line = text
        .lines()
        .find(|l| l.starts_with("Tag=a_ms,"))
        .expect("interval line");
    let abs = format!(
        "#[StartTime: 1000.000 (seconds since epoch)]\n{}\n",
        line.replacen("Tag=a_ms,0.000,", "Tag=a_ms,1003.000,", 1)
    );
    let iv = read_intervals(abs.as_bytes()).expect("reads");
    assert_eq!(summary(&iv), vec![("a_ms".into(), 3.0, 1.0, 1, 1000)]);
}

#[test]
fn garbage_is_a_parse_error() {
    let err = read_intervals(b"Tag=a,0.000,1.000,1.0,@@@\n").expect_err("fails");
    assert!(matches!(err, HistLogError::Parse(_)), "{err}");
}
