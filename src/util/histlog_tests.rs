//! Tests for the interval log writer: round trips through the `hdrhistogram` crate's parser.

use std::time::Duration;

use base64::Engine as _;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::Deserializer;
use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};

use super::*;

const RUN_START: f64 = 1_700_000_000.25;

/// One parsed interval: tag, start offset (s), length (s), Interval_Max column, histogram.
struct Parsed {
    tag: String,
    start_s: f64,
    len_s: f64,
    max_col: f64,
    h: Histogram<u64>,
}

/// Parses a log: (StartTime, BaseTime, intervals). Panics on any parse error.
fn parse(log: &[u8]) -> (Vec<Duration>, Vec<Duration>, Vec<Parsed>) {
    let (mut starts, mut bases, mut out) = (Vec::new(), Vec::new(), Vec::new());
    for entry in IntervalLogIterator::new(log) {
        match entry.expect("log parses") {
            LogEntry::StartTime(d) => starts.push(d),
            LogEntry::BaseTime(d) => bases.push(d),
            LogEntry::Interval(ilh) => {
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(ilh.encoded_histogram())
                    .expect("base64");
                let h: Histogram<u64> = Deserializer::new()
                    .deserialize(&mut &bytes[..])
                    .expect("histogram decodes");
                out.push(Parsed {
                    tag: ilh
                        .tag()
                        .expect("every interval is tagged")
                        .as_str()
                        .to_owned(),
                    start_s: ilh.start_timestamp().as_secs_f64(),
                    len_s: ilh.duration().as_secs_f64(),
                    max_col: ilh.max(),
                    h,
                });
            }
        }
    }
    (starts, bases, out)
}

fn write(series: &[Series], interval_s: f64) -> Vec<u8> {
    let mut buf = Vec::new();
    write_interval_log(&mut buf, RUN_START, interval_s, series).expect("writes");
    buf
}

/// `value_ms` recorded in µs, as HdrHistogram reports it back (within its precision).
fn us_equiv(h: &Histogram<u64>, got: u64, value_ms: f64) -> bool {
    h.equivalent(got, (value_ms * 1000.0).round() as u64)
}

fn two_series() -> Vec<Series> {
    vec![
        Series::micros(
            "ttfc_ms",
            vec![(0.1, 312.4), (0.5, 250.0), (1.2, 401.2), (2.9, 10.0)],
        ),
        Series::micros("e2e_ms", vec![(0.3, 1000.0)]),
    ]
}

#[test]
fn round_trip_tags_times_counts_and_max() {
    let log = write(&two_series(), 1.0);
    let (starts, bases, iv) = parse(&log);
    let run_start = Duration::from_secs_f64(RUN_START);
    assert_eq!(starts, vec![run_start]);
    assert_eq!(bases, vec![run_start]);

    let summary: Vec<(&str, f64, u64)> = iv
        .iter()
        .map(|p| (p.tag.as_str(), p.start_s, p.h.len()))
        .collect();
    assert_eq!(
        summary,
        vec![
            ("ttfc_ms", 0.0, 2),
            ("e2e_ms", 0.0, 1),
            ("ttfc_ms", 1.0, 1),
            ("ttfc_ms", 2.0, 1),
        ]
    );
    assert!(iv.iter().all(|p| p.len_s == 1.0));

    let expected_max_ms = [312.4, 1000.0, 401.2, 10.0];
    for (p, want) in iv.iter().zip(expected_max_ms) {
        assert!(
            us_equiv(&p.h, p.h.max(), want),
            "{} max {}",
            p.tag,
            p.h.max()
        );
        // Interval_Max column is in ms (MaxValueDivisor 1000), within 0.1%.
        assert!(
            (p.max_col - want).abs() <= want * 1e-3,
            "{} vs {want}",
            p.max_col
        );
    }
    // The first interval of ttfc holds 250.0 and 312.4 ms.
    assert!(us_equiv(&iv[0].h, iv[0].h.min(), 250.0));
    assert!(us_equiv(&iv[0].h, iv[0].h.value_at_quantile(0.5), 250.0));
}

#[test]
fn percentiles_match_inputs_within_precision() {
    // 1.000 ms .. 1000.000 ms in 1 ms steps, all in one 5 s interval, shuffled order.
    let samples: Vec<(f64, f64)> = (1..=1000)
        .map(|i| (((i * 7919) % 1000) as f64 * 0.004, i as f64))
        .collect();
    let log = write(&[Series::micros("lat_ms", samples)], 5.0);
    let (_, _, iv) = parse(&log);
    assert_eq!(iv.len(), 1);
    let h = &iv[0].h;
    assert_eq!(h.len(), 1000);
    assert_eq!((iv[0].start_s, iv[0].len_s), (0.0, 5.0));
    for (q, want_ms) in [(0.5, 500.0), (0.99, 990.0), (1.0, 1000.0)] {
        assert!(us_equiv(h, h.value_at_quantile(q), want_ms), "q{q}");
    }
    assert!(us_equiv(h, h.min(), 1.0));
}

#[test]
fn sub_second_intervals_and_boundaries() {
    let s = Series::micros("x", vec![(0.0, 1.0), (0.249, 2.0), (0.25, 3.0), (1.0, 4.0)]);
    let (_, _, iv) = parse(&write(&[s], 0.25));
    let got: Vec<(f64, f64, u64)> = iv.iter().map(|p| (p.start_s, p.len_s, p.h.len())).collect();
    assert_eq!(got, vec![(0.0, 0.25, 2), (0.25, 0.25, 1), (1.0, 0.25, 1)]);
}

#[test]
fn empty_series_write_only_headers() {
    let log = write(&[Series::micros("ttfc_ms", vec![])], 1.0);
    let text = String::from_utf8(log.clone()).expect("utf8");
    let expected = format!(
        "#[Logged with rtload {v}]\n\
         #[Histogram log format version 1.3]\n\
         #[Tag=ttfc_ms: histogram values are integers in microseconds (value_ms x 1000); divide by 1000 for ms]\n\
         #[Interval_Max column is in ms; process one tag at a time, e.g. HistogramLogProcessor -i run.hlog -tag ttfc_ms -outputValueUnitRatio 1000]\n\
         #[StartTime: 1700000000.250 (seconds since epoch)]\n\
         #[BaseTime: 1700000000.250 (seconds since epoch)]\n\
         \"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n\
         #[MaxValueDivisor: 1000.000]\n",
        v = env!("CARGO_PKG_VERSION")
    );
    assert_eq!(text, expected);
    let (starts, bases, iv) = parse(&log);
    assert_eq!((starts.len(), bases.len(), iv.len()), (1, 1, 0));

    // No series at all: headers only, no divisor line.
    let text = String::from_utf8(write(&[], 1.0)).expect("utf8");
    assert!(text.ends_with(&format!("{LEGEND}\n")), "{text}");
    assert!(!text.contains("MaxValueDivisor"));
}

#[test]
fn output_is_deterministic() {
    let a = write(&two_series(), 1.0);
    let b = write(&two_series(), 1.0);
    assert_eq!(a, b);
}

#[test]
fn invalid_samples_are_skipped_and_noted() {
    let s = Series::micros(
        "ttfc_ms",
        vec![
            (0.1, 5.0),
            (0.2, f64::NAN),
            (0.3, -1.0),
            (-0.1, 5.0),
            (f64::INFINITY, 5.0),
            (0.4, 0.0),
        ],
    );
    let log = write(&[s], 1.0);
    let text = String::from_utf8(log.clone()).expect("utf8");
    assert!(text.contains(
        "#[Tag=ttfc_ms: skipped 4 sample(s) with a negative or non-finite time or value]\n"
    ));
    let (_, _, iv) = parse(&log);
    assert_eq!(iv.len(), 1);
    assert_eq!(iv[0].h.len(), 2);
    assert_eq!(iv[0].h.min(), 0); // a real zero value is kept
}

#[test]
fn mixed_unit_scales_keep_raw_max_column() {
    let series = vec![
        Series::micros("a", vec![(0.0, 2.0)]),
        Series {
            tag: "b".into(),
            unit_scale: 1.0,
            unit: "ms".into(),
            samples: vec![(0.0, 2.0)],
        },
    ];
    let log = write(&series, 1.0);
    let text = String::from_utf8(log.clone()).expect("utf8");
    assert!(!text.contains("MaxValueDivisor"));
    assert!(text.contains("#[Tag=b: histogram values are integers in milliseconds (value_ms x 1)"));
    let (_, _, iv) = parse(&log);
    assert_eq!(iv[0].max_col, 2000.0);
    assert_eq!(iv[1].max_col, 2.0);
}

#[test]
fn bad_arguments_are_errors() {
    let ok = || vec![Series::micros("t", vec![(0.0, 1.0)])];
    let mut sink = Vec::new();
    for interval in [0.0, -1.0, f64::NAN, 0.0005] {
        assert!(matches!(
            write_interval_log(&mut sink, RUN_START, interval, &ok()),
            Err(HistLogError::InvalidInterval(_))
        ));
    }
    for start in [-1.0, f64::NAN, f64::INFINITY] {
        assert!(matches!(
            write_interval_log(&mut sink, start, 1.0, &ok()),
            Err(HistLogError::InvalidRunStart(_))
        ));
    }
    for tag in ["", "a,b", "a b", "a\nb"] {
        let s = vec![Series::micros(tag, vec![])];
        assert!(matches!(
            write_interval_log(&mut sink, RUN_START, 1.0, &s),
            Err(HistLogError::InvalidTag(_))
        ));
    }
    let dup = vec![Series::micros("t", vec![]), Series::micros("t", vec![])];
    assert!(matches!(
        write_interval_log(&mut sink, RUN_START, 1.0, &dup),
        Err(HistLogError::DuplicateTag(_))
    ));
    let bad_scale = vec![Series {
        tag: "t".into(),
        unit_scale: 0.0,
        unit: "ms".into(),
        samples: vec![],
    }];
    assert!(matches!(
        write_interval_log(&mut sink, RUN_START, 1.0, &bad_scale),
        Err(HistLogError::InvalidUnitScale { .. })
    ));
    assert!(sink.is_empty(), "nothing is written on bad arguments");
}

#[test]
fn io_errors_surface() {
    use crate::util::fs::test_support::DiskFull as Broken;
    let err = write_interval_log(&mut Broken, RUN_START, 1.0, &two_series()).unwrap_err();
    assert!(matches!(err, HistLogError::Io(_)), "{err}");
}
