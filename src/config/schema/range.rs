//! A key's numeric range, read from the sentence its description states it in
//! (`Range [1, 1000000].`, `Range (0, 1e9].`, `requests per second in [0, 1e9]`,
//! `multiple of 16 in [16, 4096]`, `1..=4294967296`, `> 0`), so the schema's
//! `minimum`/`maximum`/`exclusiveMinimum`/`exclusiveMaximum`/`multipleOf` come from the one
//! statement users read in `rtload schema` and `--help`; the schema tests probe the parser
//! at each bound so the checks and the sentence cannot drift apart. Pure.

use serde_json::{Map, Number, Value};

/// One end of an interval.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct End {
    /// The bound (a JSON number: an integer stays exact).
    pub(crate) value: Number,
    /// Whether the bound itself is excluded.
    pub(crate) open: bool,
}

/// The range a description states: either end may be absent (e.g. `[1, the rollout's
/// chunk count]` has only a lower bound).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Range {
    /// Lower end.
    pub(crate) min: Option<End>,
    /// Upper end.
    pub(crate) max: Option<End>,
    /// `multiple of N`.
    pub(crate) multiple_of: Option<Number>,
}

impl Range {
    /// Whether nothing was found.
    pub(crate) fn is_empty(&self) -> bool {
        self.min.is_none() && self.max.is_none() && self.multiple_of.is_none()
    }

    /// Write the range into a property schema `obj` as JSON Schema keywords.
    pub(crate) fn apply(&self, obj: &mut Map<String, Value>) {
        if let Some(e) = &self.min {
            let key = if e.open {
                "exclusiveMinimum"
            } else {
                "minimum"
            };
            obj.remove("minimum");
            obj.insert(key.into(), Value::Number(e.value.clone()));
        }
        if let Some(e) = &self.max {
            let key = if e.open {
                "exclusiveMaximum"
            } else {
                "maximum"
            };
            obj.insert(key.into(), Value::Number(e.value.clone()));
        }
        if let Some(m) = &self.multiple_of {
            obj.insert("multipleOf".into(), Value::Number(m.clone()));
        }
    }
}

/// The range stated in `description`, if any.
pub(crate) fn from_description(description: &str) -> Range {
    let description = description.split_whitespace().collect::<Vec<_>>().join(" ");
    let description = description.as_str();
    let mut r = interval(description).unwrap_or_default();
    if r.min.is_none()
        && let Some(n) = after(description, "> ").and_then(|t| number(first_word(t)))
    {
        r.min = Some(End {
            value: n,
            open: true,
        });
    }
    r.multiple_of = after(description, "multiple of ").and_then(|t| number(first_word(t)));
    r
}

/// `Range [a, b]`, `in (a, b]`, … or `a..=b`.
fn interval(text: &str) -> Option<Range> {
    for marker in ["Range ", "range ", " in "] {
        let mut rest = text;
        while let Some(i) = rest.find(marker) {
            rest = &rest[i + marker.len()..];
            if let Some(r) = bracketed(rest) {
                return Some(r);
            }
        }
    }
    let i = text.find("..=")?;
    let lo = text[..i].rsplit(|c: char| !c.is_ascii_digit()).next()?;
    let hi = first_word(&text[i + 3..]);
    Some(Range {
        min: number(lo).map(|value| End { value, open: false }),
        max: number(hi).map(|value| End { value, open: false }),
        multiple_of: None,
    })
}

/// `[a, b]`, `(a, b]`, `[a, b)` or `(a, b)` at the start of `text`.
fn bracketed(text: &str) -> Option<Range> {
    let open_lo = match text.chars().next()? {
        '[' => false,
        '(' => true,
        _ => return None,
    };
    let close = text.find([']', ')'])?;
    let open_hi = text[close..].starts_with(')');
    let (lo, hi) = text[1..close].split_once(',')?;
    let min = number(lo.trim()).map(|value| End {
        value,
        open: open_lo,
    });
    let max = number(hi.trim()).map(|value| End {
        value,
        open: open_hi,
    });
    (min.is_some() || max.is_some()).then_some(Range {
        min,
        max,
        multiple_of: None,
    })
}

fn after<'t>(text: &'t str, marker: &str) -> Option<&'t str> {
    text.find(marker).map(|i| &text[i + marker.len()..])
}

fn first_word(text: &str) -> &str {
    text.split(|c: char| c.is_whitespace() || matches!(c, ',' | ';' | ':' | ')' | ']'))
        .next()
        .unwrap_or("")
        .trim_end_matches('.')
}

/// A bound as written: an integer (`1000000`, `2^63-1`) or a float (`1e9`, `1e-6`, `0.5`).
fn number(t: &str) -> Option<Number> {
    if t == "2^63-1" {
        return Some(Number::from(i64::MAX));
    }
    if let Ok(i) = t.parse::<i64>() {
        return Some(Number::from(i));
    }
    let f = t.parse::<f64>().ok().filter(|f| f.is_finite())?;
    if f.fract() == 0.0 && f.abs() < 9e15 {
        return Some(Number::from(f as i64));
    }
    Number::from_f64(f)
}

#[cfg(test)]
#[path = "range_tests.rs"]
mod tests;
