//! Packing: every item comes back byte for byte, mappings fill before a new one opens.

use super::{Packed, Packer, Ticket};

#[test]
fn every_item_comes_back_as_pushed_across_mappings() {
    let mut p = Packer::with_chunk_bytes(10);
    let items: Vec<Vec<u8>> = vec![
        b"abcd".to_vec(),
        b"efgh".to_vec(),
        b"ij".to_vec(), // fills the first mapping exactly
        b"k".to_vec(),  // opens the second
        Vec::new(),
        b"a larger item than a mapping".to_vec(), // its own mapping
        b"lmno".to_vec(),
    ];
    let tickets: Vec<Ticket> = items.iter().map(|i| p.push(i).unwrap()).collect();
    let packed = p.finish().unwrap();
    for (t, i) in tickets.iter().zip(&items) {
        assert_eq!(&packed.get(t).unwrap()[..], &i[..]);
    }
    let all = packed.get_all(&tickets).unwrap();
    assert_eq!(all.iter().map(|b| b.to_vec()).collect::<Vec<_>>(), items);
    assert_eq!(
        packed.mappings(),
        4,
        "the item past a mapping's size seals the open one"
    );
}

#[test]
fn slices_keep_their_mapping_after_the_packed_set_is_dropped() {
    let mut p = Packer::new();
    let t = p.push(b"kept").unwrap();
    let packed = p.finish().unwrap();
    let b = packed.get(&t).unwrap();
    drop(packed);
    assert_eq!(&b[..], b"kept");
}

#[test]
fn a_ticket_naming_no_mapping_gets_empty_bytes() {
    let mut p = Packer::with_chunk_bytes(4);
    let _ = p.push(b"ab").unwrap();
    let _ = p.push(b"cdef").unwrap();
    let foreign = p.push(b"gh").unwrap();
    let packed = Packer::new().finish().unwrap();
    assert!(packed.get(&foreign).is_none());
    let err = packed.get_all([&foreign]).unwrap_err();
    assert!(err.to_string().contains("no packed mapping"), "{err}");
    assert_eq!(Packed::default().mappings(), 0);
}
