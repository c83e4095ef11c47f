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
#[path = "tls_tests.rs"]
mod tests;
