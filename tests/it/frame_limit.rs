//! `rtload serve`'s inbound limit, the same on every endpoint, seen by a raw RFC 6455
//! client written here (std sockets; no rtload or actix code): with `max_frame_bytes =
//! 1048576` in the server's config, a frame whose header announces more is refused
//! before its payload has been sent (close code 1009 naming the frame and the limit),
//! and a frame of exactly the limit is taken. Every connection, refused or not, is
//! counted in `/metrics` under its endpoint.

use std::io::{BufRead as _, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::Stdio;
use std::time::Duration;

use crate::support::{Fixture, http_get, prom_samples, rtload};

const LIMIT: usize = 1 << 20;

/// A client on one WebSocket connection: frames it sends are masked, frames it reads are
/// the server's (unmasked).
struct RawClient {
    sock: TcpStream,
    /// Bytes read but not yet consumed.
    buf: Vec<u8>,
    /// Bytes written after the handshake.
    sent: usize,
}

impl RawClient {
    fn connect(addr: &str, path: &str) -> RawClient {
        let mut sock = TcpStream::connect(addr).unwrap();
        // A bound, not a synchronisation: a server that never answers fails the test.
        sock.set_read_timeout(Some(Duration::from_secs(60)))
            .unwrap();
        write!(
            sock,
            "GET {path} HTTP/1.1\r\nHost: {addr}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
             Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        )
        .unwrap();
        let mut c = RawClient {
            sock,
            buf: Vec::new(),
            sent: 0,
        };
        let end = loop {
            if let Some(i) = c.buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break i + 4;
            }
            c.fill();
        };
        let head = String::from_utf8_lossy(&c.buf[..end]).into_owned();
        assert!(head.starts_with("HTTP/1.1 101"), "{path}: {head}");
        c.buf.drain(..end);
        c
    }

    fn fill(&mut self) {
        let mut chunk = [0u8; 65536];
        let n = self.sock.read(&mut chunk).expect("read from the server");
        assert!(
            n > 0,
            "the server closed the connection without a close frame"
        );
        self.buf.extend_from_slice(&chunk[..n]);
    }

    /// A final frame's masked header announcing `len` payload bytes (mask key 0), the
    /// length in its shortest form.
    fn header(&mut self, opcode: u8, len: usize) {
        let mut h = vec![0x80 | opcode];
        match u16::try_from(len) {
            Ok(n) if n < 126 => h.push(0x80 | n as u8),
            Ok(n) => {
                h.push(0x80 | 126);
                h.extend_from_slice(&n.to_be_bytes());
            }
            Err(_) => {
                h.push(0x80 | 127);
                h.extend_from_slice(&(len as u64).to_be_bytes());
            }
        }
        h.extend_from_slice(&[0, 0, 0, 0]);
        self.write(&h);
    }

    /// Payload bytes of the current frame (with mask key 0, unchanged on the wire).
    fn write(&mut self, bytes: &[u8]) {
        self.sock.write_all(bytes).unwrap();
        self.sent += bytes.len();
    }

    /// The server's next frame: (opcode, payload).
    fn frame(&mut self) -> (u8, Vec<u8>) {
        loop {
            if let Some((opcode, start, len)) = parse(&self.buf)
                && self.buf.len() >= start + len
            {
                let payload = self.buf[start..start + len].to_vec();
                self.buf.drain(..start + len);
                return (opcode, payload);
            }
            self.fill();
        }
    }

    /// Skips data frames (greetings, scheduled events) until a control frame.
    fn control(&mut self) -> (u8, Vec<u8>) {
        loop {
            let (opcode, payload) = self.frame();
            if opcode >= 0x8 {
                return (opcode, payload);
            }
        }
    }
}

/// (opcode, payload start, payload length) once `b` holds an unmasked frame header.
fn parse(b: &[u8]) -> Option<(u8, usize, usize)> {
    let (b0, b1) = (*b.first()?, *b.get(1)?);
    let (start, len) = match b1 & 0x7f {
        126 => (
            4,
            u64::from(u16::from_be_bytes(b.get(2..4)?.try_into().ok()?)),
        ),
        127 => (10, u64::from_be_bytes(b.get(2..10)?.try_into().ok()?)),
        n => (2, u64::from(n)),
    };
    Some((b0 & 0x0f, start, usize::try_from(len).ok()?))
}

/// A close frame's (code, reason).
fn close_of((opcode, payload): (u8, Vec<u8>)) -> (u16, String) {
    assert_eq!(opcode, 0x8, "expected a close frame, got opcode {opcode}");
    let code = u16::from_be_bytes([payload[0], payload[1]]);
    (code, String::from_utf8_lossy(&payload[2..]).into_owned())
}

/// `rtload serve` with a 1 MiB limit and a scripted rule set at `/scripted`; its
/// stderr (the refusals' warnings) is read to the end by a thread, so the server never
/// writes to a closed pipe.
fn server() -> (std::process::Child, String, Fixture) {
    let fx = Fixture::new(
        "max_frame_bytes = 1048576\n\
         [scripted]\npath = \"/scripted\"\n\
         [[scripted.on_connect]]\nsend = { type = \"hello\" }\n",
    );
    let mut child = rtload()
        .args(["serve", "--port", "0", "--config"])
        .arg(&fx.path)
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    let addr = first
        .split("ws://")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .unwrap_or_else(|| panic!("no ws:// address announced: {first}"))
        .to_string();
    std::thread::spawn(move || lines.for_each(drop));
    (child, addr, fx)
}

/// Kills the server when the test ends, however it ends.
struct Kill(std::process::Child);

impl Drop for Kill {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn a_10_mib_frame_to_the_scripted_endpoint_is_refused_from_its_header() {
    let (child, addr, _fx) = server();
    let _kill = Kill(child);
    let mut c = RawClient::connect(&addr, "/scripted");
    c.header(0x2, 10 << 20);
    // The first 64 KiB of its payload; the rest is never sent.
    c.write(&[0u8; 65536]);
    let (code, reason) = close_of(c.control());
    assert_eq!(code, 1009, "{reason}");
    assert_eq!(
        reason,
        "frame of 10485760 bytes exceeds max_frame_bytes (1048576)"
    );
    assert!(c.sent < LIMIT, "refused after {} bytes", c.sent);
}

#[test]
fn every_endpoint_takes_the_limit_refuses_one_byte_more_and_counts_the_connection() {
    let (child, addr, _fx) = server();
    let _kill = Kill(child);
    let paths = [
        ("video", "/v1/realtime/video"),
        ("duplex", "/v1/realtime?duplex=1"),
        ("transcription", "/v1/realtime"),
        ("scripted_rules", "/scripted"),
    ];
    for (name, path) in paths {
        let mut ok = RawClient::connect(&addr, path);
        ok.header(0x2, LIMIT);
        ok.write(&vec![0u8; LIMIT]);
        ok.header(0x9, 4);
        ok.write(b"ping");
        assert_eq!(ok.control(), (0xA, b"ping".to_vec()), "{name}: no pong");

        let mut big = RawClient::connect(&addr, path);
        big.header(0x2, LIMIT + 1);
        let (code, reason) = close_of(big.control());
        assert_eq!(code, 1009, "{name}: {reason}");
        assert_eq!(
            reason, "frame of 1048577 bytes exceeds max_frame_bytes (1048576)",
            "{name}"
        );
    }
    let text = http_get(&format!("http://{addr}/metrics"), Duration::from_secs(30)).unwrap();
    let samples = prom_samples(&text);
    for (name, _) in paths {
        let series = format!("rtload_server_websocket_connections_total{{endpoint=\"{name}\"}}");
        let got = samples.iter().find(|(s, _)| *s == series).map(|(_, v)| *v);
        assert_eq!(got, Some(2.0), "{series}\n{text}");
    }
}
