//! Spool tests: sessions' logical files in one file, the shared batch and the flush
//! barrier, write errors named at read-back, and the directory's removal.

use bytes::Bytes;

use super::{BATCH_BYTES, SessionSpool, Span, Spool};

fn chunk(tag: u8, len: usize) -> Bytes {
    Bytes::from(
        (0..len)
            .map(|i| tag.wrapping_add(i as u8))
            .collect::<Vec<u8>>(),
    )
}

/// Bytes the writer has put in the spool file (and indexed) once every batch handed
/// over so far is written; what is still gathering is not handed over. (The file itself
/// is longer: a write pads it to the direct-write alignment.)
fn handed_over(spool: &Spool) -> u64 {
    spool.sync();
    spool
        .shared
        .written
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .bytes
}

#[test]
fn sessions_append_to_their_own_logical_files_in_one_spool_file() {
    let tmp = tempfile::tempdir().unwrap();
    let spool = Spool::create(tmp.path()).unwrap();
    assert!(spool.dir().starts_with(tmp.path()));
    let name = spool
        .dir()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    assert!(name.starts_with(&format!("rtload-spool-{}-", std::process::id())));
    let (mut s1, mut s2) = (spool.session(), spool.session());
    let x1 = s1.append(&chunk(3, 6));
    let y1 = s2.append(&chunk(9, 4));
    let x2 = s1.append(&chunk(77, 2));
    assert_eq!((x1.file, x1.offset, x2.offset), (0, 0, 6));
    assert_eq!((y1.file, y1.offset, y1.len), (1, 0, 4));
    // The flush hands over the partial batch, whether or not the handles are alive.
    spool.flush();
    assert_eq!(spool.load(x1).unwrap(), chunk(3, 6));
    assert_eq!(spool.load(x2).unwrap(), chunk(77, 2));
    assert_eq!(spool.load(y1).unwrap(), chunk(9, 4));
    let mut both = chunk(3, 6).to_vec();
    both.extend_from_slice(&chunk(77, 2));
    assert_eq!(spool.load(Span { len: 8, ..x1 }).unwrap(), both);
    assert_eq!(spool.load(Span { len: 0, ..x2 }).unwrap(), Bytes::new());
    drop((s1, s2));
    // One file on disk, however many sessions.
    let names: Vec<_> = std::fs::read_dir(spool.dir())
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(names, ["spool.bin"]);
    // A span that reaches past what was written is an error, not zeros.
    let err = spool.load(Span { len: 3, ..x2 }).unwrap_err().to_string();
    assert!(err.contains("bytes 8..9 were never written"), "{err}");
}

#[test]
fn interleaved_batches_of_many_sessions_read_back_per_session() {
    let tmp = tempfile::tempdir().unwrap();
    let spool = Spool::create(tmp.path()).unwrap();
    let mut handles: Vec<_> = (0..5).map(|_| spool.session()).collect();
    let mut spans = Vec::new();
    // 40 rounds of 5 × ~20 KB: many batches, each holding pieces of several sessions.
    for round in 0..40u8 {
        for (k, h) in handles.iter_mut().enumerate() {
            let c = chunk(round.wrapping_mul(7).wrapping_add(k as u8), 20_000 + k * 10);
            spans.push((h.append(&c), c));
        }
    }
    drop(handles);
    spool.flush();
    for (span, bytes) in &spans {
        assert_eq!(&spool.load(*span).unwrap(), bytes);
    }
    // A stretch that crosses batch boundaries reads back whole.
    let whole = Span {
        file: 3,
        offset: 0,
        len: 40 * 20_030,
    };
    let expect: Vec<u8> = spans
        .iter()
        .filter(|(s, _)| s.file == 3)
        .flat_map(|(_, b)| b.to_vec())
        .collect();
    assert_eq!(spool.load(whole).unwrap(), expect);
}

#[test]
fn nothing_is_indexed_in_memory_until_the_first_read_back() {
    let tmp = tempfile::tempdir().unwrap();
    let spool = Spool::create(tmp.path()).unwrap();
    let mut s = spool.session();
    let spans: Vec<Span> = (0..2_000u32)
        .map(|i| s.append(&chunk(i as u8, 960)))
        .collect();
    spool.flush();
    // 2,000 pieces written, and the run's memory holds no entry for any of them.
    assert_eq!(handed_over(&spool), 2_000 * 960);
    assert_eq!(spool.index.lock().unwrap().pieces(), 0);
    // The first read builds the index from the file's headers.
    assert_eq!(
        spool.load(spans[1_234]).unwrap(),
        chunk(1_234u32 as u8, 960)
    );
    assert_eq!(spool.index.lock().unwrap().pieces(), 2_000);
    // Later appends (a sweep's next point) are indexed by the next read.
    let more = s.append(&chunk(7, 10));
    spool.flush();
    assert_eq!(spool.load(more).unwrap(), chunk(7, 10));
    assert_eq!(spool.index.lock().unwrap().pieces(), 2_001);
}

#[test]
fn flush_is_a_barrier_for_every_append_before_it() {
    let tmp = tempfile::tempdir().unwrap();
    let spool = Spool::create(tmp.path()).unwrap();
    let mut s = spool.session();
    let spans: Vec<Span> = (0..200u8).map(|i| s.append(&chunk(i, 480))).collect();
    assert_eq!(
        handed_over(&spool),
        65_280,
        "136 lines fill a batch; 64 still gather"
    );
    spool.flush();
    assert_eq!(handed_over(&spool), 200 * 480);
    for (i, span) in spans.into_iter().enumerate() {
        assert_eq!(spool.load(span).unwrap(), chunk(i as u8, 480));
    }
}

#[test]
fn appends_of_every_session_are_handed_over_together_in_full_batches() {
    let tmp = tempfile::tempdir().unwrap();
    let spool = Spool::create(tmp.path()).unwrap();
    let (mut a, mut b) = (spool.session(), spool.session());
    let mut spans: Vec<(Span, Bytes)> = Vec::new();
    let mut put = |s: &mut SessionSpool, tag: u8, len: usize| {
        let c = chunk(tag, len);
        spans.push((s.append(&c), c));
    };
    // Two sessions' 100 ms deltas at 24 kHz gather in one batch: nothing is handed over
    // until one would take it past BATCH_BYTES (64 KiB).
    for i in 0..13u8 {
        put(if i % 2 == 0 { &mut a } else { &mut b }, i, 4_800);
    }
    assert_eq!(handed_over(&spool), 0);
    put(&mut a, 13, 4_800);
    assert_eq!(handed_over(&spool), 13 * 4_800, "the 14th would not fit");
    // One larger than a batch goes after what was gathering, in a batch of its own.
    put(&mut b, 14, BATCH_BYTES + 1);
    assert_eq!(handed_over(&spool), 14 * 4_800 + BATCH_BYTES as u64 + 1);
    // An empty append takes no room.
    let empty = a.append(&[]);
    assert_eq!(empty.len, 0);
    spool.flush();
    assert_eq!(handed_over(&spool), 14 * 4_800 + BATCH_BYTES as u64 + 1);
    for (span, bytes) in spans {
        assert_eq!(spool.load(span).unwrap(), bytes);
    }
    assert_eq!(spool.load(empty).unwrap(), Bytes::new());
}

#[test]
fn a_write_error_surfaces_at_load_naming_the_file() {
    let tmp = tempfile::tempdir().unwrap();
    let spool = Spool::create(tmp.path()).unwrap();
    let mut s = spool.session();
    // The directory vanishes under the writer: opening the spool file fails.
    std::fs::remove_dir_all(spool.dir()).unwrap();
    let span = s.append(&chunk(1, 8));
    spool.flush();
    let err = spool.load(span).unwrap_err().to_string();
    let file = spool.dir().join("spool.bin");
    assert!(err.contains(&file.display().to_string()), "{err}");
    assert!(err.contains("write failed"), "{err}");
}

#[test]
fn close_and_drop_remove_the_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let spool = Spool::create(tmp.path()).unwrap();
    let dir = spool.dir().to_path_buf();
    let mut s = spool.session();
    s.append(&chunk(1, 8));
    spool.close().unwrap();
    assert!(!dir.exists());
    spool.close().unwrap();
    // A handle that outlives the spool never blocks.
    s.append(&chunk(2, 8));
    drop(s);

    let dropped = Spool::create(tmp.path()).unwrap();
    let dir2 = dropped.dir().to_path_buf();
    assert_ne!(dir, dir2);
    dropped.session().append(&chunk(3, 8));
    drop(dropped);
    assert!(!dir2.exists());
}

#[test]
fn spools_of_dead_processes_are_swept_at_create() {
    let tmp = tempfile::tempdir().unwrap();
    let dead = crate::util::fs::test_support::dead_pid();
    let dead_dir = tmp.path().join(format!("rtload-spool-{dead}-0"));
    std::fs::create_dir(&dead_dir).unwrap();
    std::fs::write(dead_dir.join("spool.bin"), b"xx").unwrap();
    let live = Spool::create(tmp.path()).unwrap();
    assert!(!dead_dir.exists(), "a killed run's spool is removed");
    let other = Spool::create(tmp.path()).unwrap();
    assert!(live.dir().is_dir(), "this process's spools stay");
    drop((live, other));
}

/// A recording longer than a copy piece, interleaved with another session's appends and
/// read back while the run is still appending: `copy_to` streams exactly the session's
/// bytes (as `load` does), and a failing destination's error comes back as it is.
#[test]
fn a_long_recording_is_copied_out_in_pieces_while_others_append() {
    let tmp = tempfile::tempdir().unwrap();
    let spool = Spool::create(tmp.path()).unwrap();
    let (mut video, mut other) = (spool.session(), spool.session());
    let mut want = Vec::new();
    for k in 0..40u8 {
        let c = chunk(k, 70_001);
        video.append(&c);
        want.extend_from_slice(&c);
        other.append(&chunk(k ^ 0x55, 3_000));
    }
    assert!(want.len() > 2 * super::COPY_BYTES);
    let whole = video.whole();
    assert_eq!((whole.offset, whole.len), (0, want.len() as u64));
    spool.flush();
    // The run goes on appending after the barrier.
    other.append(&chunk(1, BATCH_BYTES * 2));
    let mut copied = Vec::new();
    spool.copy_to(whole, &mut copied).unwrap();
    assert!(copied == want, "copied bytes differ");
    assert!(spool.load(whole).unwrap() == want);
    let full = &mut crate::util::fs::test_support::DiskFull;
    let e = spool.copy_to(whole, full).unwrap_err();
    assert_eq!(e.to_string(), "disk full");
}
