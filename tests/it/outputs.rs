//! What a run leaves behind, as a user sees it: saved media, the vllm-style saved result
//! and its file name, the pacing mode, live progress on stderr, the HdrHistogram log.

use crate::duplex_support::{Opts, duplex};
use crate::support::rtload;
use crate::support::video;

#[test]
fn save_video_writes_each_measured_sessions_media() {
    // Chunks of 700 kB: each file (2.1 MB) is spooled in many batches and copied out in
    // several pieces.
    let fx = video(3, 3, "chunk_bytes = 700000");
    let dir = fx.dir.path().join("media");
    let out = rtload()
        .arg("run")
        .arg(&fx.path)
        .arg("--save-video")
        .arg(&dir)
        .args(["--num-warmups", "1", "-q"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    // Warm-up sample 0 saves nothing; measured samples 1, 2 and 3 do.
    assert_eq!(
        names,
        ["session-001.mp4", "session-002.mp4", "session-003.mp4"]
    );
    // What the embedded server sent, in order: the first chunk (opening with an `ftyp`
    // box), two more, and the 24-byte `mfra` trailer.
    let chunk: Vec<u8> = (0..700_000).map(|i| (i % 251) as u8).collect();
    let mut first = chunk.clone();
    first[..24].copy_from_slice(&[
        0, 0, 0, 24, b'f', b't', b'y', b'p', b'i', b's', b'o', b'5', 0, 0, 2, 0, b'i', b's', b'o',
        b'6', b'm', b'p', b'4', b'1',
    ]);
    let mut want = [first, chunk.clone(), chunk].concat();
    want.extend_from_slice(&[
        0, 0, 0, 24, b'm', b'f', b'r', b'a', 0, 0, 0, 16, b'm', b'f', b'r', b'o', 0, 0, 0, 0, 0, 0,
        0, 24,
    ]);
    for n in &names {
        let bytes = std::fs::read(dir.join(n)).unwrap();
        assert_eq!(bytes.len(), want.len(), "{n}");
        assert!(
            bytes == want,
            "{n} holds exactly the media received, in order"
        );
    }
}

#[test]
fn saved_result_has_vllm_keys_name_label_metadata_goodput_and_the_pacing_mode() {
    let fx = duplex(&Opts {
        samples: 2,
        max_concurrency: 2,
        ..Opts::default()
    });
    let results = fx.dir.path().join("results");
    let out = rtload()
        .arg("run")
        .arg(&fx.path)
        .arg("--save-result")
        .arg("--result-dir")
        .arg(&results)
        .args([
            "--label",
            "nightly",
            "--metadata",
            "gpu=none",
            "--goodput",
            "ttft:500",
            "--pacing",
            "2x",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("Pacing mode:                             2x"),
        "{stdout}"
    );
    let files: Vec<_> = std::fs::read_dir(&results)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1);
    let name = files[0].file_name().unwrap().to_string_lossy().into_owned();
    // <label>-<rate>qps-concurrency<N>-<model basename>-<YYYYmmdd-HHMMSS>.json
    let prefix = "nightly-infqps-concurrency2-MiniCPM-o-4_5-";
    assert!(
        name.starts_with(prefix) && name.ends_with(".json"),
        "{name}"
    );
    let stamp = &name[prefix.len()..name.len() - 5];
    assert!(stamp.len() == 15 && stamp.as_bytes()[8] == b'-', "{stamp}");
    let doc = rtload::report::read_result(&files[0]).unwrap();
    for k in [
        "date",
        "backend",
        "label",
        "model_id",
        "num_prompts",
        "request_rate",
        "max_concurrency",
        "duration",
        "completed",
        "failed",
        "request_throughput",
        "request_goodput",
        "mean_ttft_ms",
        "p99_ttft_ms",
        "num_ttft_samples",
        "duplex_request_metrics",
        "duplex_session_metrics",
        "omniinteract",
    ] {
        assert!(doc.get(k).is_some(), "saved result lacks {k}");
    }
    assert_eq!(doc["label"], "nightly");
    assert_eq!(doc["gpu"], "none");
    assert_eq!(doc["backend"], "openai-realtime-duplex");
    assert_eq!(doc["request_rate"], "inf");
    assert_eq!(doc["rtload"]["pacing_mode"], "2x");
    assert!(doc["request_goodput"].as_f64().is_some());
}

#[test]
fn progress_goes_to_stderr_and_quiet_silences_it() {
    let fx = video(2, 2, "");
    let out = rtload().arg("run").arg(&fx.path).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    // Not a terminal: plain lines, at least the final one.
    assert!(
        stderr.contains("done 2/2") && stderr.contains("ttfc p50"),
        "{stderr}"
    );
    assert!(
        !stdout.contains("done 2/2"),
        "stdout carries the report only"
    );
    let out = rtload()
        .arg("run")
        .arg(&fx.path)
        .arg("--quiet")
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&out.stderr).contains("done 2/2"));
}

#[test]
fn every_json_result_comes_with_an_hdrhistogram_interval_log() {
    let fx = video(4, 2, "");
    let json = fx.dir.path().join("r.json");
    let out = rtload()
        .arg("run")
        .arg(&fx.path)
        .arg("--output-json")
        .arg(&json)
        .arg("-q")
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let log = std::fs::read_to_string(fx.dir.path().join("r.hlog")).unwrap();
    assert!(log.contains("#[Histogram log format version 1.3]"), "{log}");
    for tag in [
        "ttfc_ms",
        "chunk_interval_ms",
        "queue_wait_ms",
        "send_lateness_ms",
        "session_ms",
    ] {
        assert!(
            log.lines().any(|l| l.starts_with(&format!("Tag={tag},"))),
            "{tag} missing:\n{log}"
        );
    }
    // Readable by the HdrHistogram crate's own interval-log parser.
    let n = hdrhistogram::serialization::interval_log::IntervalLogIterator::new(log.as_bytes())
        .filter(|e| {
            matches!(
                e,
                Ok(hdrhistogram::serialization::interval_log::LogEntry::Interval(_))
            )
        })
        .count();
    assert!(n >= 4, "{n} interval histograms");
}
