//! Spool tests: positional writes in any order, the flush barrier, write errors named
//! at read-back, and the directory's removal.

use bytes::Bytes;

use super::{Span, Spool};

fn chunk(tag: u8, len: usize) -> Bytes {
    Bytes::from(
        (0..len)
            .map(|i| tag.wrapping_add(i as u8))
            .collect::<Vec<u8>>(),
    )
}

/// Bytes in the spool file once every write sent so far is done.
fn flushed_len(spool: &Spool) -> u64 {
    spool.flush();
    std::fs::metadata(spool.dir().join("spool.bin")).map_or(0, |m| m.len())
}

#[test]
fn out_of_order_positional_writes_read_back_exactly() {
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
    let s = spool.session();
    let (a, b, c) = (chunk(1, 10), chunk(50, 7), chunk(200, 4));
    // Written last first: positions decide, not arrival.
    s.write_at(17, c.clone());
    s.write_at(10, b.clone());
    s.write_at(0, a.clone());
    spool.flush();
    let span = |offset, len| Span {
        file: 0,
        offset,
        len,
    };
    assert_eq!(spool.load(span(0, 10)).unwrap(), a);
    assert_eq!(spool.load(span(10, 7)).unwrap(), b);
    assert_eq!(spool.load(span(17, 4)).unwrap(), c);
    let mut whole = a.to_vec();
    whole.extend_from_slice(&b);
    whole.extend_from_slice(&c);
    assert_eq!(spool.load(span(0, 21)).unwrap(), whole);
}

#[test]
fn sessions_append_to_their_own_logical_files_in_one_spool_file() {
    let tmp = tempfile::tempdir().unwrap();
    let spool = Spool::create(tmp.path()).unwrap();
    let (mut s1, mut s2) = (spool.session(), spool.session());
    let x1 = s1.append(chunk(3, 6));
    let y1 = s2.append(chunk(9, 4));
    let x2 = s1.append(chunk(77, 2));
    assert_eq!((x1.file, x1.offset, x2.offset), (0, 0, 6));
    assert_eq!((y1.file, y1.offset, y1.len), (1, 0, 4));
    // Dropping a handle hands over its pending batch before the flush barrier.
    drop((s1, s2));
    spool.flush();
    assert_eq!(spool.load(x1).unwrap(), chunk(3, 6));
    assert_eq!(spool.load(x2).unwrap(), chunk(77, 2));
    assert_eq!(spool.load(y1).unwrap(), chunk(9, 4));
    assert_eq!(spool.load(Span { len: 0, ..x2 }).unwrap(), Bytes::new());
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
    let mut handles: Vec<_> = (0..5).map(|_| spool.session().with_batch(1_000)).collect();
    let mut spans = Vec::new();
    for round in 0..40u8 {
        for (k, h) in handles.iter_mut().enumerate() {
            let c = chunk(round.wrapping_mul(7).wrapping_add(k as u8), 300 + k * 10);
            spans.push((h.append(c.clone()), c));
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
        len: 40 * 330,
    };
    let expect: Vec<u8> = spans
        .iter()
        .filter(|(s, _)| s.file == 3)
        .flat_map(|(_, b)| b.to_vec())
        .collect();
    assert_eq!(spool.load(whole).unwrap(), expect);
}

#[test]
fn flush_is_a_barrier_for_every_write_sent_before_it() {
    let tmp = tempfile::tempdir().unwrap();
    let spool = Spool::create(tmp.path()).unwrap();
    let mut s = spool.session();
    let spans: Vec<Span> = (0..200u8).map(|i| s.append(chunk(i, 480))).collect();
    s.send_pending();
    spool.flush();
    assert_eq!(flushed_len(&spool), 200 * 480);
    for (i, span) in spans.into_iter().enumerate() {
        assert_eq!(spool.load(span).unwrap(), chunk(i as u8, 480));
    }
}

#[test]
fn appends_are_handed_over_in_batches_and_the_rest_on_drop() {
    let tmp = tempfile::tempdir().unwrap();
    let spool = Spool::create(tmp.path()).unwrap();
    let mut s = spool.session();
    // Three 100 ms deltas at 24 kHz stay below one batch: nothing reaches the writer.
    let mut spans: Vec<(Span, Bytes)> = Vec::new();
    for i in 0..3u8 {
        let c = chunk(i, 4_800);
        spans.push((s.append(c.clone()), c));
    }
    assert_eq!(flushed_len(&spool), 0);
    // The fourth crosses BATCH_BYTES (16 KiB): the whole batch goes out as one write.
    let c = chunk(3, 4_800);
    spans.push((s.append(c.clone()), c));
    assert_eq!(flushed_len(&spool), 19_200);
    // A large chunk with nothing pending goes out by itself; one behind a pending
    // small one joins its batch.
    for (tag, len) in [(4u8, 20_000), (5, 100), (6, 20_000), (7, 50)] {
        let c = chunk(tag, len);
        spans.push((s.append(c.clone()), c));
    }
    assert_eq!(flushed_len(&spool), 19_200 + 20_000 + 20_100);
    // The last small chunk is pending until the handle is dropped.
    drop(s);
    assert_eq!(flushed_len(&spool), 19_200 + 20_000 + 20_100 + 50);
    for (span, bytes) in spans {
        assert_eq!(spool.load(span).unwrap(), bytes);
    }
}

#[test]
fn a_handle_with_a_smaller_batch_hands_over_sooner() {
    let tmp = tempfile::tempdir().unwrap();
    let spool = Spool::create(tmp.path()).unwrap();
    let mut s = spool.session().with_batch(1_000);
    let a = s.append(chunk(1, 600));
    assert_eq!(flushed_len(&spool), 0);
    let b = s.append(chunk(2, 600));
    assert_eq!(
        flushed_len(&spool),
        1_200,
        "the second line crossed the batch"
    );
    let c = s.append(chunk(3, 1_000));
    assert_eq!(
        flushed_len(&spool),
        2_200,
        "a batch-sized append with nothing pending goes at once"
    );
    for (span, tag, len) in [(a, 1, 600), (b, 2, 600), (c, 3, 1_000)] {
        assert_eq!(spool.load(span).unwrap(), chunk(tag, len));
    }
}

#[test]
fn a_write_error_surfaces_at_load_naming_the_file() {
    let tmp = tempfile::tempdir().unwrap();
    let spool = Spool::create(tmp.path()).unwrap();
    let mut s = spool.session();
    // The directory vanishes under the writer: opening the spool file fails.
    std::fs::remove_dir_all(spool.dir()).unwrap();
    let span = s.append(chunk(1, 8));
    s.send_pending();
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
    s.append(chunk(1, 8));
    spool.close().unwrap();
    assert!(!dir.exists());
    spool.close().unwrap();
    // A handle that outlives the spool records the loss instead of blocking.
    s.append(chunk(2, 8));
    drop(s);

    let dropped = Spool::create(tmp.path()).unwrap();
    let dir2 = dropped.dir().to_path_buf();
    assert_ne!(dir, dir2);
    dropped.session().append(chunk(3, 8));
    drop(dropped);
    assert!(!dir2.exists());
}

#[test]
fn spools_of_dead_processes_are_swept_at_create() {
    let tmp = tempfile::tempdir().unwrap();
    // A process that has exited and been reaped: its pid is gone.
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let dead = child.id();
    child.wait().unwrap();
    let dead_dir = tmp.path().join(format!("rtload-spool-{dead}-0"));
    std::fs::create_dir(&dead_dir).unwrap();
    std::fs::write(dead_dir.join("spool.bin"), b"xx").unwrap();
    let live = Spool::create(tmp.path()).unwrap();
    assert!(!dead_dir.exists(), "a killed run's spool is removed");
    let other = Spool::create(tmp.path()).unwrap();
    assert!(live.dir().is_dir(), "this process's spools stay");
    drop((live, other));
}
