//! A client data frame written in one pass (RFC 6455 §5.2): the header, a fresh random
//! mask key, and the payload copied after them and masked in place. What awc's encoder
//! writes for the same message, into a buffer the caller reuses: awc's goes into the
//! connection's write buffer, grown to the frame's size for every append (the drained
//! buffer is given back between sends). A compressed message (`permessage-deflate`) is
//! framed the same way with RSV1 set: the mask applies to the compressed bytes.

/// A buffer a frame is appended to: the shard's scratch `Vec` or a connection's write
/// buffer.
pub trait FrameBuf {
    /// Room for `n` more bytes.
    fn reserve_more(&mut self, n: usize);
    /// Appends `bytes`.
    fn put(&mut self, bytes: &[u8]);
    /// The bytes from `start` on.
    fn tail_mut(&mut self, start: usize) -> &mut [u8];
    /// Bytes held.
    fn filled(&self) -> usize;
}

impl FrameBuf for Vec<u8> {
    fn reserve_more(&mut self, n: usize) {
        self.reserve(n);
    }
    fn put(&mut self, bytes: &[u8]) {
        self.extend_from_slice(bytes);
    }
    fn tail_mut(&mut self, start: usize) -> &mut [u8] {
        &mut self[start..]
    }
    fn filled(&self) -> usize {
        self.len()
    }
}

impl FrameBuf for bytes::BytesMut {
    fn reserve_more(&mut self, n: usize) {
        self.reserve(n);
    }
    fn put(&mut self, bytes: &[u8]) {
        self.extend_from_slice(bytes);
    }
    fn tail_mut(&mut self, start: usize) -> &mut [u8] {
        &mut self[start..]
    }
    fn filled(&self) -> usize {
        self.len()
    }
}

/// The mask key repeated over a word, so eight payload bytes are masked at a time.
fn mask_word(key: [u8; 4]) -> u64 {
    u64::from_ne_bytes([
        key[0], key[1], key[2], key[3], key[0], key[1], key[2], key[3],
    ])
}

/// Appends one final (FIN) client frame of `opcode` (0x1 text, 0x2 binary) carrying
/// `payload` masked with `key` to `out`; `rsv1` marks a compressed message.
pub fn encode_masked<B: FrameBuf>(
    out: &mut B,
    opcode: u8,
    rsv1: bool,
    payload: &[u8],
    key: [u8; 4],
) {
    out.reserve_more(payload.len() + 14);
    let b0 = 0x80 | if rsv1 { 0x40 } else { 0 } | (opcode & 0x0f);
    match payload.len() {
        n @ 0..=125 => out.put(&[b0, 0x80 | n as u8]),
        n @ 126..=0xffff => {
            out.put(&[b0, 0x80 | 126]);
            out.put(&(n as u16).to_be_bytes());
        }
        n => {
            out.put(&[b0, 0x80 | 127]);
            out.put(&(n as u64).to_be_bytes());
        }
    }
    out.put(&key);
    let start = out.filled();
    out.put(payload);
    // Masked in place, a word at a time (the compiler turns this into vector code).
    let word = mask_word(key);
    let mut chunks = out.tail_mut(start).chunks_exact_mut(8);
    for c in &mut chunks {
        let mut w = [0u8; 8];
        w.copy_from_slice(c);
        c.copy_from_slice(&(u64::from_ne_bytes(w) ^ word).to_ne_bytes());
    }
    // The tail starts at a multiple of 8, so the key's phase is unchanged.
    for (b, k) in chunks.into_remainder().iter_mut().zip(key.iter().cycle()) {
        *b ^= k;
    }
}

#[cfg(test)]
#[path = "frame_tests.rs"]
mod tests;
