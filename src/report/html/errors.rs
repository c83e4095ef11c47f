//! The errors of a result, on the page rather than in tooltips: one table row per failure
//! kind with its count, the sessions that failed that way ("session N", the run's one
//! number for a session) and its first distinct messages in full; then the result's
//! warnings. Read from `rtload.failures` (`{count, by_kind, sessions: [{session, kind,
//! message}]}`), or, in a file written before it, from the failed rows of
//! `rtload.samples` or `rtload.timeline`.

use std::fmt::Write as _;

use serde_json::Value;

use super::svg::esc;

/// Sessions listed per failure kind, at most.
pub const SESSIONS_SHOWN: usize = 20;
/// Distinct messages shown in full per failure kind, at most.
pub const MESSAGES_SHOWN: usize = 3;

/// One failed session.
struct Failure {
    session: Option<u64>,
    kind: String,
    message: String,
}

/// The failures `doc` lists, and the count per kind it states (when it states one).
fn failures(rt: &Value) -> (Vec<Failure>, Vec<(String, u64)>) {
    let s = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
    let row = |f: &Value, msg_key: &str, kind_key: &str| -> Option<Failure> {
        Some(Failure {
            session: f
                .get("session")
                .and_then(Value::as_u64)
                .or_else(|| f.get("session_index").and_then(Value::as_u64)),
            kind: s(f, kind_key).unwrap_or_else(|| "failed".into()),
            message: s(f, msg_key).filter(|m| !m.is_empty())?,
        })
    };
    let (list, by_kind) = match rt.get("failures").filter(|f| f.is_object()) {
        Some(f) => (
            f.get("sessions")
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(|r| row(r, "message", "kind")).collect())
                .unwrap_or_default(),
            f.get("by_kind"),
        ),
        None => {
            let rows = |key: &str| -> Vec<Failure> {
                rt.get(key)
                    .and_then(Value::as_array)
                    .map(|a| {
                        a.iter()
                            .filter_map(|r| row(r, "error", "failure_kind"))
                            .collect()
                    })
                    .unwrap_or_default()
            };
            let samples = rows("samples");
            let list = if samples.is_empty() {
                rows("timeline")
            } else {
                samples
            };
            (list, rt.get("failures_by_kind"))
        }
    };
    let counts = by_kind
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, n)| Some((k.clone(), n.as_u64().filter(|n| *n > 0)?)))
                .collect()
        })
        .unwrap_or_default();
    (list, counts)
}

/// The errors table and the warnings of `doc` (nothing when it has neither).
pub fn section(doc: &Value) -> String {
    let rt = doc.get("rtload").unwrap_or(&Value::Null);
    let (list, counts) = failures(rt);
    let mut kinds: Vec<(String, u64)> = counts;
    for f in &list {
        if !kinds.iter().any(|(k, _)| *k == f.kind) {
            let n = list.iter().filter(|g| g.kind == f.kind).count() as u64;
            kinds.push((f.kind.clone(), n));
        }
    }
    let mut s = String::new();
    if !kinds.is_empty() {
        let total: u64 = kinds.iter().map(|(_, n)| n).sum();
        let _ = write!(
            s,
            "<table class=\"errors\"><caption>Errors: {total} failed session(s)</caption><tr><th>kind</th><th>count</th><th>sessions</th><th>messages (the first {MESSAGES_SHOWN} distinct, in full)</th></tr>"
        );
        for (kind, n) in &kinds {
            let mine: Vec<&Failure> = list.iter().filter(|f| f.kind == *kind).collect();
            let _ = write!(
                s,
                "<tr><td>{}</td><td>{n}</td><td>{}</td><td>{}</td></tr>",
                esc(kind),
                sessions(&mine, *n),
                messages(&mine)
            );
        }
        s.push_str("</table>\n");
    }
    s.push_str(&warnings(rt));
    s
}

/// "session 1, session 4 … and N more" (`n` the kind's count: failures the file counts
/// but does not list are among the more).
fn sessions(mine: &[&Failure], n: u64) -> String {
    let named: Vec<String> = mine
        .iter()
        .filter_map(|f| f.session)
        .take(SESSIONS_SHOWN)
        .map(|k| format!("session {k}"))
        .collect();
    let mut out = if named.is_empty() {
        "–".to_string()
    } else {
        named.join(", ")
    };
    let more = n.saturating_sub(named.len() as u64);
    if more > 0 && !named.is_empty() {
        let _ = write!(out, " … and {more} more");
    }
    esc(&out)
}

/// The first distinct messages in full, each with how many sessions had it.
fn messages(mine: &[&Failure]) -> String {
    let mut distinct: Vec<(&str, usize)> = Vec::new();
    for f in mine {
        match distinct.iter_mut().find(|(m, _)| *m == f.message) {
            Some((_, n)) => *n += 1,
            None => distinct.push((&f.message, 1)),
        }
    }
    let mut out = String::new();
    for (m, n) in distinct.iter().take(MESSAGES_SHOWN) {
        let times = if *n > 1 {
            format!(" <span class=\"times\">(×{n})</span>")
        } else {
            String::new()
        };
        let _ = write!(out, "<pre class=\"err\">{}</pre>{times}", esc(m));
    }
    if distinct.len() > MESSAGES_SHOWN {
        let _ = write!(
            out,
            "<p class=\"nodata\">… and {} more distinct message(s): rtload.failures in the JSON result</p>",
            distinct.len() - MESSAGES_SHOWN
        );
    }
    if out.is_empty() {
        out.push_str("<p class=\"nodata\">no message recorded</p>");
    }
    out
}

/// `rtload.warnings` as a list (nothing without any).
fn warnings(rt: &Value) -> String {
    let list: Vec<&str> = rt
        .get("warnings")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if list.is_empty() {
        return String::new();
    }
    let mut s = format!(
        "<div class=\"warnings\"><p><strong>Warnings ({})</strong></p><ul>",
        list.len()
    );
    for w in list {
        let _ = write!(s, "<li>{}</li>", esc(w));
    }
    s.push_str("</ul></div>\n");
    s
}
