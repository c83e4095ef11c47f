//! Free space for the bundles, checked before timing. A passing case's `output.wav` is
//! written at its full length (`ceil(duration)` seconds of 24 kHz PCM16, silence where
//! nothing played), so what a run's bundles need is known before the first session: a
//! run whose bundles cannot fit would only find out after every session ran. Each case
//! replaces its earlier bundle (whose bytes are then freed); bundles are staged beside
//! the bundles they replace and land a batch at a time ([`STAGED_BYTES`] at most, plus
//! the batch's last case: [`super::queue`]), so the run needs the growth of every case
//! plus the earlier bundles a batch still keeps. The check ([`shortfall`]) is pure; [`free_bytes`] and
//! [`bundle_bytes_on_disk`] are its IO edge. Writing is still checked file by file: the
//! estimate leaves out the JSON files and the capture spool (their size depends on
//! what the server sends), and space may go to other writers during the run.

use std::io;
use std::path::Path;

use super::capture::OUTPUT_SAMPLE_RATE;

/// WAV header bytes (hound's canonical 44-byte header).
const WAV_HEADER: u64 = 44;

/// Allowance per case for its JSON files (`result.json`, `events.json` of a short
/// session, `wav_transcript.json`, `.done`).
pub const JSON_ALLOWANCE: u64 = 64 << 10;

/// A batch of staged bundles lands once they weigh this much (each bundle counted as
/// the larger of itself and the bundle it replaces).
pub const STAGED_BYTES: u64 = 64 << 20;

/// What one case's bundle is expected to take: its `output.wav` at full length plus the
/// JSON allowance.
pub fn bundle_bytes(duration_s: f64) -> u64 {
    let secs = if duration_s.is_finite() && duration_s > 0.0 {
        duration_s.ceil() as u64
    } else {
        0
    };
    staged_bytes(secs * u64::from(OUTPUT_SAMPLE_RATE) * 2)
}

/// What a bundle whose WAV holds `wav_data_bytes` is expected to take.
pub fn staged_bytes(wav_data_bytes: u64) -> u64 {
    WAV_HEADER
        .saturating_add(wav_data_bytes)
        .saturating_add(JSON_ALLOWANCE)
}

/// Why the bundles cannot fit, if they cannot: `cases` holds, per case this run
/// publishes, the bytes its new bundle takes and the bytes its earlier bundle holds now;
/// `free` is what the output folder's filesystem has for this user.
pub fn shortfall(root: &Path, cases: &[(u64, u64)], free: u64) -> Option<String> {
    let growth: u64 = cases
        .iter()
        .map(|&(new, old)| new.saturating_sub(old))
        .sum();
    // While a batch is staged, the bundles it replaces are still there: at most the
    // batch's weight, which closes at STAGED_BYTES plus its last case.
    let old: u64 = cases.iter().map(|&(_, old)| old).sum();
    let heaviest = cases.iter().map(|&(new, old)| new.max(old)).max();
    let kept = old.min(STAGED_BYTES.saturating_add(heaviest.unwrap_or(0)));
    let need = growth.saturating_add(kept);
    (need > free).then(|| {
        format!(
            "{}: No space left on device (ENOSPC, checked before the run): the bundles of \
             {} case(s) need about {} (each output.wav at its full length), the filesystem \
             has {} free; nothing was run and the earlier bundles are untouched. Free \
             space there, or point `output_dir` (--omniinteract-output-dir) at a larger disk",
            root.display(),
            cases.len(),
            mib(need),
            mib(free),
        )
    })
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / f64::from(1u32 << 20))
}

/// Bytes available to this user on the filesystem holding `dir`.
pub fn free_bytes(dir: &Path) -> io::Result<u64> {
    let st = rustix::fs::statvfs(dir).map_err(io::Error::from)?;
    Ok(st.f_bavail.saturating_mul(st.f_frsize))
}

/// Bytes the files directly in `dir` hold now (0 when it does not exist).
pub fn bundle_bytes_on_disk(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(Result::ok)
                .filter_map(|e| e.metadata().ok())
                .filter(std::fs::Metadata::is_file)
                .map(|m| m.len())
                .sum()
        })
        .unwrap_or(0)
}

#[cfg(test)]
#[path = "space_tests.rs"]
mod tests;
