use super::*;
use std::io::Cursor;

fn e(start: u64, len: u64, physical: u64) -> Extent {
    Extent {
        start,
        len,
        physical,
    }
}

/// A spool file's bytes: each piece as header + bytes, back to back.
fn file_of(pieces: &[(u64, u64, &[u8])]) -> Vec<u8> {
    let mut out = Vec::new();
    for &(file, offset, bytes) in pieces {
        out.extend_from_slice(&header(file, offset, bytes.len() as u64));
        out.extend_from_slice(bytes);
    }
    out
}

#[test]
fn lookup_starts_at_the_stretch_holding_the_offset() {
    let mut x = Extents::default();
    for (i, p) in [(0u64, 40u64), (10, 80), (20, 10)] {
        x.insert(e(i, 10, p));
    }
    assert_eq!(x.from(0).len(), 3);
    assert_eq!(x.from(0)[0].start, 0);
    assert_eq!(x.from(9)[0].start, 0);
    assert_eq!(x.from(10)[0].start, 10);
    assert_eq!(x.from(25)[0].start, 20);
    assert_eq!(
        x.from(99).len(),
        1,
        "past the end: the last, which the reader skips"
    );
}

#[test]
fn a_stretch_recorded_out_of_order_goes_in_its_place() {
    let mut x = Extents::default();
    x.insert(e(20, 5, 0));
    x.insert(e(0, 10, 5));
    x.insert(e(10, 10, 15));
    let starts: Vec<u64> = x.from(0).iter().map(|s| s.start).collect();
    assert_eq!(starts, [0, 10, 20]);
}

#[test]
fn the_headers_give_every_logical_file_its_stretches() {
    let bytes = file_of(&[(0, 0, b"abc"), (1, 0, b"wxyz"), (0, 3, b"de")]);
    let mut index = Index::default();
    index
        .scan(Cursor::new(&bytes), bytes.len() as u64, &[])
        .unwrap();
    let h = HEADER_BYTES as u64;
    assert_eq!(
        index.get(0).unwrap().from(0),
        [e(0, 3, h), e(3, 2, 3 * h + 7)]
    );
    assert_eq!(index.get(1).unwrap().from(0), [e(0, 4, 2 * h + 3)]);
    assert!(index.get(2).is_none());
}

#[test]
fn a_scan_goes_on_from_where_the_last_one_stopped() {
    let bytes = file_of(&[(0, 0, b"abc"), (0, 3, b"de"), (0, 5, b"f")]);
    let first_two = (2 * HEADER_BYTES + 5) as u64;
    let mut index = Index::default();
    index.scan(Cursor::new(&bytes), first_two, &[]).unwrap();
    assert_eq!(index.get(0).unwrap().from(0).len(), 2);
    index
        .scan(Cursor::new(&bytes), bytes.len() as u64, &[])
        .unwrap();
    assert_eq!(index.get(0).unwrap().from(0).len(), 3);
}

#[test]
fn holes_are_stepped_over_and_a_bad_header_is_an_error() {
    let mut bytes = file_of(&[(0, 0, b"abc")]);
    let hole = (bytes.len() as u64, bytes.len() as u64 + 100);
    bytes.extend_from_slice(&[0xAB; 100]); // what a failed write left
    bytes.extend_from_slice(&file_of(&[(1, 0, b"xy")]));
    let mut index = Index::default();
    index
        .scan(Cursor::new(&bytes), bytes.len() as u64, &[hole])
        .unwrap();
    assert_eq!(index.get(1).unwrap().from(0)[0].physical, hole.1 + 24);
    // Without the hole the garbage is read as a header, and refused.
    let err = Index::default()
        .scan(Cursor::new(&bytes), bytes.len() as u64, &[])
        .unwrap_err()
        .to_string();
    assert!(err.contains("bad record header at byte 27"), "{err}");
}
