use super::*;

const P: &str = "/v1/realtime/video";

#[test]
fn reference_vectors_and_rtload_rules() {
    let ok = |base: &str, want: &str| assert_eq!(resolve_url(base, P).expect(base), want, "{base}");
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
    ok("ws://u:a/b?c@h:1/p", "ws://u:a/b?c@h:1/p");
    ok("ws://u:a/b@h:1", "ws://u:a/b@h:1/v1/realtime/video");
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
    for (bad, port) in [
        ("ws://h:99999", "99999"),
        ("ws://h:0/x", "0"),
        ("ws://[::1]:x", "(not a number)"),
    ] {
        let e = resolve_url(bad, P).expect_err(bad).to_string();
        assert!(
            e.contains(&format!("port {port}")) && e.contains("1 to 65535"),
            "{e}"
        );
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
    assert_eq!(redact_url("ws://h:1/p?model=1"), "ws://h:1/p?model=1");
}

#[test]
fn redacts_every_query_and_fragment_value_but_the_public_ones() {
    let url = "ws://u:pw@h:1/p?api_key=A&x=1&Token=B&apikey=C&x-api-key=D\
               &X-Amz-Signature=E&api%5Fkey=F&model=m&Intent=t#access_token=G&section";
    assert_eq!(
        redact_url(url),
        "ws://h:1/p?api_key=REDACTED&x=REDACTED&Token=REDACTED&apikey=REDACTED\
         &x-api-key=REDACTED&X-Amz-Signature=REDACTED&api%5Fkey=REDACTED&model=m\
         &Intent=t#access_token=REDACTED&section"
    );
    assert_eq!(redact_url("ws://h?token"), "ws://h?token");
    assert_eq!(redact_url("ws://h/p#frag"), "ws://h/p#frag");
}

#[test]
fn a_password_with_unencoded_delimiters_never_shows() {
    for url in [
        "wss://user:pa/ss@h:443/v1?model=m",
        "wss://user:pa?ss@h/v1",
        "wss://user:pa#ss@h",
        "wss://user:p@ss@h/v1",
        "wss://user:123/45@h/v1",
    ] {
        let r = redact_url(url);
        assert!(
            !r.contains("pa") && !r.contains("ss@") && !r.contains("45"),
            "{url} → {r}"
        );
        assert!(r.starts_with("wss://h"), "{url} → {r}");
    }
    let (url, auth) = split_user_info("ws://u:a/b?c#d@h:1/p?q=1");
    assert_eq!(url, "ws://h:1/p?q=1");
    assert!(auth.is_some());
    // A host with a port and an `@` in the query is not user info when connecting.
    assert_eq!(split_user_info("ws://h:8443/p?email=a@b.example").1, None);
}

#[test]
fn redacts_urls_inside_free_text() {
    let text = "connect to ws://u:SECRET@h:1/x?api_key=K failed: 'wss://h/y?sig=S' (ok)";
    assert_eq!(
        redact_text(text),
        "connect to ws://h:1/x?api_key=REDACTED failed: 'wss://h/y?sig=REDACTED' (ok)"
    );
    let text = "GET http://h:9/metrics?secret=s1&model=m: 500";
    assert_eq!(
        redact_text(text),
        "GET http://h:9/metrics?secret=REDACTED&model=m: 500"
    );
    assert_eq!(redact_text("no url here"), "no url here");
    assert_eq!(redact_text("://x"), "://x");
}

#[test]
fn user_info_becomes_basic_authorization() {
    let (url, auth) = split_user_info("ws://u:SECRETPW@h:1/p?q=1");
    assert_eq!(url, "ws://h:1/p?q=1");
    assert_eq!(auth.as_deref(), Some("Basic dTpTRUNSRVRQVw=="));
    let (_, auth) = split_user_info("ws://a%40b:p%3Aw@h");
    assert_eq!(auth.as_deref(), Some("Basic YUBiOnA6dw=="));
    assert_eq!(
        split_user_info("ws://h/p@x"),
        ("ws://h/p@x".to_string(), None)
    );
}
