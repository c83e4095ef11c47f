//! Client TLS for `wss://` targets: the run's rustls configuration (built once per run,
//! shared by every shard's client), private-CA loading and validation, the opt-in
//! "skip verification" verifier, and readable text for certificate failures.
//!
//! Roots: the operating system's store (`rustls-native-certs`), plus the certificates of
//! `[target] ca_cert` / `--ca-cert` when given. Crypto: rustls with the `ring` provider.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore};

/// The TLS settings of a run (`[target] ca_cert`, `[target] insecure_skip_verify`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TlsOptions {
    /// Extra trusted CA certificates (PEM), on top of the system roots.
    pub ca_cert: Option<PathBuf>,
    /// Accept any server certificate. For testing only; announced loudly.
    pub insecure_skip_verify: bool,
}

impl TlsOptions {
    /// One line for `rtload check` and logs: what a `wss://` connection will trust.
    pub fn describe(&self) -> String {
        if self.insecure_skip_verify {
            return "INSECURE: server certificates are NOT verified (insecure_skip_verify)"
                .to_string();
        }
        match &self.ca_cert {
            Some(p) => match load_ca_certs(p) {
                Ok(c) => format!(
                    "system roots + ca_cert {} ({} certificate{})",
                    p.display(),
                    c.len(),
                    if c.len() == 1 { "" } else { "s" }
                ),
                Err(e) => format!("invalid: {e}"),
            },
            None => "system roots (rustls, ring)".to_string(),
        }
    }
}

/// The text printed on stderr (and recorded in the result) when verification is off.
pub const INSECURE_WARNING: &str = "WARNING: TLS certificate verification is DISABLED \
(insecure_skip_verify / --insecure): the server's identity is not checked; anyone on the \
path can impersonate it. Use this for testing only; prefer --ca-cert PATH.";

/// Why the client TLS configuration could not be built.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TlsError {
    /// The CA certificate file is unreadable or holds no usable certificate.
    #[error("ca_cert {}: {msg}", path.display())]
    CaCert {
        /// The file.
        path: PathBuf,
        /// What is wrong and how to fix it.
        msg: String,
    },
    /// rustls rejected the configuration.
    #[error("TLS configuration: {0}")]
    Config(String),
}

/// Read the PEM certificates of `path`, each parsed as an X.509 trust anchor.
pub fn load_ca_certs(path: &Path) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let err = |msg: String| TlsError::CaCert {
        path: path.to_path_buf(),
        msg,
    };
    let bytes = std::fs::read(path).map_err(|e| {
        err(format!(
            "cannot read: {e}; point it at a PEM file of CA certificates (a relative \
ca_cert is resolved from the scenario's folder)"
        ))
    })?;
    let certs = CertificateDer::pem_slice_iter(&bytes)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| err(format!("not valid PEM: {e}")))?;
    if certs.is_empty() {
        return Err(err(
            "no certificate found; expected a PEM file with '-----BEGIN CERTIFICATE-----' blocks"
                .into(),
        ));
    }
    let mut store = RootCertStore::empty();
    for (i, c) in certs.iter().enumerate() {
        store
            .add(c.clone())
            .map_err(|e| err(format!("certificate {} does not parse: {e}", i + 1)))?;
    }
    Ok(certs)
}

/// The run's client TLS configuration, shared by every shard (cheap to clone).
#[derive(Clone)]
pub struct ClientTls(pub Arc<ClientConfig>);

impl std::fmt::Debug for ClientTls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ClientTls")
    }
}

impl ClientTls {
    /// Build the configuration for `opts`: system roots plus `ca_cert`, or no
    /// verification at all when `insecure_skip_verify`. Call once per run.
    pub fn build(opts: &TlsOptions) -> Result<ClientTls, TlsError> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = ClientConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(|e| TlsError::Config(e.to_string()))?;
        let mut cfg = if opts.insecure_skip_verify {
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(SkipVerify(provider)))
                .with_no_client_auth()
        } else {
            let mut roots = RootCertStore::empty();
            // Unreadable system certificates are skipped: a private CA may be all we need,
            // and a missing root shows up per session as "unknown issuer".
            let _ = roots.add_parsable_certificates(rustls_native_certs::load_native_certs().certs);
            if let Some(p) = &opts.ca_cert {
                for c in load_ca_certs(p)? {
                    let _ = roots.add(c);
                }
            }
            builder.with_root_certificates(roots).with_no_client_auth()
        };
        // WebSocket upgrades are HTTP/1.1 requests.
        cfg.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(ClientTls(Arc::new(cfg)))
    }
}

/// Accepts any certificate; still checks handshake signatures (the peer holds the key
/// of the certificate it sent).
#[derive(Debug)]
struct SkipVerify(Arc<rustls::crypto::CryptoProvider>);

impl ServerCertVerifier for SkipVerify {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// The rustls error inside an awc connect failure, if the failure was TLS.
pub fn rustls_error(err: &awc::error::WsClientError) -> Option<&rustls::Error> {
    use awc::error::{ConnectError, SendRequestError, WsClientError};
    match err {
        WsClientError::SendRequest(SendRequestError::Connect(ConnectError::Io(io))) => {
            io.get_ref()?.downcast_ref::<rustls::Error>()
        }
        _ => None,
    }
}

/// Readable text for a TLS failure: the cause and the fix. Pure.
pub fn explain(err: &rustls::Error) -> String {
    use rustls::Error as E;
    let fix_trust = "trust its CA with --ca-cert PATH ([target] ca_cert), \
or use --insecure for testing only";
    match err {
        E::InvalidCertificate(c) => match c {
            CertificateError::UnknownIssuer => format!(
                "TLS: certificate problem: unknown issuer (the server's certificate is not \
signed by a trusted CA); {fix_trust}"
            ),
            CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. } => {
                format!(
                    "TLS: certificate problem: name mismatch ({c}); connect with a host \
name the certificate covers, or reissue the certificate with this name as a SAN"
                )
            }
            CertificateError::Expired | CertificateError::ExpiredContext { .. } => {
                format!("TLS: certificate problem: expired ({c}); renew the server's certificate")
            }
            CertificateError::NotValidYet | CertificateError::NotValidYetContext { .. } => {
                format!(
                    "TLS: certificate problem: not valid yet ({c}); check the clocks of \
client and server"
                )
            }
            CertificateError::Other(o) if o.to_string().contains("CaUsedAsEndEntity") => {
                "TLS: certificate problem: the server presents a CA certificate \
(basicConstraints CA:TRUE) as its own certificate; serve a leaf certificate signed by that \
CA (or a self-signed one with basicConstraints CA:FALSE)"
                    .to_string()
            }
            other => format!("TLS: certificate problem: {other}"),
        },
        E::AlertReceived(a) => format!("TLS: the server refused the handshake (alert {a:?})"),
        E::InvalidMessage(_) | E::InappropriateMessage { .. } => format!(
            "TLS handshake failed ({err}); is the server speaking TLS? use ws:// for a \
plain-text server"
        ),
        other => format!("TLS handshake failed: {other}"),
    }
}

/// The result's `rtload` keys for a `wss://` run: `{"tls": {"ca_cert", "insecure_skip_verify"}}`.
pub fn result_block(opts: &TlsOptions) -> serde_json::Value {
    serde_json::json!({"tls": {
        "ca_cert": opts.ca_cert.as_ref().map(|p| p.display().to_string()),
        "insecure_skip_verify": opts.insecure_skip_verify,
    }})
}

#[cfg(test)]
mod tests;
