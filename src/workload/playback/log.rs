//! The units a sample's playback role holds until the sample ends, stored compactly: a
//! long session receives one unit per media delta, and a [`PlayUnit`] is 32 bytes.
//! Consecutive units of one stream whose indices step evenly (a spoken response's units
//! all have index 0; a video's chunk indices go up by one) share one run, kept in about
//! 4 bytes once the next run begins; equal durations in a row are kept once
//! ([`Durations`]); arrivals are kept as nanosecond steps ([`Arrivals`]). A unit at an
//! even cadence costs 4–5 bytes, 16 at worst. [`UnitLog::units`] gives back exactly the
//! units pushed, in order (a proptest holds it on arbitrary units).

use std::time::Duration;

use super::PlayUnit;
use crate::util::{grow, leb128};

/// A stretch of consecutive units of one stream whose indices go
/// `first, first + step, first + 2·step, …` (wrapping, so any sequence is exact).
#[derive(Debug, Clone, Copy)]
struct Run {
    stream: u64,
    first: u64,
    step: u64,
    len: u64,
}

impl Run {
    /// The index the run's next unit would have.
    fn next_index(&self) -> u64 {
        self.first.wrapping_add(self.step.wrapping_mul(self.len))
    }
}

/// The units' durations in order: equal ones in a row kept once while that is the
/// smaller form, one per unit once changes are frequent.
#[derive(Debug, Clone)]
enum Durations {
    /// `(duration, how many in a row)`.
    Runs(Vec<(f64, u32)>),
    /// One per unit.
    Each(Vec<f64>),
}

impl Default for Durations {
    fn default() -> Self {
        Self::Runs(Vec::new())
    }
}

impl Durations {
    /// Appends `d`; `n` units were pushed before it.
    fn push(&mut self, d: f64, n: usize) {
        let runs = match self {
            Self::Each(each) => return grow::push(each, d),
            Self::Runs(runs) => runs,
        };
        if let Some((v, k)) = runs.last_mut()
            && v.to_bits() == d.to_bits()
            && *k < u32::MAX
        {
            *k += 1;
        } else if runs.len() >= 16 && runs.len() * 2 > n {
            // A change every other unit or more: one per unit is smaller.
            let mut each = Self::Runs(std::mem::take(runs)).all();
            each.push(d);
            *self = Self::Each(each);
        } else {
            grow::push(runs, (d, 1));
        }
    }

    /// Every duration, in order.
    fn all(&self) -> Vec<f64> {
        match self {
            Self::Runs(runs) => (runs.iter())
                .flat_map(|&(v, k)| std::iter::repeat_n(v, k as usize))
                .collect(),
            Self::Each(each) => each.clone(),
        }
    }
}

/// Units in receipt order: about 5 bytes each at a steady cadence (16 at worst) plus
/// about 4 bytes per run.
#[derive(Debug, Default, Clone)]
pub struct UnitLog {
    /// Every run before `open`, as LEB128: the stream's step from the run before
    /// (zigzag), the first index, the step, the length.
    runs: Vec<u8>,
    /// The stream of the last run in `runs`.
    last_stream: u64,
    /// The run units are still joining.
    open: Option<Run>,
    arrivals: Arrivals,
    durations: Durations,
}

impl UnitLog {
    /// Appends `u`.
    pub fn push(&mut self, u: PlayUnit) {
        match self.open.as_mut() {
            Some(r) if r.stream == u.stream && r.len == 1 => {
                r.step = u.index.wrapping_sub(r.first);
                r.len = 2;
            }
            Some(r) if r.stream == u.stream && r.next_index() == u.index => r.len += 1,
            _ => {
                let next = Run {
                    stream: u.stream,
                    first: u.index,
                    step: 0,
                    len: 1,
                };
                if let Some(r) = self.open.replace(next) {
                    self.close(r);
                }
            }
        }
        self.durations.push(u.duration_s, self.arrivals.len);
        self.arrivals.push(u.arrival_s);
    }

    fn close(&mut self, r: Run) {
        let step = r.stream.wrapping_sub(self.last_stream) as i64;
        grow::put_leb128(&mut self.runs, leb128::zigzag(step));
        for n in [r.first, r.step, r.len] {
            grow::put_leb128(&mut self.runs, n);
        }
        self.last_stream = r.stream;
    }

    /// Units pushed.
    pub fn len(&self) -> usize {
        self.arrivals.len
    }

    /// Nothing pushed.
    pub fn is_empty(&self) -> bool {
        self.arrivals.len == 0
    }

    /// Runs of units so far.
    #[cfg(test)]
    fn run_count(&self) -> usize {
        self.all_runs().len()
    }

    /// Heap bytes held (the buffers' capacities).
    #[cfg(test)]
    fn heap_bytes(&self) -> usize {
        let durations = match &self.durations {
            Durations::Runs(r) => r.capacity() * 16,
            Durations::Each(e) => e.capacity() * 8,
        };
        self.runs.capacity() + self.arrivals.bytes.capacity() + durations
    }

    fn all_runs(&self) -> Vec<Run> {
        let (mut out, mut at, mut stream) = (Vec::new(), 0, 0u64);
        let mut next = || leb128::get(&self.runs, &mut at);
        while let Some(z) = next() {
            stream = stream.wrapping_add(leb128::unzigzag(z) as u64);
            let mut field = || next().expect("a run is written whole");
            let (first, step, len) = (field(), field(), field());
            out.push(Run {
                stream,
                first,
                step,
                len,
            });
        }
        out.extend(self.open);
        out
    }

    /// Every unit pushed, in order, exactly as pushed.
    pub fn units(&self) -> Vec<PlayUnit> {
        let mut out = Vec::with_capacity(self.len());
        let durations = self.durations.all();
        let arrivals = self.arrivals.all();
        for r in self.all_runs() {
            for k in 0..r.len {
                let i = out.len();
                out.push(PlayUnit {
                    stream: r.stream,
                    index: r.first.wrapping_add(r.step.wrapping_mul(k)),
                    arrival_s: arrivals[i],
                    duration_s: durations[i],
                });
            }
        }
        out
    }
}

/// Arrival times, exact: an arrival that is a whole number of nanoseconds as the
/// playback role computes it ([`Duration::as_secs_f64`] of the time since the socket
/// opened, which every real one is) is kept as its step from the previous such one in
/// nanoseconds (LEB128 of `2·zigzag`: 4–5 bytes for steps under a second); any other
/// value is kept as its 8 bytes behind a `1`. Checked per value, bit for bit.
#[derive(Debug, Default, Clone)]
struct Arrivals {
    bytes: Vec<u8>,
    /// The last whole-nanosecond arrival.
    last_ns: u64,
    len: usize,
}

/// Arrivals past this many seconds (~126 years) are kept whole: a step then always fits.
const MAX_NS_ARRIVAL_S: f64 = 4.0e9;

impl Arrivals {
    fn push(&mut self, x: f64) {
        self.len += 1;
        if (0.0..MAX_NS_ARRIVAL_S).contains(&x) {
            let ns = (x * 1e9).round() as u64;
            if Duration::from_nanos(ns).as_secs_f64().to_bits() == x.to_bits() {
                let step = ns as i64 - self.last_ns as i64;
                grow::put_leb128(&mut self.bytes, leb128::zigzag(step) << 1);
                self.last_ns = ns;
                return;
            }
        }
        grow::reserve(&mut self.bytes, 9);
        leb128::put(&mut self.bytes, 1);
        self.bytes.extend_from_slice(&x.to_bits().to_le_bytes());
    }

    fn all(&self) -> Vec<f64> {
        let (mut out, mut at, mut last_ns) = (Vec::with_capacity(self.len), 0, 0u64);
        while let Some(v) = leb128::get(&self.bytes, &mut at) {
            if v == 1 {
                let raw: [u8; 8] = self.bytes[at..at + 8].try_into().expect("8 bytes");
                at += 8;
                out.push(f64::from_bits(u64::from_le_bytes(raw)));
            } else {
                last_ns = (last_ns as i64 + leb128::unzigzag(v >> 1)) as u64;
                out.push(Duration::from_nanos(last_ns).as_secs_f64());
            }
        }
        out
    }
}

#[cfg(test)]
#[path = "log_tests.rs"]
mod tests;
