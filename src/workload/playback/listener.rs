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
//! changes what came before it, so the listener keeps every unit in a [`UnitLog`] (8–16
//! bytes each) and, the next time it is asked, replays them in order: exact, and paid
//! only when a server reorders. Each closed stream's result is kept in 24 bytes when it
//! played without a stall ([`Closed`]).

use super::{PlayUnit, PlaybackConfig, PlaybackSummary, StreamPlayback, UnitLog};

/// A listener fed unit by unit (see the module header).
#[derive(Debug, Clone)]
pub struct Listener {
    cfg: PlaybackConfig,
    /// Streams that a later stream's first unit closed, in stream order.
    done: Closed,
    /// Where the last closed stream's playback ended.
    prev_end: Option<f64>,
    /// The stream being received.
    open: Option<Open>,
    /// The largest `(stream, index)` played so far.
    last_key: Option<(u64, u64)>,
    /// Every unit pushed, in receipt order (for the replay after a reordering).
    log: UnitLog,
    /// A unit arrived out of order: the state above is stale until [`Listener::settle`].
    reordered: bool,
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

/// The closed streams, compact: a held session closes one per response, and most play
/// without a stall, so each keeps 24 bytes ([`Plain`]) instead of a [`StreamPlayback`]'s
/// 88; a stream that stalled, never filled its buffer, or whose number or unit count
/// passes 32 bits keeps its whole record beside.
/// [`Closed::into_vec`] gives back exactly the records pushed.
#[derive(Debug, Clone, Default)]
struct Closed {
    /// One per closed stream, in order.
    plain: Vec<Plain>,
    /// `(position, record)` of each closed stream that is not plain, in order.
    other: Vec<(usize, StreamPlayback)>,
}

/// A stream that filled its buffer and never stalled: all its record says besides (its
/// number and unit count saturated at `u32::MAX`; a record they do not fit is kept whole).
#[derive(Debug, Clone, Copy)]
struct Plain {
    stream: u32,
    units: u32,
    start_s: f64,
    playback_span_s: f64,
}

impl Plain {
    fn record(self) -> StreamPlayback {
        StreamPlayback {
            stream: self.stream.into(),
            units: self.units.into(),
            buffer_filled: true,
            start_s: self.start_s,
            stall_count: 0,
            total_stall_s: 0.0,
            time_to_first_stall_s: None,
            first_stall_index: None,
            playback_span_s: self.playback_span_s,
        }
    }
}

impl Closed {
    fn push(&mut self, s: StreamPlayback) {
        let plain = Plain {
            stream: u32::try_from(s.stream).unwrap_or(u32::MAX),
            units: u32::try_from(s.units).unwrap_or(u32::MAX),
            start_s: s.start_s,
            playback_span_s: s.playback_span_s,
        };
        // Bit for bit: the record rebuilt from `plain` must be this one.
        let is_plain = u64::from(plain.stream) == s.stream
            && u64::from(plain.units) == s.units
            && s.buffer_filled
            && s.stall_count == 0
            && s.total_stall_s.to_bits() == 0
            && s.time_to_first_stall_s.is_none()
            && s.first_stall_index.is_none();
        if !is_plain {
            self.other.push((self.plain.len(), s));
        }
        crate::util::grow::push(&mut self.plain, plain);
    }

    #[cfg(test)]
    fn get(&self, i: usize) -> Option<StreamPlayback> {
        let p = *self.plain.get(i)?;
        match self.other.binary_search_by_key(&i, |(at, _)| *at) {
            Ok(k) => Some(self.other[k].1.clone()),
            Err(_) => Some(p.record()),
        }
    }

    fn into_vec(self) -> Vec<StreamPlayback> {
        let mut other = self.other.into_iter().peekable();
        (self.plain.into_iter().enumerate())
            .map(|(i, p)| match other.next_if(|(at, _)| *at == i) {
                Some((_, s)) => s,
                None => p.record(),
            })
            .collect()
    }
}

impl Listener {
    /// A listener that buffers as `cfg` says before it starts each stream.
    pub fn new(cfg: PlaybackConfig) -> Self {
        Listener {
            cfg,
            done: Closed::default(),
            prev_end: None,
            open: None,
            last_key: None,
            log: UnitLog::default(),
            reordered: false,
        }
    }

    /// One unit, in receipt order.
    pub fn push(&mut self, u: PlayUnit) {
        self.log.push(u);
        if !self.reordered {
            self.play(u);
        }
    }

    /// Units pushed so far.
    #[cfg(test)]
    pub fn units(&self) -> usize {
        self.log.len()
    }

    fn play(&mut self, u: PlayUnit) {
        let key = (u.stream, u.index);
        if self.last_key.is_some_and(|k| key < k) {
            self.reordered = true;
            return;
        }
        self.last_key = Some(key);
        if self.open.as_ref().is_some_and(|o| o.stream != u.stream) {
            self.close_open();
        }
        let cfg = self.cfg;
        let prev_end = self.prev_end;
        self.open
            .get_or_insert_with(|| Open::new(u.stream))
            .push(u, cfg, prev_end);
    }

    fn close_open(&mut self) {
        if let Some(o) = self.open.take() {
            let s = o.result(self.prev_end);
            self.prev_end = Some(s.start_s + s.playback_span_s);
            self.done.push(s);
        }
    }

    /// After a unit arrived out of order: replay every unit in `(stream, index)` order
    /// (stable: equal keys keep their receipt order, as the batch's sort does).
    fn settle(&mut self) {
        if !self.reordered {
            return;
        }
        let mut units = self.log.units();
        units.sort_by_key(|u| (u.stream, u.index));
        let log = std::mem::take(&mut self.log);
        *self = Listener::new(self.cfg);
        for u in units {
            self.play(u);
        }
        self.log = log;
    }

    /// What the listener experienced so far: every stream, the one still arriving as if
    /// it ended now.
    #[cfg(test)]
    pub fn summary(&mut self) -> PlaybackSummary {
        self.settle();
        let mut streams = self.done.clone().into_vec();
        if let Some(o) = &self.open {
            streams.push(o.result(self.prev_end));
        }
        PlaybackSummary { streams }
    }

    /// The final summary (the sample ended).
    pub fn finish(mut self) -> PlaybackSummary {
        self.settle();
        self.close_open();
        PlaybackSummary {
            streams: self.done.into_vec(),
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
        if let Some(o) = self.open.as_ref().filter(|o| o.stream == stream) {
            return match o.player {
                Some(_) => played(&o.result(self.prev_end)),
                None => 0.0,
            };
        }
        let i = (self.done.plain).partition_point(|s| u64::from(s.stream) < stream);
        (self.done.get(i))
            .filter(|s| s.stream == stream)
            .map_or(0.0, |s| played(&s))
    }
}

#[cfg(test)]
#[path = "listener_tests.rs"]
mod tests;
