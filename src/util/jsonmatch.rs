//! JSON field matching: "an inbound message matching these fields". A pattern is a JSON
//! object; a message matches when every pattern field is present in it with an equal
//! value. Nested objects match recursively (so `{response = {status = "completed"}}` and
//! the dotted key `"response.status" = "completed"` mean the same); arrays and scalars
//! must be equal (integers and floats compare by value). Extra message fields are ignored.

use serde_json::Value;

/// A compiled field pattern.
#[derive(Debug, Clone, PartialEq)]
pub struct Matcher {
    /// `(path, expected value)` leaves, path segments from the message root.
    fields: Vec<(Vec<String>, Value)>,
}

impl Matcher {
    /// Compile a pattern object. An empty or non-object pattern is refused (it would match
    /// everything, which is never what a script means).
    pub fn new(pattern: &Value) -> Result<Matcher, String> {
        let Value::Object(map) = pattern else {
            return Err(format!(
                "a match pattern must be a table of fields, e.g. {{ type = \"response.done\" }} (got {pattern})"
            ));
        };
        let mut fields = Vec::new();
        flatten(map, &mut Vec::new(), &mut fields);
        if fields.is_empty() {
            return Err(
                "a match pattern needs at least one field, e.g. { type = \"response.done\" }"
                    .into(),
            );
        }
        Ok(Matcher { fields })
    }

    /// Whether `msg` has every field of the pattern.
    pub fn matches(&self, msg: &Value) -> bool {
        self.fields.iter().all(|(path, want)| {
            let mut cur = msg;
            for seg in path {
                match cur.get(seg.as_str()) {
                    Some(v) => cur = v,
                    None => return false,
                }
            }
            values_equal(cur, want)
        })
    }

    /// The value the pattern wants at top-level key `key`, when it names one (e.g. the
    /// `type` a pattern is about, for names and messages).
    pub fn field(&self, key: &str) -> Option<&Value> {
        self.fields
            .iter()
            .find(|(p, _)| p.len() == 1 && p[0] == key)
            .map(|(_, v)| v)
    }
}

impl std::fmt::Display for Matcher {
    /// `type = "x", response.status = "completed"`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let parts: Vec<String> = self
            .fields
            .iter()
            .map(|(p, v)| format!("{} = {v}", p.join(".")))
            .collect();
        f.write_str(&parts.join(", "))
    }
}

fn flatten(
    map: &serde_json::Map<String, Value>,
    prefix: &mut Vec<String>,
    out: &mut Vec<(Vec<String>, Value)>,
) {
    for (k, v) in map {
        let depth = prefix.len();
        prefix.extend(k.split('.').map(str::to_string));
        match v {
            Value::Object(inner) if !inner.is_empty() => flatten(inner, prefix, out),
            other => out.push((prefix.clone(), other.clone())),
        }
        prefix.truncate(depth);
    }
}

fn values_equal(got: &Value, want: &Value) -> bool {
    match (got, want) {
        (Value::Number(a), Value::Number(b)) => a.as_f64() == b.as_f64(),
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| values_equal(x, y))
        }
        _ => got == want,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn subset_nested_and_dotted() {
        let m =
            Matcher::new(&json!({"type": "response.done", "response": {"status": "completed"}}))
                .unwrap();
        assert!(m.matches(
            &json!({"type": "response.done", "response": {"status": "completed", "id": 3}})
        ));
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
}
