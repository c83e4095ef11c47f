//! The errors table and the warnings: every failure kind with its count, its sessions
//! ("session N", "… and N more") and its first distinct messages in full; a failed
//! transcription run's error text on the page; warnings listed.

use serde_json::json;

use super::{TRANSCRIPTION_FAILED, parse, render_docs};

fn errors_table(html: &str) -> &str {
    html.split("<table class=\"errors\">")
        .nth(1)
        .and_then(|t| t.split("</table>").next())
        .expect("errors table")
}

#[test]
fn a_failed_transcription_runs_error_text_is_on_the_page() {
    let doc = parse(TRANSCRIPTION_FAILED);
    let html = render_docs(&[("t.json", doc.clone())]);
    let table = errors_table(&html);
    let msg = doc["rtload"]["failures"]["sessions"][0]["message"]
        .as_str()
        .unwrap();
    assert!(msg.contains("model overloaded"), "{msg}");
    assert!(
        table.contains(&format!(
            "<pre class=\"err\">{}</pre>",
            super::super::svg::esc(msg)
        )),
        "{table}"
    );
    assert!(table.contains("<td>server_error</td><td>2</td><td>session 1, session 3</td>"));
    assert!(table.contains("(×2)"));
    // Its timeline marks both failed sessions in red.
    assert_eq!(
        super::chart(&html, "timeline")
            .matches("class=\"mark span failed\"")
            .count(),
        2
    );
}

#[test]
fn many_failures_are_counted_listed_by_session_and_cut_with_the_rest_said() {
    let sessions: Vec<_> = (0..30)
        .map(|i| json!({"session": i * 2, "kind": "timeout", "message": format!("no answer within 30 s (variant {})", i % 5)}))
        .collect();
    let doc = json!({"rtload": {"metrics": {},
        "failures": {"count": 31, "by_kind": {"timeout": 30, "closed": 1},
                     "sessions": sessions},
        "warnings": ["invariant broken (a bug in rtload; please report it): x"]}});
    let html = render_docs(&[("f.json", doc)]);
    let table = errors_table(&html);
    assert!(table.contains("<caption>Errors: 31 failed session(s)</caption>"));
    // Kinds in the order the count names them; one counted but not listed.
    assert!(
        table.contains("<tr><td>closed</td><td>1</td><td>–</td>"),
        "{table}"
    );
    assert!(table.contains("session 0, session 2, "));
    assert!(table.contains("session 38 … and 10 more</td>"), "{table}");
    // Five distinct messages: the first three in full (each 6 times), the rest said.
    assert_eq!(
        table
            .matches("<pre class=\"err\">no answer within 30 s")
            .count(),
        3
    );
    assert_eq!(table.matches("(×6)").count(), 3);
    assert!(table.contains("… and 2 more distinct message(s)"));
    assert!(html.contains(
        "<div class=\"warnings\"><p><strong>Warnings (1)</strong></p><ul><li>invariant broken"
    ));
}

#[test]
fn a_result_without_failures_has_no_errors_table() {
    let html = render_docs(&[("q.json", parse(super::VIDEO))]);
    assert!(!html.contains("class=\"errors\""));
    assert!(!html.contains("class=\"warnings\""));
}
