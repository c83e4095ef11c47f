//! Target URL rules (spec §7.3), pure: a URL is given whole (`ws`, `wss`, `http`,
//! `https`; http(s) becomes ws(s)); a URL without a path gets the workload's default
//! path; any explicit path is used as given (users put proxies and gateways in front of
//! servers); query and fragment are kept. Also the one redaction rule for URLs in
//! output ([`redact_url`], [`redact_text`]) and URL user info as Basic authorization.

/// Why a target URL cannot be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TargetError {
    /// Not one of the four schemes.
    #[error("unsupported target URL '{0}': expected a ws://, wss://, http:// or https:// URL")]
    Scheme(String),
    /// No host.
    #[error(
        "target URL '{0}' has no host: expected ws://, wss://, http:// or https://<host>[:port][/path]"
    )]
    Host(String),
    /// The port is not a number in 1..=65535.
    #[error("target URL '{url}' has port {port}: a port is a number from 1 to 65535")]
    Port {
        /// The URL as given (redacted).
        url: String,
        /// The port text.
        port: String,
    },
}

/// The WebSocket URL for `base`, appending `default_path` when `base` has no path.
pub fn resolve_url(base: &str, default_path: &str) -> Result<String, TargetError> {
    let bad_scheme = || TargetError::Scheme(base.to_string());
    let (scheme, rest) = base.trim().split_once("://").ok_or_else(bad_scheme)?;
    let scheme = match scheme.to_ascii_lowercase().as_str() {
        "ws" | "http" => "ws",
        "wss" | "https" => "wss",
        _ => return Err(bad_scheme()),
    };
    // User info (even a password with an unencoded `/`, `?` or `#`) is kept as given
    // and not read as host, port or path.
    let (user_info, rest) = match user_info_end(rest, false) {
        Some(at) => rest.split_at(at + 1),
        None => ("", rest),
    };
    let (before_query, query) = match rest.find(['?', '#']) {
        Some(at) => rest.split_at(at),
        None => (rest, ""),
    };
    let (host_port, path) = match before_query.find('/') {
        Some(at) => before_query.split_at(at),
        None => (before_query, ""),
    };
    let host = if host_port.starts_with('[') {
        host_port
            .split(']')
            .next()
            .unwrap_or("")
            .trim_start_matches('[')
    } else {
        host_port.split(':').next().unwrap_or("")
    };
    if host.is_empty() {
        return Err(TargetError::Host(base.to_string()));
    }
    let port = if host_port.starts_with('[') {
        host_port.rsplit_once("]:").map(|(_, p)| p)
    } else {
        host_port.split_once(':').map(|(_, p)| p)
    };
    if let Some(p) = port.filter(|p| !p.is_empty())
        && !p.parse::<u16>().is_ok_and(|n| n > 0)
    {
        // Only digits are quoted: anything else may be part of a credential.
        let shown = if p.bytes().all(|b| b.is_ascii_digit()) && p.len() < 12 {
            p.to_string()
        } else {
            "(not a number)".to_string()
        };
        return Err(TargetError::Port {
            url: redact_url(base),
            port: shown,
        });
    }
    let path = path.trim_end_matches('/');
    let path = if path.is_empty() { default_path } else { path };
    Ok(format!("{scheme}://{user_info}{host_port}{path}{query}"))
}

/// Why an upgrade header cannot be sent, or `None` when it can: the name must be an
/// HTTP token (letters, digits, ``!#$%&'*+-.^_`|~``), the value visible ASCII, spaces and
/// tabs (no CR, LF or other control bytes). The message never quotes the value (it may be
/// a secret); it names the offending byte's position.
pub fn header_problem(name: &str, value: &str) -> Option<String> {
    let token = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
    if name.is_empty() {
        return Some("header name is empty; write KEY=VALUE, e.g. Authorization=Bearer …".into());
    }
    if let Some((i, c)) = name.char_indices().find(|(_, c)| !token(*c)) {
        return Some(format!(
            "header name \"{}\" has {c:?} at byte {i}; names are letters, digits and !#$%&'*+-.^_`|~",
            name.escape_debug()
        ));
    }
    let bad = value
        .bytes()
        .position(|b| !(b == b'\t' || (32..127).contains(&b)));
    bad.map(|i| {
        format!(
            "the value of header \"{name}\" has a control or non-ASCII byte at byte {i} (value not shown); \
             header values are visible ASCII, spaces and tabs"
        )
    })
}

/// Query and fragment keys whose values are known not to be secrets (compared after
/// percent-decoding, case-insensitively): every other value is redacted. The rule is
/// "secret unless known public", so a credential under a name nobody listed (`apikey`,
/// `x-api-key`, `client_secret`, `X-Amz-Signature`, `api%5Fkey`, …) never shows.
pub const PUBLIC_QUERY_KEYS: [&str; 14] = [
    "model",
    "intent",
    "duplex",
    "minicpmo45_native_duplex",
    "autostart",
    "session_id",
    "language",
    "voice",
    "sample_rate",
    "encoding",
    "format",
    "api-version",
    "deployment",
    "tenant",
];

/// What a redacted value is replaced with.
pub const REDACTED: &str = "REDACTED";

/// The URL as it may appear in logs and results: without user info (credentials, even
/// a password holding an unencoded `/`, `?`, `#` or `@`), and with the value of every
/// query and fragment parameter replaced by [`REDACTED`] unless its key is one of
/// [`PUBLIC_QUERY_KEYS`]. The one redaction rule: every writer of stderr, reports,
/// results and artifacts uses this (or [`redact_text`] for free text that may embed a
/// URL).
pub fn redact_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let rest = match user_info_end(rest, true) {
        Some(at) => &rest[at + 1..],
        None => rest,
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (host, tail) = rest.split_at(end);
    let (tail, fragment) = match tail.find('#') {
        Some(at) => (&tail[..at], Some(&tail[at + 1..])),
        None => (tail, None),
    };
    let mut out = format!("{scheme}://{host}");
    match tail.split_once('?') {
        Some((path, query)) => {
            out.push_str(path);
            out.push('?');
            out.push_str(&redact_params(query));
        }
        None => out.push_str(tail),
    }
    if let Some(f) = fragment {
        out.push('#');
        out.push_str(&redact_params(f));
    }
    out
}

/// Where the user info of `rest` (a URL after `scheme://`) ends: the index of its `@`.
/// The usual case is an `@` before the first `/`, `?` or `#`. A password may hold an
/// unencoded `/`, `?` or `#` (curl takes them): then the part before that delimiter has
/// `user:` and an `@` follows later, before a host-like `host[:port]`. `aggressive` (for
/// redaction) also takes an all-digit password (`user:123/…@host`), which a host with a
/// port cannot be told from: better to hide a host than show a password.
fn user_info_end(rest: &str, aggressive: bool) -> Option<usize> {
    let first = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    if let Some(at) = rest[..first].rfind('@') {
        return Some(at);
    }
    let (user, pass) = rest[..first].split_once(':')?;
    let looks_like_port = !pass.is_empty() && pass.bytes().all(|b| b.is_ascii_digit());
    if user.is_empty() || (looks_like_port && !aggressive) {
        return None;
    }
    // The last `@` followed by a host[:port] that ends the authority.
    rest.match_indices('@').map(|(i, _)| i).rev().find(|&at| {
        let after = &rest[at + 1..];
        let host_end = after.find(['/', '?', '#']).unwrap_or(after.len());
        let host = &after[..host_end];
        !host.is_empty()
            && host
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b':' | b'[' | b']'))
    })
}

/// `params` (`k=v&…`, a query without `?` or a fragment without `#`) with every value
/// whose key is not public replaced. A bare fragment with no `=` (`#section`) is kept.
fn redact_params(params: &str) -> String {
    params
        .split('&')
        .map(|field| match field.split_once('=') {
            Some((k, _)) if !is_public_key(k) => format!("{k}={REDACTED}"),
            _ => field.to_string(),
        })
        .collect::<Vec<_>>()
        .join("&")
}

fn is_public_key(key: &str) -> bool {
    let key = percent_decode(key.trim());
    PUBLIC_QUERY_KEYS
        .iter()
        .any(|s| s.eq_ignore_ascii_case(&key))
}

/// Free text (an error message, a log line) with every URL in it passed through
/// `redact_url`. A URL runs from its scheme to the next whitespace or quote.
pub fn redact_text(text: &str) -> String {
    if !text.contains("://") {
        return text.to_string();
    }
    let ends_url = |c: char| c.is_whitespace() || matches!(c, '\'' | '"' | '<' | '>' | '`' | '\\');
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        let start = rest[..at]
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')))
            .map_or(0, |i| i + 1);
        let end = rest[at..].find(ends_url).map_or(rest.len(), |i| at + i);
        out.push_str(&rest[..start]);
        out.push_str(&redact_url(&rest[start..end]));
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// The URL to connect to and the `Authorization` value its user info stands for: as curl
/// does, `scheme://user:password@host/…` is sent to `scheme://host/…` with
/// `Authorization: Basic base64(user:password)` (user info percent-decoded). `None` when
/// the URL has no user info.
pub fn split_user_info(url: &str) -> (String, Option<String>) {
    use base64::Engine as _;
    let Some((scheme, rest)) = url.split_once("://") else {
        return (url.to_string(), None);
    };
    let Some(at) = user_info_end(rest, false) else {
        return (url.to_string(), None);
    };
    let (user_info, host_and_tail) = (&rest[..at], &rest[at + 1..]);
    let (user, password) = user_info.split_once(':').unwrap_or((user_info, ""));
    let creds = format!("{}:{}", percent_decode(user), percent_decode(password));
    let header = format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(creds)
    );
    (format!("{scheme}://{host_and_tail}"), Some(header))
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (bytes[i], bytes.get(i + 1), bytes.get(i + 2)) {
            (b'%', Some(&h), Some(&l)) if hex(h).is_some() && hex(l).is_some() => {
                out.push((hex(h).unwrap_or(0) * 16 + hex(l).unwrap_or(0)) as u8);
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
#[path = "target_tests.rs"]
mod tests;
