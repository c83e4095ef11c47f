//! The one listener/viewer simulation every workload's reports print from (spec §5.3.4,
//! generalised): a sample's received media, split into streams (one video rollout; one
//! assistant response each), is played by a single serial player. A stream starts once
//! `buffer_units` of its units *and* `prebuffer_s` seconds of its media have landed (never
//! before the previous stream has finished playing); every moment the player then runs dry
//! is a stall. Pure: plain numbers in, a summary out. [`simulate`] plays a whole sample
//! at once; [`Listener`] is the same simulation fed unit by unit as media arrives (equal to
//! it after every unit), which the engine's playback role owns: its state is what the
//! listener has experienced so far, and at the sample's end its summary reaches the
//! workload in `SampleRecord::playback`.

use serde::Serialize;

pub use listener::Listener;
pub use log::UnitLog;
pub use spill::SpilledStreams;

mod listener;
mod log;
pub mod spill;

/// One unit of received media, in seconds on the sample's clock.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlayUnit {
    /// Which stream it belongs to (0 for a single-stream workload; a response ordinal).
    pub stream: u64,
    /// Order within the stream (a chunk index); ties keep arrival order.
    pub index: u64,
    /// Receipt time, seconds since the sample opened.
    pub arrival_s: f64,
    /// Playable duration, seconds.
    pub duration_s: f64,
}

/// How the simulated player buffers before it starts a stream.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlaybackConfig {
    /// Units of a stream that must have landed before it starts (at least 1).
    pub buffer_units: u32,
    /// Seconds of a stream's media that must have landed before it starts (≥ 0).
    pub prebuffer_s: f64,
}

impl Default for PlaybackConfig {
    fn default() -> Self {
        PlaybackConfig {
            buffer_units: 1,
            prebuffer_s: 0.0,
        }
    }
}

/// What a listener/viewer experienced in one stream.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StreamPlayback {
    /// The stream (see [`PlayUnit::stream`]).
    pub stream: u64,
    /// Units received.
    pub units: u64,
    /// Whether the start buffer filled; if not, the stream starts at its last unit (the
    /// whole stream was buffered by then and plays without a stall).
    pub buffer_filled: bool,
    /// Playback start, seconds since the sample opened.
    pub start_s: f64,
    /// Times the player ran dry after starting.
    pub stall_count: u64,
    /// Total time the player waited for media after starting, seconds.
    pub total_stall_s: f64,
    /// From playback start to the moment it first ran dry, seconds (absent: no stall).
    pub time_to_first_stall_s: Option<f64>,
    /// Index of the first unit that arrived late (absent: none did).
    pub first_stall_index: Option<u64>,
    /// From playback start to the end of the last unit, seconds.
    pub playback_span_s: f64,
}

/// What the playback role observed for one sample: one entry per stream, in stream order.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct PlaybackSummary {
    /// Per-stream results.
    pub streams: Vec<StreamPlayback>,
    /// Units that landed behind the live listener's whole replay window
    /// (128 units back at least) and were not played: the
    /// streams are the simulation of the units that were. Absent from JSON when 0.
    #[serde(skip_serializing_if = "is_zero")]
    pub units_past_window: u64,
    /// The closed streams the playback role let go of as the session ran (before
    /// `streams`), unread until [`crate::workload::spool::playback::restore_run`] puts
    /// them back in `streams` after the run; the methods below count them meanwhile.
    #[serde(skip)]
    pub spilled: Option<SpilledStreams>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl PlaybackSummary {
    /// Streams played (those let go included).
    pub fn stream_count(&self) -> u64 {
        self.spilled.as_ref().map_or(0, |s| s.count) + self.streams.len() as u64
    }

    /// Stalls over all streams.
    pub fn stall_count(&self) -> u64 {
        let kept: u64 = self.streams.iter().map(|s| s.stall_count).sum();
        self.spilled.as_ref().map_or(0, |s| s.stall_count) + kept
    }

    /// Stall seconds over all streams, added up in stream order from 0 (the same bits
    /// before and after the streams let go are read back).
    pub fn total_stall_s(&self) -> f64 {
        let from = self.spilled.as_ref().map_or(0.0, |s| s.stall_s);
        self.streams
            .iter()
            .fold(from, |acc, s| acc + s.total_stall_s)
    }

    /// The first stream played.
    pub fn first_stream(&self) -> Option<&StreamPlayback> {
        let spilled = self.spilled.as_ref().and_then(|s| s.first.as_ref());
        spilled.or(self.streams.first())
    }
}

/// The run's note when listeners did not play units that landed behind their replay
/// window (how many, in how many sessions); `None` when every unit was played.
pub fn past_window_note<'a>(
    summaries: impl IntoIterator<Item = &'a PlaybackSummary>,
) -> Option<String> {
    let (sessions, units) = (summaries.into_iter())
        .filter(|p| p.units_past_window > 0)
        .fold((0, 0), |(n, u), p| (n + 1, u + p.units_past_window));
    (units > 0).then(|| {
        format!(
            "{units} media unit(s) in {sessions} session(s) arrived behind the listener's \
             whole replay window (128 units back at least) and were not played: the server \
             sent them that far out of order (`units_past_window` in each sample's playback)"
        )
    })
}

/// Play `units` (any order) with `cfg`. Streams play one after another in stream order.
pub fn simulate(units: &[PlayUnit], cfg: PlaybackConfig) -> PlaybackSummary {
    let mut ordered: Vec<&PlayUnit> = units.iter().collect();
    ordered.sort_by_key(|u| (u.stream, u.index));
    let mut out = PlaybackSummary::default();
    let mut prev_end: Option<f64> = None;
    for group in ordered.chunk_by(|a, b| a.stream == b.stream) {
        let s = play_stream(group, cfg, prev_end);
        prev_end = Some(s.start_s + s.playback_span_s);
        out.streams.push(s);
    }
    out
}

/// Position of the unit whose arrival fills the start buffer, if any does.
fn start_position(units: &[&PlayUnit], cfg: PlaybackConfig) -> Option<usize> {
    let need = cfg.buffer_units.max(1) as usize;
    let mut buffered = 0.0;
    units.iter().enumerate().position(|(i, u)| {
        buffered += u.duration_s.max(0.0);
        i + 1 >= need && buffered >= cfg.prebuffer_s
    })
}

fn play_stream(units: &[&PlayUnit], cfg: PlaybackConfig, prev_end: Option<f64>) -> StreamPlayback {
    let pos = start_position(units, cfg);
    let last = units.len().saturating_sub(1);
    let ready = units.get(pos.unwrap_or(last)).map_or(0.0, |u| u.arrival_s);
    let start = prev_end.map_or(ready, |e| ready.max(e));
    let mut s = StreamPlayback {
        stream: units.first().map_or(0, |u| u.stream),
        units: units.len() as u64,
        buffer_filled: pos.is_some(),
        start_s: start,
        stall_count: 0,
        total_stall_s: 0.0,
        time_to_first_stall_s: None,
        first_stall_index: None,
        playback_span_s: 0.0,
    };
    let mut cursor = start;
    let mut stall = 0.0;
    for u in units {
        if u.arrival_s > cursor {
            stall += u.arrival_s - cursor;
            s.stall_count += 1;
            s.first_stall_index.get_or_insert(u.index);
            s.time_to_first_stall_s.get_or_insert(cursor - start);
            cursor = u.arrival_s;
        }
        cursor += u.duration_s.max(0.0);
    }
    s.total_stall_s = stall;
    s.playback_span_s = cursor - start;
    s
}

#[cfg(test)]
#[path = "playback_tests.rs"]
mod tests;
