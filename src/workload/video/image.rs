//! First-frame images for the video workload: the generated default image (§7.8: no
//! download, a small deterministic PNG made in code) and the MIME type guessed for a
//! local image file before it is inlined as a `data:` URL (§2.3).
//!
//! The PNG is written by hand: one IHDR, one IDAT holding a zlib stream of "stored"
//! (uncompressed) deflate blocks, and IEND, with CRC-32 and Adler-32 computed here.

use std::path::Path;

use base64::Engine as _;

/// Width of the generated default image in pixels (832/8, the default geometry's aspect).
pub const DEFAULT_IMAGE_WIDTH: u32 = 104;
/// Height of the generated default image in pixels (480/8).
pub const DEFAULT_IMAGE_HEIGHT: u32 = 60;

/// The generated default first frame as a `data:image/png;base64,…` URL.
///
/// A 104×60 RGB scene: a sky gradient above a ground gradient with a horizon line, the
/// same bytes on every call and every machine.
pub fn default_image_data_url() -> String {
    let png = default_image_png();
    format!(
        "data:image/png;base64,{}",
        base64::engine::general_purpose::STANDARD.encode(png)
    )
}

/// The generated default first frame as PNG bytes.
pub fn default_image_png() -> Vec<u8> {
    let (w, h) = (DEFAULT_IMAGE_WIDTH, DEFAULT_IMAGE_HEIGHT);
    let mut raw = Vec::with_capacity((h * (1 + 3 * w)) as usize);
    for y in 0..h {
        raw.push(0); // filter type None
        for x in 0..w {
            raw.extend_from_slice(&pixel(x, y, w, h));
        }
    }
    encode_png_rgb(w, h, &raw)
}

/// The MIME type for a local image file, guessed from its extension (case-insensitive);
/// `image/png` when the extension is missing or unknown, as the reference does.
pub fn mime_for_path(p: &Path) -> &'static str {
    let ext = p
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .unwrap_or_default();
    match ext.as_str() {
        "png" => "image/png",
        "jpg" | "jpeg" | "jpe" => "image/jpeg",
        "webp" => "image/webp",
        "gif" => "image/gif",
        "bmp" => "image/bmp",
        "tif" | "tiff" => "image/tiff",
        _ => "image/png",
    }
}

/// One pixel of the default scene: sky above 55% of the height, ground below.
fn pixel(x: u32, y: u32, w: u32, h: u32) -> [u8; 3] {
    let horizon = h * 11 / 20;
    let fx = |lo: u32, hi: u32| (lo + (hi - lo) * x / (w - 1)) as u8;
    if y < horizon {
        // Sky: deep blue at the top fading to pale near the horizon, warmer to the right.
        let t = y * 255 / horizon.max(1);
        let r = (60 + t * 140 / 255) as u8;
        let g = (110 + t * 110 / 255) as u8;
        let b = 235u8.saturating_sub((t * 20 / 255) as u8);
        [r.saturating_add(fx(0, 20)), g, b]
    } else if y == horizon {
        [90, 110, 80]
    } else {
        // Ground: green fading to brown towards the bottom edge.
        let t = (y - horizon) * 255 / (h - horizon).max(1);
        let r = (70 + t * 60 / 255) as u8;
        let g = (130u32.saturating_sub(t * 50 / 255)) as u8;
        let b = (50 + t * 10 / 255) as u8;
        [r, g.saturating_add(fx(0, 15)), b]
    }
}

/// Encode filtered scanlines (`raw`: one filter byte + `3·w` bytes per row) as an 8-bit
/// RGB PNG.
fn encode_png_rgb(w: u32, h: u32, raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(raw.len() + 128);
    out.extend_from_slice(&PNG_SIGNATURE);
    let mut ihdr = Vec::with_capacity(13);
    ihdr.extend_from_slice(&w.to_be_bytes());
    ihdr.extend_from_slice(&h.to_be_bytes());
    // Bit depth 8, colour type 2 (RGB), compression 0, filter 0, interlace 0.
    ihdr.extend_from_slice(&[8, 2, 0, 0, 0]);
    write_chunk(&mut out, b"IHDR", &ihdr);
    write_chunk(&mut out, b"IDAT", &zlib_stored(raw));
    write_chunk(&mut out, b"IEND", &[]);
    out
}

/// The 8-byte PNG file signature.
pub(crate) const PNG_SIGNATURE: [u8; 8] = [0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A];

/// Append one PNG chunk: length, type, data, CRC-32 over type + data.
fn write_chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    // PNG chunks are far below 2^31 bytes here (the image is a few KiB).
    out.extend_from_slice(&(data.len() as u32).to_be_bytes());
    let start = out.len();
    out.extend_from_slice(kind);
    out.extend_from_slice(data);
    let crc = crc32(&out[start..]);
    out.extend_from_slice(&crc.to_be_bytes());
}

/// A zlib stream holding `data` in stored deflate blocks (at most 65535 bytes each).
fn zlib_stored(data: &[u8]) -> Vec<u8> {
    // CMF 0x78 (deflate, 32K window), FLG 0x01 (no dict, fastest; 0x7801 % 31 == 0).
    let mut out = vec![0x78, 0x01];
    let mut blocks = data.chunks(0xFFFF).peekable();
    if blocks.peek().is_none() {
        out.extend_from_slice(&[0x01, 0x00, 0x00, 0xFF, 0xFF]);
    }
    while let Some(block) = blocks.next() {
        let last = blocks.peek().is_none();
        out.push(u8::from(last)); // BFINAL, BTYPE = 00 (stored)
        let len = block.len() as u16; // chunks(0xFFFF) bounds the length
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&(!len).to_le_bytes());
        out.extend_from_slice(block);
    }
    out.extend_from_slice(&adler32(data).to_be_bytes());
    out
}

/// CRC-32 (IEEE 802.3, reflected, polynomial 0xEDB88320) as PNG uses it.
pub(crate) fn crc32(data: &[u8]) -> u32 {
    let mut crc = 0xFFFF_FFFFu32;
    for &byte in data {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            let mask = (crc & 1).wrapping_neg();
            crc = (crc >> 1) ^ (0xEDB8_8320 & mask);
        }
    }
    !crc
}

/// Adler-32 as zlib uses it.
pub(crate) fn adler32(data: &[u8]) -> u32 {
    const MOD: u32 = 65_521;
    let (mut a, mut b) = (1u32, 0u32);
    for &byte in data {
        a = (a + u32::from(byte)) % MOD;
        b = (b + a) % MOD;
    }
    (b << 16) | a
}

#[cfg(test)]
#[path = "image_tests.rs"]
mod tests;
