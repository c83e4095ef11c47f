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
#[path = "jsonmatch_tests.rs"]
mod tests;
