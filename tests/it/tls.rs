//! `wss://` end to end: a test-time CA and server certificate (rcgen; nothing secret is
//! committed), `rtload serve --tls-cert --tls-key` on 127.0.0.1 port 0, and `rtload run`
//! trusting the CA, not trusting it, skipping verification, and hitting a name mismatch;
//! plus the exit-2 paths of bad certificate, key and `ca_cert` files.

use std::net::{IpAddr, Ipv4Addr};
use std::path::{Path, PathBuf};
use std::process::{Child, Output};

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair, KeyUsagePurpose, SanType};

use crate::support::rtload;

/// A CA (`ca.pem`) and a server certificate it signed (`cert.pem`, `key.pem`) for `san`.
fn pki(dir: &Path, san: SanType) {
    pki_with(dir, san, |_| {});
}

/// [`pki`], with `tweak` applied to the server certificate's parameters.
fn pki_with(dir: &Path, san: SanType, tweak: impl FnOnce(&mut CertificateParams)) {
    let ca_key = KeyPair::generate().unwrap();
    let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.distinguished_name
        .push(DnType::CommonName, "rtload test CA");
    ca.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let ca = ca.self_signed(&ca_key).unwrap();
    let key = KeyPair::generate().unwrap();
    let mut leaf = CertificateParams::new(Vec::<String>::new()).unwrap();
    leaf.subject_alt_names = vec![san];
    leaf.distinguished_name
        .push(DnType::CommonName, "rtload test server");
    tweak(&mut leaf);
    let leaf = leaf.signed_by(&key, &ca, &ca_key).unwrap();
    std::fs::write(dir.join("ca.pem"), ca.pem()).unwrap();
    std::fs::write(dir.join("cert.pem"), leaf.pem()).unwrap();
    std::fs::write(dir.join("key.pem"), key.serialize_pem()).unwrap();
}

fn localhost_ip() -> SanType {
    SanType::IpAddress(IpAddr::V4(Ipv4Addr::LOCALHOST))
}

/// `rtload serve --tls-cert --tls-key` on port 0; killed on drop.
struct TlsServer {
    child: Child,
    url: String,
}

impl TlsServer {
    fn start(dir: &Path) -> TlsServer {
        let (cert, key) = (dir.join("cert.pem"), dir.join("key.pem"));
        let args = [
            "--host".as_ref(),
            "127.0.0.1".as_ref(),
            "--tls-cert".as_ref(),
        ];
        let (child, addr) = crate::support::serve(
            &[
                &args[..],
                &[cert.as_os_str(), "--tls-key".as_ref(), key.as_os_str()],
            ]
            .concat(),
            "wss",
        );
        TlsServer {
            child,
            url: format!("wss://{addr}"),
        }
    }
}

impl Drop for TlsServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn quickstart() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/video-quickstart.toml")
}

/// `rtload run scenarios/video-quickstart.toml --target URL` (one short session) + `extra`.
fn run(url: &str, json: &Path, extra: &[&std::ffi::OsStr]) -> Output {
    rtload()
        .arg("run")
        .arg(quickstart())
        .args(["--target", url, "--num-prompts", "1", "--num-warmups", "0"])
        .args(["--num-chunks", "3", "--quiet", "--output-json"])
        .arg(json)
        .args(extra)
        .output()
        .unwrap()
}

fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn tls_block(json: &Path) -> serde_json::Value {
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap();
    v["rtload"]["tls"].clone()
}

#[test]
fn wss_trusted_untrusted_and_insecure() {
    let dir = tempfile::tempdir().unwrap();
    pki(dir.path(), localhost_ip());
    let server = TlsServer::start(dir.path());
    let ca = dir.path().join("ca.pem");
    let json = dir.path().join("out.json");

    let out = run(&server.url, &json, &["--ca-cert".as_ref(), ca.as_ref()]);
    let (so, se) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{so}\n{se}");
    assert!(!se.contains("WARNING: TLS"), "{se}");
    let tls = tls_block(&json);
    assert_eq!(tls["insecure_skip_verify"], false, "{tls}");
    assert_eq!(tls["ca_cert"], ca.display().to_string(), "{tls}");

    std::fs::remove_file(&json).unwrap();
    let out = run(&server.url, &json, &[]);
    let (so, se) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{so}\n{se}");
    assert!(
        se.contains("unknown issuer") && se.contains("--ca-cert"),
        "{se}"
    );

    std::fs::remove_file(&json).unwrap();
    let out = run(&server.url, &json, &["--insecure".as_ref()]);
    let (so, se) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{so}\n{se}");
    assert!(
        se.contains("WARNING: TLS certificate verification is DISABLED"),
        "{se}"
    );
    assert_eq!(tls_block(&json)["insecure_skip_verify"], true);
}

#[test]
fn wss_name_mismatch_names_the_cause() {
    let dir = tempfile::tempdir().unwrap();
    pki(
        dir.path(),
        SanType::DnsName("other.invalid".try_into().unwrap()),
    );
    let server = TlsServer::start(dir.path());
    let ca = dir.path().join("ca.pem");
    let out = run(
        &server.url,
        &dir.path().join("out.json"),
        &["--ca-cert".as_ref(), ca.as_ref()],
    );
    let (so, se) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{so}\n{se}");
    assert!(
        se.contains("name mismatch") && se.contains("other.invalid"),
        "{se}"
    );
}

#[test]
fn wss_expired_certificate_names_the_cause() {
    let dir = tempfile::tempdir().unwrap();
    pki_with(dir.path(), localhost_ip(), |p| {
        p.not_before = rcgen::date_time_ymd(2000, 1, 1);
        p.not_after = rcgen::date_time_ymd(2001, 1, 1);
    });
    let server = TlsServer::start(dir.path());
    let ca = dir.path().join("ca.pem");
    let out = run(
        &server.url,
        &dir.path().join("out.json"),
        &["--ca-cert".as_ref(), ca.as_ref()],
    );
    let (so, se) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{so}\n{se}");
    assert!(se.contains("expired"), "{se}");
}

#[test]
fn bad_server_cert_or_key_is_exit_2_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    pki(dir.path(), localhost_ip());
    let missing = dir.path().join("missing.pem");
    for (cert, key, named) in [
        (missing.clone(), dir.path().join("key.pem"), "missing.pem"),
        (
            dir.path().join("cert.pem"),
            dir.path().join("ca.pem"),
            "ca.pem",
        ),
    ] {
        let out = rtload()
            .args(["serve", "--port", "0", "--tls-cert"])
            .arg(&cert)
            .arg("--tls-key")
            .arg(&key)
            .output()
            .unwrap();
        let (_, se) = text(&out);
        assert_eq!(out.status.code(), Some(2), "{se}");
        assert!(se.contains(named), "{se}");
    }
}

#[test]
fn check_shows_tls_and_rejects_a_bad_ca_cert_with_its_position() {
    let dir = tempfile::tempdir().unwrap();
    pki(dir.path(), localhost_ip());
    let write = |name: &str, ca: &str| {
        let src = std::fs::read_to_string(quickstart()).unwrap().replace(
            "[workload]",
            &format!("[target]\nurl = \"wss://127.0.0.1:9\"\nca_cert = \"{ca}\"\n\n[workload]"),
        );
        let p = dir.path().join(name);
        std::fs::write(&p, src).unwrap();
        p
    };
    let good = write("good.toml", "ca.pem");
    let out = rtload().arg("check").arg(&good).output().unwrap();
    let (so, se) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{so}\n{se}");
    assert!(so.contains("wss://127.0.0.1:9/v1/realtime/video"), "{so}");
    assert!(
        so.contains("system roots + ca_cert") && so.contains("1 certificate"),
        "{so}"
    );

    let bad = write("bad.toml", "nope.pem");
    let line = std::fs::read_to_string(&bad)
        .unwrap()
        .lines()
        .position(|l| l.starts_with("ca_cert"))
        .unwrap()
        + 1;
    let out = rtload().arg("check").arg(&bad).output().unwrap();
    let (_, se) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{se}");
    assert!(se.contains(&format!("bad.toml:{line}:11")), "{se}");
    assert!(
        se.contains("nope.pem") && se.contains("cannot read"),
        "{se}"
    );

    std::fs::write(dir.path().join("junk.pem"), "not a certificate\n").unwrap();
    let junk = write("junk.toml", "junk.pem");
    let out = rtload().arg("check").arg(&junk).output().unwrap();
    let (_, se) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{se}");
    assert!(
        se.contains("junk.pem") && se.contains("BEGIN CERTIFICATE"),
        "{se}"
    );
}

/// Sends a plain-text upgrade request to `addr` and returns all it answers.
fn plain_get(addr: &str) -> String {
    use std::io::{Read, Write};
    let mut conn = std::net::TcpStream::connect(addr).unwrap();
    conn.set_read_timeout(Some(std::time::Duration::from_secs(30)))
        .unwrap();
    conn.write_all(
        format!(
            "GET /v1/realtime/video HTTP/1.1\r\nHost: {addr}\r\nUpgrade: websocket\r\n\
             Connection: Upgrade\r\nSec-WebSocket-Version: 13\r\n\
             Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"
        )
        .as_bytes(),
    )
    .unwrap();
    let mut answer = Vec::new();
    conn.read_to_end(&mut answer).unwrap();
    String::from_utf8_lossy(&answer).into_owned()
}

#[test]
fn plain_http_on_the_tls_port_gets_a_400_naming_wss() {
    let dir = tempfile::tempdir().unwrap();
    pki(dir.path(), localhost_ip());
    let server = TlsServer::start(dir.path());
    let addr = server.url.trim_start_matches("wss://");
    let answer = plain_get(addr);
    assert!(
        answer.starts_with("HTTP/1.1 400 Bad Request\r\n"),
        "{answer:?}"
    );
    assert!(
        answer.ends_with(
            "this port speaks TLS: connect with wss:// (https://), not ws:// (http://)\n"
        ),
        "{answer:?}"
    );
    // The same port still speaks TLS to a TLS client.
    let ca = dir.path().join("ca.pem");
    let json = dir.path().join("out.json");
    let out = run(&server.url, &json, &["--ca-cert".as_ref(), ca.as_ref()]);
    let (so, se) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{so}\n{se}");
}

#[test]
fn ws_at_rtload_serve_tls_fails_naming_wss() {
    let dir = tempfile::tempdir().unwrap();
    pki(dir.path(), localhost_ip());
    let server = TlsServer::start(dir.path());
    let url = server.url.replace("wss://", "ws://");
    let out = run(&url, &dir.path().join("out.json"), &[]);
    let (so, se) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{so}\n{se}");
    assert!(
        se.contains("HTTP 400") && se.contains("this port speaks TLS: connect with wss://"),
        "{se}"
    );
}

/// An independent TLS server (rustls over a std socket, no `src/server` code): accepts
/// one connection, feeds what it reads to rustls and sends what rustls queues (for a
/// plain request: a fatal alert record, `0x15 0x03 0x03 …`), then closes.
fn rustls_peer(dir: &Path) -> (String, std::thread::JoinHandle<Vec<u8>>) {
    use rustls::pki_types::pem::PemObject as _;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let chain = CertificateDer::pem_file_iter(dir.join("cert.pem"))
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    let key = PrivateKeyDer::from_pem_file(dir.join("key.pem")).unwrap();
    let cfg = rustls::ServerConfig::builder_with_provider(std::sync::Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_no_client_auth()
    .with_single_cert(chain, key)
    .unwrap();
    let lst = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = lst.local_addr().unwrap().to_string();
    let thread = std::thread::spawn(move || {
        let (mut sock, _) = lst.accept().unwrap();
        let mut conn = rustls::ServerConnection::new(std::sync::Arc::new(cfg)).unwrap();
        let mut sent = Vec::new();
        while conn.read_tls(&mut sock).unwrap_or(0) > 0 {
            if conn.process_new_packets().is_err() {
                break;
            }
        }
        while conn.wants_write() {
            conn.write_tls(&mut sent).unwrap();
        }
        std::io::Write::write_all(&mut sock, &sent).unwrap();
        sent
    });
    (addr, thread)
}

#[test]
fn ws_at_an_independent_tls_server_fails_naming_wss() {
    let dir = tempfile::tempdir().unwrap();
    pki(dir.path(), localhost_ip());
    let (addr, peer) = rustls_peer(dir.path());
    let out = run(&format!("ws://{addr}"), &dir.path().join("out.json"), &[]);
    let sent = peer.join().unwrap();
    assert_eq!(
        &sent[..2],
        &[0x15, 0x03],
        "the peer answered a TLS alert: {sent:?}"
    );
    let (so, se) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{so}\n{se}");
    assert!(
        se.contains("appears to speak TLS") && se.contains("connect with wss://"),
        "{se}"
    );
}

/// Python's `ssl` (OpenSSL) as the TLS server: it closes on a plain request unanswered.
#[test]
fn ws_at_a_python_ssl_server_fails_naming_wss() {
    let dir = tempfile::tempdir().unwrap();
    pki(dir.path(), localhost_ip());
    let script = "import socket, ssl, sys\n\
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)\n\
ctx.load_cert_chain(sys.argv[1], sys.argv[2])\n\
lst = socket.create_server(('127.0.0.1', 0))\n\
print(lst.getsockname()[1], flush=True)\n\
conn, _ = lst.accept()\n\
try:\n    ctx.wrap_socket(conn, server_side=True)\n\
except ssl.SSLError as e:\n    print(e.reason, flush=True)\n\
conn.close()\n";
    let mut child = std::process::Command::new(crate::support::python())
        .args(["-c", script])
        .arg(dir.path().join("cert.pem"))
        .arg(dir.path().join("key.pem"))
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(child.stdout.take().unwrap()));
    let port = lines.next().unwrap().unwrap();
    let out = run(
        &format!("ws://127.0.0.1:{port}"),
        &dir.path().join("out.json"),
        &[],
    );
    let reason = lines.next().map(|l| l.unwrap()).unwrap_or_default();
    let _ = child.wait();
    let (so, se) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{so}\n{se}\npython: {reason}");
    assert!(se.contains("wss://"), "{se}\npython: {reason}");
}

#[test]
fn wss_at_a_plain_server_fails_naming_ws() {
    let (mut child, addr) = crate::support::serve(&["--host".as_ref(), "127.0.0.1".as_ref()], "ws");
    let dir = tempfile::tempdir().unwrap();
    let out = run(&format!("wss://{addr}"), &dir.path().join("out.json"), &[]);
    let _ = child.kill();
    let _ = child.wait();
    let (so, se) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{so}\n{se}");
    assert!(se.contains("use ws://"), "{se}");
}
