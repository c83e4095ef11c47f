//! The units a sample's playback role holds until the sample ends, stored compactly: a
//! long session receives one unit per media delta, and a [`PlayUnit`] is 32 bytes.
//! Consecutive units of one stream whose indices step evenly (a spoken response's units
//! all have index 0; a video's chunk indices go up by one) share one run header, so a
//! unit costs its arrival and its duration: 16 bytes. [`UnitLog::units`] gives back
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

/// Units in receipt order, 16 bytes each plus a header per run.
#[derive(Debug, Default, Clone)]
pub struct UnitLog {
    runs: Vec<Run>,
    arrivals: Vec<f64>,
    durations: Vec<f64>,
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
        self.arrivals.push(u.arrival_s);
        self.durations.push(u.duration_s);
    }

    /// Units pushed.
    pub fn len(&self) -> usize {
        self.arrivals.len()
    }

    /// Nothing pushed.
    pub fn is_empty(&self) -> bool {
        self.arrivals.is_empty()
    }

    /// Every unit pushed, in order, exactly as pushed.
    pub fn units(&self) -> Vec<PlayUnit> {
        let mut out = Vec::with_capacity(self.len());
        for r in &self.runs {
            for k in 0..r.len {
                let i = out.len();
                out.push(PlayUnit {
                    stream: r.stream,
                    index: r.first.wrapping_add(r.step.wrapping_mul(k)),
                    arrival_s: self.arrivals[i],
                    duration_s: self.durations[i],
                });
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(stream: u64, index: u64, arrival_s: f64) -> PlayUnit {
        PlayUnit {
            stream,
            index,
            arrival_s,
            duration_s: 0.02 * (1 + index % 3) as f64,
        }
    }

    #[test]
    fn a_spoken_answer_and_a_video_cost_one_header_each() {
        let mut log = UnitLog::default();
        let spoken: Vec<_> = (0..100).map(|k| unit(3, 0, 0.1 * k as f64)).collect();
        let video: Vec<_> = (0..100)
            .map(|k| unit(0, k, 10.0 + 0.05 * k as f64))
            .collect();
        for u in spoken.iter().chain(&video) {
            log.push(*u);
        }
        assert_eq!(log.runs.len(), 2);
        assert_eq!(log.len(), 200);
        assert_eq!(log.units(), [spoken, video].concat());
    }

    proptest::proptest! {
        /// Whatever the streams and indices (out of order, repeated, huge), the log gives
        /// back exactly what was pushed.
        #[test]
        fn gives_back_exactly_what_was_pushed(
            raw in proptest::collection::vec(
                (0..4u64, proptest::prop_oneof![0..8u64, proptest::num::u64::ANY], 0.0..1e4f64),
                0..200,
            ),
        ) {
            let pushed: Vec<_> = raw.iter().map(|&(s, i, a)| unit(s, i, a)).collect();
            let mut log = UnitLog::default();
            for u in &pushed {
                log.push(*u);
            }
            proptest::prop_assert_eq!(log.is_empty(), pushed.is_empty());
            proptest::prop_assert_eq!(log.units(), pushed);
        }
    }
}
