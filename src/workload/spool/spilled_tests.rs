//! Spilled log tests: a spilling log gives back the bytes an in-memory one holds, keeps
//! at most its tail in memory, and names the spool file when the read-back fails.

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
    let mut spilled = SpilledLog::spilling(spool.log());
    let mut kept = SpilledLog::default();
    let mut other = spool.session(); // another session's file between the pieces
    for k in 0..20_000 {
        spilled.push(&value(k));
        kept.push(&value(k));
        if k % 1_000 == 0 {
            other.append(&[0xAA; 300]);
        }
        assert!(spilled.heap_bytes() <= TAIL_BYTES + 16, "bounded at {k}");
    }
    assert!(spilled.spilled() > 0 && spilled.spilled() < spilled.len());
    assert_eq!(spilled.len(), kept.len());
    assert_eq!(spilled.bytes().unwrap(), kept.bytes().unwrap());
    // Read through the writer's record of the log's pieces, not the spool's whole index.
    assert_eq!(spool.shared.index.lock().unwrap().pieces(), 0);
    // Read again after more was pushed, once with every spilled piece already written
    // (no batch of its own to wait for).
    spilled.push(&value(7));
    kept.push(&value(7));
    spool.flush();
    assert_eq!(spilled.bytes().unwrap(), kept.bytes().unwrap());
}

#[test]
fn a_short_log_never_reaches_the_spool() {
    let tmp = tempfile::tempdir().unwrap();
    let spool = Spool::create(tmp.path()).unwrap();
    let mut log = SpilledLog::spilling(spool.log());
    assert!(log.is_empty());
    log.push(&[1, 2, 3]);
    assert_eq!(log.spilled(), 0);
    assert!(matches!(
        log.bytes().unwrap(),
        std::borrow::Cow::Borrowed(&[1, 2, 3])
    ));
}

#[test]
fn a_read_back_after_the_spool_closed_is_an_error_naming_the_spool_file() {
    let tmp = tempfile::tempdir().unwrap();
    let spool = Spool::create(tmp.path()).unwrap();
    let mut log = SpilledLog::spilling(spool.log());
    spool.close().unwrap();
    for k in 0..2_000 {
        log.push(&value(k));
    }
    assert!(log.spilled() > 0);
    let e = log.bytes().unwrap_err().to_string();
    assert!(e.contains("spool file"), "{e}");
}

#[test]
fn only_a_log_file_reads_back_during_the_run() {
    let tmp = tempfile::tempdir().unwrap();
    let spool = Spool::create(tmp.path()).unwrap();
    let mut file = spool.session();
    file.append(b"pcm");
    let e = file.read_back().unwrap_err().to_string();
    assert!(e.contains("is not a log"), "{e}");
}
