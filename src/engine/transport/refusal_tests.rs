//! Unit tests for the refusal's pure parts: `Retry-After` parsing, the body quote and the
//! message a user reads.

use super::*;

#[test]
fn retry_after_reads_seconds_and_keeps_a_date_as_text() {
    assert_eq!(RetryAfter::parse(" 30 "), RetryAfter::Seconds(30));
    assert_eq!(
        RetryAfter::parse("Wed, 21 Oct 2026 07:28:00 GMT"),
        RetryAfter::Other("Wed, 21 Oct 2026 07:28:00 GMT".into())
    );
    assert_eq!(RetryAfter::parse("-1"), RetryAfter::Other("-1".into()));
}

#[test]
fn the_body_quote_is_bounded_and_says_when_it_was_cut() {
    assert_eq!(quote_body(b"  \n", true), None);
    assert_eq!(
        quote_body(b" slow down \n", true).as_deref(),
        Some("slow down")
    );
    assert_eq!(quote_body(b"partial", false).as_deref(), Some("partial…"));
    let long = "x".repeat(5000);
    let q = quote_body(long.as_bytes(), true).unwrap();
    assert!(q.ends_with("… (5000 chars)"), "{q}");
    assert!(q.len() < 300);
}

#[test]
fn the_message_names_status_reason_retry_after_and_body() {
    let r = Refusal {
        status: 429,
        reason: "Too Many Requests".into(),
        retry_after: Some(RetryAfter::Seconds(30)),
        body: Some("rate limited".into()),
    };
    assert_eq!(
        r.to_string(),
        "the server answered the WebSocket upgrade with HTTP 429 Too Many Requests \
         (expected 101 Switching Protocols); Retry-After: 30 s; body: \"rate limited\""
    );
    let bare = Refusal {
        status: 599,
        reason: String::new(),
        retry_after: None,
        body: None,
    };
    assert_eq!(
        bare.to_string(),
        "the server answered the WebSocket upgrade with HTTP 599 (expected 101 Switching Protocols)"
    );
}

fn refused(status: u16, retry_after: Option<RetryAfter>) -> Refusal {
    Refusal {
        status,
        reason: String::new(),
        retry_after,
        body: None,
    }
}

#[test]
fn only_429_and_503_are_retried_and_only_when_allowed() {
    let r = refused(429, Some(RetryAfter::Seconds(30)));
    assert_eq!(retry_wait(&r, 0, 0), Err(None));
    assert_eq!(retry_wait(&r, 0, 2), Ok(Duration::from_secs(30)));
    assert_eq!(
        retry_wait(&refused(503, None), 0, 2),
        Ok(Duration::from_secs(1))
    );
    for status in [400, 401, 403, 404, 500, 502] {
        assert_eq!(
            retry_wait(&refused(status, None), 0, 5),
            Err(None),
            "{status}"
        );
    }
    assert_eq!(
        retry_wait(&r, 2, 2),
        Err(Some("no retry left of the 2 allowed".into()))
    );
}

#[test]
fn without_retry_after_the_wait_doubles_up_to_the_cap() {
    let date = refused(429, Some(RetryAfter::Other("Wed, 21 Oct 2026".into())));
    let waits: Vec<u64> = (0..8)
        .map(|done| retry_wait(&date, done, 10).unwrap().as_secs())
        .collect();
    assert_eq!(waits, [1, 2, 4, 8, 16, 32, 60, 60]);
}

#[test]
fn a_retry_after_beyond_the_cap_is_not_waited_for() {
    let r = refused(503, Some(RetryAfter::Seconds(120)));
    assert_eq!(
        retry_wait(&r, 0, 3),
        Err(Some(
            "not retried: the server asks for 120 s, longer than rtload waits (60 s)".into()
        ))
    );
    assert_eq!(retry_note(None, 0, Duration::ZERO, 0), "");
    assert_eq!(
        retry_note(Some("x"), 2, Duration::from_millis(1500), 2),
        "; refused 3 times over 1.5 s (`[target] retry_rejected = 2`); x"
    );
}
