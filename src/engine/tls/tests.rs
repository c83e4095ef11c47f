//! Unit tests of client TLS: CA loading, error text, result annotation.

use super::*;

fn self_signed_pem() -> String {
    let key = rcgen::KeyPair::generate().unwrap();
    let params = rcgen::CertificateParams::new(vec!["localhost".to_string()]).unwrap();
    params.self_signed(&key).unwrap().pem()
}

#[test]
fn ca_cert_loads_and_bad_files_name_the_file_and_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("ca.pem");
    std::fs::write(&good, self_signed_pem()).unwrap();
    assert_eq!(load_ca_certs(&good).unwrap().len(), 1);
    let opts = TlsOptions {
        ca_cert: Some(good.clone()),
        insecure_skip_verify: false,
    };
    assert!(
        opts.describe().contains("1 certificate"),
        "{}",
        opts.describe()
    );
    assert!(ClientTls::build(&opts).is_ok());

    let missing = dir.path().join("nope.pem");
    let e = load_ca_certs(&missing).unwrap_err().to_string();
    assert!(e.contains("nope.pem") && e.contains("cannot read"), "{e}");

    let empty = dir.path().join("empty.pem");
    std::fs::write(&empty, "just text\n").unwrap();
    let e = load_ca_certs(&empty).unwrap_err().to_string();
    assert!(
        e.contains("empty.pem") && e.contains("BEGIN CERTIFICATE"),
        "{e}"
    );

    let junk = dir.path().join("junk.pem");
    std::fs::write(
        &junk,
        "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
    )
    .unwrap();
    let e = load_ca_certs(&junk).unwrap_err().to_string();
    assert!(
        e.contains("junk.pem") && e.contains("does not parse"),
        "{e}"
    );
}

#[test]
fn certificate_failures_read_as_their_cause() {
    let t = explain(&rustls::Error::InvalidCertificate(
        CertificateError::UnknownIssuer,
    ));
    assert!(
        t.contains("unknown issuer") && t.contains("--ca-cert"),
        "{t}"
    );
    let t = explain(&rustls::Error::InvalidCertificate(
        CertificateError::NotValidForName,
    ));
    assert!(t.contains("name mismatch"), "{t}");
    let t = explain(&rustls::Error::InvalidCertificate(
        CertificateError::Expired,
    ));
    assert!(t.contains("expired"), "{t}");
    let t = explain(&rustls::Error::InvalidCertificate(
        CertificateError::NotValidYet,
    ));
    assert!(t.contains("not valid yet"), "{t}");
}

#[test]
fn result_block_names_the_ca_and_the_insecure_switch() {
    let opts = TlsOptions {
        ca_cert: Some("ca.pem".into()),
        insecure_skip_verify: true,
    };
    let v = result_block(&opts);
    assert_eq!(v["tls"]["insecure_skip_verify"], true);
    assert_eq!(v["tls"]["ca_cert"], "ca.pem");
}

#[test]
fn insecure_is_described_loudly() {
    let opts = TlsOptions {
        ca_cert: None,
        insecure_skip_verify: true,
    };
    assert!(opts.describe().starts_with("INSECURE"));
    assert!(ClientTls::build(&opts).is_ok());
}
