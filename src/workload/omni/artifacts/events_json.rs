//! `events.json` written one event at a time: the same bytes as the whole array
//! pretty-printed (2-space indent) with URLs redacted, without ever holding the array,
//! its text or its redacted copy; a spilled case's lines are decoded as they are written.

use std::io::{self, Write};

use serde_json::Value;

use super::capture::CaseEvents;
use crate::workload::omni::session::events::decode_each;

/// Writes `events` as `events.json`'s text (a JSON array, then a newline) to `w`.
pub(super) fn write(w: &mut impl Write, events: &CaseEvents) -> io::Result<()> {
    let mut first = true;
    let mut each = |ev: &Value| -> io::Result<()> {
        w.write_all(if first { b"[\n" } else { b",\n" })?;
        first = false;
        // An element of a pretty array is its own pretty text, one level deeper; JSON
        // escapes every newline inside a string, so each text line is one output line.
        let text = crate::util::target::redact_text(&serde_json::to_string_pretty(ev)?);
        for (i, line) in text.split('\n').enumerate() {
            w.write_all(if i == 0 { b"  " } else { b"\n  " })?;
            w.write_all(line.as_bytes())?;
        }
        Ok(())
    };
    match events {
        CaseEvents::Parsed(evs) => evs.iter().try_for_each(&mut each)?,
        CaseEvents::Spilled(bytes) => {
            for line in decode_each(bytes) {
                let (_, ev) = line.map_err(io::Error::other)?;
                each(&ev)?;
            }
        }
    }
    w.write_all(if first { b"[]\n" } else { b"\n]\n" })
}

#[cfg(test)]
#[path = "events_json_tests.rs"]
mod tests;
