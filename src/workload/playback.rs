//! The live viewer/listener clock a sample's playback role runs: media plays strictly in
//! arrival order, starts once `buffer_units` units have landed, and every moment the
//! player runs dry is an underrun. Pure: arrival times in, a summary out.
//!
//! This is the incremental form of the reference's playback simulation (spec §5.3.4),
//! processed in arrival order as a real player would.

use serde::Serialize;
use tokio::time::Instant;

/// What the playback role observed for one sample.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct PlaybackSummary {
    /// Media units received.
    pub units: u64,
    /// Times the player ran dry after starting.
    pub underrun_count: u64,
    /// Total time the player waited for media after starting, seconds.
    pub total_stall_s: f64,
    /// From playback start to the end of the last unit, seconds.
    pub playback_span_s: f64,
    /// Index of the first unit that arrived late, if any.
    pub first_underrun_index: Option<u64>,
}

/// The serial playback clock.
#[derive(Debug)]
pub struct ViewerClock {
    buffer_units: u32,
    waiting: Vec<(Instant, f64, u64)>,
    start: Option<Instant>,
    cursor: Option<Instant>,
    summary: PlaybackSummary,
}

impl ViewerClock {
    /// A clock that starts playing once `buffer_units` (at least 1) units have arrived.
    pub fn new(buffer_units: u32) -> Self {
        Self {
            buffer_units: buffer_units.max(1),
            waiting: Vec::new(),
            start: None,
            cursor: None,
            summary: PlaybackSummary::default(),
        }
    }

    /// One unit of `duration_s` seconds arrived at `at`.
    pub fn push(&mut self, at: Instant, duration_s: f64, index: u64) {
        self.summary.units += 1;
        if self.start.is_none() {
            self.waiting.push((at, duration_s, index));
            if self.waiting.len() < self.buffer_units as usize {
                return;
            }
            self.start = Some(at);
            self.cursor = Some(at);
            for (a, d, i) in std::mem::take(&mut self.waiting) {
                self.play(a, d, i);
            }
        } else {
            self.play(at, duration_s, index);
        }
    }

    fn play(&mut self, at: Instant, duration_s: f64, index: u64) {
        let Some(cursor) = self.cursor.as_mut() else {
            return;
        };
        if at > *cursor {
            self.summary.total_stall_s += (at - *cursor).as_secs_f64();
            self.summary.underrun_count += 1;
            self.summary.first_underrun_index.get_or_insert(index);
            *cursor = at;
        }
        *cursor += std::time::Duration::from_secs_f64(duration_s.max(0.0));
    }

    /// The summary so far (units still waiting for the buffer to fill never played).
    pub fn summary(&self) -> PlaybackSummary {
        let mut s = self.summary.clone();
        if let (Some(start), Some(cursor)) = (self.start, self.cursor) {
            s.playback_span_s = (cursor - start).as_secs_f64();
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// Spec §5.3.5 first vector: gaps [1.0,0.5,0.5,2.0,0.5], 16 fps, buffer 1 → one
    /// underrun at chunk 3, stall 937.5 ms, span 4.5 s.
    #[test]
    fn matches_reference_simulation_vector() {
        let t0 = Instant::now();
        let mut c = ViewerClock::new(1);
        let mut at = 0.0;
        for (i, gap) in [1.0, 0.5, 0.5, 2.0, 0.5].into_iter().enumerate() {
            at += gap;
            let frames = if i == 0 { 9.0 } else { 12.0 };
            c.push(t0 + Duration::from_secs_f64(at), frames / 16.0, i as u64);
        }
        let s = c.summary();
        assert_eq!(s.underrun_count, 1);
        assert_eq!(s.first_underrun_index, Some(3));
        assert!((s.total_stall_s - 0.9375).abs() < 1e-6, "{s:?}");
        assert!((s.playback_span_s - 4.5).abs() < 1e-6, "{s:?}");
    }

    #[test]
    fn buffer_delays_start() {
        let t0 = Instant::now();
        let mut c = ViewerClock::new(3);
        let mut at = 0.0;
        for (i, gap) in [1.0, 0.5, 0.5, 1.4, 0.2, 0.2].into_iter().enumerate() {
            at += gap;
            let frames = if i == 0 { 9.0 } else { 12.0 };
            c.push(t0 + Duration::from_secs_f64(at), frames / 16.0, i as u64);
        }
        assert_eq!(c.summary().underrun_count, 0);
    }
}
