//! Discovery (directory, references, manifest errors with line numbers) and decoding
//! (WAV formats, mix-down, resampling, the ffmpeg path).

use super::*;

fn write_wav(path: &Path, rate: u32, channels: u16, samples: &[i16]) {
    let spec = hound::WavSpec {
        channels,
        sample_rate: rate,
        bits_per_sample: 16,
        sample_format: hound::SampleFormat::Int,
    };
    let mut w = hound::WavWriter::create(path, spec).unwrap();
    for s in samples {
        w.write_sample(*s).unwrap();
    }
    w.finalize().unwrap();
}

#[test]
fn directory_items_are_sorted_with_their_references() {
    let dir = tempfile::tempdir().unwrap();
    write_wav(&dir.path().join("b.wav"), 16_000, 1, &[0; 10]);
    write_wav(&dir.path().join("a.WAV"), 16_000, 1, &[0; 10]);
    std::fs::write(dir.path().join("b.txt"), "Hello there.\n").unwrap();
    std::fs::write(dir.path().join("notes.md"), "x").unwrap();
    let items = discover(dir.path()).unwrap();
    let names: Vec<&str> = items.iter().map(|i| i.name.as_str()).collect();
    assert_eq!(names, ["a.WAV", "b.wav"]);
    assert_eq!(items[0].reference, None);
    assert_eq!(items[1].reference.as_deref(), Some("Hello there."));
}

#[test]
fn empty_or_missing_dataset_says_how_to_make_one() {
    let dir = tempfile::tempdir().unwrap();
    let err = discover(dir.path()).unwrap_err().to_string();
    assert!(
        err.contains("rtload dataset synth --kind transcription"),
        "{err}"
    );
    let err = discover(&dir.path().join("nope")).unwrap_err();
    assert!(matches!(err, DataError::NotFound(_)));
}

#[test]
fn manifest_lines_and_errors_name_the_line() {
    let dir = tempfile::tempdir().unwrap();
    write_wav(&dir.path().join("x.wav"), 16_000, 1, &[0; 10]);
    let m = dir.path().join(MANIFEST);
    std::fs::write(
        &m,
        "{\"audio\": \"x.wav\", \"text\": \"hi\"}\n\n{\"audio\": \"x.wav\"}\n",
    )
    .unwrap();
    let items = discover(dir.path()).unwrap();
    assert_eq!(items.len(), 2);
    assert_eq!(items[0].reference.as_deref(), Some("hi"));
    assert_eq!(items[1].reference, None);
    assert_eq!(discover(&m).unwrap(), items);

    std::fs::write(&m, "{\"audio\": \"x.wav\"}\n{\"text\": \"no audio\"}\n").unwrap();
    let err = discover(dir.path()).unwrap_err().to_string();
    assert!(err.starts_with(&format!("{}:2: ", m.display())), "{err}");
    assert!(err.contains("\"audio\""), "{err}");
    std::fs::write(&m, "{\"audio\": \"gone.wav\"}\n").unwrap();
    let err = discover(dir.path()).unwrap_err().to_string();
    assert!(err.contains(":1: audio file does not exist"), "{err}");
    std::fs::write(&m, "nope\n").unwrap();
    assert!(
        discover(dir.path())
            .unwrap_err()
            .to_string()
            .contains(":1: not JSON")
    );
}

#[test]
fn stereo_8k_wav_becomes_16k_mono_pcm16() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("s.wav");
    // L/R frames: (1000, 3000), (2000, 4000) → mono 2000, 3000
    write_wav(&p, 8_000, 2, &[1000, 3000, 2000, 4000]);
    let pcm = load_pcm(&p, 16_000, &DecodeOptions::default()).unwrap();
    let s: Vec<i16> = pcm
        .chunks_exact(2)
        .map(|b| i16::from_le_bytes([b[0], b[1]]))
        .collect();
    assert_eq!(s, [2000, 2500, 3000, 3000]);
}

#[test]
fn too_long_wav_is_refused_before_decoding() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("long.wav");
    write_wav(&p, 16_000, 1, &[0; 32_000]);
    let opts = DecodeOptions {
        max_duration_s: 1.0,
        ..DecodeOptions::default()
    };
    let err = load_pcm(&p, 16_000, &opts).unwrap_err().to_string();
    assert!(err.contains("more than max_duration_s"), "{err}");
}

#[test]
fn other_formats_go_through_ffmpeg_and_are_resampled() {
    let dir = tempfile::tempdir().unwrap();
    let wav = dir.path().join("t.wav");
    write_wav(&wav, 8_000, 1, &vec![1000; 8_000]);
    // ffmpeg probes the content, so a WAV under another name exercises the ffmpeg path.
    let other = dir.path().join("t.flac");
    std::fs::copy(&wav, &other).unwrap();
    let pcm = load_pcm(&other, 16_000, &DecodeOptions::default()).unwrap();
    assert!((31_900..=32_100).contains(&pcm.len()), "{}", pcm.len());
    let missing = load_pcm(
        &dir.path().join("gone.mp3"),
        16_000,
        &DecodeOptions::default(),
    );
    assert!(missing.unwrap_err().to_string().contains("gone.mp3"));
}
