//! `[target]` with its command-line overrides: the URL and upgrade headers (checked as
//! the run would use them), the handshake bound, TLS, the inbound size limit, the
//! compression offer and the target's metrics endpoint.

use std::path::Path;

use super::raw::RawTarget;
use super::{Overrides, ScenarioDoc, ScenarioError};
use crate::engine::tls::TlsOptions;
use crate::engine::transport::Compression;

/// `[target] max_frame_bytes` (default: the transport's limit), range-checked into
/// `errors`.
pub(super) fn max_frame_bytes(
    doc: &ScenarioDoc<'_>,
    target: Option<&RawTarget>,
    errors: &mut Vec<ScenarioError>,
) -> u64 {
    let max_frame_bytes = target
        .and_then(|t| t.max_frame_bytes)
        .unwrap_or(crate::engine::transport::MAX_MESSAGE_BYTES as u64);
    if !(1..=1 << 32).contains(&max_frame_bytes) {
        errors.push(doc.key_error(
            &["target", "max_frame_bytes"],
            format!(
                "`max_frame_bytes` must be in [1, 4294967296] (got {max_frame_bytes}); use e.g. 67108864"
            ),
        ));
    }
    max_frame_bytes
}

/// `[target] retry_rejected` (default 0), range-checked into `errors`.
pub(super) fn retry_rejected(
    doc: &ScenarioDoc<'_>,
    target: Option<&RawTarget>,
    errors: &mut Vec<ScenarioError>,
) -> u32 {
    use crate::engine::transport::refusal::MAX_RETRIES;
    let n = target.and_then(|t| t.retry_rejected).unwrap_or(0);
    if n > MAX_RETRIES {
        errors.push(doc.key_error(
            &["target", "retry_rejected"],
            format!("`retry_rejected` must be in [0, {MAX_RETRIES}] retries (got {n}); use e.g. 3"),
        ));
    }
    n
}

/// `--compression` over `[target] compression` (default `"deflate"`; serde has already
/// refused any other word, with its position).
pub(super) fn compression(target: Option<&RawTarget>, ov: &Overrides) -> Compression {
    ov.compression
        .or(target.and_then(|t| t.compression))
        .unwrap_or_default()
}

/// `[target] metrics_url` with the series to keep (default: vLLM's); only plain
/// `http://` is supported.
pub(super) fn target_metrics(
    doc: &ScenarioDoc<'_>,
    target: Option<&RawTarget>,
    errors: &mut Vec<ScenarioError>,
) -> Option<(String, Vec<String>)> {
    let target_metrics = target.and_then(|t| t.metrics_url.clone()).map(|u| {
        let names = target
            .and_then(|t| t.metrics_series.clone())
            .unwrap_or_else(|| {
                crate::util::scrape::DEFAULT_SERIES
                    .iter()
                    .map(|s| s.to_string())
                    .collect()
            });
        (u, names)
    });
    if let Some((u, _)) = &target_metrics
        && !u.starts_with("http://")
    {
        errors.push(doc.file_error(format!(
            "[target] metrics_url must be a plain http:// URL (got {:?}); use e.g. \"http://127.0.0.1:8000/metrics\"",
            crate::util::target::redact_url(u)
        )));
    }
    target_metrics
}

/// `[target] connect_timeout_s` (default 10), range-checked into `errors`.
pub(super) fn connect_timeout_s(
    doc: &ScenarioDoc<'_>,
    target: Option<&RawTarget>,
    errors: &mut Vec<ScenarioError>,
) -> f64 {
    let connect_timeout_s = target.and_then(|t| t.connect_timeout_s).unwrap_or(10.0);
    if !(connect_timeout_s.is_finite() && connect_timeout_s > 0.0 && connect_timeout_s <= 1e6) {
        errors.push(doc.key_error(
            &["target", "connect_timeout_s"],
            format!(
                "`connect_timeout_s` must be in (0, 1e6] seconds (got {connect_timeout_s}); use e.g. 10"
            ),
        ));
    }
    connect_timeout_s
}

/// The client TLS options: `--ca-cert`/`--insecure` over `[target] ca_cert` (relative
/// to the scenario's folder) and `insecure_skip_verify`; an unreadable CA file is an
/// error in `errors`.
pub(super) fn tls_options(
    doc: &ScenarioDoc<'_>,
    target: Option<&RawTarget>,
    ov: &Overrides,
    errors: &mut Vec<ScenarioError>,
) -> TlsOptions {
    let base = doc.path().parent().unwrap_or(Path::new("."));
    let tls = TlsOptions {
        ca_cert: ov.ca_cert.clone().or_else(|| {
            target
                .and_then(|t| t.ca_cert.as_ref())
                .map(|p| base.join(p))
        }),
        insecure_skip_verify: ov.insecure || target.is_some_and(|t| t.insecure_skip_verify),
    };
    if let Some(p) = &tls.ca_cert
        && let Err(e) = crate::engine::tls::load_ca_certs(p)
    {
        errors.push(match &ov.ca_cert {
            Some(_) => ScenarioError::Flag {
                flag: "--ca-cert".into(),
                msg: e.to_string(),
            },
            None => doc.key_error(&["target", "ca_cert"], e.to_string()),
        });
    }
    tls
}

/// The target URL (when one is given) and every upgrade header, checked as the run would
/// use them (`default_path`: the workload's, when it was built).
pub(super) fn check_target(
    doc: &ScenarioDoc<'_>,
    target: Option<&RawTarget>,
    ov: &Overrides,
    default_path: Option<&str>,
) -> Vec<ScenarioError> {
    let mut errors = Vec::new();
    let url = ov.target.as_ref().or(target.and_then(|t| t.url.as_ref()));
    if let (Some(url), Some(path)) = (url, default_path)
        && let Err(e) = crate::util::target::resolve_url(url, path)
    {
        errors.push(match &ov.target {
            Some(_) => ScenarioError::Flag {
                flag: "--target".into(),
                msg: e.to_string(),
            },
            None => doc.key_error(&["target", "url"], e.to_string()),
        });
    }
    for (name, value) in target.map(|t| &t.headers).into_iter().flatten() {
        if let Some(msg) = crate::util::target::header_problem(name, value) {
            errors.push(doc.key_error(&["target", "headers", name], msg));
        }
    }
    for (name, value) in &ov.headers {
        if let Some(msg) = crate::util::target::header_problem(name, value) {
            errors.push(ScenarioError::Flag {
                flag: "--header".into(),
                msg,
            });
        }
    }
    errors
}

/// File headers, then flag headers; a later name wins (case-insensitively).
pub(super) fn headers(
    target: Option<&RawTarget>,
    flags: &[(String, String)],
) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = target
        .map(|t| t.headers.clone().into_iter().collect())
        .unwrap_or_default();
    for (k, v) in flags {
        out.retain(|(fk, _)| !fk.eq_ignore_ascii_case(k));
        out.push((k.clone(), v.clone()));
    }
    out
}
