//! Reading rtload result files back (for `report` and `compare`), and the interval log
//! beside one (for the report's time series). Results in the
//! `vllm bench serve` dialect carry Python's bare `NaN` / `Infinity` tokens, which strict
//! JSON parsers reject; outside strings they are read as `null` (missing).

use std::path::Path;

/// Parse result text, reading bare `NaN`, `Infinity` and `-Infinity` as `null`.
pub fn parse_lenient(text: &str) -> Result<serde_json::Value, serde_json::Error> {
    match serde_json::from_str(text) {
        Ok(v) => Ok(v),
        Err(first) => {
            let cleaned = replace_nonfinite(text);
            if cleaned == text {
                return Err(first);
            }
            serde_json::from_str(&cleaned)
        }
    }
}

/// Read and parse a result file; errors name the file.
pub fn read(path: &Path) -> Result<serde_json::Value, String> {
    let text = crate::util::fs::read_text_bounded(path, crate::util::fs::MAX_RESULT_BYTES)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    parse_lenient(&text).map_err(|e| format!("{}: not a JSON result: {e}", path.display()))
}

/// The interval log beside the result at `path` (same name, `.hlog`): absent when there
/// is no such file, unreadable (with why) when it cannot be read or parsed.
pub fn interval_log(path: &Path) -> crate::report::html::IntervalLog {
    use crate::report::html::IntervalLog;
    let hlog = path.with_extension("hlog");
    match std::fs::read(&hlog) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => IntervalLog::Absent,
        Err(e) => IntervalLog::Unreadable(format!("{}: {e}", hlog.display())),
        Ok(bytes) => match crate::util::histlog::read_intervals(&bytes) {
            Ok(iv) => IntervalLog::Read(iv),
            Err(e) => IntervalLog::Unreadable(format!("{}: {e}", hlog.display())),
        },
    }
}

fn replace_nonfinite(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_str = false;
    let mut escaped = false;
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if in_str {
            out.push(c);
            rest = &rest[c.len_utf8()..];
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_str = false,
                _ => {}
            }
            continue;
        }
        if c == '"' {
            in_str = true;
        } else if let Some(tok) = ["-Infinity", "Infinity", "NaN"]
            .iter()
            .find(|t| rest.starts_with(**t))
        {
            out.push_str("null");
            rest = &rest[tok.len()..];
            continue;
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

#[cfg(test)]
#[path = "resultfile_tests.rs"]
mod tests;
