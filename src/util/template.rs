//! `${var}` message templates: a JSON value (or a text) whose strings may contain
//! variables, compiled once and rendered per message. `$$` is a literal `$`; a `$` not
//! followed by `{` is literal too. A string that is exactly one `${var}` takes the
//! variable's JSON type (a number stays a number); anywhere else variables are spliced in
//! as text. A string that is exactly `${null}` is JSON `null` (TOML has none), e.g.
//! `turn_detection = "${null}"`; `$${null}` stays the text `${null}`. Which other names
//! exist is the caller's business: compiling checks every name with the caller's
//! validator, rendering asks the caller's lookup.

use serde_json::Value;

/// One step of a path from a template's root to a value, for error positions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathSeg {
    /// An object key.
    Key(String),
    /// An array index.
    Index(usize),
}

/// A template problem at `path` (from the root), `offset` bytes into that string.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{msg}")]
pub struct TemplateError {
    /// Where in the template value.
    pub path: Vec<PathSeg>,
    /// Byte offset inside the string at `path`.
    pub offset: usize,
    /// What is wrong and the fix.
    pub msg: String,
}

/// The one variable every template knows: a string that is exactly `${null}` is `null`.
pub const NULL: &str = "null";

/// A piece of a templated string.
#[derive(Debug, Clone, PartialEq)]
pub enum Seg {
    /// Literal text.
    Lit(String),
    /// A variable name.
    Var(String),
}

/// A compiled template.
#[derive(Debug, Clone, PartialEq)]
pub enum Template {
    /// A value without variables (numbers, booleans, null, variable-free strings).
    Lit(Value),
    /// A string with at least one variable.
    Str(Vec<Seg>),
    /// An array of templates.
    Array(Vec<Template>),
    /// An object; keys are literal.
    Object(Vec<(String, Template)>),
}

impl Template {
    /// Compile JSON value `v`; `check` returns `Err(message)` for an unknown name.
    pub fn compile(
        v: &Value,
        check: &dyn Fn(&str) -> Result<(), String>,
    ) -> Result<Template, TemplateError> {
        compile_at(v, check, &mut Vec::new())
    }

    /// Compile a plain text template.
    #[cfg(test)]
    pub fn compile_text(
        s: &str,
        check: &dyn Fn(&str) -> Result<(), String>,
    ) -> Result<Template, TemplateError> {
        compile_at(&Value::String(s.to_string()), check, &mut Vec::new())
    }

    /// Every variable name used, in order of appearance (with repeats).
    #[cfg(test)]
    pub fn vars(&self) -> Vec<&str> {
        let mut out = Vec::new();
        self.collect_vars(&mut out);
        out
    }

    #[cfg(test)]
    fn collect_vars<'a>(&'a self, out: &mut Vec<&'a str>) {
        match self {
            Template::Lit(_) => {}
            Template::Str(segs) => out.extend(segs.iter().filter_map(|s| match s {
                Seg::Var(v) => Some(v.as_str()),
                Seg::Lit(_) => None,
            })),
            Template::Array(items) => items.iter().for_each(|t| t.collect_vars(out)),
            Template::Object(fields) => fields.iter().for_each(|(_, t)| t.collect_vars(out)),
        }
    }

    /// Render to a JSON value; `lookup` gives each variable's value (`None` = unknown
    /// at render time, an error naming the variable).
    pub fn render(&self, lookup: &dyn Fn(&str) -> Option<Value>) -> Result<Value, String> {
        Ok(match self {
            Template::Lit(v) => v.clone(),
            Template::Str(segs) => match segs.as_slice() {
                [Seg::Var(name)] => get(lookup, name)?,
                _ => Value::String(splice(segs, lookup)?),
            },
            Template::Array(items) => Value::Array(
                items
                    .iter()
                    .map(|t| t.render(lookup))
                    .collect::<Result<_, _>>()?,
            ),
            Template::Object(fields) => {
                let mut map = serde_json::Map::with_capacity(fields.len());
                for (k, t) in fields {
                    map.insert(k.clone(), t.render(lookup)?);
                }
                Value::Object(map)
            }
        })
    }

    /// Render as message text: a string template gives its text, anything else its
    /// compact JSON.
    pub fn render_text(&self, lookup: &dyn Fn(&str) -> Option<Value>) -> Result<String, String> {
        match self.render(lookup)? {
            Value::String(s) => Ok(s),
            other => Ok(other.to_string()),
        }
    }
}

fn get(lookup: &dyn Fn(&str) -> Option<Value>, name: &str) -> Result<Value, String> {
    lookup(name).ok_or_else(|| format!("template variable `${{{name}}}` has no value here"))
}

fn splice(segs: &[Seg], lookup: &dyn Fn(&str) -> Option<Value>) -> Result<String, String> {
    let mut out = String::new();
    for s in segs {
        match s {
            Seg::Lit(l) => out.push_str(l),
            Seg::Var(name) => match get(lookup, name)? {
                Value::String(v) => out.push_str(&v),
                other => out.push_str(&other.to_string()),
            },
        }
    }
    Ok(out)
}

fn compile_at(
    v: &Value,
    check: &dyn Fn(&str) -> Result<(), String>,
    path: &mut Vec<PathSeg>,
) -> Result<Template, TemplateError> {
    Ok(match v {
        Value::String(s) => {
            let segs = parse_str(s).map_err(|(offset, msg)| TemplateError {
                path: path.clone(),
                offset,
                msg,
            })?;
            if let [Seg::Var(name)] = segs.as_slice()
                && name == NULL
            {
                return Ok(Template::Lit(Value::Null));
            }
            let mut offset = 0;
            for seg in &segs {
                if let Seg::Var(name) = seg {
                    offset = next_var(s, offset);
                    let null = |_: &str| -> Result<(), String> {
                        Err(format!(
                            "`${{{NULL}}}` is JSON null only as a whole string (e.g. turn_detection = \"${{{NULL}}}\"); inside text write `$${{{NULL}}}` for the literal text"
                        ))
                    };
                    let check: &dyn Fn(&str) -> Result<(), String> =
                        if name == NULL { &null } else { check };
                    check(name).map_err(|msg| TemplateError {
                        path: path.clone(),
                        offset,
                        msg,
                    })?;
                    offset += 2;
                }
            }
            if segs.iter().any(|s| matches!(s, Seg::Var(_))) {
                Template::Str(segs)
            } else {
                Template::Lit(Value::String(unescape(&segs)))
            }
        }
        Value::Array(items) => {
            let mut out = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                path.push(PathSeg::Index(i));
                out.push(compile_at(item, check, path)?);
                path.pop();
            }
            Template::Array(out)
        }
        Value::Object(map) => {
            let mut out = Vec::with_capacity(map.len());
            for (k, item) in map {
                path.push(PathSeg::Key(k.clone()));
                out.push((k.clone(), compile_at(item, check, path)?));
                path.pop();
            }
            Template::Object(out)
        }
        other => Template::Lit(other.clone()),
    })
}

/// Byte offset of the next `${` at or after `from` that starts a variable (skipping
/// `$$` escapes).
fn next_var(s: &str, from: usize) -> usize {
    let b = s.as_bytes();
    let mut i = from;
    while i + 1 < b.len() {
        match (b[i], b[i + 1]) {
            (b'$', b'$') => i += 2,
            (b'$', b'{') => return i,
            _ => i += 1,
        }
    }
    from
}

fn unescape(segs: &[Seg]) -> String {
    segs.iter()
        .filter_map(|s| match s {
            Seg::Lit(l) => Some(l.as_str()),
            Seg::Var(_) => None,
        })
        .collect()
}

/// Split `s` into literal and variable segments; `Err((byte offset, message))`.
fn parse_str(s: &str) -> Result<Vec<Seg>, (usize, String)> {
    let mut segs = Vec::new();
    let mut lit = String::new();
    let mut i = 0;
    let b = s.as_bytes();
    while i < b.len() {
        if b[i] == b'$' && b.get(i + 1) == Some(&b'$') {
            lit.push('$');
            i += 2;
        } else if b[i] == b'$' && b.get(i + 1) == Some(&b'{') {
            let Some(close) = s[i + 2..].find('}') else {
                return Err((
                    i,
                    format!(
                        "unclosed `${{` in {s:?}; write `${{name}}`, or `$$` for a literal `$`"
                    ),
                ));
            };
            let name = s[i + 2..i + 2 + close].trim();
            let valid = !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'));
            if !valid {
                return Err((
                    i,
                    format!(
                        "bad variable name `${{{name}}}` in {s:?}; names are letters, digits, `_`, `-` and `.`"
                    ),
                ));
            }
            if !lit.is_empty() {
                segs.push(Seg::Lit(std::mem::take(&mut lit)));
            }
            segs.push(Seg::Var(name.to_string()));
            i += 2 + close + 1;
        } else {
            let ch = s[i..].chars().next().unwrap_or('$');
            lit.push(ch);
            i += ch.len_utf8();
        }
    }
    if !lit.is_empty() || segs.is_empty() {
        segs.push(Seg::Lit(lit));
    }
    Ok(segs)
}

/// The candidate closest to `name` by edit distance, when it is close enough to be a
/// likely typo (for "did you mean" hints).
pub fn closest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let allowance = name.chars().count().div_ceil(3).max(1);
    candidates
        .into_iter()
        .map(|c| (levenshtein(name, c), c))
        .filter(|(d, _)| *d <= allowance)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != *cb))
                .min(prev[j + 1] + 1)
                .min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
#[path = "template_tests.rs"]
mod tests;
