//! Tests of archive integrity and extraction bounds (issue 11 item 5).

use super::*;
use std::io::Write;

const MAP: &str = r#"{"entries":[]}"#;

fn tar_of(members: &[(&str, &[u8])]) -> Vec<u8> {
    let mut builder = tar::Builder::new(Vec::new());
    for (name, body) in members {
        let mut h = tar::Header::new_gnu();
        h.set_path(name).unwrap();
        h.set_entry_type(EntryType::Regular);
        h.set_mode(0o644);
        h.set_size(body.len() as u64);
        h.set_cksum();
        builder.append(&h, *body).unwrap();
    }
    builder.into_inner().unwrap()
}

/// Gzip at zlib's default level: flate2's zlib-rs backend at level 1 (its quick strategy)
/// packs zeros only ~100:1, under the 200:1 a bomb must exceed here.
fn gz(bytes: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(bytes).unwrap();
    enc.finish().unwrap()
}

fn good_members() -> Vec<(&'static str, &'static [u8])> {
    vec![
        ("data/1q1a/video_json_map.json", MAP.as_bytes()),
        ("data/1q1a/videos/a.mp4", b"video"),
    ]
}

fn limits() -> ArchiveLimits {
    ArchiveLimits::default()
}

#[test]
fn a_good_archive_validates_plain_and_gzip() {
    let tar = tar_of(&good_members());
    let stats = validate_bytes(&tar, limits()).unwrap();
    assert_eq!(stats.members, 2);
    assert_eq!(stats.file_bytes, MAP.len() as u64 + 5);
    assert_eq!(validate_bytes(&gz(&tar), limits()).unwrap(), stats);
}

#[test]
fn a_corrupted_gzip_fails_its_checksum() {
    let mut bytes = gz(&tar_of(&good_members()));
    let n = bytes.len();
    bytes[n - 8] ^= 0xff; // the CRC-32 in the gzip trailer
    let err = validate_bytes(&bytes, limits()).unwrap_err().to_string();
    assert!(err.contains("Could not read OmniInteract archive"), "{err}");
    assert!(
        err.to_lowercase().contains("crc") || err.contains("checksum"),
        "{err}"
    );
}

#[test]
fn a_tar_cut_at_a_header_boundary_is_truncated() {
    let tar = tar_of(&good_members());
    // Drop the end-of-archive blocks and the second member: the stream ends exactly
    // where the second header would start.
    let cut = 512 + MAP.len().div_ceil(512) * 512;
    for bytes in [
        tar[..cut].to_vec(),
        gz(&tar[..cut]),
        tar[..tar.len() - 1024 + 512].to_vec(),
    ] {
        let err = validate_bytes(&bytes, limits()).unwrap_err();
        assert!(matches!(err, DatasetError::TruncatedArchive(_)), "{err}");
        assert!(err.to_string().contains("is truncated"), "{err}");
    }
}

#[test]
fn duplicate_member_names_are_rejected() {
    let mut members = good_members();
    members.push(("./data/1q1a/videos/a.mp4", b"other"));
    let err = validate_bytes(&tar_of(&members), limits())
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        "Duplicate member in OmniInteract archive: 'data/1q1a/videos/a.mp4' (the archive \
         is damaged or was tampered with; re-create it)"
    );
}

#[test]
fn extraction_is_bounded_in_bytes_members_and_ratio() {
    let zeros = vec![0u8; 4 << 20];
    let bomb = gz(&tar_of(&[("data/1q1a/big.bin", &zeros)]));
    let small = ArchiveLimits {
        ratio_floor_bytes: 1 << 20,
        ..limits()
    };
    let err = validate_bytes(&bomb, small).unwrap_err().to_string();
    assert!(
        err.contains("compression ratio") && err.contains("RTLOAD_ARCHIVE_MAX_RATIO=N"),
        "{err}"
    );
    let bytes = ArchiveLimits {
        max_total_bytes: 1 << 20,
        ..limits()
    };
    let err = validate_bytes(&bomb, bytes).unwrap_err().to_string();
    assert!(err.contains("decompressed bytes (limit 1048576)"), "{err}");
    assert!(err.contains("RTLOAD_ARCHIVE_MAX_BYTES=N"), "{err}");
    let members = ArchiveLimits {
        max_members: 1,
        ..limits()
    };
    let err = validate_bytes(&tar_of(&good_members()), members)
        .unwrap_err()
        .to_string();
    assert!(err.contains("more than 1 members (limit 1)"), "{err}");
    // The defaults let it through: below the ratio floor, far below the byte limit.
    validate_bytes(&bomb, limits()).unwrap();
}

#[test]
fn extract_writes_nothing_for_a_bad_archive() {
    let tmp = tempfile::tempdir().unwrap();
    let arc = tmp.path().join("data.tar");
    let tar = tar_of(&good_members());
    fs::write(&arc, &tar[..tar.len() - 1024]).unwrap();
    let target = tmp.path().join("out");
    let err = extract_archive(&arc, &target).unwrap_err();
    assert!(matches!(err, DatasetError::TruncatedArchive(_)), "{err}");
    assert!(!target.exists());
}
