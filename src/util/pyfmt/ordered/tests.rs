//! Order-keeping JSON: text key order at every depth, repeated keys, non-JSON input.

use super::*;

#[test]
fn keeps_the_text_key_order_at_every_depth() {
    let text = r#"{"type":"error","error":{"type":"invalid_request_error","message":"bad","code":null,"param":[1,2.5,true]}}"#;
    assert_eq!(
        py_repr_json(text).unwrap(),
        "{'type': 'error', 'error': {'type': 'invalid_request_error', 'message': 'bad', \
         'code': None, 'param': [1, 2.5, True]}}"
    );
}

#[test]
fn repeated_key_keeps_first_position_last_value() {
    assert_eq!(
        py_repr_json(r#"{"b":1,"a":2,"b":3}"#).unwrap(),
        "{'b': 3, 'a': 2}"
    );
}

#[test]
fn not_json_is_none() {
    assert_eq!(py_repr_json("{nope"), None);
}
