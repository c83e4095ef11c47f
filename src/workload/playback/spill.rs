//! Closed streams that left a live listener's memory: each record as bytes, and the
//! tallies the run reads while it is live.
//!
//! A held session closes one stream per response. Once a closed stream is before the
//! listener's replay window nothing can change it, so the sample's playback role lets it
//! go: its record is encoded ([`encode`]) into a log of the sample's own in the run's
//! spool (a 512-byte tail in memory, as the send lateness), and the summary keeps only
//! what the run reads before publication — how many streams left, their stalls, the
//! first one ([`SpilledStreams`]). After the run, [`SpilledStreams::records`] reads them
//! back (after the spool's flush) and [`crate::workload::spool::playback::restore_run`]
//! puts them before the streams kept in memory: every output reads the records the
//! listener closed, bit for bit (a proptest holds [`decode`] ∘ [`encode`] to the bit).

use super::StreamPlayback;
use crate::util::leb128;
use crate::workload::spool::Spool;
use crate::workload::spool::spilled::LogParts;

/// Closed streams a sample's playback role let go of (see the module header).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SpilledStreams {
    /// The records' bytes: the spilled span and the tail after it. Emptied once they
    /// were read back.
    pub parts: LogParts,
    /// How many records.
    pub count: u64,
    /// Their stalls, summed.
    pub stall_count: u64,
    /// Their stall seconds, added up in stream order from 0 (as
    /// [`super::PlaybackSummary::total_stall_s`] continues it).
    pub stall_s: f64,
    /// The first of them (the sample's first stream).
    pub first: Option<StreamPlayback>,
}

impl SpilledStreams {
    /// Tallies `s` (the next stream let go, in order) and appends its bytes to `out`.
    pub fn add(&mut self, s: &StreamPlayback, out: &mut Vec<u8>) {
        self.count += 1;
        self.stall_count += s.stall_count;
        self.stall_s += s.total_stall_s;
        if self.first.is_none() {
            self.first = Some(s.clone());
        }
        encode(s, out);
    }

    /// Every record, in stream order: the spilled bytes read from `spool` (after its
    /// flush) and the tail decoded; an error when they cannot be read back whole.
    pub fn records(&self, spool: Option<&Spool>) -> Result<Vec<StreamPlayback>, String> {
        let records = decode(&self.parts.read(spool, "playback streams")?)?;
        if records.len() as u64 != self.count {
            return Err(format!(
                "playback streams read back {} records of {}",
                records.len(),
                self.count
            ));
        }
        Ok(records)
    }
}

const FILLED: u8 = 1;
const FIRST_STALL_AT: u8 = 2;
const FIRST_STALL_INDEX: u8 = 4;

/// Appends `s` as bytes: LEB128 stream and unit count, a flags byte, the start's bits,
/// LEB128 stall count, the stall time's bits, the optional first stall's time (bits) and
/// index (LEB128), the span's bits.
pub fn encode(s: &StreamPlayback, out: &mut Vec<u8>) {
    leb128::put(out, s.stream);
    leb128::put(out, s.units);
    let flag = |on: bool, bit: u8| if on { bit } else { 0 };
    let flags = flag(s.buffer_filled, FILLED)
        | flag(s.time_to_first_stall_s.is_some(), FIRST_STALL_AT)
        | flag(s.first_stall_index.is_some(), FIRST_STALL_INDEX);
    out.push(flags);
    out.extend_from_slice(&s.start_s.to_bits().to_le_bytes());
    leb128::put(out, s.stall_count);
    out.extend_from_slice(&s.total_stall_s.to_bits().to_le_bytes());
    if let Some(t) = s.time_to_first_stall_s {
        out.extend_from_slice(&t.to_bits().to_le_bytes());
    }
    if let Some(i) = s.first_stall_index {
        leb128::put(out, i);
    }
    out.extend_from_slice(&s.playback_span_s.to_bits().to_le_bytes());
}

/// Every record [`encode`] wrote into `bytes`, in order; an error naming the offset
/// where a record is cut short.
pub fn decode(bytes: &[u8]) -> Result<Vec<StreamPlayback>, String> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let start = at;
        let cut = || format!("a playback stream record cut short at byte {start}");
        let num = |at: &mut usize| leb128::get(bytes, at).ok_or_else(cut);
        let float = |at: &mut usize| -> Result<f64, String> {
            let raw = bytes.get(*at..*at + 8).ok_or_else(cut)?;
            *at += 8;
            Ok(f64::from_bits(u64::from_le_bytes(
                raw.try_into().expect("8 bytes"),
            )))
        };
        let stream = num(&mut at)?;
        let units = num(&mut at)?;
        let flags = *bytes.get(at).ok_or_else(cut)?;
        at += 1;
        let start_s = float(&mut at)?;
        let stall_count = num(&mut at)?;
        let total_stall_s = float(&mut at)?;
        let time_to_first_stall_s = match flags & FIRST_STALL_AT {
            0 => None,
            _ => Some(float(&mut at)?),
        };
        let first_stall_index = match flags & FIRST_STALL_INDEX {
            0 => None,
            _ => Some(num(&mut at)?),
        };
        out.push(StreamPlayback {
            stream,
            units,
            buffer_filled: flags & FILLED != 0,
            start_s,
            stall_count,
            total_stall_s,
            time_to_first_stall_s,
            first_stall_index,
            playback_span_s: float(&mut at)?,
        });
    }
    Ok(out)
}

#[cfg(test)]
#[path = "spill_tests.rs"]
mod tests;
