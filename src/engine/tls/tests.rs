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
fn result_gets_a_tls_block_in_its_own_dialect() {
    let opts = TlsOptions {
        ca_cert: None,
        insecure_skip_verify: true,
    };
    let text = "{\n  \"a\": NaN,\n  \"rtload\": {\n    \"x\": 1\n  }\n}\n";
    let out = annotate_result(text, &opts);
    assert!(out.contains("\"a\": NaN"), "{out}");
    let v: serde_json::Value = serde_json::from_str(&out.replace("NaN", "null")).unwrap();
    assert_eq!(v["rtload"]["tls"]["insecure_skip_verify"], true);
    assert_eq!(v["rtload"]["x"], 1);
    let out = annotate_result("{\n  \"rtload\": {}\n}\n", &opts);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["rtload"]["tls"]["ca_cert"], serde_json::Value::Null);
    assert_eq!(annotate_result("{}", &opts), "{}");
    // Python's one-line layout; a nested or quoted "rtload" is not the block.
    let text = r#"{"s": "\"rtload\": {", "n": {"rtload": {"y": 2}}, "rtload": {"x": NaN}}"#;
    let out = annotate_result(text, &opts);
    let v: serde_json::Value = serde_json::from_str(&out.replace("NaN", "null")).unwrap();
    assert_eq!(v["rtload"]["tls"]["insecure_skip_verify"], true, "{out}");
    assert!(v["n"]["rtload"].get("tls").is_none(), "{out}");
    assert_eq!(v["s"], "\"rtload\": {", "{out}");
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
