use super::*;

/// The slow path as the session runs it: parse a `Value`, check the type, read it.
fn slow(text: &str) -> Option<ChunkMeta> {
    let v: Value = serde_json::from_str(text).ok()?;
    (v.get("type").and_then(Value::as_str) == Some("video.chunk_metadata"))
        .then(|| ChunkMeta::of_value(&v))
}

#[test]
fn the_fast_path_agrees_with_the_value_reading_wherever_it_answers() {
    let cases = [
        r#"{"type":"video.chunk_metadata","kind":"media","generation_chunk_index":3,"num_frames":12,"server_sent_at_s":17.25,"extra":{"x":[1,2]}}"#,
        r#"{"type":"video.chunk_metadata","kind":"trailer","generation_chunk_index":null}"#,
        r#"{"type":"video.chunk_metadata","kind":"me\u0064ia","num_frames":4294967297}"#,
        r#"{"type":"video.chunk_metadata","server_sent_at_s":5}"#,
        r#"{"kind":"media","type":"video.chunk_metadata"}"#,
        // Unexpected types and duplicates: the fast path declines, the Value reading decides.
        r#"{"type":"video.chunk_metadata","kind":"media","generation_chunk_index":-1}"#,
        r#"{"type":"video.chunk_metadata","kind":"media","num_frames":1.5}"#,
        r#"{"type":"video.chunk_metadata","kind":7}"#,
        r#"{"type":"video.chunk_metadata","server_sent_at_s":"soon"}"#,
        r#"{"type":"video.chunk_metadata","kind":"trailer","kind":"media"}"#,
        r#"{"type":"video.start"}"#,
        r#"{"type":"session.done","kind":"media"}"#,
        r#"not json"#,
        r#"{"type":"video.chunk_metadata"} trailing"#,
    ];
    for text in cases {
        let (f, s) = (fast(text), slow(text));
        if let Some(f) = f {
            assert_eq!(Some(f), s, "{text}");
        } else {
            assert!(
                s.is_none() || serde_json::from_str::<Fields<'_>>(text).is_err(),
                "fast declined a plain event: {text}"
            );
        }
    }
    let m = fast(cases[0]).unwrap();
    assert_eq!(
        m,
        ChunkMeta {
            media: true,
            index: 3,
            num_frames: 12,
            server_sent_at_s: Some(17.25)
        }
    );
    assert_eq!(
        fast(cases[2]).unwrap().num_frames,
        1,
        "truncated like `as u32`"
    );
    assert!(fast(cases[5]).is_none());
    assert_eq!(
        slow(cases[5]).unwrap().index,
        0,
        "not an unsigned integer: 0"
    );
    assert!(slow(cases[9]).unwrap().media, "the last duplicate wins");
}
