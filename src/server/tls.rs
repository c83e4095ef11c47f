//! TLS for the embedded server (`rtload serve --tls-cert --tls-key`): load a PEM
//! certificate chain and private key into a rustls server configuration (ring provider).
//! Server-side only: it shares nothing with the client's TLS code.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

/// A loaded server TLS configuration.
#[derive(Clone)]
pub struct ServerTls(pub(crate) rustls::ServerConfig);

impl std::fmt::Debug for ServerTls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ServerTls")
    }
}

/// Why the certificate or key cannot be used; names the file.
#[derive(Debug, thiserror::Error)]
#[error("{}: {msg}", path.display())]
pub struct ServerTlsError {
    /// The offending file.
    pub path: PathBuf,
    /// What is wrong and how to fix it.
    pub msg: String,
}

/// Load `cert` (PEM chain, leaf first) and `key` (PEM private key) for serving wss://.
pub fn load_tls(cert: &Path, key: &Path) -> Result<ServerTls, ServerTlsError> {
    let fail = |path: &Path, msg: String| ServerTlsError {
        path: path.to_path_buf(),
        msg,
    };
    let read = |path: &Path| {
        std::fs::read(path)
            .map_err(|e| fail(path, format!("cannot read --tls-cert/--tls-key file: {e}")))
    };
    let cert_bytes = read(cert)?;
    let chain = CertificateDer::pem_slice_iter(&cert_bytes)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| fail(cert, format!("not a valid PEM certificate file: {e}")))?;
    if chain.is_empty() {
        return Err(fail(
            cert,
            "no certificate found; --tls-cert needs PEM '-----BEGIN CERTIFICATE-----' blocks"
                .into(),
        ));
    }
    let key_bytes = read(key)?;
    let key_der = PrivateKeyDer::from_pem_slice(&key_bytes).map_err(|e| {
        fail(
            key,
            format!(
                "no usable private key ({e}); --tls-key needs a PEM PKCS#8, PKCS#1 or SEC1 key"
            ),
        )
    })?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    // A key that parses as PEM but that the crypto provider cannot sign with (an RSA key
    // under 2048 bits, an unsupported curve) is named as such, not as a mismatch.
    if let Err(e) = provider.key_provider.load_private_key(key_der.clone_key()) {
        return Err(fail(
            key,
            format!(
                "the key cannot be used for TLS ({e}): rustls (ring) signs with RSA keys of \
                 2048 to 8192 bits, ECDSA P-256 or P-384, and Ed25519 — a shorter RSA key \
                 (e.g. 1024 bits) is refused; make one with `openssl genrsa -out key.pem 2048` \
                 or `openssl ecparam -genkey -name prime256v1 -noout -out key.pem`"
            ),
        ));
    }
    let cfg = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| fail(cert, e.to_string()))?
        .with_no_client_auth()
        .with_single_cert(chain, key_der)
        .map_err(|e| {
            fail(
                key,
                format!("does not fit the certificate in {}: {e}", cert.display()),
            )
        })?;
    Ok(ServerTls(cfg))
}

#[cfg(test)]
mod tests {
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
}
