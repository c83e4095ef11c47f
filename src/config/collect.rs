//! Every error of a scenario in one pass. serde stops a section at its first bad value
//! (a string where a number goes, an unknown key), which would hide the file's other
//! mistakes behind it: [`collecting`] keeps such an error, sets the entry it is about
//! aside (removed from the parsed tree; every other entry keeps its position) and reads
//! the section again, until the parser gets through or fails for a reason no setting
//! aside can remove. The text is parsed once, before; nothing here parses it again.

use crate::config::scenario::ScenarioError;
use crate::util::scenario_doc::ScenarioDoc;

/// How many entries one parse may set aside before giving up (a file has far fewer).
const MAX_ROUNDS: usize = 64;

/// Run `parse` on `doc`, setting aside each entry a shape error is about (see
/// [`ScenarioError::is_shape_error`]) and parsing again: the value parsed from what was
/// left (if any) and every error found on the way, the set-aside ones first.
pub(crate) fn collecting<'i, T>(
    doc: &ScenarioDoc<'i>,
    mut parse: impl FnMut(&ScenarioDoc<'i>) -> Result<T, Vec<ScenarioError>>,
) -> (Option<T>, Vec<ScenarioError>) {
    let mut doc = doc.clone();
    let mut kept = Vec::new();
    for _ in 0..MAX_ROUNDS {
        let errors = match parse(&doc) {
            Ok(v) => return (Some(v), kept),
            Err(errors) => errors,
        };
        let (shape, other): (Vec<_>, Vec<_>) =
            errors.into_iter().partition(ScenarioError::is_shape_error);
        let mut fewer = None;
        for e in &shape {
            if let ScenarioError::At { line, col, .. } = e
                && let Some(pos) = crate::util::textpos::offset(doc.src(), *line, *col)
                && let Some(d) = fewer.as_ref().unwrap_or(&doc).without_entry_at(pos)
            {
                fewer = Some(d);
            }
        }
        kept.extend(shape);
        match fewer {
            Some(d) => doc = d,
            None => {
                kept.extend(other);
                return (None, kept);
            }
        }
    }
    (None, kept)
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
#[path = "collect_tests.rs"]
mod tests;
