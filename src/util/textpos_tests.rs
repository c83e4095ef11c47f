use super::*;

#[test]
fn line_col_counts_characters_from_one() {
    assert_eq!(line_col("ab\ncd", 0), (1, 1));
    assert_eq!(line_col("ab\ncd", 4), (2, 2));
    assert_eq!(line_col("é\nx", 3), (2, 1));
    assert_eq!(line_col("éx", 2), (1, 2));
}

#[test]
fn offset_inverts_line_col() {
    let src = "ab\néx\ny";
    for pos in [0, 1, 3, 5, 7] {
        let (l, c) = line_col(src, pos);
        assert_eq!(offset(src, l, c), Some(pos));
    }
    assert_eq!(offset(src, 9, 1), None);
}

#[test]
fn num_is_short() {
    assert_eq!(num(1e300), "1e300");
    assert_eq!(num(2.5), "2.5");
    assert_eq!(num(f64::NAN), "NaN");
    assert_eq!(num(-1e-9), "-1e-9");
}

#[test]
fn value_span_follows_nested_tables() {
    let src = "[load]\nx = 1\n[server.video]\n  chunk_bytes = -3\n";
    let span = value_span(src, &["server", "video", "chunk_bytes"]).unwrap();
    assert_eq!(&src[span.clone()], "-3");
    assert_eq!(line_col(src, span.start), (4, 17));
    assert!(value_span(src, &["server", "video", "y"]).is_none());
    assert!(value_span(src, &["load", "x", "y"]).is_none());
}

#[test]
fn entry_at_names_the_innermost_key() {
    let src = "name = \"x\"\n[load]\nmax_concurrency = \"ten\"\n[server.video]\nchunk_bytes = -3\n";
    let doc = DeTable::parse(src).unwrap();
    let at = |needle: &str| entry_at(doc.get_ref(), src.find(needle).unwrap()).map(|(p, _)| p);
    assert_eq!(
        at("\"ten\""),
        Some(vec!["load".into(), "max_concurrency".into()])
    );
    assert_eq!(
        at("max_conc"),
        Some(vec!["load".into(), "max_concurrency".into()])
    );
    assert_eq!(
        at("-3"),
        Some(vec!["server".into(), "video".into(), "chunk_bytes".into()])
    );
    assert_eq!(at("\"x\""), Some(vec!["name".into()]));
}

#[test]
fn unknown_field_gets_a_suggestion() {
    let msg =
        "unknown field `chunk_intervall_ms`, expected one of `first_chunk_ms`, `chunk_interval_ms`";
    assert_eq!(
        suggest_unknown_field(msg),
        format!("{msg}; did you mean `chunk_interval_ms`?")
    );
    assert_eq!(suggest_unknown_field("invalid type"), "invalid type");
    assert_eq!(
        suggest_unknown_field("unknown field `zzzzzz`, expected `a`"),
        "unknown field `zzzzzz`, expected `a`"
    );
}

#[test]
fn osa_distance_counts_transpositions_once() {
    assert_eq!(osa_distance("", "abc"), 3);
    assert_eq!(osa_distance("abc", "abc"), 0);
    assert_eq!(osa_distance("ab", "ba"), 1);
    assert_eq!(osa_distance("kitten", "sitting"), 3);
}
