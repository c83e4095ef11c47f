use super::*;

fn wav(path: &Path, rate: u32, channels: u16, n: usize) {
    let spec = hound::WavSpec {
        channels,
        sample_rate: rate,
        bits_per_sample: 16,
        sample_format: hound::SampleFormat::Int,
    };
    let mut w = hound::WavWriter::create(path, spec).unwrap();
    for i in 0..n * usize::from(channels) {
        w.write_sample(((i % 100) as i16) * 100).unwrap();
    }
    w.finalize().unwrap();
}

#[test]
fn directory_items_with_sidecar_text_and_common_fields() {
    let d = tempfile::tempdir().unwrap();
    wav(&d.path().join("b.wav"), 16_000, 1, 8_000);
    wav(&d.path().join("a.wav"), 16_000, 1, 16_000);
    std::fs::write(d.path().join("a.txt"), "hello world\n").unwrap();
    let items = discover(d.path()).unwrap();
    assert_eq!(items.len(), 2);
    assert_eq!(items[0].fields["text"], Value::String("hello world".into()));
    assert_eq!(items[0].fields["duration_ms"], Value::from(1000));
    assert_eq!(common_fields(&items), vec!["duration_ms", "file", "name"]);
}

#[test]
fn manifest_fields_and_resampled_stereo() {
    let d = tempfile::tempdir().unwrap();
    wav(&d.path().join("s.wav"), 48_000, 2, 4_800);
    std::fs::write(
        d.path().join("m.jsonl"),
        "{\"audio\": \"s.wav\", \"text\": \"x\", \"lang\": \"en\"}\n",
    )
    .unwrap();
    let items = discover(&d.path().join("m.jsonl")).unwrap();
    assert_eq!(items[0].fields["lang"], Value::String("en".into()));
    let pcm = load_pcm(items[0].audio.as_ref().unwrap(), 16_000).unwrap();
    assert_eq!(pcm.len(), 1_600 * 2);
    assert_eq!(require_audio(&items), Ok(()));
    std::fs::write(d.path().join("bad.jsonl"), "{\"audio\": 1}\n").unwrap();
    assert!(
        discover(&d.path().join("bad.jsonl"))
            .unwrap_err()
            .contains(":1: \"audio\" must be the WAV path as a string")
    );
    assert!(
        discover(&d.path().join("none"))
            .unwrap_err()
            .contains("does not exist")
    );
}

#[test]
fn text_only_manifest_lines_have_fields_and_no_audio() {
    let d = tempfile::tempdir().unwrap();
    wav(&d.path().join("s.wav"), 16_000, 1, 1_600);
    let m = d.path().join("m.jsonl");
    std::fs::write(
        &m,
        "{\"text\": \"hello\", \"lang\": \"en\"}\n\n{\"text\": \"bye\", \"lang\": \"fr\", \"audio\": \"s.wav\"}\n",
    )
    .unwrap();
    let items = discover(&m).unwrap();
    assert_eq!(items[0].audio, None);
    assert_eq!(items[0].fields["text"], Value::String("hello".into()));
    assert!(items[1].audio.is_some());
    assert_eq!(common_fields(&items), vec!["lang", "text"]);
    let e = require_audio(&items).unwrap_err();
    assert!(
        e.starts_with(&format!(
            "{}:1: no \"audio\", but a `stream` step",
            m.display()
        )),
        "{e}"
    );
    assert!(e.contains("remove the `stream` step"), "{e}");
}
