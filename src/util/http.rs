//! Minimal blocking HTTP/1.x for live metrics: a `/metrics` endpoint served from a plain
//! thread while a run lasts and until its owner stops it (`--metrics-linger` keeps it up
//! after the run) ([`MetricsServer`]), and a plain-`http://` GET for scraping a
//! target's Prometheus endpoint ([`get`]). Nothing else: no keep-alive, no TLS. Every
//! socket sets `TCP_NODELAY`: `write!` hands the request or answer over in pieces, and
//! without it a piece after the first waits for the peer's delayed ACK (~40 ms).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

/// Renders the current exposition text for each request.
pub type Render = Arc<dyn Fn() -> String + Send + Sync>;

/// The Prometheus text format's content type.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// A `/metrics` endpoint on its own thread; stopped on [`MetricsServer::stop`] or drop.
pub struct MetricsServer {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl MetricsServer {
    /// Bind `addr` (port 0 = any) and serve `GET /metrics` with `render()`.
    pub fn start(addr: SocketAddr, render: Render) -> std::io::Result<MetricsServer> {
        let listener = TcpListener::bind(addr)?;
        let addr = listener.local_addr()?;
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("rtload-metrics".into())
            .spawn(move || {
                for conn in listener.incoming() {
                    if flag.load(Ordering::SeqCst) {
                        return;
                    }
                    if let Ok(c) = conn {
                        let _ = answer(c, &render);
                    }
                }
            })?;
        Ok(MetricsServer {
            addr,
            stop,
            thread: Some(thread),
        })
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stop serving and join the thread.
    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the blocking accept so the thread sees the flag (it sends nothing).
        if let Ok(c) = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1)) {
            let _ = c.set_nodelay(true);
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for MetricsServer {
    fn drop(&mut self) {
        self.shutdown();
    }
}

fn answer(mut c: TcpStream, render: &Render) -> std::io::Result<()> {
    c.set_nodelay(true)?;
    c.set_read_timeout(Some(Duration::from_secs(2)))?;
    let mut buf = Vec::new();
    let mut chunk = [0u8; 1024];
    while !buf.windows(4).any(|w| w == b"\r\n\r\n") && buf.len() < 16 * 1024 {
        let n = c.read(&mut chunk)?;
        if n == 0 {
            break;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    let head = String::from_utf8_lossy(&buf);
    let mut words = head.split_whitespace();
    let (method, path) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
    let path = path.split('?').next().unwrap_or("");
    let (status, body) = match (method, path) {
        ("GET", "/metrics") => ("200 OK", render()),
        _ => (
            "404 Not Found",
            "only GET /metrics is served here\n".to_string(),
        ),
    };
    write!(
        c,
        "HTTP/1.1 {status}\r\nContent-Type: {CONTENT_TYPE}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )?;
    c.flush()
}

/// `GET` a plain `http://host:port/path` URL; the body of a 200 answer, else an error
/// naming the status. Bounded by `timeout` per connect/read/write.
pub fn get(url: &str, timeout: Duration) -> Result<String, String> {
    let rest = url
        .strip_prefix("http://")
        .ok_or_else(|| "only http:// URLs can be scraped".to_string())?;
    let (hostport, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let hostport = hostport.rsplit('@').next().unwrap_or(hostport);
    let with_port = if hostport.contains(':') && !hostport.ends_with(']') {
        hostport.to_string()
    } else {
        format!("{hostport}:80")
    };
    let addr = std::net::ToSocketAddrs::to_socket_addrs(&with_port)
        .map_err(|e| format!("{with_port}: {e}"))?
        .next()
        .ok_or_else(|| format!("{with_port}: no address"))?;
    let mut c = TcpStream::connect_timeout(&addr, timeout).map_err(|e| e.to_string())?;
    c.set_nodelay(true).map_err(|e| e.to_string())?;
    c.set_read_timeout(Some(timeout))
        .map_err(|e| e.to_string())?;
    c.set_write_timeout(Some(timeout))
        .map_err(|e| e.to_string())?;
    write!(
        c,
        "GET {path} HTTP/1.0\r\nHost: {hostport}\r\nAccept: text/plain\r\nConnection: close\r\n\r\n"
    )
    .map_err(|e| e.to_string())?;
    let mut raw = Vec::new();
    c.read_to_end(&mut raw).map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&raw);
    let (head, body) = text
        .split_once("\r\n\r\n")
        .ok_or_else(|| "malformed HTTP answer".to_string())?;
    let status = head.lines().next().unwrap_or("");
    if status.split_whitespace().nth(1) != Some("200") {
        return Err(format!("answered {status:?}"));
    }
    Ok(body.to_string())
}
