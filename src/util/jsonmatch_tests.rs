use super::*;
use serde_json::json;

#[test]
fn subset_nested_and_dotted() {
    let m = Matcher::new(&json!({"type": "response.done", "response": {"status": "completed"}}))
        .unwrap();
    assert!(
        m.matches(&json!({"type": "response.done", "response": {"status": "completed", "id": 3}}))
    );
    assert!(!m.matches(&json!({"type": "response.done", "response": {"status": "failed"}})));
    assert!(!m.matches(&json!({"type": "response.done"})));
    let d = Matcher::new(&json!({"response.status": "completed"})).unwrap();
    assert!(d.matches(&json!({"response": {"status": "completed"}})));
    assert_eq!(d.to_string(), "response.status = \"completed\"");
}

#[test]
fn numbers_compare_by_value_and_bools_exactly() {
    let m = Matcher::new(&json!({"n": 2, "final": true})).unwrap();
    assert!(m.matches(&json!({"n": 2.0, "final": true})));
    assert!(!m.matches(&json!({"n": 2, "final": false})));
    assert!(!m.matches(&json!("text")));
}

#[test]
fn empty_and_non_object_patterns_are_refused() {
    assert!(Matcher::new(&json!({})).is_err());
    assert!(Matcher::new(&json!("error")).is_err());
    let m = Matcher::new(&json!({"type": "error"})).unwrap();
    assert_eq!(m.field("type"), Some(&json!("error")));
}
