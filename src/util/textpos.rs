//! Positions and names in TOML text, shared by every parser of user files (scenarios,
//! `rtload serve --config`): byte offset → line:column, the span of a value at a key path
//! (from `toml`'s own spans, the one position mechanism), and close-match suggestions for
//! unknown names. Pure; no file IO.

use std::ops::Range;

use toml::de::{DeTable, DeValue};

/// How many close matches an unknown-name error suggests.
const MAX_SUGGESTIONS: usize = 3;

/// 1-based line and column (in characters) of byte offset `pos` in `src`.
pub fn line_col(src: &str, pos: usize) -> (usize, usize) {
    let pos = pos.min(src.len());
    let before = src.get(..pos).unwrap_or(src);
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let col = before.get(line_start..).map_or(0, |s| s.chars().count()) + 1;
    (line, col)
}

/// Byte offset of 1-based `line:col` (col in characters) in `src`, the inverse of
/// [`line_col`]; `None` past the last line.
pub fn offset(src: &str, line: usize, col: usize) -> Option<usize> {
    let start = if line <= 1 {
        0
    } else {
        src.match_indices('\n').nth(line - 2)?.0 + 1
    };
    let rest = &src[start..];
    Some(
        start
            + rest
                .char_indices()
                .nth(col.saturating_sub(1))
                .map_or(rest.len(), |(i, _)| i),
    )
}

/// Byte span of the value at `path` (table keys from the top, e.g.
/// `["server", "video", "chunk_bytes"]`) in TOML text `src`, from the parser's spans.
/// `None` when the text does not parse or the key is absent. (Parses `src`: a caller
/// holding the parsed tree uses [`value_span_in`].)
pub fn value_span(src: &str, path: &[&str]) -> Option<Range<usize>> {
    let doc = DeTable::parse(src).ok()?;
    value_span_in(doc.get_ref(), path)
}

/// [`value_span`] in an already parsed tree.
pub fn value_span_in(root: &DeTable<'_>, path: &[&str]) -> Option<Range<usize>> {
    let (last, parents) = path.split_last()?;
    let mut table = root;
    for key in parents {
        match &get(table, key)?.get_ref() {
            DeValue::Table(t) => table = t,
            _ => return None,
        }
    }
    get(table, last).map(toml::Spanned::span)
}

/// The innermost key/value entry of the parsed tree `root` whose key or value holds byte
/// `pos`: its key path from the top (`["load", "max_concurrency"]`) and the span of its
/// key. `None` when `pos` is in no entry.
pub fn entry_at(root: &DeTable<'_>, pos: usize) -> Option<(Vec<String>, Range<usize>)> {
    let mut path = Vec::new();
    let key_span = entry_in(root, pos, &mut path)?;
    Some((path, key_span))
}

/// Removes from the parsed tree `table` the innermost entry whose key or value holds
/// byte `pos` (what [`entry_at`] names), wherever it is nested; `false` when `pos` is in
/// no entry.
pub fn remove_entry_at(table: &mut DeTable<'_>, pos: usize) -> bool {
    let mut hit = None;
    for (k, v) in table.iter_mut() {
        let inner = match v.get_mut() {
            DeValue::Table(t) => remove_entry_at(t, pos),
            DeValue::Array(items) => items.iter_mut().any(|item| match item.get_mut() {
                DeValue::Table(t) => remove_entry_at(t, pos),
                _ => false,
            }),
            _ => false,
        };
        if inner {
            return true;
        }
        if k.span().contains(&pos) || v.span().contains(&pos) {
            hit = Some(k.get_ref().to_string());
            break;
        }
    }
    hit.is_some_and(|k| table.remove(k.as_str()).is_some())
}

fn entry_in(table: &DeTable<'_>, pos: usize, path: &mut Vec<String>) -> Option<Range<usize>> {
    for (k, v) in table {
        // A table's own span may cover only its header: look inside every one.
        path.push(k.get_ref().to_string());
        let inner = match v.get_ref() {
            DeValue::Table(t) => entry_in(t, pos, path),
            DeValue::Array(items) => items.iter().find_map(|item| match item.get_ref() {
                DeValue::Table(t) => entry_in(t, pos, path),
                _ => None,
            }),
            _ => None,
        };
        if inner.is_some() {
            return inner;
        }
        if k.span().contains(&pos) || v.span().contains(&pos) {
            return Some(k.span());
        }
        path.pop();
    }
    None
}

fn get<'a, 'i>(table: &'a DeTable<'i>, key: &str) -> Option<&'a toml::Spanned<DeValue<'i>>> {
    table
        .iter()
        .find(|(k, _)| k.get_ref().as_ref() == key)
        .map(|(_, v)| v)
}

/// A number as an error message shows it: plain when short, exponent form when huge or
/// tiny (`1e300`, not 301 digits).
pub fn num(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 || !a.is_finite() || (1e-4..1e15).contains(&a) {
        format!("{v}")
    } else {
        format!("{v:e}")
    }
}

/// Up to three known names close to `name`, closest first: small edit distance
/// (optimal-string-alignment Damerau–Levenshtein, case-insensitive), one a prefix of the
/// other, or every `.`/`_` segment of one found among the other's segments.
pub fn close_matches<'k>(name: &str, known: &[&'k str]) -> Vec<&'k str> {
    let query = name.to_lowercase();
    let q_segs = segments(&query);
    let allowance = query.chars().count().div_ceil(3).max(1);
    let mut scored: Vec<(usize, &'k str)> = known
        .iter()
        .filter_map(|&name| {
            let cand = name.to_lowercase();
            let dist = osa_distance(&query, &cand);
            let c_segs = segments(&cand);
            let prefix = query.len() >= 3 && (cand.starts_with(&query) || query.starts_with(&cand));
            let subset = |a: &[&str], b: &[&str]| !a.is_empty() && a.iter().all(|s| b.contains(s));
            let segs = subset(&q_segs, &c_segs) || subset(&c_segs, &q_segs);
            (dist <= allowance || prefix || segs).then_some((dist, name))
        })
        .collect();
    scored.sort_unstable();
    scored.dedup_by(|a, b| a.1 == b.1);
    scored
        .into_iter()
        .take(MAX_SUGGESTIONS)
        .map(|(_, n)| n)
        .collect()
}

/// "did you mean `a`?" / "did you mean one of `a`, `b`?", or `None` when nothing is close.
pub fn did_you_mean(name: &str, known: &[&str]) -> Option<String> {
    let close = close_matches(name, known);
    let list = close
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ");
    match close.len() {
        0 => None,
        1 => Some(format!("did you mean {list}?")),
        _ => Some(format!("did you mean one of {list}?")),
    }
}

/// serde's "unknown field `x`, expected one of `a`, `b`" with "; did you mean `a`?"
/// appended when a known field is close; any other message unchanged.
pub fn suggest_unknown_field(msg: &str) -> String {
    let Some(rest) = msg.strip_prefix("unknown field `") else {
        return msg.to_string();
    };
    let Some((name, tail)) = rest.split_once('`') else {
        return msg.to_string();
    };
    let known: Vec<&str> = tail.split('`').skip(1).step_by(2).collect();
    match did_you_mean(name, &known) {
        Some(hint) => format!("{msg}; {hint}"),
        None => msg.to_string(),
    }
}

fn segments(name: &str) -> Vec<&str> {
    name.split(['.', '_']).filter(|s| !s.is_empty()).collect()
}

/// Optimal string alignment distance (Levenshtein plus adjacent transpositions).
fn osa_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let w = b.len() + 1;
    let mut d: Vec<usize> = vec![0; (a.len() + 1) * w];
    for i in 0..=a.len() {
        for j in 0..=b.len() {
            d[i * w + j] = if i == 0 || j == 0 {
                i + j
            } else {
                let cost = usize::from(a[i - 1] != b[j - 1]);
                let mut best = (d[(i - 1) * w + j] + 1)
                    .min(d[i * w + j - 1] + 1)
                    .min(d[(i - 1) * w + j - 1] + cost);
                if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                    best = best.min(d[(i - 2) * w + j - 2] + 1);
                }
                best
            };
        }
    }
    d[a.len() * w + b.len()]
}

#[cfg(test)]
#[path = "textpos_tests.rs"]
mod tests;
