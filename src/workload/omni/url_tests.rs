//! URL, session id and header vectors (spec §1.1).

use super::*;

#[test]
fn seed_header_vector() {
    let headers = upgrade_headers(
        Some("secret"),
        &[("X-Proxy".into(), "test".into())],
        Some("measured-0"),
    );
    let expect = [
        ("Authorization", "Bearer secret"),
        ("X-Proxy", "test"),
        ("x-request-id", "measured-0"),
    ];
    let got: Vec<(&str, &str)> = headers
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    assert_eq!(got, expect);
}

#[test]
fn later_headers_win_and_empty_key_is_skipped() {
    let user = [
        ("authorization".to_string(), "Bearer user".to_string()),
        ("X-Request-Id".to_string(), "mine".to_string()),
    ];
    let got = upgrade_headers(Some("k"), &user, Some("bench-1"));
    assert_eq!(
        got,
        [
            ("authorization".to_string(), "Bearer user".to_string()),
            ("x-request-id".to_string(), "bench-1".to_string()),
        ]
    );
    assert!(upgrade_headers(Some(""), &[], None).is_empty());
    assert!(upgrade_headers(None, &[], None).is_empty());
}

#[test]
fn url_gets_duplex_query_with_form_encoding() {
    let url = realtime_url(
        "http://127.0.0.1:8000/v1/realtime",
        "openbmb/MiniCPM-o-4_5",
        "omniinteract:1q1a:bench-1a2b3c4d-0:123",
    )
    .unwrap();
    assert_eq!(
        url,
        "ws://127.0.0.1:8000/v1/realtime?duplex=1&model=openbmb%2FMiniCPM-o-4_5\
         &minicpmo45_native_duplex=1&autostart=0\
         &session_id=omniinteract%3A1q1a%3Abench-1a2b3c4d-0%3A123"
    );
}

#[test]
fn existing_query_is_kept_blanks_too_and_overwritten_in_place() {
    let url = realtime_url(
        "https://h/x?a=&duplex=0&b=x+y%21&autostart=1#frag",
        "m",
        "s",
    )
    .unwrap();
    assert_eq!(
        url,
        "wss://h/x?a=&duplex=1&b=x+y%21&autostart=0&model=m&minicpmo45_native_duplex=1&session_id=s#frag"
    );
    assert_eq!(
        realtime_url("ws://h:1", "m", "s").unwrap(),
        "ws://h:1?duplex=1&model=m&minicpmo45_native_duplex=1&autostart=0&session_id=s"
    );
}

#[test]
fn unsupported_urls_name_the_url() {
    let err = realtime_url("ftp://h/v1/realtime", "m", "s").unwrap_err();
    assert_eq!(
        err.to_string(),
        "Unsupported Realtime URL: 'ftp://h/v1/realtime'"
    );
    let err = realtime_url("http:///v1/realtime", "m", "s").unwrap_err();
    assert_eq!(
        err.to_string(),
        "Unsupported Realtime URL: 'http:///v1/realtime'"
    );
    assert!(realtime_url("/v1/realtime", "m", "s").is_err());
}

#[test]
fn endpoint_join_uses_exactly_one_slash() {
    assert_eq!(
        join_endpoint("http://h:8000/", "/v1/realtime"),
        "http://h:8000/v1/realtime"
    );
    assert_eq!(
        join_endpoint("http://h:8000", "v1/realtime"),
        "http://h:8000/v1/realtime"
    );
    assert_eq!(
        join_endpoint("http://h", "ws://other/v1/realtime"),
        "ws://other/v1/realtime"
    );
}

#[test]
fn session_id_format() {
    assert_eq!(
        session_id("1q1a", Some("bench-1a2b3c4d-0"), 42, 7),
        "omniinteract:1q1a:bench-1a2b3c4d-0:42"
    );
    assert_eq!(
        session_id("1qna", None, 5, 0xabc),
        "omniinteract:1qna:00000000000000000000000000000abc:5"
    );
}
