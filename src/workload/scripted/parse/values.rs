//! Spanned TOML values read as JSON and numbers, and the span of a value at a template
//! path (for errors that point inside a message template).

use std::ops::Range;

use serde_json::Value;
use toml::de::DeValue;

use super::{Cx, Val};
use crate::util::template::PathSeg;

/// The span of the value at `path` inside `v`.
pub(super) fn locate<'t, 'i>(v: &'t Val<'i>, path: &[PathSeg]) -> (Range<usize>, &'t Val<'i>) {
    let mut cur = v;
    for seg in path {
        let next = match (seg, cur.get_ref()) {
            (PathSeg::Key(k), DeValue::Table(t)) => t.get(k.as_str()),
            (PathSeg::Index(i), DeValue::Array(a)) => a.get(*i),
            _ => None,
        };
        match next {
            Some(n) => cur = n,
            None => break,
        }
    }
    (cur.span(), cur)
}

/// A TOML value as JSON (integers and floats as written); inf and nan are errors.
pub(super) fn to_json(cx: &mut Cx<'_>, v: &Val<'_>) -> Option<Value> {
    Some(match v.get_ref() {
        DeValue::String(s) => Value::String(s.to_string()),
        DeValue::Boolean(b) => Value::Bool(*b),
        DeValue::Integer(_) => Value::from(int(v)?),
        DeValue::Float(_) => match float(v).and_then(serde_json::Number::from_f64) {
            Some(n) => Value::Number(n),
            None => {
                cx.err(
                    v.span(),
                    "inf and nan cannot be sent as JSON; write a finite number",
                );
                return None;
            }
        },
        DeValue::Datetime(d) => Value::String(d.to_string()),
        DeValue::Array(a) => Value::Array(a.iter().map(|x| to_json(cx, x)).collect::<Option<_>>()?),
        DeValue::Table(t) => {
            let mut map = serde_json::Map::new();
            for (k, x) in t.iter() {
                map.insert(k.get_ref().to_string(), to_json(cx, x)?);
            }
            Value::Object(map)
        }
    })
}

/// An integer as written: `_` separators, a leading `+`, hex/octal/binary radixes.
pub(super) fn int(v: &Val<'_>) -> Option<i64> {
    let i = v.get_ref().as_integer()?;
    let digits = i.as_str().replace('_', "");
    let body = digits.trim_start_matches(['+']);
    let body = ["0x", "0o", "0b"]
        .iter()
        .fold(body, |b, p| b.strip_prefix(p).unwrap_or(b));
    i64::from_str_radix(body, i.radix()).ok()
}

/// A float as written (`_` separators allowed), or an integer as a float.
pub(super) fn float(v: &Val<'_>) -> Option<f64> {
    match v.get_ref() {
        DeValue::Float(f) => f.as_str().replace('_', "").parse().ok(),
        DeValue::Integer(_) => int(v).map(|i| i as f64),
        _ => None,
    }
}
