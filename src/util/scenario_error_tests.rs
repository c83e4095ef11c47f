use super::*;

#[test]
fn serde_words_become_plain_words() {
    assert_eq!(
        in_words("invalid type: string \"ten\", expected i64"),
        "expected an integer, got the string \"ten\""
    );
    assert_eq!(
        with_key(
            &["load".into(), "seed".into()],
            "invalid value: integer `-1`, expected u64"
        ),
        "[load] seed: expected a whole number ≥ 0, got the integer `-1`"
    );
    let range = ScenarioError::file(Path::new("s.toml"), "`n` must be ≥ 1");
    assert!(!range.is_shape_error());
}
