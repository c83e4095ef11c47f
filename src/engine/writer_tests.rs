use std::fs;

use super::*;

#[test]
fn writes_atomically_and_drains() {
    let dir = tempfile::tempdir().unwrap();
    let w = Writer::start(dir.path().to_path_buf(), 2);
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    rt.block_on(async {
        for i in 0..10 {
            w.handle()
                .submit(Artifact {
                    rel_path: format!("s/{i}.bin").into(),
                    body: ArtifactBody::Bytes(bytes::Bytes::from(vec![i as u8; 3])),
                })
                .await;
        }
    });
    assert!(w.finish().is_empty());
    for i in 0..10 {
        assert_eq!(
            fs::read(dir.path().join(format!("s/{i}.bin"))).unwrap(),
            vec![i as u8; 3]
        );
    }
    let leftovers: Vec<_> = fs::read_dir(dir.path().join("s"))
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty());
}

/// Many more artifacts than the queue holds: every one is written by the fixed pool,
/// and `submit` waits instead of spawning a thread per artifact (the process never
/// has more threads than before plus the pool).
#[test]
fn full_queue_applies_backpressure_without_extra_threads() {
    let dir = tempfile::tempdir().unwrap();
    let threads_before = thread_count();
    let w = Writer::start(dir.path().to_path_buf(), 2);
    let h = w.handle();
    let n = QUEUE * 4;
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let mut peak = 0usize;
    rt.block_on(async {
        for i in 0..n {
            h.submit(Artifact {
                rel_path: format!("q/{i}.bin").into(),
                body: ArtifactBody::Bytes(bytes::Bytes::from(vec![1u8; 64])),
            })
            .await;
            peak = peak.max(thread_count().unwrap_or(0));
        }
    });
    drop(h);
    assert!(w.finish().is_empty());
    assert_eq!(fs::read_dir(dir.path().join("q")).unwrap().count(), n);
    if let Some(before) = threads_before {
        // Other tests run in parallel threads; allow them generous slack, but a thread
        // per artifact (hundreds) is far beyond it.
        assert!(peak < before + 2 + 64, "threads: {before} -> peak {peak}");
    }
}

/// A spooled body is copied out of the spool (its last batch still gathering when it
/// is submitted) and published atomically like in-memory bytes.
#[test]
fn a_spooled_artifact_is_copied_out_of_the_spool() {
    let dir = tempfile::tempdir().unwrap();
    let spool = Arc::new(crate::workload::spool::Spool::create(dir.path()).unwrap());
    let mut file = spool.session();
    let media: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
    for piece in media.chunks(9_000) {
        file.append(piece);
    }
    let out = dir.path().join("out");
    let w = Writer::start(out.clone(), 2);
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    rt.block_on(w.handle().submit(Artifact {
        rel_path: "v/session-000.mp4".into(),
        body: ArtifactBody::Spooled(Arc::clone(&spool), file.whole()),
    }));
    assert!(w.finish().is_empty());
    assert!(fs::read(out.join("v/session-000.mp4")).unwrap() == media);
    let names: Vec<_> = fs::read_dir(out.join("v")).unwrap().flatten().collect();
    assert_eq!(names.len(), 1, "no temp file left");
}

/// Threads of this process (Linux `/proc`); `None` elsewhere.
fn thread_count() -> Option<usize> {
    fs::read_dir("/proc/self/task").ok().map(|d| d.count())
}
