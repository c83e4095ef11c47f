//! The units a sample's playback role holds until the sample ends, stored compactly: a
//! long session receives one unit per media delta, and a [`PlayUnit`] is 32 bytes.
//! Consecutive units of one stream whose indices step evenly (a spoken response's units
//! all have index 0; a video's chunk indices go up by one) share one run header, and
//! equal durations in a row are kept once ([`Durations`]), so a unit costs its arrival
//! (8 bytes) at an even cadence and 16 bytes at worst. [`UnitLog::units`] gives back
//! exactly the units pushed, in order.

use super::PlayUnit;

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
            Self::Each(each) => return each.push(d),
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
            runs.push((d, 1));
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

/// Units in receipt order: 8 to 16 bytes each plus a header per run.
#[derive(Debug, Default, Clone)]
pub struct UnitLog {
    runs: Vec<Run>,
    arrivals: Vec<f64>,
    durations: Durations,
}

impl UnitLog {
    /// Appends `u`.
    pub fn push(&mut self, u: PlayUnit) {
        match self.runs.last_mut() {
            Some(r) if r.stream == u.stream && r.len == 1 => {
                r.step = u.index.wrapping_sub(r.first);
                r.len = 2;
            }
            Some(r) if r.stream == u.stream && r.next_index() == u.index => r.len += 1,
            _ => self.runs.push(Run {
                stream: u.stream,
                first: u.index,
                step: 0,
                len: 1,
            }),
        }
        self.durations.push(u.duration_s, self.arrivals.len());
        self.arrivals.push(u.arrival_s);
    }

    /// Units pushed.
    pub fn len(&self) -> usize {
        self.arrivals.len()
    }

    /// Nothing pushed.
    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.arrivals.is_empty()
    }

    /// Every unit pushed, in order, exactly as pushed.
    pub fn units(&self) -> Vec<PlayUnit> {
        let mut out = Vec::with_capacity(self.len());
        let durations = self.durations.all();
        for r in &self.runs {
            for k in 0..r.len {
                let i = out.len();
                out.push(PlayUnit {
                    stream: r.stream,
                    index: r.first.wrapping_add(r.step.wrapping_mul(k)),
                    arrival_s: self.arrivals[i],
                    duration_s: durations[i],
                });
            }
        }
        out
    }
}

#[cfg(test)]
#[path = "log_tests.rs"]
mod tests;
