//! The listener/viewer simulation fed one unit at a time, as media arrives: the state the
//! sample's playback role owns. [`Listener::push`] takes each unit in receipt order and
//! advances the player in O(1); [`Listener::summary`] is what the listener experienced so
//! far, and at the sample's end it is the sample's [`PlaybackSummary`].
//!
//! It is [`super::simulate`] taken apart, step for step and in the same floating-point
//! order, so its summary equals the batch one to the bit (`listener_tests.rs` checks it on
//! arbitrary input). The batch simulation plays units in `(stream, index)` order; media
//! normally arrives in that order, and then every unit is played as it lands. A unit that
//! arrives *behind* one already played (a lower stream, or a lower index in its stream)
//! changes what came before it, so the listener keeps the latest units in a [`UnitLog`]
//! (4–16 bytes each) and, the next time it is asked, replays them in order from where the
//! log starts: exact, and paid only when a server reorders.
//!
//! The log is a window, so a held session's memory does not grow with its length: two
//! generations of at most [`REPLAY_WINDOW_UNITS`] units each, with the player's state
//! where each begins. When the newer one fills, the older one is dropped and the state
//! at its end becomes the replay's start; the window always reaches at least
//! [`REPLAY_WINDOW_UNITS`] units back. A unit that lands behind the whole window (its
//! `(stream, index)` below the largest played before the window) cannot be replayed in
//! its place: it is not played and is counted in
//! [`PlaybackSummary::units_past_window`], so the summary is the batch simulation of the
//! units it played, and says how many it did not. Each closed stream's result is kept
//! compactly ([`Closed`]) until it is before the window; then [`Listener::let_go`] hands
//! it to the playback role, which spills it.

use super::{PlayUnit, PlaybackConfig, PlaybackSummary, StreamPlayback, UnitLog};
use closed::Closed;

#[path = "closed.rs"]
mod closed;

/// Units the replay window reaches back at least (and holds at most twice): 12.8 s of
/// 100 ms audio deltas, 6.4 s of a video's 20 chunks a second. Small, so a held session's
/// listener stops growing within its first 256 units (a soak's sessions, ~1 delta a
/// second, within ~4 minutes); a unit that late has long been missed by the listener.
pub(crate) const REPLAY_WINDOW_UNITS: usize = 128;

/// A listener fed unit by unit (see the module header).
#[derive(Debug, Clone)]
pub struct Listener {
    cfg: PlaybackConfig,
    /// Units per log generation ([`REPLAY_WINDOW_UNITS`]).
    window: usize,
    /// Streams that a later stream's first unit closed, in stream order.
    done: Closed,
    /// The player as the units played so far left it.
    now: State,
    /// Where `older` begins: the replay's start.
    base: Mark,
    /// Where `newer` begins.
    mid: Mark,
    /// The older generation of the log, in the order it is to be replayed.
    older: UnitLog,
    /// The newer generation: units pushed since `older` filled, in receipt order.
    newer: UnitLog,
    /// A unit arrived out of order: `now` and `done` are stale until [`Listener::settle`].
    reordered: bool,
    /// Units that landed behind the whole window and were not played.
    past_window: u64,
}

/// The player between units.
#[derive(Debug, Clone, Default)]
struct State {
    /// Where the last closed stream's playback ended.
    prev_end: Option<f64>,
    /// The stream being received.
    open: Option<Open>,
    /// The largest `(stream, index)` played so far.
    last_key: Option<(u64, u64)>,
}

/// The player's state where a log generation begins, and how many streams had closed.
#[derive(Debug, Clone, Default)]
struct Mark {
    state: State,
    closed: usize,
}

/// The stream being received: its start buffer until it fills, then the player.
#[derive(Debug, Clone)]
struct Open {
    stream: u64,
    units: u64,
    /// Units held until the start buffer fills (then played at once).
    pending: Vec<PlayUnit>,
    /// Media seconds in `pending` (the batch's running sum, in the same order).
    buffered: f64,
    /// The last unit's arrival: the start of a stream whose buffer never filled.
    last_arrival: f64,
    player: Option<Player>,
}

/// A started stream's player: the batch's cursor loop, one unit per step.
#[derive(Debug, Clone, Copy)]
struct Player {
    start: f64,
    cursor: f64,
    stall: f64,
    stall_count: u64,
    first_stall_index: Option<u64>,
    time_to_first_stall_s: Option<f64>,
}

impl Player {
    fn new(start: f64) -> Self {
        Player {
            start,
            cursor: start,
            stall: 0.0,
            stall_count: 0,
            first_stall_index: None,
            time_to_first_stall_s: None,
        }
    }

    fn play(&mut self, u: &PlayUnit) {
        if u.arrival_s > self.cursor {
            self.stall += u.arrival_s - self.cursor;
            self.stall_count += 1;
            self.first_stall_index.get_or_insert(u.index);
            self.time_to_first_stall_s
                .get_or_insert(self.cursor - self.start);
            self.cursor = u.arrival_s;
        }
        self.cursor += u.duration_s.max(0.0);
    }
}

impl Open {
    fn new(stream: u64) -> Self {
        Open {
            stream,
            units: 0,
            pending: Vec::new(),
            buffered: 0.0,
            last_arrival: 0.0,
            player: None,
        }
    }

    fn push(&mut self, u: PlayUnit, cfg: PlaybackConfig, prev_end: Option<f64>) {
        self.units += 1;
        self.last_arrival = u.arrival_s;
        if let Some(p) = self.player.as_mut() {
            return p.play(&u);
        }
        self.buffered += u.duration_s.max(0.0);
        self.pending.push(u);
        let need = u64::from(cfg.buffer_units.max(1));
        if self.units >= need && self.buffered >= cfg.prebuffer_s {
            self.start(u.arrival_s, prev_end);
        }
    }

    /// The start buffer is ready at `ready`: play what it holds.
    fn start(&mut self, ready: f64, prev_end: Option<f64>) {
        let mut p = Player::new(prev_end.map_or(ready, |e| ready.max(e)));
        for u in self.pending.drain(..) {
            p.play(&u);
        }
        self.pending = Vec::new();
        self.player = Some(p);
    }

    /// What the listener experienced in this stream, as if it ended now.
    fn result(&self, prev_end: Option<f64>) -> StreamPlayback {
        let filled = self.player.is_some();
        let p = match self.player {
            Some(p) => p,
            None => {
                let mut o = self.clone();
                o.start(self.last_arrival, prev_end);
                o.player.expect("just started")
            }
        };
        StreamPlayback {
            stream: self.stream,
            units: self.units,
            buffer_filled: filled,
            start_s: p.start,
            stall_count: p.stall_count,
            total_stall_s: p.stall,
            time_to_first_stall_s: p.time_to_first_stall_s,
            first_stall_index: p.first_stall_index,
            playback_span_s: p.cursor - p.start,
        }
    }
}

impl Listener {
    /// A listener that buffers as `cfg` says before it starts each stream.
    pub fn new(cfg: PlaybackConfig) -> Self {
        Self::with_window(cfg, REPLAY_WINDOW_UNITS)
    }

    /// [`Listener::new`] with a replay window of `window` units (at least 1).
    fn with_window(cfg: PlaybackConfig, window: usize) -> Self {
        Listener {
            cfg,
            window: window.max(1),
            done: Closed::default(),
            now: State::default(),
            base: Mark::default(),
            mid: Mark::default(),
            older: UnitLog::default(),
            newer: UnitLog::default(),
            reordered: false,
            past_window: 0,
        }
    }

    /// One unit, in receipt order.
    pub fn push(&mut self, u: PlayUnit) {
        if (self.base.state.last_key).is_some_and(|k| (u.stream, u.index) < k) {
            self.past_window += 1;
            return;
        }
        self.newer.push(u);
        if !self.reordered {
            self.play(u);
        }
        if self.newer.len() >= self.window {
            self.rotate();
        }
    }

    /// Hands `f` each closed stream nothing can change any more (before the replay
    /// window), in stream order, and forgets it: a held session's playback role spills
    /// them, so what the listener keeps stays within the window. The summary then holds
    /// only the streams after them.
    pub fn let_go(&mut self, f: impl FnMut(&StreamPlayback)) {
        self.done.let_go(self.base.closed, f);
    }

    /// Units held for a replay (the window).
    #[cfg(test)]
    pub fn units(&self) -> usize {
        self.older.len() + self.newer.len()
    }

    /// The newer generation is full: it becomes the older one, and what was before it
    /// leaves the window.
    fn rotate(&mut self) {
        self.settle();
        self.older = std::mem::take(&mut self.newer);
        let here = self.mark();
        self.base = std::mem::replace(&mut self.mid, here);
    }

    fn mark(&self) -> Mark {
        Mark {
            state: self.now.clone(),
            closed: self.done.len(),
        }
    }

    fn play(&mut self, u: PlayUnit) {
        let key = (u.stream, u.index);
        if self.now.last_key.is_some_and(|k| key < k) {
            self.reordered = true;
            return;
        }
        self.now.last_key = Some(key);
        if self.now.open.as_ref().is_some_and(|o| o.stream != u.stream) {
            self.close_open();
        }
        let cfg = self.cfg;
        let prev_end = self.now.prev_end;
        (self.now.open)
            .get_or_insert_with(|| Open::new(u.stream))
            .push(u, cfg, prev_end);
    }

    fn close_open(&mut self) {
        if let Some(o) = self.now.open.take() {
            let s = o.result(self.now.prev_end);
            self.now.prev_end = Some(s.start_s + s.playback_span_s);
            self.done.push(s);
        }
    }

    /// After a unit arrived out of order: replay the window's units in `(stream, index)`
    /// order from where it begins (stable: equal keys keep their receipt order, as the
    /// batch's sort does). The logs keep that order, which a later sort leaves as it is.
    fn settle(&mut self) {
        if !self.reordered {
            return;
        }
        let split = self.older.len();
        let mut units = self.older.units();
        units.extend(self.newer.units());
        units.sort_by_key(|u| (u.stream, u.index));
        self.now = self.base.state.clone();
        self.done.truncate(self.base.closed);
        self.reordered = false;
        let (mut older, mut newer) = (UnitLog::default(), UnitLog::default());
        for (i, u) in units.into_iter().enumerate() {
            if i == split {
                self.mid = self.mark();
            }
            self.play(u);
            if i < split { &mut older } else { &mut newer }.push(u);
        }
        if newer.is_empty() {
            self.mid = self.mark();
        }
        (self.older, self.newer) = (older, newer);
    }

    /// What the listener experienced so far: every stream, the one still arriving as if
    /// it ended now.
    #[cfg(test)]
    pub fn summary(&mut self) -> PlaybackSummary {
        self.settle();
        let mut streams = self.done.clone().into_vec();
        if let Some(o) = &self.now.open {
            streams.push(o.result(self.now.prev_end));
        }
        PlaybackSummary {
            streams,
            units_past_window: self.past_window,
            spilled: None,
        }
    }

    /// The final summary (the sample ended).
    pub fn finish(mut self) -> PlaybackSummary {
        self.settle();
        self.close_open();
        PlaybackSummary {
            streams: self.done.into_vec(),
            units_past_window: self.past_window,
            spilled: None,
        }
    }

    /// Seconds of stream `stream`'s media the listener had heard by `now_s`, for `now_s`
    /// at or after the latest arrival pushed (the live question: what had played when
    /// something happened). Every stall of a stream ends at one of its arrivals, so by
    /// then the player has only run since its last stall: heard = time since start, up to
    /// its end, less the stalls. A stream that has not started has been heard for 0 s.
    #[cfg(test)]
    pub fn heard_s(&mut self, stream: u64, now_s: f64) -> f64 {
        self.settle();
        let played = |s: &StreamPlayback| {
            let end = s.start_s + s.playback_span_s;
            (now_s.min(end) - s.start_s - s.total_stall_s).max(0.0)
        };
        if let Some(o) = self.now.open.as_ref().filter(|o| o.stream == stream) {
            return match o.player {
                Some(_) => played(&o.result(self.now.prev_end)),
                None => 0.0,
            };
        }
        self.done.find(stream).map_or(0.0, |s| played(&s))
    }
}

#[cfg(test)]
#[path = "listener_tests.rs"]
mod tests;
