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
