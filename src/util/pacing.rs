//! How paced media is placed in time, shared by every workload that streams media
//! (OmniInteract's appends, realtime transcription's appends): `realtime` (absolute
//! schedule), `saturate` (as fast as the socket takes it) or a speed factor `<f>x`, and
//! the scenario spelling of each. Pure code.

use std::time::Duration;

/// How appends are placed in time.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum PacingMode {
    /// Append `i` is due at `t0 + offset_i / 32000 s` (the reference).
    #[default]
    Realtime,
    /// Media time runs this many times faster than wall time (`> 0`).
    Speed(f64),
    /// Every append is sent as soon as the previous one was handed to the sender.
    Saturate,
}

impl std::fmt::Display for PacingMode {
    /// `realtime`, `saturate` or `<factor>x` — the scenario spelling, printed and saved
    /// with every result so numbers from different modes are never mixed.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PacingMode::Realtime => f.write_str("realtime"),
            PacingMode::Saturate => f.write_str("saturate"),
            PacingMode::Speed(x) => write!(f, "{x}x"),
        }
    }
}

impl PacingMode {
    /// Offset of the moment `offset` input bytes are due, from the upload start; `None`
    /// for [`PacingMode::Saturate`] (no schedule).
    pub fn due_after(self, offset: usize) -> Option<Duration> {
        // 1 byte of 16 kHz PCM16 lasts exactly 31 250 ns.
        self.due_after_media(Duration::from_nanos(offset as u64 * 31_250))
    }

    /// Offset from the upload start of the moment `media` worth of input is due, for
    /// any sample rate (the transcription workload paces with this too); `None` for
    /// [`PacingMode::Saturate`].
    pub fn due_after_media(self, media: Duration) -> Option<Duration> {
        match self {
            Self::Realtime => Some(media),
            Self::Speed(x) if x.is_finite() && x > 0.0 => Some(media.div_f64(x)),
            Self::Speed(_) => Some(media),
            Self::Saturate => None,
        }
    }
}

/// `"realtime"`, `"saturate"` or `"<factor>x"` (absent = realtime).
pub fn parse_pacing(s: Option<&str>) -> Result<PacingMode, String> {
    match s.map(str::trim) {
        None | Some("realtime") => Ok(PacingMode::Realtime),
        Some("saturate") => Ok(PacingMode::Saturate),
        Some(other) => match other.strip_suffix('x').and_then(|f| f.parse::<f64>().ok()) {
            Some(f) if f.is_finite() && f > 0.0 => Ok(PacingMode::Speed(f)),
            _ => Err(format!(
                "`pacing` must be \"realtime\", \"saturate\" or a speed factor like \"2x\" (got \"{other}\")"
            )),
        },
    }
}

#[cfg(test)]
#[path = "pacing_tests.rs"]
mod tests;
