use super::*;

#[test]
fn bare_nonfinite_tokens_become_null_but_strings_are_kept() {
    let v = parse_lenient(r#"{"a": NaN, "b": [Infinity, -Infinity], "s": "NaN \"Infinity\""}"#)
        .unwrap();
    assert!(v["a"].is_null() && v["b"][0].is_null() && v["b"][1].is_null());
    assert_eq!(v["s"], "NaN \"Infinity\"");
    assert!(parse_lenient("{bad").is_err());
}
