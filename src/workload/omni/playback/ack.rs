//! The `playback.ack` message written straight into its buffer: the session sends one
//! about once a second per response, and building it as a `serde_json` tree cost fifteen
//! or more allocations an ack (issue 33's census).

use std::io::Write;

use bytestring::ByteString;

use super::Ack;

impl Ack {
    /// The `playback.ack` message: byte for byte what `json!({"type": "playback.ack",
    /// "response_id": id, "item_id": "item_<id>", "played_ms": n, "committed_ms": n})
    /// .to_string()` prints (keys in `serde_json`'s sorted order, strings escaped by
    /// `serde_json` itself), in one allocation of exactly its length (the tree took
    /// fifteen or more): a first pass counts the bytes, the second writes them.
    pub fn message(&self) -> ByteString {
        let mut len = Count(0);
        self.write_message(&mut len);
        let mut buf = Vec::with_capacity(len.0);
        self.write_message(&mut buf);
        // serde_json writes UTF-8 only; the lossy arm never runs.
        let text = String::from_utf8(buf)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
        ByteString::from(text)
    }

    /// Writes [`Ack::message`]'s bytes to `w` (a `Vec` or a counter: writes cannot fail).
    fn write_message(&self, w: &mut impl Write) {
        let (id, n) = (&*self.response_id, self.played_ms);
        let _ = write!(w, r#"{{"committed_ms":{n},"item_id":"item_"#);
        // The escaped id without its own opening quote: `"item_` opened the string.
        let _ = serde_json::to_writer(SkipFirst(&mut *w, true), id);
        let _ = write!(w, r#","played_ms":{n},"response_id":"#);
        let _ = serde_json::to_writer(&mut *w, id);
        let _ = w.write_all(br#","type":"playback.ack"}"#);
    }
}

/// Counts the bytes written to it.
struct Count(usize);

impl Write for Count {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0 += b.len();
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Passes writes on to its writer but for the first byte (while the flag is set).
struct SkipFirst<W>(W, bool);

impl<W: Write> Write for SkipFirst<W> {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        match b.split_first() {
            Some((_, rest)) if self.1 => {
                self.1 = false;
                self.0.write_all(rest)?;
                Ok(b.len())
            }
            _ => self.0.write(b),
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}
