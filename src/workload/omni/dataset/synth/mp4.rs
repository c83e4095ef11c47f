//! `synth --mp4`: turn a frames case into a real MP4 (MPEG-4 Part 2 video at 10 fps
//! showing frame `k` during second `k`, AAC audio) with ffmpeg, so the same synthetic set
//! can be used by other tools (e.g. the reference client) side by side.

use std::path::Path;
use std::process::Command;

use super::super::DatasetError;
use super::super::layout::FRAMES_AUDIO;

/// Encodes the frames case in `frames_dir` into `out` with `ffmpeg` (on PATH).
pub(super) fn encode(frames_dir: &Path, out: &Path) -> Result<(), DatasetError> {
    let output = Command::new("ffmpeg")
        .args([
            "-nostdin",
            "-loglevel",
            "error",
            "-y",
            "-framerate",
            "1",
            "-i",
        ])
        .arg(frames_dir.join("frame_%04d.jpg"))
        .arg("-i")
        .arg(frames_dir.join(FRAMES_AUDIO))
        .args(["-map", "0:v", "-map", "1:a", "-c:v", "mpeg4", "-q:v", "5"])
        .args([
            "-pix_fmt", "yuv420p", "-r", "10", "-c:a", "aac", "-b:a", "64k",
        ])
        .args(["-map_metadata", "-1", "-fflags", "+bitexact"])
        .args(["-flags:v", "+bitexact", "-flags:a", "+bitexact"])
        .arg(out)
        .output()
        .map_err(|e| {
            DatasetError::SynthOptions(format!(
                "--mp4 needs ffmpeg on PATH ({e}); install it (e.g. apt-get install ffmpeg) \
                 or drop --mp4 for frames cases"
            ))
        })?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let stderr: String = stderr.chars().take(2000).collect();
        return Err(DatasetError::SynthOptions(format!(
            "ffmpeg could not write {}: {}",
            out.display(),
            stderr.trim()
        )));
    }
    Ok(())
}
