//! Text copied from a server or a scenario into rtload's outputs is bounded: a failure
//! message quoting a 5 MB error event, or a 10 MB `await` pattern echoed into a
//! timeout, would otherwise be copied into every session's record, the terminal, stderr
//! and the JSON. [`bounded`] cuts such text and notes its original length.

/// Longest text a failure message keeps whole.
pub const MESSAGE_CHARS: usize = 2000;

/// `text`, cut to `max` characters with `… (N chars)` noting the original length.
pub fn bounded(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_string(),
        Some((cut, _)) => format!("{}… ({} chars)", &text[..cut], text.chars().count()),
    }
}

#[cfg(test)]
#[path = "bounded_tests.rs"]
mod tests;
