use super::*;

fn be32(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

#[test]
fn checksums_match_known_vectors() {
    assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
    assert_eq!(crc32(b""), 0);
    assert_eq!(adler32(b"Wikipedia"), 0x11E6_0398);
    assert_eq!(adler32(b""), 1);
}

#[test]
fn default_png_is_well_formed() {
    let png = default_image_png();
    assert_eq!(&png[..8], &PNG_SIGNATURE);
    // IHDR: length 13, type, width, height, depth 8, colour type 2.
    assert_eq!(be32(&png[8..12]), 13);
    assert_eq!(&png[12..16], b"IHDR");
    assert_eq!(be32(&png[16..20]), DEFAULT_IMAGE_WIDTH);
    assert_eq!(be32(&png[20..24]), DEFAULT_IMAGE_HEIGHT);
    assert_eq!(&png[24..29], &[8, 2, 0, 0, 0]);
    assert_eq!(be32(&png[29..33]), crc32(&png[12..29]));

    // Walk every chunk, checking CRCs, and decode the stored IDAT stream.
    let mut pos = 8;
    let mut idat = Vec::new();
    let mut kinds = Vec::new();
    while pos < png.len() {
        let len = be32(&png[pos..]) as usize;
        let kind = &png[pos + 4..pos + 8];
        let data = &png[pos + 8..pos + 8 + len];
        assert_eq!(
            be32(&png[pos + 8 + len..]),
            crc32(&png[pos + 4..pos + 8 + len])
        );
        if kind == b"IDAT" {
            idat.extend_from_slice(data);
        }
        kinds.push(String::from_utf8_lossy(kind).into_owned());
        pos += 12 + len;
    }
    assert_eq!(pos, png.len());
    assert_eq!(kinds, ["IHDR", "IDAT", "IEND"]);

    assert_eq!(&idat[..2], &[0x78, 0x01]);
    assert_eq!(u16::from_be_bytes([idat[0], idat[1]]) % 31, 0);
    let mut raw = Vec::new();
    let mut p = 2;
    loop {
        let header = idat[p];
        assert_eq!(header & 0b110, 0, "stored block");
        let len = u16::from_le_bytes([idat[p + 1], idat[p + 2]]);
        let nlen = u16::from_le_bytes([idat[p + 3], idat[p + 4]]);
        assert_eq!(len, !nlen);
        raw.extend_from_slice(&idat[p + 5..p + 5 + len as usize]);
        p += 5 + len as usize;
        if header & 1 == 1 {
            break;
        }
    }
    assert_eq!(be32(&idat[p..]), adler32(&raw));
    assert_eq!(p + 4, idat.len());
    let row = 1 + 3 * DEFAULT_IMAGE_WIDTH as usize;
    assert_eq!(raw.len(), row * DEFAULT_IMAGE_HEIGHT as usize);
    assert!(raw.chunks(row).all(|r| r[0] == 0));
    // Not a flat image: the top-left and bottom-left pixels differ.
    assert_ne!(&raw[1..4], &raw[raw.len() - row + 1..raw.len() - row + 4]);
}

#[test]
fn zlib_stored_splits_long_input() {
    let data = vec![7u8; 70_000];
    let z = zlib_stored(&data);
    assert_eq!(z[2], 0); // first block not final
    let second = 2 + 5 + 0xFFFF;
    assert_eq!(z[second], 1);
    assert_eq!(z.len(), 2 + 5 + 0xFFFF + 5 + (70_000 - 0xFFFF) + 4);
    let empty = zlib_stored(&[]);
    assert_eq!(
        empty,
        [0x78, 0x01, 0x01, 0x00, 0x00, 0xFF, 0xFF, 0, 0, 0, 1]
    );
}

#[test]
fn data_url_is_deterministic_base64_png() {
    let a = default_image_data_url();
    let b = default_image_data_url();
    assert_eq!(a, b);
    let body = a.strip_prefix("data:image/png;base64,").expect("prefix");
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(body)
        .expect("valid base64");
    assert_eq!(bytes, default_image_png());
    assert!(a.len() < 32 * 1024, "small: {} bytes", a.len());
}

#[test]
fn mime_guessed_from_extension() {
    let cases = [
        ("a.png", "image/png"),
        ("a.PNG", "image/png"),
        ("dir/a.jpg", "image/jpeg"),
        ("a.JPEG", "image/jpeg"),
        ("a.webp", "image/webp"),
        ("a.gif", "image/gif"),
        ("a.bmp", "image/bmp"),
        ("a.tiff", "image/tiff"),
        ("noext", "image/png"),
        ("a.weird", "image/png"),
    ];
    for (path, mime) in cases {
        assert_eq!(mime_for_path(Path::new(path)), mime, "{path}");
    }
}
