//! Unit tests of the pure video-session core (spec §2.2 vectors, validation, schedule, faults).

use super::*;
use serde_json::json;

fn start(width: u64, height: u64, frames: Value) -> Value {
    json!({"type": "session.start", "width": width, "height": height, "num_frames": frames})
}

fn fast() -> VideoServerConfig {
    VideoServerConfig {
        first_chunk_ms: 100.0,
        chunk_interval_ms: 10.0,
        ramp_chunks: 3,
        ramp_factor: 2.0,
        ..VideoServerConfig::default()
    }
}

fn indices(steps: &[Step]) -> Vec<u32> {
    steps
        .iter()
        .filter_map(|s| match s {
            Step::Media { index, .. } => Some(*index),
            _ => None,
        })
        .collect()
}

#[test]
fn frame_chunk_vectors_of_spec_2_2() {
    for (n, f) in [(1u64, 9u64), (3, 33), (7, 81), (16, 189), (40, 477)] {
        assert_eq!(12 * n - 3, f);
        assert_eq!(chunks_for_frames(f), n);
    }
    for n in 1..=32u64 {
        assert_eq!(chunks_for_frames(12 * n - 3), n);
    }
    let five: u32 = (0..5).map(frames_in_chunk).sum();
    assert_eq!(five, 57);
}

#[test]
fn valid_start_gives_chunk_count() {
    assert_eq!(validate_start(&start(832, 480, json!(33)), 765), Ok(3));
    assert_eq!(validate_start(&start(16, 16, json!(9)), 765), Ok(1));
    assert_eq!(validate_start(&start(16, 16, json!(765)), 765), Ok(64));
}

#[test]
fn bad_geometry_uses_exact_message() {
    for (w, h) in [(0, 480), (830, 480), (832, 0), (832, 481)] {
        let err = validate_start(&start(w, h, json!(33)), 765).unwrap_err();
        assert_eq!(err, GEOMETRY_ERROR);
    }
    let missing = json!({"type": "session.start", "num_frames": 33});
    assert_eq!(validate_start(&missing, 765).unwrap_err(), GEOMETRY_ERROR);
    let negative = json!({"type": "session.start", "width": -16, "height": 16, "num_frames": 9});
    assert_eq!(validate_start(&negative, 765).unwrap_err(), GEOMETRY_ERROR);
}

#[test]
fn bad_frame_counts_name_the_value() {
    for f in [0u64, 1, 5, 8] {
        let err = validate_start(&start(16, 16, json!(f)), 765).unwrap_err();
        assert!(err.ends_with(&format!("got {f}")), "{err}");
    }
    // As the reference server's formula: counts other than 12n - 3 round down.
    for (f, chunks) in [
        (9u64, 1),
        (10, 1),
        (20, 1),
        (21, 2),
        (32, 2),
        (34, 3),
        (765, 64),
    ] {
        assert_eq!(
            validate_start(&start(16, 16, json!(f)), 765),
            Ok(chunks),
            "{f}"
        );
    }
    for f in [u64::MAX, u64::MAX - 2] {
        let err = validate_start(&start(16, 16, json!(f)), u64::MAX).unwrap_err();
        assert!(err.contains(&f.to_string()), "{err}");
    }
    let err = validate_start(&start(16, 16, json!("33")), 765).unwrap_err();
    assert!(err.contains("\"33\""), "{err}");
    let err = validate_start(&start(16, 16, json!(777)), 765).unwrap_err();
    assert!(err.contains("777") && err.contains("765"), "{err}");
}

#[test]
fn schedule_is_absolute_with_ramp() {
    let ms: Vec<f64> = chunk_schedule(&fast(), 5, 0)
        .iter()
        .map(|d| d.as_secs_f64() * 1000.0)
        .collect();
    let want = [100.0, 120.0, 140.0, 150.0, 160.0];
    for (got, want) in ms.iter().zip(want) {
        assert!((got - want).abs() < 1e-6, "{ms:?}");
    }
}

#[test]
fn jitter_is_seeded_bounded_and_monotonic() {
    let cfg = VideoServerConfig {
        jitter_ms: 8.0,
        ..fast()
    };
    let a = chunk_schedule(&cfg, 50, 7);
    assert_eq!(a, chunk_schedule(&cfg, 50, 7));
    assert_ne!(a, chunk_schedule(&cfg, 50, 8));
    assert!(a.windows(2).all(|w| w[0] <= w[1]));
    let plain = chunk_schedule(&fast(), 50, 7);
    for (j, p) in a.iter().zip(&plain) {
        let diff = j.as_secs_f64() - p.as_secs_f64();
        // Clamping to the previous chunk can only move a time later.
        assert!(diff >= -0.008 - 1e-9, "{diff}");
    }
}

#[test]
fn normal_plan_order() {
    let steps = plan_session(&fast(), 3, 0);
    assert_eq!(steps[0], Step::Start);
    assert_eq!(indices(&steps), vec![0, 1, 2]);
    assert!(matches!(
        steps[1],
        Step::Media {
            num_frames: 9,
            with_metadata: true,
            ..
        }
    ));
    assert!(matches!(steps[2], Step::Media { num_frames: 12, .. }));
    assert_eq!(
        steps[4..],
        [
            Step::Trailer { index: 3 },
            Step::Done {
                stopped: false,
                chunks: 3
            },
            Step::Close
        ]
    );
    let no_trailer = VideoServerConfig {
        trailer: false,
        ..fast()
    };
    assert!(!plan_session(&no_trailer, 3, 0).contains(&Step::Trailer { index: 3 }));
}

fn with_faults(f: impl FnOnce(&mut VideoServerConfig)) -> VideoServerConfig {
    let mut cfg = fast();
    f(&mut cfg);
    cfg
}

#[test]
fn index_faults() {
    let ooo = with_faults(|c| c.faults.out_of_order = true);
    assert_eq!(indices(&plan_session(&ooo, 4, 0)), vec![0, 2, 1, 3]);
    let dup = with_faults(|c| c.faults.duplicate_index = true);
    assert_eq!(indices(&plan_session(&dup, 4, 0)), vec![0, 1, 1, 3]);
    let no_meta = with_faults(|c| c.faults.binary_without_metadata = true);
    let steps = plan_session(&no_meta, 2, 0);
    assert!(matches!(
        steps[1],
        Step::Media {
            with_metadata: false,
            ..
        }
    ));
    assert!(matches!(
        steps[2],
        Step::Media {
            with_metadata: true,
            ..
        }
    ));
}

#[test]
fn termination_faults() {
    let err = with_faults(|c| c.faults.error_on_start = Some("busy".into()));
    assert_eq!(
        plan_session(&err, 3, 0),
        vec![Step::Error("busy".into()), Step::Close]
    );

    let stall = with_faults(|c| c.faults.stall_after_chunks = Some(2));
    let steps = plan_session(&stall, 3, 0);
    assert_eq!(indices(&steps), vec![0, 1]);
    assert_eq!(steps.last(), Some(&Step::Stall));

    let close = with_faults(|c| c.faults.close_after_chunks = Some(3));
    let steps = plan_session(&close, 3, 0);
    assert_eq!(indices(&steps), vec![0, 1, 2]);
    assert_eq!(steps.last(), Some(&Step::Close));
    assert!(
        !steps
            .iter()
            .any(|s| matches!(s, Step::Done { .. } | Step::Trailer { .. }))
    );

    let error = with_faults(|c| c.faults.error_after_chunks = Some(1));
    let steps = plan_session(&error, 3, 0);
    assert_eq!(indices(&steps), vec![0]);
    assert_eq!(
        steps[2..],
        [
            Step::Error("injected fault: error after 1 chunk(s)".into()),
            Step::Close
        ]
    );

    let never = with_faults(|c| c.faults.stall_after_chunks = Some(9));
    assert_eq!(plan_session(&never, 3, 0), plan_session(&fast(), 3, 0));
}

#[test]
fn count_faults() {
    let fewer = with_faults(|c| c.faults.fewer_chunks = Some(1));
    let steps = plan_session(&fewer, 3, 0);
    assert_eq!(indices(&steps), vec![0, 1]);
    assert!(steps.contains(&Step::Done {
        stopped: false,
        chunks: 2
    }));
    let none = with_faults(|c| c.faults.fewer_chunks = Some(5));
    assert!(plan_session(&none, 3, 0).contains(&Step::Done {
        stopped: false,
        chunks: 0
    }));
    let stopped = with_faults(|c| c.faults.stopped = true);
    assert!(plan_session(&stopped, 3, 0).contains(&Step::Done {
        stopped: true,
        chunks: 3
    }));
}

#[test]
fn payloads() {
    let first = media_payload(true, 100);
    assert_eq!(first.len(), 100);
    assert_eq!(&first[4..8], b"ftyp");
    assert_eq!(
        u32::from_be_bytes([first[0], first[1], first[2], first[3]]),
        24
    );
    let later = media_payload(false, 100);
    assert_ne!(&later[4..8], b"ftyp");
    assert_eq!(media_payload(true, 3).len(), 3);
    assert_eq!(media_payload(false, 0).len(), 0);
    assert_eq!(trailer_payload().len(), 24);
}

#[test]
fn uuid_shape() {
    let id = uuid_v4(u128::MAX);
    assert_eq!(id.len(), 36);
    assert_eq!(id.as_bytes()[14], b'4');
    assert!(
        matches!(id.as_bytes()[19], b'8' | b'9' | b'a' | b'b'),
        "{id}"
    );
    assert_eq!(uuid_v4(0), "00000000-0000-4000-8000-000000000000");
}
