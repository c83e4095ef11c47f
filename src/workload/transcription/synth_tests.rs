use super::*;
use crate::workload::transcription::dataset;

#[test]
fn synth_set_is_deterministic_and_decodes_to_its_reference() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    let opts = SynthOptions::default();
    let r = synth(a.path(), &opts).unwrap();
    synth(b.path(), &opts).unwrap();
    assert_eq!(r.files.len(), 3);
    assert!((r.seconds_per_file - 2.4).abs() < 1e-9);
    let items = dataset::discover(a.path()).unwrap();
    assert_eq!(items.len(), 3);
    for item in &items {
        let bytes = std::fs::read(&item.path).unwrap();
        let other = std::fs::read(b.path().join(&item.name)).unwrap();
        assert_eq!(bytes, other, "{}", item.name);
        let pcm =
            dataset::load_pcm(&item.path, 16_000, &dataset::DecodeOptions::default()).unwrap();
        let samples: Vec<i16> = pcm
            .chunks_exact(2)
            .map(|b| i16::from_le_bytes([b[0], b[1]]))
            .collect();
        let slot = tonecode::slot_samples(16_000, 2.5);
        let decoded: Vec<&str> = samples
            .chunks(slot)
            .filter_map(|s| match tonecode::decode_slot(s, 16_000) {
                tonecode::Slot::Word(i) => Some(tonecode::VOCAB[i]),
                _ => None,
            })
            .collect();
        let reference = item.reference.as_deref().unwrap();
        assert_eq!(
            crate::workload::transcription::wer::wer(reference, &decoded.join(" ")),
            Some(0.0),
            "{reference}"
        );
    }
}

#[test]
fn bad_options_are_refused() {
    let d = tempfile::tempdir().unwrap();
    let zero = SynthOptions {
        files: 0,
        ..SynthOptions::default()
    };
    assert!(synth(d.path(), &zero).is_err());
    let wps = SynthOptions {
        words_per_second: 0.0,
        ..SynthOptions::default()
    };
    assert!(synth(d.path(), &wps).is_err());
}
