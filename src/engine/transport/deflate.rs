//! `permessage-deflate` (RFC 7692) on the client side, pure: the offer rtload makes, the
//! server's answer checked against it ([`negotiate`]), and the per-connection inflater and
//! deflater the codec uses once it is agreed. No IO, no clock.
//!
//! The offer is the reference clients' (Python `websockets`, browsers):
//! `permessage-deflate; client_max_window_bits`: "compress both ways; you may make my
//! window smaller". rtload inflates with the largest window (any `server_max_window_bits`
//! is fine) and compresses with the window the server allows (9 to 15 bits; at 8 bits,
//! which zlib cannot produce for raw deflate, rtload sends its messages uncompressed, as
//! the RFC allows per message).

use flate2::{Compress, Decompress, FlushCompress, FlushDecompress, Status};

/// `[target] compression`: what rtload offers in the WebSocket handshake.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Compression {
    /// Offer `permessage-deflate; client_max_window_bits` (the reference clients' offer);
    /// used only when the server accepts.
    #[default]
    Deflate,
    /// Offer no extension.
    None,
}

impl Compression {
    /// Parses `"deflate"` or `"none"` (the `--compression` flag).
    pub fn parse(s: &str) -> Result<Compression, String> {
        match s {
            "deflate" => Ok(Compression::Deflate),
            "none" => Ok(Compression::None),
            other => Err(format!(
                "unknown compression {other:?}; use \"deflate\" (offer permessage-deflate, the default) or \"none\""
            )),
        }
    }

    /// The setting's name, as written in a scenario.
    pub fn name(self) -> &'static str {
        match self {
            Compression::Deflate => "deflate",
            Compression::None => "none",
        }
    }

    /// The `Sec-WebSocket-Extensions` request header, if anything is offered.
    pub fn offer(self) -> Option<&'static str> {
        match self {
            Compression::Deflate => Some(OFFER),
            Compression::None => None,
        }
    }
}

/// rtload's `permessage-deflate` offer: the one Python `websockets` (16) sends.
pub const OFFER: &str = "permessage-deflate; client_max_window_bits";

/// The extension's name.
const NAME: &str = "permessage-deflate";

/// The empty stored block a sync flush ends with: stripped from every compressed message
/// and put back before inflating (RFC 7692 §7.2.1, §7.2.2).
const TAIL: [u8; 4] = [0x00, 0x00, 0xff, 0xff];

/// The parameters both sides agreed on (a window of 15 bits when the answer names none).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
pub struct Agreed {
    /// The server starts every message with an empty window.
    pub server_no_context_takeover: bool,
    /// rtload starts every message with an empty window.
    pub client_no_context_takeover: bool,
    /// The server's window, in bits (8..=15).
    pub server_max_window_bits: u8,
    /// rtload's window, in bits (8..=15); at 8 rtload sends uncompressed.
    pub client_max_window_bits: u8,
}

impl Agreed {
    /// The parameters as an extension header would state them (defaults left out).
    pub fn describe(&self) -> String {
        let mut s = NAME.to_string();
        if self.server_no_context_takeover {
            s.push_str("; server_no_context_takeover");
        }
        if self.client_no_context_takeover {
            s.push_str("; client_no_context_takeover");
        }
        if self.server_max_window_bits != 15 {
            s.push_str(&format!(
                "; server_max_window_bits={}",
                self.server_max_window_bits
            ));
        }
        if self.client_max_window_bits != 15 {
            s.push_str(&format!(
                "; client_max_window_bits={}",
                self.client_max_window_bits
            ));
        }
        s
    }

    /// Whether rtload compresses what it sends (it cannot at an 8-bit window).
    pub fn compresses_outbound(&self) -> bool {
        self.client_max_window_bits >= 9
    }
}

/// The server's `Sec-WebSocket-Extensions` answer checked against the offer of
/// `compression`: `Ok(None)` when it accepted nothing, the agreed parameters when it
/// accepted `permessage-deflate`, or why the answer is not allowed (the handshake fails).
/// `answer` holds the header's values (a header may repeat).
pub fn negotiate(compression: Compression, answer: &[&str]) -> Result<Option<Agreed>, String> {
    let mut agreed = None;
    for ext in answer.iter().flat_map(|v| split_outside_quotes(v, ',')) {
        let mut parts = split_outside_quotes(ext, ';').into_iter().map(str::trim);
        let name = parts.next().unwrap_or_default();
        if name.is_empty() {
            continue;
        }
        if !name.eq_ignore_ascii_case(NAME) || compression.offer().is_none() {
            return Err(format!("rtload did not offer the extension `{name}`"));
        }
        if agreed.is_some() {
            return Err(format!("`{NAME}` is accepted twice"));
        }
        agreed = Some(parse_params(parts)?);
    }
    Ok(agreed)
}

/// The response parameters of one accepted `permessage-deflate` (RFC 7692 §7.1).
fn parse_params<'a>(params: impl Iterator<Item = &'a str>) -> Result<Agreed, String> {
    let mut a = Agreed {
        server_no_context_takeover: false,
        client_no_context_takeover: false,
        server_max_window_bits: 15,
        client_max_window_bits: 15,
    };
    let mut seen: Vec<String> = Vec::new();
    for p in params.filter(|p| !p.is_empty()) {
        let (key, value) = match p.split_once('=') {
            Some((k, v)) => (k.trim(), Some(unquote(v.trim())?)),
            None => (p, None),
        };
        let key = key.to_ascii_lowercase();
        if seen.contains(&key) {
            return Err(format!("the parameter `{key}` appears twice"));
        }
        match (key.as_str(), value) {
            ("server_no_context_takeover", None) => a.server_no_context_takeover = true,
            ("client_no_context_takeover", None) => a.client_no_context_takeover = true,
            ("server_max_window_bits", Some(v)) => a.server_max_window_bits = window_bits(&key, v)?,
            // Offered without a value, so the server may answer with one (§7.1.2.2).
            ("client_max_window_bits", Some(v)) => a.client_max_window_bits = window_bits(&key, v)?,
            (k @ ("server_no_context_takeover" | "client_no_context_takeover"), Some(v)) => {
                return Err(format!("`{k}` takes no value (got `{v}`)"));
            }
            (k @ ("server_max_window_bits" | "client_max_window_bits"), None) => {
                return Err(format!("`{k}` needs a value in a response (8 to 15)"));
            }
            (k, _) => return Err(format!("unknown parameter `{k}`")),
        }
        seen.push(key);
    }
    Ok(a)
}

/// A window size: `8` to `15`, no leading zero (RFC 7692 §7.1.2.1).
fn window_bits(key: &str, v: &str) -> Result<u8, String> {
    match v.parse::<u8>() {
        Ok(n @ 8..=15) if !v.starts_with('0') && v.bytes().all(|b| b.is_ascii_digit()) => Ok(n),
        _ => Err(format!("`{key}={v}` is not a window size (8 to 15)")),
    }
}

/// A parameter value: a token or a quoted string (RFC 6455 §9.1), unquoted.
fn unquote(v: &str) -> Result<&str, String> {
    match v.strip_prefix('"') {
        Some(rest) => rest
            .strip_suffix('"')
            .filter(|inner| !inner.contains(['"', '\\']))
            .ok_or_else(|| format!("malformed quoted value `{v}`")),
        None => Ok(v),
    }
}

/// `s` split at `sep` where it is not inside a quoted string.
fn split_outside_quotes(s: &str, sep: char) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut start, mut quoted) = (0, false);
    for (i, c) in s.char_indices() {
        match c {
            '"' => quoted = !quoted,
            c if c == sep && !quoted => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out
}

/// Why a compressed message could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InflateError {
    /// The message inflates to more than the limit (stopped there: a deflate bomb
    /// allocates no more than the limit).
    #[error("compressed message inflates past max_frame_bytes ({max})")]
    TooLarge {
        /// The limit.
        max: usize,
    },
    /// The DEFLATE data is corrupt.
    #[error("cannot inflate a compressed message: {0}")]
    Corrupt(String),
}

/// Inflates the server's compressed messages, keeping the window between messages unless
/// the server said `server_no_context_takeover`.
pub struct Inflater {
    state: Decompress,
    reset_each: bool,
    /// The message being read ended its DEFLATE stream early (BFINAL): the rest of it
    /// is skipped.
    ended: bool,
}

impl std::fmt::Debug for Inflater {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Inflater")
            .field("reset_each", &self.reset_each)
            .finish_non_exhaustive()
    }
}

impl Inflater {
    /// An inflater for what `agreed` lets the server send (the largest window reads any).
    pub fn new(agreed: &Agreed) -> Inflater {
        Inflater {
            state: Decompress::new(false),
            reset_each: agreed.server_no_context_takeover,
            ended: false,
        }
    }

    /// Inflates one frame's `payload` of a compressed message (`fin`: its last), given
    /// that `so_far` bytes of the message were inflated before: this frame's bytes, or an
    /// error once the message passes `max` bytes (nothing past `max + 1` is allocated).
    pub fn inflate(
        &mut self,
        payload: &[u8],
        fin: bool,
        so_far: usize,
        max: usize,
    ) -> Result<Vec<u8>, InflateError> {
        let room = max.saturating_sub(so_far);
        let mut out = Vec::new();
        let mut ended = Ok(self.ended);
        if ended == Ok(false) {
            ended = self.run(payload, &mut out, room, max);
        }
        if fin && ended == Ok(false) {
            ended = self.run(&TAIL, &mut out, room, max);
        }
        self.ended = !fin && ended == Ok(true);
        if ended.is_err() || (fin && self.reset_each) {
            self.state.reset(false);
        }
        ended.map(|_| out)
    }

    /// Feeds `input` through, appending to `out`, never past `room + 1` bytes (`max`
    /// is the limit the error names): whether the DEFLATE stream ended.
    fn run(
        &mut self,
        mut input: &[u8],
        out: &mut Vec<u8>,
        room: usize,
        max: usize,
    ) -> Result<bool, InflateError> {
        loop {
            if out.len() == out.capacity() {
                let want = out
                    .capacity()
                    .max(input.len().saturating_mul(4))
                    .max(1024)
                    .min((room + 1).saturating_sub(out.len()));
                out.reserve_exact(want);
            }
            let (in0, out0) = (self.state.total_in(), out.len());
            let status = self
                .state
                .decompress_vec(input, out, FlushDecompress::Sync)
                .map_err(|e| InflateError::Corrupt(e.to_string()))?;
            let used = usize::try_from(self.state.total_in() - in0).unwrap_or(input.len());
            input = &input[used.min(input.len())..];
            if out.len() > room {
                return Err(InflateError::TooLarge { max });
            }
            if status == Status::StreamEnd {
                // A final block (BFINAL) ends the DEFLATE stream: the rest of the message
                // (the tail) is not part of it, and the next message starts a new one.
                self.state.reset(false);
                return Ok(true);
            }
            let full = out.len() == out.capacity();
            if input.is_empty() && !full {
                return Ok(false);
            }
            if used == 0 && out.len() == out0 && !full {
                return Err(InflateError::Corrupt(
                    "the DEFLATE data stops making progress".into(),
                ));
            }
        }
    }
}

/// Compresses rtload's messages with the agreed window, keeping it between messages
/// unless the server said `client_no_context_takeover`.
pub struct Deflater {
    state: Compress,
    reset_each: bool,
}

impl std::fmt::Debug for Deflater {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Deflater")
            .field("reset_each", &self.reset_each)
            .finish_non_exhaustive()
    }
}

impl Deflater {
    /// A deflater within `agreed`'s client window; `None` when rtload cannot compress
    /// within it (8 bits), so it sends uncompressed.
    pub fn new(agreed: &Agreed) -> Option<Deflater> {
        agreed.compresses_outbound().then(|| Deflater {
            // zlib's default level, as Python's `websockets` uses.
            state: Compress::new_with_window_bits(
                flate2::Compression::default(),
                false,
                agreed.client_max_window_bits,
            ),
            reset_each: agreed.client_no_context_takeover,
        })
    }

    /// One message's payload compressed into `out` (cleared first), without the
    /// sync flush's empty-block tail: what goes into a frame with RSV1 set.
    pub fn deflate(&mut self, msg: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        out.clear();
        out.reserve(msg.len() / 2 + 64);
        let mut input = msg;
        loop {
            if out.capacity() - out.len() < 64 {
                out.reserve(out.capacity().max(256));
            }
            let in0 = self.state.total_in();
            self.state
                .compress_vec(input, out, FlushCompress::Sync)
                .map_err(|e| format!("cannot compress a message: {e}"))?;
            let used = usize::try_from(self.state.total_in() - in0).unwrap_or(input.len());
            input = &input[used.min(input.len())..];
            // A sync flush is complete when it returns with output room to spare.
            if input.is_empty() && out.len() < out.capacity() {
                break;
            }
        }
        if out.is_empty() {
            // An empty message right after a sync flush: zlib may emit nothing at all.
            // One empty stored block without its tail (RFC 7692 §7.2.3.6) stands for it.
            out.push(0x00);
        } else if out.ends_with(&TAIL) {
            out.truncate(out.len() - TAIL.len());
        } else {
            return Err("compressed message does not end with a sync flush".into());
        }
        if self.reset_each {
            self.state.reset();
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "deflate_tests.rs"]
mod tests;
