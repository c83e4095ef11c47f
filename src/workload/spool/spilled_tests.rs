//! Spilled log tests: a spilling log gives back (through the report's read of its span)
//! the bytes an in-memory one holds, keeps at most its tail in memory, and its session's
//! end reads nothing back: it works with the spool's writer gone.

use super::{SpilledLog, TAIL_BYTES};
use crate::workload::spool::Spool;

fn value(k: u32) -> Vec<u8> {
    // Values of varying length, as LEB128 numbers and fixed records are.
    let len = 1 + (k as usize * 7) % 13;
    (0..len)
        .map(|i| (k as u8).wrapping_mul(31).wrapping_add(i as u8))
        .collect()
}

#[test]
fn a_spilled_log_reads_back_the_bytes_an_unspilled_one_holds() {
    let tmp = tempfile::tempdir().unwrap();
    let spool = Spool::create(tmp.path()).unwrap();
    let mut spilled = SpilledLog::spilling(spool.session().log());
    let mut kept = SpilledLog::default();
    let mut other = spool.session(); // another session's file between the pieces
    for k in 0..20_000 {
        spilled.push(&value(k));
        kept.push(&value(k));
        if k % 1_000 == 0 {
            other.append(&[0xAA; 300]);
        }
        assert!(spilled.heap_bytes() <= TAIL_BYTES + 64, "bounded at {k}");
    }
    let len = spilled.spilled() + spilled.tail().len() as u64;
    assert!(spilled.spilled() > 0 && spilled.spilled() < len);
    assert_eq!(kept.spilled(), 0);
    let (parts, all) = (spilled.into_parts(), kept.into_parts());
    assert_eq!(all.spilled, None);
    // The report's read: after the run's flush, through the spool's index.
    spool.flush();
    let back = spool.load(parts.spilled.unwrap()).unwrap();
    assert_eq!(parts.join(&back).unwrap(), all.join(&[]).unwrap());
    // Fewer bytes than were spilled is an error, not a shorter log.
    assert!(parts.join(&back[1..]).unwrap_err().contains("read back"));
}

#[test]
fn a_short_log_never_reaches_the_spool() {
    let tmp = tempfile::tempdir().unwrap();
    let spool = Spool::create(tmp.path()).unwrap();
    let mut log = SpilledLog::spilling(spool.session().log());
    log.push(&[1, 2, 3]);
    assert_eq!(log.spilled(), 0);
    let parts = log.into_parts();
    assert_eq!(parts.spilled, None);
    assert_eq!(parts.join(&[]).unwrap(), [1, 2, 3]);
}

#[test]
fn ending_a_spilled_log_reads_nothing_back() {
    // With the writer gone, any read-back or flush would fail or return nothing: the
    // session's end still gives its parts whole, and only the report's read fails,
    // naming the spool file.
    let tmp = tempfile::tempdir().unwrap();
    let spool = Spool::create(tmp.path()).unwrap();
    let mut log = SpilledLog::spilling(spool.session().log());
    spool.close().unwrap();
    for k in 0..2_000 {
        log.push(&value(k));
    }
    let spilled = log.spilled();
    assert!(spilled > 0);
    let parts = log.into_parts();
    assert_eq!(parts.spilled.map(|s| s.len), Some(spilled));
    let e = spool.load(parts.spilled.unwrap()).unwrap_err().to_string();
    assert!(e.contains("spool file"), "{e}");
}
