//! Target URL rules (spec §7.3), pure: a URL is given whole (`ws`, `wss`, `http`,
//! `https`; http(s) becomes ws(s)); a URL without a path gets the workload's default
//! path; any explicit path is used as given (users put proxies and gateways in front of
//! servers); query and fragment are kept.

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
    let (before_query, query) = match rest.find(['?', '#']) {
        Some(at) => rest.split_at(at),
        None => (rest, ""),
    };
    let (authority, path) = match before_query.find('/') {
        Some(at) => before_query.split_at(at),
        None => (before_query, ""),
    };
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
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
    let path = path.trim_end_matches('/');
    let path = if path.is_empty() { default_path } else { path };
    Ok(format!("{scheme}://{authority}{path}{query}"))
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

/// The URL as it may appear in logs and results: without user info (credentials).
pub fn redact_url(url: &str) -> String {
    match url.split_once("://") {
        Some((scheme, rest)) => {
            let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
            let (auth, tail) = rest.split_at(end);
            let host = auth.rsplit('@').next().unwrap_or(auth);
            format!("{scheme}://{host}{tail}")
        }
        None => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: &str = "/v1/realtime/video";

    #[test]
    fn reference_vectors_and_rtload_rules() {
        let ok =
            |base: &str, want: &str| assert_eq!(resolve_url(base, P).expect(base), want, "{base}");
        ok(
            "http://example.invalid:8099",
            "ws://example.invalid:8099/v1/realtime/video",
        );
        ok(
            "https://example.invalid",
            "wss://example.invalid/v1/realtime/video",
        );
        ok(
            "ws://127.0.0.1:8000/v1/realtime/video",
            "ws://127.0.0.1:8000/v1/realtime/video",
        );
        ok("wss://h/v1/realtime/video/", "wss://h/v1/realtime/video");
        ok("http://h:1/", "ws://h:1/v1/realtime/video");
        ok("http://h:1//", "ws://h:1/v1/realtime/video");
        ok(
            "ws://gw.example/tenant/a/video",
            "ws://gw.example/tenant/a/video",
        );
        ok("HTTPS://h:9", "wss://h:9/v1/realtime/video");
        ok("ws://h:1?token=x", "ws://h:1/v1/realtime/video?token=x");
        ok("ws://u:p@h:1", "ws://u:p@h:1/v1/realtime/video");
        ok("ws://[::1]:8000", "ws://[::1]:8000/v1/realtime/video");
        assert_eq!(
            resolve_url("http://h", "/v1/realtime").unwrap(),
            "ws://h/v1/realtime"
        );
    }

    #[test]
    fn bad_urls_name_the_value_and_the_fix() {
        for bad in ["ftp://h", "h:8000", "", "tcp://h/x"] {
            let e = resolve_url(bad, P).expect_err(bad).to_string();
            assert!(e.contains(&format!("'{bad}'")), "{e}");
            assert!(e.contains("ws://, wss://, http:// or https://"), "{e}");
        }
        for bad in [
            "ws://",
            "http://:8000",
            "ws:///v1/realtime/video",
            "ws://u@:1",
        ] {
            let e = resolve_url(bad, P).expect_err(bad).to_string();
            assert!(e.contains("has no host") && e.contains(bad), "{e}");
        }
    }

    #[test]
    fn redacts_user_info() {
        assert_eq!(redact_url("wss://user:secret@h:1/p"), "wss://h:1/p");
        assert_eq!(redact_url("ws://h:1/p?x=1"), "ws://h:1/p?x=1");
    }
}
