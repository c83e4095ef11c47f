use super::*;

fn masked_header(b0: u8, len: u64) -> Vec<u8> {
    let mut h = vec![b0, 0x80 | 127];
    h.extend_from_slice(&len.to_be_bytes());
    h.extend_from_slice(&[1, 2, 3, 4]);
    h
}

#[test]
fn a_huge_header_fails_before_its_payload_arrives() {
    let mut s = FrameScanner::new(1000);
    let h = masked_header(0x82, 1 << 30);
    // Split mid-header: nothing is decided until the length is known.
    assert!(s.feed(&h[..5]).is_ok());
    let e = s.feed(&h[5..]).unwrap_err();
    assert_eq!(
        e,
        "frame of 1073741824 bytes exceeds max_frame_bytes (1000)"
    );
}

#[test]
fn frames_within_the_limit_pass_and_continuations_add_up() {
    let mut s = FrameScanner::new(1000);
    let mut first = masked_header(0x02, 600); // binary, not final
    first.extend_from_slice(&[0u8; 600]);
    assert!(s.feed(&first).is_ok());
    let e = s.feed(&masked_header(0x80, 600)).unwrap_err();
    assert!(e.starts_with("message of at least 1200 bytes"), "{e}");
    let mut ok = FrameScanner::new(1000);
    for _ in 0..3 {
        let mut f = masked_header(0x82, 900);
        f.extend_from_slice(&[0u8; 900]);
        assert!(ok.feed(&f).is_ok());
    }
}

#[test]
fn headers_read_in_place_or_across_reads_give_the_same_verdict() {
    let mut stream = Vec::new();
    for (b0, len) in [(0x81u8, 10u64), (0x82, 200), (0x82, 900)] {
        let mut h = masked_header(b0, len);
        h.extend(std::iter::repeat_n(0u8, len as usize));
        stream.extend(h);
    }
    let over = masked_header(0x81, 1001);
    for cut in 0..=stream.len() {
        let mut s = FrameScanner::new(1000);
        assert!(s.feed(&stream[..cut]).is_ok(), "cut {cut}");
        assert!(s.feed(&stream[cut..]).is_ok(), "cut {cut}");
        assert!(
            (s.skip, s.head.len()) == (0, 0),
            "cut {cut}: not at a frame's start"
        );
        let e = s.feed(&over).unwrap_err();
        assert!(e.starts_with("frame of 1001 bytes"), "cut {cut}: {e}");
    }
}
