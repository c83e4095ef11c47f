//! Writer tests: stretches across block boundaries and flushes read back exactly, the
//! readable end only ever covers records wholly in the file, a flush pads the file with
//! zeros, and a failed write leaves a hole the index steps over.

use std::sync::{Arc, Mutex};

use bytes::Bytes;

use super::super::extents::{HEADER_BYTES, Index, header};
use super::super::{Errors, Extent, Piece, Span, Spool, Written};
use super::{ALIGN, BLOCK_BYTES, Writer};

const H: usize = HEADER_BYTES;

fn chunk(tag: u8, len: usize) -> Bytes {
    Bytes::from(
        (0..len)
            .map(|i| tag.wrapping_add((i % 251) as u8))
            .collect::<Vec<u8>>(),
    )
}

fn writer(dir: &std::path::Path) -> (Writer, Arc<Mutex<Written>>) {
    let written = Arc::new(Mutex::new(Written::default()));
    let w = Writer::new(
        dir.join("spool.bin"),
        Errors::default(),
        Arc::clone(&written),
    );
    (w, written)
}

fn accept(w: &mut Writer, file: u64, offset: u64, pcm: &[u8]) {
    let piece = Piece {
        file,
        offset,
        len: pcm.len() as u64,
    };
    w.accept(piece, pcm);
}

#[test]
fn stretches_across_blocks_and_flushes_read_back_exactly() {
    let tmp = tempfile::tempdir().unwrap();
    let spool = Spool::create(tmp.path()).unwrap();
    let mut sessions: Vec<_> = (0..3).map(|_| spool.session()).collect();
    let mut kept: Vec<(Span, Bytes)> = Vec::new();
    // Odd sizes from many sessions, one larger than a block, with a flush in between:
    // full blocks, a carried unaligned tail and a stretch split over three blocks.
    let sizes = [4_801, 17_000, 333, BLOCK_BYTES + 12_345, 65_537, 7];
    for round in 0..3u8 {
        for (i, &len) in sizes.iter().enumerate() {
            let s = &mut sessions[i % 3];
            let c = chunk(round * 16 + i as u8, len);
            kept.push((s.append(&c), c));
        }
        spool.flush();
    }
    for (span, bytes) in &kept {
        assert_eq!(&spool.load(*span).unwrap(), bytes, "{span:?}");
    }
}

#[test]
fn a_record_is_readable_only_once_all_its_bytes_are_written() {
    let tmp = tempfile::tempdir().unwrap();
    let (mut w, written) = writer(tmp.path());
    let state = |written: &Arc<Mutex<Written>>| {
        let w = written.lock().unwrap();
        (w.bytes, w.end)
    };
    accept(&mut w, 0, 0, &chunk(1, 100));
    assert_eq!(state(&written), (0, 0), "still in the block");
    // One that fills the block and runs past it: the block is written, which holds
    // all of the first record but only part of the second.
    accept(&mut w, 1, 0, &chunk(2, BLOCK_BYTES));
    assert_eq!(state(&written), (100, (H + 100) as u64));
    w.write_block();
    let end = (2 * H + 100 + BLOCK_BYTES) as u64;
    assert_eq!(state(&written), (100 + BLOCK_BYTES as u64, end));
    let file = std::fs::File::open(tmp.path().join("spool.bin")).unwrap();
    let mut index = Index::default();
    index.scan(&file, end, &[]).unwrap();
    let extent = |start, len, physical| Extent {
        start,
        len,
        physical,
    };
    assert_eq!(index.get(0).unwrap().from(0), [extent(0, 100, H as u64)]);
    assert_eq!(
        index.get(1).unwrap().from(0),
        [extent(0, BLOCK_BYTES as u64, (2 * H + 100) as u64)]
    );
}

#[test]
fn a_flush_pads_the_file_with_zeros_and_rewrites_the_tail_in_place() {
    let tmp = tempfile::tempdir().unwrap();
    let (mut w, _written) = writer(tmp.path());
    let path = tmp.path().join("spool.bin");
    let first = chunk(3, ALIGN + 10);
    accept(&mut w, 0, 0, &first);
    w.write_block();
    let file = std::fs::read(&path).unwrap();
    assert_eq!(file.len(), 2 * ALIGN);
    assert_eq!(&file[..H], &header(0, 0, first.len() as u64));
    assert_eq!(&file[H..H + ALIGN + 10], &first[..]);
    assert!(file[H + ALIGN + 10..].iter().all(|&b| b == 0));
    // What follows lands right after the tail, which is written again with it.
    accept(&mut w, 0, (ALIGN + 10) as u64, &chunk(9, 20));
    w.write_block();
    let file = std::fs::read(&path).unwrap();
    assert_eq!(file.len(), 2 * ALIGN);
    assert_eq!(&file[H..H + ALIGN + 10], &first[..]);
    let second = 2 * H + ALIGN + 10;
    assert_eq!(&file[second..second + 20], &chunk(9, 20)[..]);
}

#[test]
fn a_flush_with_nothing_new_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let (mut w, written) = writer(tmp.path());
    w.write_block();
    assert!(!tmp.path().join("spool.bin").exists());
    accept(&mut w, 0, 0, &chunk(1, 10));
    w.write_block();
    w.write_block();
    assert_eq!(written.lock().unwrap().bytes, 10);
    assert_eq!(written.lock().unwrap().end, (H + 10) as u64);
    assert_eq!(
        std::fs::metadata(tmp.path().join("spool.bin"))
            .unwrap()
            .len(),
        ALIGN as u64
    );
}

#[test]
fn without_direct_io_the_same_aligned_writes_go_through_the_page_cache() {
    let tmp = tempfile::tempdir().unwrap();
    let (mut w, written) = writer(tmp.path());
    w.try_direct = false;
    let (a, b) = (chunk(5, BLOCK_BYTES - 7), chunk(6, 3 * ALIGN + 1));
    accept(&mut w, 0, 0, &a);
    accept(&mut w, 1, 0, &b); // crosses the block: the first block goes out full
    w.write_block();
    assert_eq!(w.out.as_ref().map(|(_, direct)| *direct), Some(false));
    let file = std::fs::read(tmp.path().join("spool.bin")).unwrap();
    assert_eq!(&file[H..H + a.len()], &a[..]);
    let b_at = 2 * H + a.len();
    assert_eq!(&file[b_at..b_at + b.len()], &b[..]);
    assert_eq!(file.len(), (b_at + b.len()).next_multiple_of(ALIGN));
    assert_eq!(written.lock().unwrap().bytes, (a.len() + b.len()) as u64);
}

#[test]
fn the_spool_file_is_opened_for_direct_io_where_the_file_system_allows() {
    use std::os::unix::fs::OpenOptionsExt as _;
    let tmp = tempfile::tempdir().unwrap();
    // Whether this file system takes O_DIRECT, asked of it directly.
    let allows = std::fs::OpenOptions::new()
        .create(true)
        .write(true)
        .custom_flags(super::O_DIRECT)
        .open(tmp.path().join("probe"))
        .is_ok();
    let (mut w, _written) = writer(tmp.path());
    accept(&mut w, 0, 0, &chunk(1, 10));
    assert_eq!(w.out.as_ref().map(|(_, direct)| *direct), Some(allows));
    // Either way the bytes reach the file.
    w.write_block();
    assert_eq!(
        &std::fs::read(tmp.path().join("spool.bin")).unwrap()[H..H + 10],
        &chunk(1, 10)[..]
    );
}

#[test]
fn a_failed_write_inside_a_large_stretch_is_recorded_and_the_writer_goes_on() {
    let tmp = tempfile::tempdir().unwrap();
    let errors = Errors::default();
    let written = Arc::new(Mutex::new(Written::default()));
    let path = tmp.path().join("spool.bin");
    let mut w = Writer::new(path.clone(), errors.clone(), Arc::clone(&written));
    // A handle that cannot write: every write fails.
    std::fs::write(&path, b"").unwrap();
    w.out = Some((std::fs::File::open(&path).unwrap(), false));
    // Two and a half blocks: the first block's write fails, the rest of the stretch
    // fills a block with nothing to index, then a later stretch is accepted.
    accept(&mut w, 7, 0, &chunk(1, 2 * BLOCK_BYTES + BLOCK_BYTES / 2));
    accept(&mut w, 8, 0, &chunk(2, 10));
    w.write_block();
    let errors = errors.lock().unwrap();
    assert!(errors.contains_key(&7), "{errors:?}");
    assert!(
        errors.contains_key(&8),
        "that block's write failed too: {errors:?}"
    );
    let written = written.lock().unwrap();
    assert_eq!(written.bytes, 0, "nothing unwritten is readable");
    assert_eq!(written.end, 0);
    // A hole per failed write: the first record, then the second to the padded end.
    let first_end = (2 * BLOCK_BYTES + BLOCK_BYTES / 2 + H) as u64;
    let second_end = (first_end + (H + 10) as u64).next_multiple_of(ALIGN as u64);
    assert_eq!(written.holes, [(0, first_end), (first_end, second_end)]);
}

#[test]
fn records_after_a_failed_write_read_back_past_its_hole() {
    use std::os::unix::fs::FileExt as _;
    let tmp = tempfile::tempdir().unwrap();
    let (mut w, written) = writer(tmp.path());
    let path = tmp.path().join("spool.bin");
    let (a, b, c) = (chunk(1, 100), chunk(2, 300), chunk(3, 700));
    accept(&mut w, 0, 0, &a);
    w.write_block(); // written; its unaligned tail stays in the block
    // The next write fails (a handle that cannot write) ...
    w.out = Some((std::fs::File::open(&path).unwrap(), false));
    accept(&mut w, 1, 0, &b);
    w.write_block();
    // ... and the one after succeeds again.
    let writable = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    w.out = Some((writable, false));
    accept(&mut w, 2, 0, &c);
    w.write_block();
    let (end, holes) = {
        let w = written.lock().unwrap();
        (w.end, w.holes.clone())
    };
    assert_eq!(holes, [((H + 100) as u64, ALIGN as u64)]);
    let file = std::fs::File::open(&path).unwrap();
    let mut index = Index::default();
    index.scan(&file, end, &holes).unwrap();
    assert!(index.get(1).is_none(), "the failed record is not readable");
    for (logical, bytes) in [(0, &a), (2, &c)] {
        let e = index.get(logical).unwrap().from(0)[0];
        let mut back = vec![0u8; e.len as usize];
        file.read_exact_at(&mut back, e.physical).unwrap();
        assert_eq!(&back, bytes, "logical file {logical}");
    }
}
