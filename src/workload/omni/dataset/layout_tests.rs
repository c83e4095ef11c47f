use super::*;
use std::fs;

fn write(path: &Path, text: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

/// One case per subset, the §3.4 test-vector dataset, rooted at `root/data`.
pub(crate) fn minimal_dataset(root: &Path) -> PathBuf {
    let data = root.join("data");
    for (subset, stem) in [("1q1a", "talk"), ("1q1a_math", "sum")] {
        let dir = data.join(subset);
        write(&dir.join(format!("videos/{stem}.mp4")), "v");
        write(&dir.join(format!("annotations/{stem}.json")), "{}");
        let map = format!(
            r#"{{"entries":[{{"video":"videos/{stem}.mp4","annotation":"annotations/{stem}.json"}}]}}"#
        );
        write(&dir.join(MAPPING_FILE), &map);
    }
    write(&data.join("1qna/videos_bench/nested/guide.mp4"), "v");
    write(&data.join("1qna/annotations/nested/guide.json"), "{}");
    data
}

fn err(root: &Path, subset: Subset) -> String {
    subset_cases(root, subset).unwrap_err().to_string()
}

#[test]
fn data_dir_prefers_root_then_data() {
    let tmp = tempfile::tempdir().unwrap();
    let data = minimal_dataset(tmp.path());
    assert_eq!(data_dir(tmp.path()).unwrap(), data);
    assert_eq!(data_dir(&data).unwrap(), data);
    let empty = tmp.path().join("data/1qna/annotations");
    let msg = data_dir(&empty).unwrap_err().to_string();
    assert_eq!(
        msg,
        format!("OmniInteract data not found under {}", empty.display())
    );
}

#[test]
fn mapping_layout_reads_rows() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("1q1a");
    write(&dir.join("videos/a.mp4"), "v");
    write(&dir.join("annotations/a.json"), "{}");
    write(&dir.join("videos/b.frames/audio.wav"), "w");
    write(&dir.join("annotations/b.json"), "{}");
    let map = r#"{"entries":[
        {"video":"videos/b.frames","annotation":"annotations/b.json","scene_type":"Math"},
        {"video":"./videos/a.mp4","annotation":"annotations/a.json","scene_type":null}]}"#;
    write(&dir.join(MAPPING_FILE), map);
    let cases = subset_cases(&dir, Subset::Q1a).unwrap();
    assert_eq!(cases.len(), 2);
    assert_eq!(cases[0].video_rel, "videos/b.frames");
    assert_eq!(cases[0].scene_type, "math");
    assert_eq!(cases[1].scene_type, "multi_turn");
    assert!(cases[1].video_path.is_absolute() && cases[1].video_path.ends_with("a.mp4"));
}

#[test]
fn mapping_layout_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("1q1a_math");
    fs::create_dir_all(&dir).unwrap();
    let map = dir.join(MAPPING_FILE);
    assert_eq!(
        err(&dir, Subset::Q1aMath),
        format!("Missing OmniInteract mapping: {}", map.display())
    );
    for bad in ["not json", "[1]", r#"{"entries":{}}"#] {
        write(&map, bad);
        assert_eq!(
            err(&dir, Subset::Q1aMath),
            format!("Invalid OmniInteract mapping: {}", map.display())
        );
    }
    write(&map, r#"{"entries":[3]}"#);
    assert_eq!(
        err(&dir, Subset::Q1aMath),
        format!("Invalid OmniInteract mapping row in {}", map.display())
    );
    write(&tmp.path().join("outside.mp4"), "v");
    std::os::unix::fs::symlink(tmp.path(), dir.join("up")).unwrap();
    for video in ["", "/etc/passwd", "videos/../x.mp4", "up/outside.mp4"] {
        let row = format!(r#"{{"entries":[{{"video":"{video}","annotation":"a.json"}}]}}"#);
        write(&map, &row);
        let want = format!("Unsafe OmniInteract video path: '{video}'");
        assert_eq!(err(&dir, Subset::Q1aMath), want);
    }
    write(
        &map,
        r#"{"entries":[{"video":"v.mp4","annotation":"../a.json"}]}"#,
    );
    let want = "Unsafe OmniInteract annotation path: '../a.json'";
    assert_eq!(err(&dir, Subset::Q1aMath), want);
    write(
        &map,
        r#"{"entries":[{"video":"v.mp4","annotation":"a.json"}]}"#,
    );
    let want = "OmniInteract mapping references missing files: 'v.mp4', 'a.json'";
    assert_eq!(err(&dir, Subset::Q1aMath), want);
    fs::create_dir_all(dir.join("v.mp4")).unwrap(); // a directory is not a video file
    write(&dir.join("a.json"), "{}");
    assert_eq!(err(&dir, Subset::Q1aMath), want);
}

#[test]
fn qna_layout_sorted_recursive_with_frames_cases() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("1qna");
    for rel in [
        "b/x.mp4",
        "a-c.mp4",
        "a/z.mp4",
        "a/y.frames/audio.wav",
        "a/notes.txt",
    ] {
        write(&dir.join("videos_bench").join(rel), "v");
    }
    for rel in ["b/x.json", "a-c.json", "a/z.json", "a/y.json"] {
        write(&dir.join("annotations").join(rel), "{}");
    }
    let cases = subset_cases(&dir, Subset::Qna).unwrap();
    let rels: Vec<&str> = cases.iter().map(|c| c.video_rel.as_str()).collect();
    // Python sorts Path objects part by part: "a/..." before "a-c.mp4".
    let want = [
        "videos_bench/a/y.frames",
        "videos_bench/a/z.mp4",
        "videos_bench/a-c.mp4",
        "videos_bench/b/x.mp4",
    ];
    assert_eq!(rels, want);
    assert!(
        cases
            .iter()
            .all(|c| c.scene_type == "1qna" && c.subset == Subset::Qna)
    );
    assert!(cases[0].annotation_path.ends_with("annotations/a/y.json"));
}

#[test]
fn qna_layout_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("1qna");
    write(&dir.join("videos_bench/n/v.mp4"), "v");
    let want = format!("Invalid OmniInteract 1qna layout under {}", dir.display());
    assert_eq!(err(&dir, Subset::Qna), want);
    fs::create_dir_all(dir.join("annotations")).unwrap();
    let msg = err(&dir, Subset::Qna);
    assert!(
        msg.starts_with("Missing OmniInteract annotation: "),
        "{msg}"
    );
    assert!(msg.contains("annotations/n/v.json"), "{msg}");
    write(&dir.join("annotations/n/v.json"), "{}");
    write(&tmp.path().join("secret.mp4"), "v");
    let link = dir.join("videos_bench/n/w.mp4");
    std::os::unix::fs::symlink(tmp.path().join("secret.mp4"), link).unwrap();
    let want = "Unsafe OmniInteract video path: 'videos_bench/n/w.mp4'";
    assert_eq!(err(&dir, Subset::Qna), want);
}
