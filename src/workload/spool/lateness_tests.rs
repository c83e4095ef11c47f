//! A sample's handed-over lateness reads back to exactly the values recorded, spilled or
//! not; a read that cannot be whole fails the sample instead of shortening its values.

use std::time::Duration;

use super::{SentLateness, decode, restore_run};
use crate::workload::spool::Spool;
use crate::workload::spool::spilled::LogParts;
use crate::workload::{FailureKind, RunRecord, SampleRecord};

fn sample(idx: usize, sent: SentLateness) -> SampleRecord {
    SampleRecord {
        idx,
        warmup: false,
        session: Some(idx),
        scheduled_s: 0.0,
        queue_wait_s: 0.0,
        started_s: 0.0,
        opened_s: Some(0.0),
        ended_s: 1.0,
        outcome: Ok(()),
        send_lateness_s: Vec::new(),
        send_lateness: sent,
        playback: None,
        output: None,
    }
}

fn run(samples: Vec<SampleRecord>) -> RunRecord {
    RunRecord {
        samples,
        duration_s: 1.0,
        endpoint: String::new(),
        load: None,
        interrupted: false,
        measured_indices: None,
    }
}

fn leb(nanos: &[u64]) -> Vec<u8> {
    let mut out = Vec::new();
    for n in nanos {
        crate::util::leb128::put(&mut out, *n);
    }
    out
}

#[test]
fn decode_gives_as_secs_f64_of_each_nanosecond_count() {
    let nanos = [0, 1, 999_999, 3_141_592_653, u64::MAX];
    let want: Vec<f64> = nanos
        .iter()
        .map(|n| Duration::from_nanos(*n).as_secs_f64())
        .collect();
    assert_eq!(decode(&leb(&nanos)), want);
}

#[test]
fn a_spilled_span_and_its_tail_read_back_in_order_after_the_flush() {
    let tmp = tempfile::tempdir().unwrap();
    let spool = Spool::create(tmp.path()).unwrap();
    let mut file = spool.session().log();
    let span = file.append(&leb(&[1_000, 2_000]));
    let sent = SentLateness {
        parts: LogParts {
            spilled: Some(span),
            tail: leb(&[3_000]),
        },
        count: 3,
        late: 0,
        max_s: Some(3e-6),
    };
    let mut r = run(vec![
        sample(0, sent.clone()),
        sample(1, SentLateness::default()),
    ]);
    restore_run(&mut r, Some(&spool)); // flushes first: the bytes were still batched
    assert_eq!(r.samples[0].send_lateness_s, [1e-6, 2e-6, 3e-6]);
    assert!(!r.samples[0].send_lateness.unread(), "read once");
    assert_eq!(r.samples[0].send_lateness.count, 3, "the tallies stay");
    assert!(r.samples[1].send_lateness_s.is_empty() && r.samples[1].outcome.is_ok());
    // Restoring again changes nothing.
    restore_run(&mut r, Some(&spool));
    assert_eq!(r.samples[0].send_lateness_s, [1e-6, 2e-6, 3e-6]);
}

#[test]
fn values_that_cannot_be_read_back_whole_fail_the_sample() {
    let tmp = tempfile::tempdir().unwrap();
    let spool = Spool::create(tmp.path()).unwrap();
    let span = spool.session().log().append(&leb(&[1_000]));
    let spilled = |count| SentLateness {
        parts: LogParts {
            spilled: Some(span),
            tail: Vec::new(),
        },
        count,
        ..SentLateness::default()
    };
    // No spool to read from; fewer values than were recorded.
    let mut r = run(vec![sample(0, spilled(1))]);
    restore_run(&mut r, None);
    let mut short = run(vec![sample(0, spilled(2))]);
    restore_run(&mut short, Some(&spool));
    for (r, why) in [(&r, "without a spool"), (&short, "1 values of 2")] {
        let f = r.samples[0].outcome.as_ref().unwrap_err();
        assert_eq!(f.kind, FailureKind::Report);
        assert!(f.message.contains(why), "{}", f.message);
        assert!(
            r.samples[0].send_lateness_s.is_empty(),
            "missing, never partial"
        );
    }
}
