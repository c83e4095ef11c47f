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
