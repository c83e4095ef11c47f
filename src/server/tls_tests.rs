use super::*;

#[test]
fn a_short_rsa_key_is_named_as_unusable_not_as_a_mismatch() {
    let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/tls");
    let e = load_tls(
        &data.join("rsa1024-cert.pem"),
        &data.join("rsa1024-key.pem"),
    )
    .err()
    .unwrap()
    .to_string();
    assert!(e.contains("rsa1024-key.pem"), "{e}");
    assert!(
        e.contains("2048 to 8192 bits") && e.contains("openssl genrsa"),
        "{e}"
    );
    assert!(!e.contains("does not fit"), "{e}");
}

#[test]
fn loads_a_pair_and_names_the_bad_file() {
    let dir = tempfile::tempdir().unwrap();
    let key = rcgen::KeyPair::generate().unwrap();
    let cert = rcgen::CertificateParams::new(vec!["localhost".to_string()])
        .unwrap()
        .self_signed(&key)
        .unwrap();
    let (c, k) = (dir.path().join("c.pem"), dir.path().join("k.pem"));
    std::fs::write(&c, cert.pem()).unwrap();
    std::fs::write(&k, key.serialize_pem()).unwrap();
    assert!(load_tls(&c, &k).is_ok());

    let e = load_tls(&dir.path().join("none.pem"), &k)
        .unwrap_err()
        .to_string();
    assert!(e.contains("none.pem") && e.contains("cannot read"), "{e}");
    let e = load_tls(&k, &k).unwrap_err().to_string();
    assert!(e.contains("k.pem") && e.contains("no certificate"), "{e}");
    let e = load_tls(&c, &c).unwrap_err().to_string();
    assert!(e.contains("c.pem") && e.contains("private key"), "{e}");
    let other = rcgen::KeyPair::generate().unwrap();
    std::fs::write(&k, other.serialize_pem()).unwrap();
    let e = load_tls(&c, &k).unwrap_err().to_string();
    assert!(e.contains("k.pem") && e.contains("does not fit"), "{e}");
}
