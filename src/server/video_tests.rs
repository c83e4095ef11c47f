//! The chunk metadata written without a `Value`: the same text `serde_json` gives.

use super::*;

fn reparsed(text: &str) -> Value {
    serde_json::from_str(text).expect("valid JSON")
}

#[test]
fn media_metadata_is_the_text_serde_json_writes() {
    let t0 = Instant::now();
    let mut buf = Vec::new();
    let text = chunk_meta(&mut buf, "a-b\"c", Some((3, 12)), 16384, t0).to_string();
    let stamp = reparsed(&text)["server_sent_at_s"].clone();
    assert!(stamp.as_f64().is_some_and(|s| s >= 0.0), "{text}");
    let want = json!({
        "type": "video.chunk_metadata",
        "request_id": "a-b\"c",
        "kind": "media",
        "num_frames": 12,
        "byte_length": 16384,
        "generation_chunk_index": 3,
        "server_sent_at_s": stamp,
    });
    assert_eq!(text, want.to_string());
}

#[test]
fn trailer_metadata_has_a_null_index_and_no_frames() {
    let mut buf = b"left over".to_vec();
    let text = chunk_meta(&mut buf, "rid", None, 77, Instant::now()).to_string();
    let stamp = reparsed(&text)["server_sent_at_s"].clone();
    let want = json!({
        "type": "video.chunk_metadata",
        "request_id": "rid",
        "kind": "trailer",
        "num_frames": 0,
        "byte_length": 77,
        "generation_chunk_index": null,
        "server_sent_at_s": stamp,
    });
    assert_eq!(text, want.to_string());
}
