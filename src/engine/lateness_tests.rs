//! The compact lateness log gives back, bit for bit, the seconds the sender used to keep.

use std::time::Duration;

use proptest::prelude::*;

use super::LatenessLog;

proptest! {
    #[test]
    fn seconds_equal_as_secs_f64_bit_for_bit(nanos in prop::collection::vec(
        prop_oneof![0u64..10_000_000, any::<u64>()], 0..3_000)) {
        let mut log = LatenessLog::default();
        let durations: Vec<Duration> = nanos.iter().map(|n| Duration::from_nanos(*n)).collect();
        for d in &durations {
            log.push(*d);
        }
        let want: Vec<u64> = durations.iter().map(|d| d.as_secs_f64().to_bits()).collect();
        let got: Vec<u64> = log.seconds().iter().map(|s| s.to_bits()).collect();
        prop_assert_eq!(got, want);
        prop_assert_eq!(log.len(), nanos.len());
    }
}

#[test]
fn a_sub_millisecond_lateness_costs_three_bytes() {
    let mut log = LatenessLog::default();
    for _ in 0..1000 {
        log.push(Duration::from_micros(900));
    }
    assert_eq!(log.len(), 1000);
    assert!(log.heap_bytes() <= 4096, "{}", log.heap_bytes());
    assert_eq!(log.seconds(), vec![0.0009; 1000]);
}

#[test]
fn a_duration_past_whole_seconds_keeps_its_seconds_and_nanos() {
    let d = Duration::new(3, 141_592_653);
    let mut log = LatenessLog::default();
    log.push(d);
    log.push(Duration::ZERO);
    assert_eq!(log.seconds(), [d.as_secs_f64(), 0.0]);
    assert!(!log.is_empty());
}

#[test]
fn a_long_log_holds_unused_at_most_one_growth_step() {
    let mut log = LatenessLog::default();
    let n = 30_000; // ~90 KB of 3-byte values: many chunks
    for k in 0..n {
        log.push(Duration::from_nanos(100_000 + k));
    }
    let used = 3 * n as usize;
    let slack = log.heap_bytes() - used;
    // The open chunk's one step, the full chunks' few unfillable bytes each and the
    // chunk list's own slack.
    let chunks = used / super::CHUNK_BYTES + 1;
    let step = crate::util::grow::STEP_BYTES;
    assert!(slack <= step + chunks * (10 + 2 * 24), "{slack}");
    let want: Vec<f64> = (0..n)
        .map(|k| Duration::from_nanos(100_000 + k).as_secs_f64())
        .collect();
    assert_eq!(log.seconds(), want);
}

fn spooled(spool: &crate::workload::spool::Spool, chunk_bytes: usize) -> LatenessLog {
    LatenessLog::new(super::LatenessSetup {
        spool: Some(spool.session().log()),
        bound_s: 0.002,
        chunk_bytes,
        ..Default::default()
    })
}

proptest! {
    #[test]
    fn a_spilled_log_hands_over_the_values_and_tallies_of_one_kept_in_memory(
        nanos in prop::collection::vec(prop_oneof![0u64..10_000_000, any::<u64>()], 0..2_000),
        chunk in 1usize..200,
    ) {
        let tmp = tempfile::tempdir().unwrap();
        let spool = crate::workload::spool::Spool::create(tmp.path()).unwrap();
        let mut spilled = spooled(&spool, chunk);
        let mut kept = LatenessLog::new(super::LatenessSetup { bound_s: 0.002, ..Default::default() });
        for n in &nanos {
            spilled.push(Duration::from_nanos(*n));
            kept.push(Duration::from_nanos(*n));
        }
        let (s, k) = (spilled.hand_over(), kept.hand_over());
        prop_assert_eq!(k.parts.spilled, None);
        prop_assert_eq!((s.count, s.late, s.max_s), (k.count, k.late, k.max_s));
        spool.flush();
        let (sv, kv) = (s.values(Some(&spool)).unwrap(), k.values(None).unwrap());
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        prop_assert_eq!(bits(&sv), bits(&kv));
        let want: Vec<f64> = nanos.iter().map(|n| Duration::from_nanos(*n).as_secs_f64()).collect();
        prop_assert_eq!(bits(&kv), bits(&want));
        prop_assert_eq!(k.late, want.iter().filter(|l| **l > 0.002).count() as u64);
        prop_assert_eq!(k.max_s, want.iter().copied().reduce(f64::max));
    }
}

#[test]
fn a_spilling_log_keeps_at_most_one_chunk_however_long_and_reads_nothing_back() {
    let tmp = tempfile::tempdir().unwrap();
    let spool = crate::workload::spool::Spool::create(tmp.path()).unwrap();
    let mut log = spooled(&spool, super::SPILL_CHUNK_BYTES);
    // The spool's writer is gone before the pushes: handing over needs no read.
    spool.close().unwrap();
    for k in 0..100_000u64 {
        log.push(Duration::from_nanos(100_000 + k));
        assert!(log.heap_bytes() <= super::SPILL_CHUNK_BYTES + 64, "at {k}");
    }
    let sent = log.hand_over();
    let spilled = sent.parts.spilled.expect("spilled");
    assert_eq!(spilled.len + sent.parts.tail.len() as u64, 300_000);
    assert_eq!(sent.count, 100_000);
    assert_eq!(
        sent.max_s,
        Some(Duration::from_nanos(199_999).as_secs_f64())
    );
}
