//! The refusal texts are valid JSON in the real servers' shapes.

use super::*;

#[test]
fn error_event_is_vllm_omnis_capacity_error() {
    let text = error_event(true, 24);
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["type"], "error");
    assert_eq!(v["error"]["type"], "rate_limit_error");
    assert_eq!(v["error"]["code"], "resource_exhausted");
    assert_eq!(
        v["error"]["message"],
        "duplex_session_capacity_exhausted: limit=24"
    );
    assert!(text.starts_with(r#"{"type":"error","#), "key order: {text}");
    let other: serde_json::Value = serde_json::from_str(&error_event(false, 3)).unwrap();
    assert_eq!(
        other["error"]["message"],
        "session_capacity_exhausted: limit=3"
    );
}

#[test]
fn http_bodies_are_vllm_error_responses() {
    for (status, kind) in [
        (StatusCode::TOO_MANY_REQUESTS, "rate_limit_error"),
        (StatusCode::SERVICE_UNAVAILABLE, "server_overloaded"),
    ] {
        let v: serde_json::Value = serde_json::from_str(&http_body(status, 5, 2)).unwrap();
        assert_eq!(v["error"]["type"], kind);
        assert_eq!(v["error"]["code"], status.as_u16());
        assert!(v["error"]["param"].is_null());
        let msg = v["error"]["message"].as_str().unwrap();
        assert!(
            msg.contains("max_sessions = 5") && msg.contains("retry after 2 s"),
            "{msg}"
        );
    }
}
