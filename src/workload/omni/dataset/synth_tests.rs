//! Tests of `synth`.

use super::*;
use crate::workload::omni::dataset::{discover, is_frames_case, resolve_data_root};

/// Decode what [`encode_jpeg`] writes (DC-only, 4-bit DC codes, 1-bit EOB) back into
/// block levels, checking the marker structure on the way.
fn decode_levels(jpeg: &[u8], blocks: usize) -> (Vec<u8>, String) {
    assert_eq!(&jpeg[..2], [0xFF, 0xD8], "SOI");
    assert_eq!(&jpeg[jpeg.len() - 2..], [0xFF, 0xD9], "EOI");
    let (mut i, mut comment) = (2, String::new());
    loop {
        assert_eq!(jpeg[i], 0xFF);
        let (marker, len) = (jpeg[i + 1], u16::from_be_bytes([jpeg[i + 2], jpeg[i + 3]]));
        let body = &jpeg[i + 4..i + 2 + len as usize];
        i += 2 + len as usize;
        match marker {
            0xFE => comment = String::from_utf8(body.to_vec()).unwrap(),
            0xDA => break,
            _ => {}
        }
    }
    let mut data = Vec::new();
    let mut j = i;
    while j < jpeg.len() - 2 {
        data.push(jpeg[j]);
        j += if jpeg[j] == 0xFF {
            assert_eq!(jpeg[j + 1], 0);
            2
        } else {
            1
        };
    }
    let mut pos = 0usize;
    let mut take = |n: usize| -> i32 {
        (0..n).fold(0i32, |acc, _| {
            let bit = (data[pos / 8] >> (7 - pos % 8)) & 1;
            pos += 1;
            (acc << 1) | i32::from(bit)
        })
    };
    let (mut prev, mut out) = (0i32, Vec::new());
    for _ in 0..blocks {
        let size = take(4) as usize;
        let raw = take(size);
        let diff = if size > 0 && raw < 1 << (size - 1) {
            raw - (1 << size) + 1
        } else {
            raw
        };
        prev += diff;
        assert_eq!(take(1), 0, "end of block");
        out.push((prev / 8 + 128) as u8);
    }
    (out, comment)
}

#[test]
fn jpeg_round_trips_including_byte_stuffing() {
    let mut stuffed = false;
    // k flat blocks (5 bits each) shift the alignment of the 0/255 swings.
    for k in 0..8 {
        let mut levels = vec![128u8; k];
        levels.extend((0..40).map(|i| if i % 2 == 0 { 255 } else { 0 }));
        levels.extend((0..300 - levels.len() as u32).map(|i| (i * 97 % 256) as u8));
        let jpeg = encode_jpeg(160, 120, &levels, "hello");
        stuffed |= jpeg.windows(2).any(|w| w == [0xFF, 0x00]);
        assert_eq!(decode_levels(&jpeg, 300), (levels, "hello".to_owned()));
    }
    assert!(stuffed, "some alignment must need byte stuffing");
}

#[test]
fn synth_then_discover_round_trip() {
    let tmp = tempfile::tempdir().unwrap();
    let opts = SynthOptions {
        cases_per_subset: 2,
        duration_ms: 2_500,
        ..Default::default()
    };
    let report = synth(tmp.path(), &opts).unwrap();
    assert_eq!(
        (report.cases, report.frames_per_case, report.archive),
        (6, 3, None)
    );
    let sel = discover(tmp.path(), &Subset::ALL, 0, 0, true).unwrap();
    let rels: Vec<&str> = sel.cases.iter().map(|c| c.video_rel.as_str()).collect();
    assert_eq!(rels[0], "videos/case_000.frames");
    assert_eq!(rels[5], "videos_bench/synth/case_001.frames");
    for case in &sel.cases {
        assert!(is_frames_case(&case.video_path) && case.annotation_path.is_file());
        let mut wav = hound::WavReader::open(case.video_path.join(FRAMES_AUDIO)).unwrap();
        let spec = wav.spec();
        assert_eq!(
            (spec.channels, spec.sample_rate, spec.bits_per_sample),
            (1, 16_000, 16)
        );
        assert_eq!(wav.duration(), 40_000);
        let peak = wav
            .samples::<i16>()
            .map(|s| s.unwrap().unsigned_abs())
            .max()
            .unwrap();
        assert!(peak > 3_000, "audible: {peak}");
        for k in 0..3 {
            let jpeg = fs::read(case.video_path.join(frame_file_name(k))).unwrap();
            let (_, comment) = decode_levels(&jpeg, 300);
            assert!(comment.ends_with(&format!(" frame {k}")), "{comment}");
        }
        assert!(!case.video_path.join(frame_file_name(3)).exists());
    }
    let reference = hound::WavReader::open(&report.ref_audio).unwrap();
    assert_eq!(reference.duration(), 32_000);
    let err = synth(tmp.path(), &opts).unwrap_err().to_string();
    assert!(
        err.starts_with("refusing to overwrite existing dataset directory"),
        "{err}"
    );
    let bad = SynthOptions {
        duration_ms: 0,
        ..Default::default()
    };
    assert!(synth(&tmp.path().join("other"), &bad).is_err());
}

fn tree(root: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push((
                    p.strip_prefix(root).unwrap().to_path_buf(),
                    fs::read(&p).unwrap(),
                ));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn output_is_deterministic_per_seed() {
    let tmp = tempfile::tempdir().unwrap();
    let opts = SynthOptions {
        tar: true,
        duration_ms: 1_200,
        ..Default::default()
    };
    synth(&tmp.path().join("a"), &opts).unwrap();
    synth(&tmp.path().join("b"), &opts).unwrap();
    synth(&tmp.path().join("c"), &SynthOptions { seed: 7, ..opts }).unwrap();
    let (a, b) = (tree(&tmp.path().join("a")), tree(&tmp.path().join("b")));
    assert_eq!(a, b);
    assert_ne!(a, tree(&tmp.path().join("c")));
}

#[test]
fn synth_tar_extracts_and_discovers_the_same_cases() {
    let tmp = tempfile::tempdir().unwrap();
    let opts = SynthOptions {
        tar: true,
        duration_ms: 1_000,
        ..Default::default()
    };
    let report = synth(tmp.path(), &opts).unwrap();
    let archive = report.archive.unwrap();
    let extracted = resolve_data_root(&archive).unwrap();
    assert!(
        extracted.starts_with(
            tmp.path()
                .canonicalize()
                .unwrap()
                .join(".data.tar.vllm_omni_extracted")
        )
    );
    assert!(extracted.join("1q1a/video_json_map.json").is_file());
    let direct = discover(&report.data_dir, &Subset::ALL, 0, 3, false).unwrap();
    let from_tar = discover(&extracted, &Subset::ALL, 0, 3, false).unwrap();
    let rels = |s: &crate::workload::omni::dataset::select::Selection| -> Vec<String> {
        s.cases.iter().map(|c| c.video_rel.clone()).collect()
    };
    assert_eq!(rels(&direct), rels(&from_tar));
    for (d, t) in direct.cases.iter().zip(&from_tar.cases) {
        assert_eq!(tree(&d.video_path), tree(&t.video_path));
    }
}

#[test]
fn mp4_cases_are_real_videos_other_tools_can_read() {
    let tmp = tempfile::tempdir().unwrap();
    let opts = SynthOptions {
        duration_ms: 2_000,
        mp4: true,
        ..SynthOptions::default()
    };
    let report = synth(tmp.path(), &opts).unwrap();
    let sel = crate::workload::omni::dataset::discover(&report.data_dir, &Subset::ALL, 3, 0, true)
        .unwrap();
    assert_eq!(sel.cases.len(), 3);
    for case in &sel.cases {
        assert!(
            case.video_rel.ends_with("case_000.mp4"),
            "{}",
            case.video_rel
        );
        assert!(case.video_path.is_file(), "{}", case.video_path.display());
        let bytes = fs::read(&case.video_path).unwrap();
        assert_eq!(&bytes[4..8], b"ftyp");
        // Prepared as the reference prepares a container: audio and mid-second frames.
        let m = crate::workload::omni::media::prepare(
            &case.video_path,
            &crate::workload::omni::media::MediaOptions::default(),
        )
        .unwrap();
        assert_eq!(m.frames.len(), 2);
        assert!(m.frames.iter().all(Option::is_some));
        assert_eq!(m.pcm.len(), 64_000);
    }
    // No frames-case staging is left behind.
    let videos = report.data_dir.join("1q1a/videos");
    let names: Vec<_> = fs::read_dir(&videos)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["case_000.mp4"]);
}
