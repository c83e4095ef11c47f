use super::*;

#[test]
fn counts_by_label_and_keeps_the_message() {
    let f = Failure::new(
        FailureKind::Handshake { status: Some(401) },
        "Invalid response status",
    );
    assert_eq!(f.to_string(), "Invalid response status");
    let c = count_by_kind([
        f.kind,
        FailureKind::Handshake { status: None },
        FailureKind::Timeout,
    ]);
    assert_eq!(render_counts(&c), "handshake 2, timeout 1");
}

#[test]
fn a_huge_message_is_cut_with_its_length_noted() {
    let huge = format!("server sent error: {}", "x".repeat(5_000_000));
    let f = Failure::new(FailureKind::ServerError, huge);
    assert!(f.message.chars().count() < 2100, "{}", f.message.len());
    assert!(
        f.message.ends_with("… (5000019 chars)"),
        "{}",
        &f.message[1990..]
    );
}

#[test]
fn reject_patterns_match_a_code_token_and_message_text() {
    let code = RejectPattern::code("resource_exhausted");
    assert!(code.matches("{'code': 'resource_exhausted', 'message': 'x'}"));
    assert!(code.matches(r#"server error resource_exhausted: full"#));
    assert!(!code.matches("'code': 'resource_exhausted_later'"));
    assert!(!code.matches("'code': 'no_resource_exhausted'"));
    let text = RejectPattern::message("capacity_exhausted");
    assert!(text.matches("duplex_session_capacity_exhausted: limit=4"));
    assert!(!text.matches("boom"));
    let both = RejectPattern {
        code: Some("resource_exhausted".into()),
        message: Some("limit".into()),
    };
    assert!(both.matches("resource_exhausted: limit=1"));
    assert!(!both.matches("resource_exhausted: quota"));
    assert!(
        !RejectPattern {
            code: None,
            message: None
        }
        .matches("anything")
    );
    let f = Failure::new(
        FailureKind::ServerError,
        "server error resource_exhausted: full",
    );
    assert!(is_rejection(&f, &[code]));
    assert!(!is_rejection(&f, &[]));
}
