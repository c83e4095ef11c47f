//! Tests of duplex media preparation: frames cases (from `dataset::synth`), containers
//! through the real ffmpeg (required: the tests fail when it is missing), and the command
//! edge (timeouts, missing programs, failures, output bounds) through fake scripts.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::*;
use crate::util::command::{STDERR_TAIL_BYTES, shell_join};
use crate::workload::omni::dataset::{SynthOptions, synth};

fn b64(s: &str) -> Vec<u8> {
    base64::engine::general_purpose::STANDARD.decode(s).unwrap()
}

/// A synthetic frames case of `duration_ms` under `dir`; returns its directory.
fn frames_case(dir: &Path, duration_ms: u32) -> PathBuf {
    let opts = SynthOptions {
        duration_ms,
        ..SynthOptions::default()
    };
    let report = synth(dir, &opts).unwrap();
    report.data_dir.join("1q1a/videos/case_000.frames")
}

/// Write an executable `/bin/sh` script.
fn script(dir: &Path, name: &str, body: &str) -> String {
    let path = dir.join(name);
    fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
    path.to_string_lossy().into_owned()
}

/// Fail (never skip) when ffmpeg is missing: CI installs it.
fn require_ffmpeg() {
    let ok = Command::new("ffmpeg")
        .arg("-version")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        ok,
        "ffmpeg is required for the container media tests: install ffmpeg \
         (e.g. `apt-get install -y ffmpeg`); CI installs it"
    );
}

/// Make a test MP4 with ffmpeg's lavfi sources.
fn make_mp4(dir: &Path, name: &str, size: &str, duration: f64, audio: bool) -> PathBuf {
    require_ffmpeg();
    let out = dir.join(name);
    let mut cmd = Command::new("ffmpeg");
    cmd.args(["-nostdin", "-v", "error", "-f", "lavfi", "-i"])
        .arg(format!("testsrc=size={size}:rate=10:duration={duration}"));
    if audio {
        cmd.args(["-f", "lavfi", "-i"])
            .arg(format!(
                "sine=frequency=440:sample_rate=16000:duration={duration}"
            ))
            .arg("-shortest");
    }
    let status = cmd
        .args(["-pix_fmt", "yuv420p"])
        .arg(&out)
        .status()
        .unwrap();
    assert!(status.success());
    out
}

/// Width and height from a JPEG's SOF marker, after checking SOI/EOI.
fn jpeg_size(jpeg: &[u8]) -> (u16, u16) {
    assert_eq!(jpeg[..2], [0xFF, 0xD8], "SOI");
    assert_eq!(jpeg[jpeg.len() - 2..], [0xFF, 0xD9], "EOI");
    let mut i = 2;
    loop {
        assert_eq!(jpeg[i], 0xFF);
        let marker = jpeg[i + 1];
        let len = usize::from(u16::from_be_bytes([jpeg[i + 2], jpeg[i + 3]]));
        if (0xC0..=0xC2).contains(&marker) {
            let h = u16::from_be_bytes([jpeg[i + 5], jpeg[i + 6]]);
            let w = u16::from_be_bytes([jpeg[i + 7], jpeg[i + 8]]);
            return (w, h);
        }
        i += 2 + len;
    }
}

#[test]
fn frames_case_ten_seconds() {
    let tmp = tempfile::tempdir().unwrap();
    let case = frames_case(tmp.path(), 10_000);
    let m = prepare(&case, &MediaOptions::default()).unwrap();
    assert_eq!(m.duration_s, 10.0);
    assert_eq!(m.pcm.len(), 320_000);
    assert_eq!(m.frames.len(), 10);
    for (k, f) in m.frames.iter().enumerate() {
        let want = fs::read(case.join(frame_file_name(k))).unwrap();
        assert_eq!(b64(f.as_deref().unwrap()), want, "frame {k}");
    }
    let strings: usize = m.frames.iter().flatten().map(|f| f.len() + 16).sum();
    assert_eq!(m.memory_bytes(), 320_000 + 10 * 16 + strings);
    eprintln!("10 s synth case: memory_bytes = {}", m.memory_bytes());
}

#[test]
fn frames_case_pads_pcm_to_whole_seconds() {
    let tmp = tempfile::tempdir().unwrap();
    let case = frames_case(tmp.path(), 2_300);
    let m = prepare(&case, &MediaOptions::default()).unwrap();
    assert!((m.duration_s - 2.3).abs() < 1e-9);
    assert_eq!(m.pcm.len(), 96_000);
    assert_eq!(m.frames.len(), 3);
    let mut wav = hound::WavReader::open(case.join(FRAMES_AUDIO)).unwrap();
    let head: Vec<u8> = wav
        .samples::<i16>()
        .flat_map(|s| s.unwrap().to_le_bytes())
        .collect();
    assert_eq!(head.len(), 73_600);
    assert_eq!(m.pcm[..73_600], head[..]);
    assert!(m.pcm[73_600..].iter().all(|&b| b == 0));
}

/// The data chunk is read whole: a chunk after it (a `LIST` an editor appends) is not
/// audio, and a file cut short of its data chunk's length is an error naming it.
#[test]
fn frames_case_reads_only_the_data_chunk_and_refuses_a_short_one() {
    let tmp = tempfile::tempdir().unwrap();
    let case = frames_case(tmp.path(), 2_000);
    let wav = case.join(FRAMES_AUDIO);
    let whole = prepare(&case, &MediaOptions::default()).unwrap().pcm;
    let mut bytes = fs::read(&wav).unwrap();
    bytes.extend_from_slice(b"LIST\x04\0\0\0INFO");
    fs::write(&wav, &bytes).unwrap();
    assert_eq!(prepare(&case, &MediaOptions::default()).unwrap().pcm, whole);
    bytes.truncate(bytes.len() - 12 - 100);
    fs::write(&wav, &bytes).unwrap();
    let err = prepare(&case, &MediaOptions::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains(&*wav.display().to_string()), "{err}");
}

#[test]
fn frames_case_missing_frames() {
    let tmp = tempfile::tempdir().unwrap();
    let case = frames_case(tmp.path(), 3_000);
    fs::remove_file(case.join(frame_file_name(1))).unwrap();
    let m = prepare(&case, &MediaOptions::default()).unwrap();
    let present: Vec<bool> = m.frames.iter().map(Option::is_some).collect();
    assert_eq!(present, [true, false, true]);

    for k in [0, 2] {
        fs::remove_file(case.join(frame_file_name(k))).unwrap();
    }
    let err = prepare(&case, &MediaOptions::default()).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("No video frames were decoded from {}", case.display())
    );
}

fn write_wav(path: &Path, rate: u32, channels: u16, samples: usize) {
    let spec = hound::WavSpec {
        channels,
        sample_rate: rate,
        bits_per_sample: 16,
        sample_format: hound::SampleFormat::Int,
    };
    let mut w = hound::WavWriter::create(path, spec).unwrap();
    for _ in 0..samples * usize::from(channels) {
        w.write_sample(0i16).unwrap();
    }
    w.finalize().unwrap();
}

#[test]
fn frames_case_rejects_other_wav_formats() {
    let tmp = tempfile::tempdir().unwrap();
    let case = frames_case(tmp.path(), 1_000);
    let wav = case.join(FRAMES_AUDIO);
    write_wav(&wav, 44_100, 2, 100);
    let err = prepare(&case, &MediaOptions::default()).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "unsupported WAV format in {}: found 44100 Hz, 2 channel(s), 16-bit PCM; \
             need 16000 Hz mono 16-bit PCM",
            wav.display()
        )
    );
}

#[test]
fn frames_case_duration_rules() {
    let tmp = tempfile::tempdir().unwrap();
    let case = frames_case(tmp.path(), 3_000);
    let opts = MediaOptions {
        max_duration_s: 2.5,
        ..MediaOptions::default()
    };
    let err = prepare(&case, &opts).unwrap_err().to_string();
    assert_eq!(
        err,
        format!("Invalid video duration for {}: 3.0", case.display())
    );
    // Exactly the maximum is accepted.
    let opts = MediaOptions {
        max_duration_s: 3.0,
        ..MediaOptions::default()
    };
    assert_eq!(prepare(&case, &opts).unwrap().pcm.len(), 96_000);

    write_wav(&case.join(FRAMES_AUDIO), 16_000, 1, 0);
    let err = prepare(&case, &MediaOptions::default())
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        format!("Invalid video duration for {}: 0.0", case.display())
    );
}

#[test]
fn container_mid_second_frames_and_padded_audio() {
    let tmp = tempfile::tempdir().unwrap();
    let video = make_mp4(tmp.path(), "short.mp4", "320x240", 2.3, true);
    let m = prepare(&video, &MediaOptions::default()).unwrap();
    assert!((m.duration_s - 2.3).abs() < 0.05, "{}", m.duration_s);
    assert_eq!(m.pcm.len(), 96_000);
    assert_eq!(m.frames.len(), 3);
    // The sine fills ~2.3 s; the rest of the third second is silence.
    assert!(m.pcm[..64_000].iter().any(|&b| b != 0));
    assert!(m.pcm[75_000..].iter().all(|&b| b == 0));
    // Frames exist at 0.0 … 2.2 s: seconds 0 and 1 have one, nothing is at or after 2.5 s.
    for f in &m.frames[..2] {
        let (w, h) = jpeg_size(&b64(f.as_deref().unwrap()));
        // Upscaled to fit 640×640, as the reference's
        // `scale=640:640:force_original_aspect_ratio=decrease` does (spec §1).
        assert_eq!((w, h), (640, 480));
    }
    assert!(m.frames[2].is_none());
}

#[test]
fn container_frames_are_scaled_to_fit_640() {
    let tmp = tempfile::tempdir().unwrap();
    let video = make_mp4(tmp.path(), "big.mp4", "1280x960", 2.8, true);
    let m = prepare(&video, &MediaOptions::default()).unwrap();
    assert_eq!(m.pcm.len(), 96_000);
    assert_eq!(m.frames.len(), 3);
    for f in m.frames.iter() {
        assert_eq!(jpeg_size(&b64(f.as_deref().unwrap())), (640, 480));
    }
    // Distinct seconds are distinct pictures (the test source has a moving element).
    assert_ne!(m.frames[0], m.frames[1]);
}

#[test]
fn container_without_video_stream_has_no_frames() {
    let tmp = tempfile::tempdir().unwrap();
    require_ffmpeg();
    let audio = tmp.path().join("a.m4a");
    let status = Command::new("ffmpeg")
        .args([
            "-nostdin",
            "-v",
            "error",
            "-f",
            "lavfi",
            "-i",
            "sine=duration=1.5",
        ])
        .arg(&audio)
        .status()
        .unwrap();
    assert!(status.success());
    let err = prepare(&audio, &MediaOptions::default()).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("No video frames were decoded from {}", audio.display())
    );
}

#[test]
fn long_video_rejected_after_one_probe() {
    let tmp = tempfile::tempdir().unwrap();
    let log = tmp.path().join("calls.log");
    let log = log.display();
    let opts = MediaOptions {
        ffprobe: script(
            tmp.path(),
            "ffprobe",
            &format!("echo ffprobe >> {log}\necho 7200.000000"),
        ),
        ffmpeg: script(tmp.path(), "ffmpeg", &format!("echo ffmpeg >> {log}")),
        ..MediaOptions::default()
    };
    let video = tmp.path().join("long.mp4");
    let err = prepare(&video, &opts).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("Invalid video duration for {}: 7200.0", video.display())
    );
    assert_eq!(
        fs::read_to_string(tmp.path().join("calls.log")).unwrap(),
        "ffprobe\n"
    );
}

#[test]
fn unreadable_or_bad_probe_durations() {
    let tmp = tempfile::tempdir().unwrap();
    let video = tmp.path().join("v.mp4");
    let cases = [
        ("N/A", "'N/A'"),
        ("nan", "nan"),
        ("inf", "inf"),
        ("-1", "-1.0"),
        ("0", "0.0"),
    ];
    for (i, (out, shown)) in cases.into_iter().enumerate() {
        let opts = MediaOptions {
            ffprobe: script(tmp.path(), &format!("probe_{i}"), &format!("echo {out}")),
            ..MediaOptions::default()
        };
        let err = prepare(&video, &opts).unwrap_err().to_string();
        assert_eq!(
            err,
            format!("Invalid video duration for {}: {shown}", video.display())
        );
    }
}

#[test]
fn command_timeout_kills_and_reports() {
    let tmp = tempfile::tempdir().unwrap();
    let probe = script(tmp.path(), "slow probe", "exec sleep 5");
    let opts = MediaOptions {
        media_timeout_s: 0.2,
        ffprobe: probe.clone(),
        ..MediaOptions::default()
    };
    let video = tmp.path().join("v.mp4");
    let err = prepare(&video, &opts).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "Media command timed out after 0.2s: '{probe}' -v error -show_entries \
             format=duration -of default=noprint_wrappers=1:nokey=1 {}",
            video.display()
        )
    );
}

#[test]
fn missing_program_and_bad_timeout() {
    let opts = MediaOptions {
        ffprobe: "/nonexistent/ffprobe".to_owned(),
        ..MediaOptions::default()
    };
    let err = prepare(Path::new("/tmp/v.mp4"), &opts).unwrap_err();
    assert_eq!(
        err.to_string(),
        "Required media command is unavailable: /nonexistent/ffprobe"
    );

    let opts = MediaOptions {
        media_timeout_s: 0.0,
        ..MediaOptions::default()
    };
    let err = prepare(Path::new("/tmp/v.mp4"), &opts).unwrap_err();
    assert!(matches!(err, MediaError::BadTimeout(_)), "{err}");
}

#[test]
fn failing_command_reports_bounded_stderr() {
    let tmp = tempfile::tempdir().unwrap();
    let probe = script(tmp.path(), "probe", "echo '  boom  ' >&2\nexit 3");
    let opts = MediaOptions {
        ffprobe: probe.clone(),
        ..MediaOptions::default()
    };
    let err = prepare(&tmp.path().join("v.mp4"), &opts).unwrap_err();
    assert_eq!(err.to_string(), format!("{probe} failed: boom"));

    let noisy = "head -c 1000000 /dev/zero | tr '\\000' x >&2\necho END >&2\nexit 1";
    let opts = MediaOptions {
        ffprobe: script(tmp.path(), "noisy", noisy),
        ..MediaOptions::default()
    };
    let err = prepare(&tmp.path().join("v.mp4"), &opts)
        .unwrap_err()
        .to_string();
    assert!(err.len() < 3 * STDERR_TAIL_BYTES, "{}", err.len());
    assert!(err.ends_with("xxEND"), "{}", &err[err.len() - 10..]);

    let opts = MediaOptions {
        ffprobe: script(tmp.path(), "silent", "exit 4"),
        ..MediaOptions::default()
    };
    let err = prepare(&tmp.path().join("v.mp4"), &opts)
        .unwrap_err()
        .to_string();
    assert!(err.ends_with("failed: exit status: 4"), "{err}");
}

/// Fake ffmpeg: floods stdout for the audio run; for the frames run writes the given
/// frame files (`printf` JPEG markers) next to the output pattern (the last argument).
fn fake_ffmpeg(dir: &Path, frames: &str) -> String {
    let body = format!(
        "for a; do last=$a; done\n\
         case \"$last\" in\n\
         *.jpg) d=$(dirname \"$last\"); for k in {frames}; do printf '\\377\\330\\377\\331' > \"$d/$k.jpg\"; done ;;\n\
         *) head -c 500000 /dev/zero | tr '\\000' '\\001' ;;\n\
         esac"
    );
    script(dir, "ffmpeg", &body)
}

#[test]
fn audio_output_is_bounded_and_truncated() {
    let tmp = tempfile::tempdir().unwrap();
    let opts = MediaOptions {
        ffprobe: script(tmp.path(), "ffprobe", "echo 1.5"),
        ffmpeg: fake_ffmpeg(tmp.path(), "0 1"),
        ..MediaOptions::default()
    };
    let m = prepare(&tmp.path().join("v.mp4"), &opts).unwrap();
    assert_eq!(m.pcm.len(), 64_000);
    assert!(m.pcm.iter().all(|&b| b == 1));
    assert_eq!(m.frames.len(), 2);
    assert!(
        m.frames
            .iter()
            .all(|f| b64(f.as_deref().unwrap()) == [0xFF, 0xD8, 0xFF, 0xD9])
    );
}

#[test]
fn frame_file_beyond_duration_is_an_error() {
    let tmp = tempfile::tempdir().unwrap();
    let opts = MediaOptions {
        ffprobe: script(tmp.path(), "ffprobe", "echo 1.5"),
        ffmpeg: fake_ffmpeg(tmp.path(), "0 25"),
        ..MediaOptions::default()
    };
    let err = prepare(&tmp.path().join("v.mp4"), &opts).unwrap_err();
    assert!(
        matches!(&err, MediaError::UnexpectedFrame { name, .. } if name == "25.jpg"),
        "{err}"
    );
}

#[test]
fn gaps_take_the_next_frame_and_tails_stay_empty() {
    let (a, b): (Arc<str>, Arc<str>) = ("a".into(), "b".into());
    let found = BTreeMap::from([(1, a.clone()), (4, b.clone())]);
    let frames = fill_frames(&found, 6);
    let want = [Some(&a), Some(&a), Some(&b), Some(&b), Some(&b), None];
    assert_eq!(frames.iter().map(Option::as_ref).collect::<Vec<_>>(), want);
    let m = PreparedMedia {
        pcm: Bytes::from(vec![0; 10]),
        frames: frames.into(),
        duration_s: 6.0,
    };
    // Shared slots count once: 10 PCM + 6 slots + two one-byte strings with counters.
    assert_eq!(m.memory_bytes(), 10 + 6 * 16 + 2 * (1 + 16));
}

#[test]
fn python_float_and_shell_quoting() {
    let cases = [
        (600.0, "600.0"),
        (0.2, "0.2"),
        (2.3, "2.3"),
        (-1.0, "-1.0"),
        (f64::NAN, "nan"),
        (f64::NEG_INFINITY, "-inf"),
        (1e16, "1e+16"),
        (1.5e-5, "1.5e-05"),
        (0.0, "0.0"),
    ];
    for (x, want) in cases {
        assert_eq!(py_float(x), want);
    }
    let args = ["-i", "a b.mp4", "it's", ""].map(OsString::from);
    assert_eq!(
        shell_join("ffmpeg", &args),
        "ffmpeg -i 'a b.mp4' 'it'\"'\"'s' ''"
    );
}

#[test]
fn ref_audio_is_a_wav_data_url() {
    let tmp = tempfile::tempdir().unwrap();
    let report = synth(tmp.path(), &SynthOptions::default()).unwrap();
    let url = ref_audio_data_url(&report.ref_audio).unwrap();
    let b64_part = url.strip_prefix("data:audio/wav;base64,").unwrap();
    assert_eq!(b64(b64_part), fs::read(&report.ref_audio).unwrap());

    let missing = tmp.path().join("nope.wav");
    let err = ref_audio_data_url(&missing).unwrap_err().to_string();
    assert!(
        err.contains("ref_audio") && err.contains(&missing.display().to_string()),
        "{err}"
    );
}
