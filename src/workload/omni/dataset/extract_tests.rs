//! Tests of `extract`.

use super::*;
use crate::workload::omni::dataset::resolve_data_root;
use std::io::Write;
use std::sync::Barrier;

const MAP: &str = r#"{"entries":[]}"#;

/// Build a tar (gzip-compressed when `gz`) whose member names are written as raw
/// header bytes, so unsafe names the `tar` builder would refuse can be made.
fn archive(path: &Path, members: &[(&str, EntryType, &str)], gz: bool) {
    let mut builder = tar::Builder::new(Vec::new());
    for (name, kind, body) in members {
        let mut h = tar::Header::new_gnu();
        h.as_old_mut().name[..name.len()].copy_from_slice(name.as_bytes());
        if *kind == EntryType::Symlink || *kind == EntryType::Link {
            h.as_old_mut().linkname[..11].copy_from_slice(b"/etc/passwd");
        }
        h.set_entry_type(*kind);
        h.set_mode(if *kind == EntryType::Directory {
            0o755
        } else {
            0o644
        });
        h.set_size(if *kind == EntryType::Regular {
            body.len() as u64
        } else {
            0
        });
        h.set_cksum();
        let body: &[u8] = if *kind == EntryType::Regular {
            body.as_bytes()
        } else {
            b""
        };
        builder.append(&h, body).unwrap();
    }
    let bytes = builder.into_inner().unwrap();
    let mut file = File::create(path).unwrap();
    if gz {
        let mut enc = flate2::write::GzEncoder::new(file, flate2::Compression::fast());
        enc.write_all(&bytes).unwrap();
        enc.finish().unwrap();
    } else {
        file.write_all(&bytes).unwrap();
    }
}

fn good(path: &Path, gz: bool) {
    let members = [
        ("data/", EntryType::Directory, ""),
        ("data/1q1a/video_json_map.json", EntryType::Regular, MAP),
        ("./data/1q1a/videos/a.mp4", EntryType::Regular, "video"),
    ];
    archive(path, &members, gz);
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .map(|rd| {
            rd.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

#[test]
fn extracts_plain_and_gzip_and_reuses_published_tree() {
    for gz in [false, true] {
        let tmp = tempfile::tempdir().unwrap();
        let arc = tmp.path().join("data.tar.gz");
        good(&arc, gz);
        let target = tmp.path().join("out");
        let data = extract_archive(&arc, &target).unwrap();
        let published = target.join(fingerprint(&arc).unwrap());
        assert_eq!(data, published.join("data"));
        assert_eq!(
            fs::read_to_string(data.join("1q1a/video_json_map.json")).unwrap(),
            MAP
        );
        assert_eq!(
            fs::read_to_string(data.join("1q1a/videos/a.mp4")).unwrap(),
            "video"
        );
        let fp = fingerprint(&arc).unwrap();
        let (size, ns) = fp.split_once('-').unwrap();
        assert_eq!(
            size.parse::<u64>().unwrap(),
            fs::metadata(&arc).unwrap().len()
        );
        assert!(ns.parse::<i128>().unwrap() > 0);
        fs::write(data.join("marker"), "kept").unwrap();
        assert_eq!(extract_archive(&arc, &target).unwrap(), data);
        assert!(
            data.join("marker").exists(),
            "published tree must be reused"
        );
        assert_eq!(names(&target), [fp]);
    }
}

#[test]
fn unsafe_members_are_rejected_before_anything_is_written() {
    let cases = [
        (
            "/abs/data/1q1a/x.json",
            EntryType::Regular,
            "/abs/data/1q1a/x.json",
        ),
        (
            "data/../../evil.txt",
            EntryType::Regular,
            "data/../../evil.txt",
        ),
        (
            "data/1q1a/../../../x/",
            EntryType::Directory,
            "data/1q1a/../../../x",
        ),
        ("data/1q1a/link", EntryType::Symlink, "data/1q1a/link"),
        ("data/1q1a/hard", EntryType::Link, "data/1q1a/hard"),
        ("data/1q1a/dev", EntryType::Char, "data/1q1a/dev"),
        ("data/1q1a/fifo", EntryType::Fifo, "data/1q1a/fifo"),
    ];
    for (name, kind, shown) in cases {
        for gz in [false, true] {
            let tmp = tempfile::tempdir().unwrap();
            let arc = tmp.path().join("bad.tar");
            // Safe members first: validation must still precede any write.
            let members = [
                ("data/1q1a/video_json_map.json", EntryType::Regular, MAP),
                (name, kind, "x"),
            ];
            archive(&arc, &members, gz);
            let err = resolve_data_root(&arc).unwrap_err().to_string();
            assert_eq!(
                err,
                format!("Unsafe path in OmniInteract archive: '{shown}'")
            );
            assert_eq!(names(tmp.path()), ["bad.tar"], "nothing may be written");
        }
    }
}

/// A stop request in the middle of unpacking (here: after the staging directory holds
/// the first members) ends the extraction as interrupted and leaves nothing behind: no
/// staging directory, no published tree; so does one during the validation pass.
#[test]
fn a_stop_during_extraction_removes_the_staging_and_publishes_nothing() {
    use std::cell::Cell;
    let tmp = tempfile::tempdir().unwrap();
    let arc = tmp.path().join("x.tar");
    good(&arc, false);
    let target = tmp.path().join("out");
    // Three members: the validation pass asks 3 times, then the unpack pass; stop at
    // unpack's third member, with the first two already written into staging.
    for stop_at in [2usize, 3 + 2] {
        let asked = Cell::new(0usize);
        let stop = || {
            asked.set(asked.get() + 1);
            asked.get() > stop_at
        };
        let err = extract_archive_until(&arc, &target, &stop).unwrap_err();
        assert!(matches!(err, DatasetError::Interrupted), "{err}");
        assert!(
            err.to_string().contains("staging directory was removed"),
            "{err}"
        );
        assert!(
            names(&target).is_empty(),
            "left behind: {:?}",
            names(&target)
        );
    }
    // Without a stop request the same archive extracts.
    assert!(extract_archive_until(&arc, &target, &|| false).is_ok());
}

#[test]
fn archive_without_data_publishes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let arc = tmp.path().join("x.tar");
    archive(&arc, &[("readme.txt", EntryType::Regular, "hi")], false);
    let target = tmp.path().join("out");
    let err = extract_archive(&arc, &target).unwrap_err().to_string();
    assert_eq!(
        err,
        format!("OmniInteract data not found under {}", arc.display())
    );
    assert!(names(&target).is_empty(), "{:?}", names(&target));
    fs::write(&arc, b"definitely not a tar archive, just some bytes....").unwrap();
    let err = extract_archive(&arc, &target).unwrap_err().to_string();
    assert!(
        err.starts_with("Could not read OmniInteract archive"),
        "{err}"
    );
}

#[test]
fn symlinked_target_and_published_dirs_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let arc = tmp.path().join("a.tar");
    good(&arc, false);
    let real = tmp.path().join("real");
    fs::create_dir(&real).unwrap();
    let link = tmp.path().join("link");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let err = extract_archive(&arc, &link).unwrap_err().to_string();
    assert_eq!(
        err,
        format!("Refusing to extract through symlink: {}", link.display())
    );
    let target = tmp.path().join("out");
    fs::create_dir(&target).unwrap();
    let published = target.join(fingerprint(&arc).unwrap());
    std::os::unix::fs::symlink(&real, &published).unwrap();
    let err = extract_archive(&arc, &target).unwrap_err().to_string();
    assert_eq!(
        err,
        format!(
            "Refusing to use symlinked extraction: {}",
            published.display()
        )
    );
}

#[test]
fn concurrent_extractors_converge() {
    for _ in 0..4 {
        let tmp = tempfile::tempdir().unwrap();
        let arc = tmp.path().join("data.tar.gz");
        good(&arc, true);
        let target = tmp.path().join(".data.tar.vllm_omni_extracted");
        let barrier = Barrier::new(2);
        let roots: Vec<PathBuf> = std::thread::scope(|s| {
            let run = || {
                barrier.wait();
                resolve_data_root(&arc).unwrap()
            };
            let handles = [s.spawn(run), s.spawn(run)];
            handles.map(|h| h.join().unwrap()).into()
        });
        assert_eq!(roots[0], roots[1]);
        assert!(roots[0].join("1q1a/video_json_map.json").is_file());
        let left: Vec<String> = names(&target);
        assert!(left.iter().all(|n| !n.starts_with(".tmp-")), "{left:?}");
        assert_eq!(left.len(), 1);
    }
}

#[test]
fn resolve_local_sources() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("nope");
    let err = resolve_data_root(&missing).unwrap_err().to_string();
    assert!(err.starts_with(&format!(
        "OmniInteract dataset path does not exist: {}; rtload does not download datasets",
        missing.display()
    )));
    assert!(err.contains("`rtload dataset synth DIR`"), "{err}");
    let dir = tmp.path().join("ds");
    fs::create_dir(&dir).unwrap();
    let err = resolve_data_root(&dir).unwrap_err().to_string();
    assert_eq!(
        err,
        format!("OmniInteract data not found under {}", dir.display())
    );
    good(&dir.join("data.tar"), false);
    let data = resolve_data_root(&dir).unwrap();
    assert!(
        data.starts_with(dir.join(".vllm_omni_extracted")),
        "{}",
        data.display()
    );
    good(&dir.join("data.tar.gz"), true); // data.tar.gz wins over data.tar
    let data = resolve_data_root(&dir).unwrap();
    let fp = fingerprint(&dir.join("data.tar.gz")).unwrap();
    assert_eq!(data, dir.join(".vllm_omni_extracted").join(fp).join("data"));
    let file_data = resolve_data_root(&dir.join("data.tar.gz")).unwrap();
    assert!(file_data.starts_with(dir.join(".data.tar.vllm_omni_extracted")));
    fs::create_dir_all(dir.join("1qna")).unwrap(); // an extracted tree wins over archives
    assert_eq!(resolve_data_root(&dir).unwrap(), dir);
}
