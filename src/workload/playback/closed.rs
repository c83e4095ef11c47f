//! The listener's closed streams, compact: a held session closes one stream per
//! response, and most play without a stall, so each keeps 24 bytes ([`Plain`]) instead of
//! a [`StreamPlayback`]'s 88; a stream that stalled, never filled its buffer, or whose
//! number or unit count passes 32 bits keeps its whole record beside.
//! [`Closed::into_vec`] gives back exactly the records pushed, less those let go from
//! the front ([`Closed::let_go`]: the listener's playback role spills them).

use super::super::StreamPlayback;

/// The closed streams (see the module header).
#[derive(Debug, Clone, Default)]
pub(super) struct Closed {
    /// Streams let go from the front: `plain[0]` is the stream closed `first`-th.
    first: usize,
    /// One per closed stream kept, in order.
    pub(super) plain: Vec<Plain>,
    /// `(position, record)` of each closed stream kept that is not plain, in order (the
    /// position counts the streams let go).
    pub(super) other: Vec<(usize, StreamPlayback)>,
}

/// A stream that filled its buffer and never stalled: all its record says besides (its
/// number and unit count saturated at `u32::MAX`; a record they do not fit is kept whole).
#[derive(Debug, Clone, Copy)]
pub(super) struct Plain {
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
    /// Streams closed (those let go included).
    pub(super) fn len(&self) -> usize {
        self.first + self.plain.len()
    }

    /// Appends the next closed stream's record.
    pub(super) fn push(&mut self, s: StreamPlayback) {
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
            self.other.push((self.len(), s));
        }
        crate::util::grow::push(&mut self.plain, plain);
    }

    /// Forgets every stream from the `n`th on (a replay closes them again; never one let
    /// go).
    pub(super) fn truncate(&mut self, n: usize) {
        debug_assert!(n >= self.first, "a stream let go is never replayed");
        self.plain.truncate(n.saturating_sub(self.first));
        while self.other.last().is_some_and(|(at, _)| *at >= n) {
            self.other.pop();
        }
    }

    /// Hands `f` every stream before the `n`th still kept, in order, and forgets them.
    pub(super) fn let_go(&mut self, n: usize, mut f: impl FnMut(&StreamPlayback)) {
        let n = n.min(self.len());
        if n <= self.first {
            return;
        }
        for i in self.first..n {
            f(&self.get(i).expect("kept"));
        }
        self.plain.drain(..n - self.first);
        let other = self.other.partition_point(|(at, _)| *at < n);
        self.other.drain(..other);
        self.first = n;
    }

    /// The `i`th closed stream's record, if it is kept.
    pub(super) fn get(&self, i: usize) -> Option<StreamPlayback> {
        let p = *self.plain.get(i.checked_sub(self.first)?)?;
        match self.other.binary_search_by_key(&i, |(at, _)| *at) {
            Ok(k) => Some(self.other[k].1.clone()),
            Err(_) => Some(p.record()),
        }
    }

    /// The closed record of stream `stream`, if it closed.
    #[cfg(test)]
    pub(super) fn find(&self, stream: u64) -> Option<StreamPlayback> {
        let i = (self.plain).partition_point(|s| u64::from(s.stream) < stream);
        self.get(self.first + i).filter(|s| s.stream == stream)
    }

    /// Every record kept, in order.
    pub(super) fn into_vec(self) -> Vec<StreamPlayback> {
        let mut other = self.other.into_iter().peekable();
        (self.plain.into_iter().enumerate())
            .map(
                |(i, p)| match other.next_if(|(at, _)| *at == self.first + i) {
                    Some((_, s)) => s,
                    None => p.record(),
                },
            )
            .collect()
    }
}
