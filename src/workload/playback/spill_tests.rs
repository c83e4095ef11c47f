//! A closed stream's bytes give back its record to the bit, whatever its values.

use proptest::prelude::*;

use super::super::StreamPlayback;
use super::{SpilledStreams, decode, encode};

fn any_f64() -> impl Strategy<Value = f64> {
    prop_oneof![
        4 => 0.0..100.0f64,
        1 => any::<u64>().prop_map(f64::from_bits),
        1 => Just(-0.0),
    ]
}

fn records() -> impl Strategy<Value = Vec<StreamPlayback>> {
    let one = (
        (any::<u64>(), any::<u64>(), any::<bool>(), any_f64()),
        (any::<u64>(), any_f64(), proptest::option::of(any_f64())),
        (proptest::option::of(any::<u64>()), any_f64()),
    )
        .prop_map(
            |(
                (stream, units, filled, start_s),
                (stalls, stall_s, first_at),
                (first_index, span),
            )| {
                StreamPlayback {
                    stream,
                    units,
                    buffer_filled: filled,
                    start_s,
                    stall_count: stalls,
                    total_stall_s: stall_s,
                    time_to_first_stall_s: first_at,
                    first_stall_index: first_index,
                    playback_span_s: span,
                }
            },
        );
    proptest::collection::vec(one, 0..20)
}

/// A record's fields as bits (NaN payloads included).
fn bits(s: &StreamPlayback) -> (u64, u64, bool, u64, u64, u64, Option<u64>, Option<u64>, u64) {
    (
        s.stream,
        s.units,
        s.buffer_filled,
        s.start_s.to_bits(),
        s.stall_count,
        s.total_stall_s.to_bits(),
        s.time_to_first_stall_s.map(f64::to_bits),
        s.first_stall_index,
        s.playback_span_s.to_bits(),
    )
}

proptest! {
    #[test]
    fn records_come_back_to_the_bit(rs in records()) {
        let mut bytes = Vec::new();
        for r in &rs {
            encode(r, &mut bytes);
        }
        let back = decode(&bytes).unwrap();
        prop_assert_eq!(back.iter().map(bits).collect::<Vec<_>>(), rs.iter().map(bits).collect::<Vec<_>>());
        if !bytes.is_empty() {
            let err = decode(&bytes[..bytes.len() - 1]).unwrap_err();
            prop_assert!(err.contains("cut short"), "{}", err);
        }
    }
}

/// The tallies are what the records say: how many, their stalls, their stall time added
/// in order, the first; the bytes decode to the records.
#[test]
fn the_tallies_follow_the_records() {
    let rec = |stream, stalls, stall_s| StreamPlayback {
        stream,
        units: 3,
        buffer_filled: true,
        start_s: stream as f64,
        stall_count: stalls,
        total_stall_s: stall_s,
        time_to_first_stall_s: None,
        first_stall_index: None,
        playback_span_s: 0.5,
    };
    let rs = [rec(4, 0, 0.0), rec(5, 2, 0.1), rec(6, 1, 0.2)];
    let (mut t, mut bytes) = (SpilledStreams::default(), Vec::new());
    for r in &rs {
        t.add(r, &mut bytes);
    }
    assert_eq!((t.count, t.stall_count), (3, 3));
    assert_eq!(t.stall_s.to_bits(), (0.0 + 0.0 + 0.1 + 0.2f64).to_bits());
    assert_eq!(t.first, Some(rs[0].clone()));
    t.parts.tail = bytes;
    assert_eq!(t.records(None).unwrap(), rs);
    t.count = 4;
    assert!(t.records(None).unwrap_err().contains("3 records of 4"));
}
