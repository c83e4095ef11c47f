//! Every error of a scenario in one pass. serde stops a section at its first bad value
//! (a string where a number goes, an unknown key), which would hide the file's other
//! mistakes behind it: [`collecting`] keeps such an error, blanks the entry it is about
//! (spaces over the same bytes, so every other position stays true) and reads the text
//! again, until the parser gets through or fails for a reason no blanking can remove.

use crate::config::scenario::ScenarioError;

/// How many entries one parse may set aside before giving up (a file has far fewer).
const MAX_ROUNDS: usize = 64;

/// Run `parse` on `src`, setting aside each entry a shape error is about (see
/// [`ScenarioError::is_shape_error`]) and parsing again: the value parsed from what was
/// left (if any) and every error found on the way, the set-aside ones first.
pub(crate) fn collecting<T>(
    src: &str,
    mut parse: impl FnMut(&str) -> Result<T, Vec<ScenarioError>>,
) -> (Option<T>, Vec<ScenarioError>) {
    let mut text = src.to_string();
    let mut kept = Vec::new();
    for _ in 0..MAX_ROUNDS {
        let errors = match parse(&text) {
            Ok(v) => return (Some(v), kept),
            Err(errors) => errors,
        };
        let before = text.clone();
        let (shape, other): (Vec<_>, Vec<_>) =
            errors.into_iter().partition(ScenarioError::is_shape_error);
        for e in &shape {
            if let ScenarioError::At { line, col, .. } = e {
                blank_entry(&mut text, *line, *col);
            }
        }
        if shape.is_empty() || text == before {
            kept.extend(shape);
            kept.extend(other);
            return (None, kept);
        }
        kept.extend(shape);
    }
    (None, kept)
}

/// Spaces over the entry at 1-based `line:col` of `text`: its whole line(s) when the
/// entry starts its line (`key = value`, a dotted key, a `[table]` header with its body),
/// nothing otherwise (inside an inline table, blanking would not leave valid TOML).
fn blank_entry(text: &mut String, line: usize, col: usize) {
    let Some(pos) = offset(text, line, col) else {
        return;
    };
    let Some((_, key)) = crate::util::textpos::entry_at(text, pos) else {
        return;
    };
    let line_start = text[..key.start].rfind('\n').map_or(0, |i| i + 1);
    let lead = text[line_start..key.start].trim();
    let header = lead.starts_with('[');
    if !(lead.is_empty() || header) {
        return;
    }
    let end = if header {
        // The header and its body, up to the next header.
        text[key.start..]
            .find("\n[")
            .map_or(text.len(), |i| key.start + i + 1)
    } else {
        let value_end = value_end(text, pos).unwrap_or(pos);
        text[value_end..]
            .find('\n')
            .map_or(text.len(), |i| value_end + i)
    };
    // Byte for byte: a multi-byte character becomes as many spaces as it had bytes.
    let fill: String = text[line_start..end]
        .bytes()
        .map(|b| if b == b'\n' { '\n' } else { ' ' })
        .collect();
    text.replace_range(line_start..end, &fill);
}

/// End of the value whose entry holds byte `pos`.
fn value_end(text: &str, pos: usize) -> Option<usize> {
    let (keys, _) = crate::util::textpos::entry_at(text, pos)?;
    let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
    crate::util::textpos::value_span(text, &keys).map(|s| s.end)
}

/// Byte offset of 1-based `line:col` (col in characters).
fn offset(text: &str, line: usize, col: usize) -> Option<usize> {
    let start = if line == 1 {
        0
    } else {
        text.match_indices('\n').nth(line - 2)?.0 + 1
    };
    let rest = &text[start..];
    Some(
        start
            + rest
                .char_indices()
                .nth(col - 1)
                .map_or(rest.len(), |(i, _)| i),
    )
}

/// Puts `errors` in file order (positioned errors by line and column, whole-file ones
/// last) and drops repeats (two parsers reading the same entry).
pub(crate) fn sort_errors(errors: &mut Vec<ScenarioError>) {
    errors.sort_by_key(|e| match e {
        ScenarioError::At { line, col, .. } => (0, *line, *col),
        _ => (1, 0, 0),
    });
    let mut seen = std::collections::HashSet::new();
    errors.retain(|e| seen.insert(e.to_string()));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blanking_keeps_every_other_position() {
        let mut t = "[load]\nsamples = \"x\" # no\nmax_concurrency = 2\n[bogus]\na = 1\n[output]\n"
            .to_string();
        let len = t.len();
        blank_entry(&mut t, 2, 11);
        assert_eq!(t.len(), len);
        assert!(
            t.contains("\n                  \nmax_concurrency = 2\n"),
            "{t:?}"
        );
        blank_entry(&mut t, 4, 2);
        assert_eq!(t.len(), len);
        assert!(t.ends_with("\n       \n     \n[output]\n"), "{t:?}");
        let doc: toml::Table = toml::from_str(&t).unwrap();
        assert_eq!(doc["load"]["max_concurrency"].as_integer(), Some(2));
    }
}
