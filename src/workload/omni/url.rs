//! Where a duplex session connects and how it introduces itself (spec §1.1): the Realtime
//! WebSocket URL with its native-duplex query parameters, the session id, and the HTTP
//! upgrade headers in the reference's precedence.
//!
//! Pure code: the API key, the clock reading and the random fallback are values passed in;
//! nothing here reads the environment or a clock.

use super::ledger::py_repr_str;

/// Why a URL cannot be used for a Realtime session.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UrlError {
    /// Not `http`/`https`/`ws`/`wss`, or no host. Carries the Python repr of the URL, as
    /// the reference's message does.
    #[error("Unsupported Realtime URL: {0}")]
    Unsupported(String),
}

/// Join `endpoint` onto `base_url` with exactly one slash between them, unless the
/// endpoint already has a scheme, in which case it is used as-is.
pub fn join_endpoint(base_url: &str, endpoint: &str) -> String {
    if scheme_of(endpoint).is_some() {
        return endpoint.to_owned();
    }
    format!(
        "{}/{}",
        base_url.trim_end_matches('/'),
        endpoint.trim_start_matches('/')
    )
}

/// The session URL: `http`→`ws`, `https`→`wss` (`ws`/`wss` kept), existing query
/// parameters kept (blanks too, a repeated key keeps its first position and last value),
/// then `duplex=1`, `model`, `minicpmo45_native_duplex=1`, `autostart=0` and `session_id`
/// set or overwritten, all re-encoded with form encoding (`:` becomes `%3A`).
pub fn realtime_url(api_url: &str, model: &str, session_id: &str) -> Result<String, UrlError> {
    let unsupported = || UrlError::Unsupported(py_repr_str(api_url));
    let scheme = scheme_of(api_url).ok_or_else(unsupported)?;
    let ws = match scheme.to_ascii_lowercase().as_str() {
        "http" | "ws" => "ws",
        "https" | "wss" => "wss",
        _ => return Err(unsupported()),
    };
    let rest = api_url[scheme.len() + 1..]
        .strip_prefix("//")
        .ok_or_else(unsupported)?;
    let (rest, fragment) = match rest.split_once('#') {
        Some((r, f)) => (r, Some(f)),
        None => (rest, None),
    };
    let (rest, query) = match rest.split_once('?') {
        Some((r, q)) => (r, q),
        None => (rest, ""),
    };
    let (netloc, path) = rest.find('/').map_or((rest, ""), |i| rest.split_at(i));
    let host = netloc.rsplit_once('@').map_or(netloc, |(_, h)| h);
    if host.is_empty() || host.starts_with(':') {
        return Err(unsupported());
    }
    let mut params: Vec<(String, String)> = Vec::new();
    let mut set = |k: &str, v: &str| match params.iter_mut().find(|(pk, _)| pk == k) {
        Some(slot) => slot.1 = v.to_owned(),
        None => params.push((k.to_owned(), v.to_owned())),
    };
    for field in query.split('&').filter(|f| !f.is_empty()) {
        let (k, v) = field.split_once('=').unwrap_or((field, ""));
        set(&form_decode(k), &form_decode(v));
    }
    set("duplex", "1");
    if !model.is_empty() {
        set("model", model);
    }
    set("minicpmo45_native_duplex", "1");
    set("autostart", "0");
    if !session_id.is_empty() {
        set("session_id", session_id);
    }
    let encoded: Vec<String> = params
        .iter()
        .map(|(k, v)| format!("{}={}", form_encode(k), form_encode(v)))
        .collect();
    let mut url = format!("{ws}://{netloc}{path}?{}", encoded.join("&"));
    if let Some(f) = fragment.filter(|f| !f.is_empty()) {
        url.push('#');
        url.push_str(f);
    }
    Ok(url)
}

/// `omniinteract:<subset>:<request index>:<monotonic ns>`; the request index is the
/// request id, or `random` as 32 lowercase hex digits when the sample has no id (warm-ups).
pub fn session_id(
    subset: &str,
    request_id: Option<&str>,
    monotonic_ns: u128,
    random: u128,
) -> String {
    match request_id {
        Some(id) => format!("omniinteract:{subset}:{id}:{monotonic_ns}"),
        None => format!("omniinteract:{subset}:{random:032x}:{monotonic_ns}"),
    }
}

/// Upgrade headers, later entries winning on (case-insensitive) name collisions:
/// `Authorization: Bearer <api_key>` when a non-empty key is given, then every user
/// header in order, then `x-request-id` when the sample has a request id.
pub fn upgrade_headers(
    api_key: Option<&str>,
    headers: &[(String, String)],
    request_id: Option<&str>,
) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    let mut put = |k: &str, v: String| {
        out.retain(|(name, _)| !name.eq_ignore_ascii_case(k));
        out.push((k.to_owned(), v));
    };
    if let Some(key) = api_key.filter(|k| !k.is_empty()) {
        put("Authorization", format!("Bearer {key}"));
    }
    for (k, v) in headers {
        put(k, v.clone());
    }
    if let Some(id) = request_id {
        put("x-request-id", id.to_owned());
    }
    out
}

/// The scheme of `url` as Python's `urlsplit` finds it (letter, then letters, digits,
/// `+`, `-`, `.`, then `:`).
fn scheme_of(url: &str) -> Option<&str> {
    let (scheme, _) = url.split_once(':')?;
    let mut chars = scheme.chars();
    let first = chars.next()?;
    (first.is_ascii_alphabetic()
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')))
    .then_some(scheme)
}

/// `quote_plus` with no safe characters beyond `A-Za-z0-9_.-~`.
fn form_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'_' | b'.' | b'-' | b'~' => {
                out.push(char::from(b));
            }
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// `unquote_plus`: `+` is a space, valid `%XX` escapes are decoded, invalid ones kept,
/// and the bytes are read as UTF-8 with replacement.
fn form_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| char::from(b).to_digit(16);
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => match (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                (Some(h), Some(l)) => {
                    out.push((h * 16 + l) as u8);
                    i += 2;
                }
                _ => out.push(b'%'),
            },
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
#[path = "url_tests.rs"]
mod tests;
