//! Audio continuity of one streamed response, as vLLM-Omni 0.30.0's
//! `benchmarks/audio_continuity.py` `compute_continuity_stats` defines it: a player that
//! starts at the first chunk's arrival and consumes at the realtime rate; at each later
//! chunk's arrival, the audio it would have played but had not received is a deficit;
//! the worst deficit is the underrun, each arrival with a deficit one underrun event, and
//! the response is continuous when the worst deficit is at most the threshold (100 ms).
//!
//! Here a chunk is a non-empty audio delta of the response received at or after the
//! stream start, its arrival the client receipt stamp of that delta (the session clock,
//! `_client_received_at_s` in `events.json`), its size the decoded PCM16 bytes. Only
//! differences of arrivals enter the formula, so the clock's origin does not matter.
//! [`Continuity`] folds the chunks one at a time (a live session keeps four numbers per
//! response, not its arrival list); [`compute_continuity_stats`] is the reference's
//! list form, the specification the fold is tested against.

use serde::Serialize;

/// The reference's default underrun budget, seconds ("audible gap").
pub const THRESHOLD_S: f64 = 0.1;

/// `measurement_origin.continuity` of a response row.
pub const CONTINUITY_ORIGIN: &str = "client receipt of each non-empty audio delta of the response (first = playback start), \
     played at the output rate; worst deficit over the threshold of 0.1 s is discontinuous";

/// One response's continuity (the reference's `ContinuityStats`, under the names its
/// `vllm bench serve` request outputs carry).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ContinuityStats {
    /// `max_underrun_s`: worst seconds the player was starved.
    #[serde(rename = "audio_underrun_s")]
    pub max_underrun_s: f64,
    /// `underrun_event_count`: chunk arrivals with a deficit.
    #[serde(rename = "audio_underrun_event_count")]
    pub underrun_event_count: u64,
    /// `is_continuous`: `max_underrun_s <= threshold`.
    #[serde(rename = "audio_continuity_ok")]
    pub is_continuous: bool,
}

/// [`compute_continuity_stats`] one chunk at a time, with its arithmetic (bytes, the
/// deficit divided by the rate), so a constant rate gives its numbers to the bit.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Continuity {
    first_s: Option<f64>,
    /// Bytes received before the current chunk.
    received: u64,
    max_underrun_s: f64,
    events: u64,
}

impl Continuity {
    /// A chunk of `bytes` PCM bytes played at `bytes_per_s` (the output rate as of this
    /// chunk; a non-positive rate counts no deficit), arrived at `at_s`.
    pub fn push(&mut self, at_s: f64, bytes: u64, bytes_per_s: f64) {
        match self.first_s {
            None => self.first_s = Some(at_s),
            Some(t0) if bytes_per_s > 0.0 => {
                let deficit_bytes = (at_s - t0) * bytes_per_s - self.received as f64;
                if deficit_bytes > 0.0 {
                    self.max_underrun_s = self.max_underrun_s.max(deficit_bytes / bytes_per_s);
                    self.events += 1;
                }
            }
            Some(_) => {}
        }
        self.received += bytes;
    }

    /// The stats so far; `None` before the first chunk (the row then carries none).
    pub fn stats(&self) -> Option<ContinuityStats> {
        self.first_s?;
        Some(ContinuityStats {
            max_underrun_s: self.max_underrun_s,
            underrun_event_count: self.events,
            is_continuous: self.max_underrun_s <= THRESHOLD_S,
        })
    }
}

/// The reference function, line for line (`sample_width` 2, `channels` 1 in the duplex
/// workload): empty or mismatched input, or a non-positive rate, is continuous.
#[cfg(test)]
pub fn compute_continuity_stats(
    arrivals_s: &[f64],
    chunk_bytes: &[u64],
    bytes_per_s: f64,
    threshold_s: f64,
) -> ContinuityStats {
    let continuous = ContinuityStats {
        max_underrun_s: 0.0,
        underrun_event_count: 0,
        is_continuous: true,
    };
    let n = arrivals_s.len();
    if n == 0 || n != chunk_bytes.len() || bytes_per_s <= 0.0 {
        return continuous;
    }
    let t0 = arrivals_s[0];
    let (mut received, mut max_underrun_s, mut events) = (0u64, 0.0f64, 0u64);
    for i in 0..n {
        if i > 0 {
            let deficit_bytes = (arrivals_s[i] - t0) * bytes_per_s - received as f64;
            if deficit_bytes > 0.0 {
                max_underrun_s = max_underrun_s.max(deficit_bytes / bytes_per_s);
                events += 1;
            }
        }
        received += chunk_bytes[i];
    }
    ContinuityStats {
        max_underrun_s,
        underrun_event_count: events,
        is_continuous: max_underrun_s <= threshold_s,
    }
}

#[cfg(test)]
#[path = "continuity_tests.rs"]
mod tests;
