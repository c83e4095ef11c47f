//! Barge-in on the duplex endpoint (`[server.duplex.barge_in]`): a per-append speech
//! detector on the input's RMS level, and what the plan does when the user starts
//! speaking over a playing response — `speech_started` at once, then after the reaction
//! time `output_audio_buffer.cleared`, a cancelled `response.done` if it was still
//! sending, and the answer to the interrupting speech. Pure: levels and offsets in.

use std::time::Duration;

use super::events::{barged_done_event, cleared_event, speech_started_event};
use super::{Action, DuplexPlan, Effect, INPUT_BYTES_PER_S, millis};
use crate::server::config::BargeIn;
pub(crate) use crate::util::wav::pcm16_rms as rms;

/// Speech or not, judged append by append.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Vad {
    /// Linear RMS (of i16 samples) from which an append is speech.
    threshold_rms: f64,
    /// Quiet input that ends speech, bytes.
    silence_bytes: u64,
    speaking: bool,
    quiet_bytes: u64,
    /// The reaction time.
    pub(super) reaction: Duration,
}

impl Vad {
    /// The detector `cfg` describes.
    pub(super) fn new(cfg: &BargeIn) -> Vad {
        Vad {
            threshold_rms: 32_768.0 * 10f64.powf(cfg.threshold_dbfs / 20.0),
            silence_bytes: (cfg.silence_ms * INPUT_BYTES_PER_S as f64 / 1000.0).round() as u64,
            speaking: false,
            quiet_bytes: 0,
            reaction: millis(cfg.reaction_ms),
        }
    }

    /// One append of `bytes` PCM at level `rms`: `true` when it starts speech.
    pub(super) fn feed(&mut self, rms: f64, bytes: u64) -> bool {
        if rms >= self.threshold_rms {
            self.quiet_bytes = 0;
            return !std::mem::replace(&mut self.speaking, true);
        }
        self.quiet_bytes = self.quiet_bytes.saturating_add(bytes);
        if self.quiet_bytes >= self.silence_bytes {
            self.speaking = false;
        }
        false
    }
}

impl DuplexPlan {
    /// An accepted append of `bytes` at level `rms`, received at `at`: the speech start
    /// it makes, if any, and the interruption that follows.
    pub(super) fn hear(&mut self, rms: f64, bytes: u64, at: Duration) -> Vec<Action> {
        let Some(vad) = self.vad.as_mut() else {
            return Vec::new();
        };
        if !vad.feed(rms, bytes) {
            return Vec::new();
        }
        let due = at + vad.reaction;
        let start_ms = self.input_bytes.saturating_sub(bytes) * 1000 / INPUT_BYTES_PER_S;
        if let Some(index) = self.playing() {
            // Decided now (a second speech start cannot pick it again); it takes effect
            // after the reaction time.
            self.responses[index].cancelled = true;
            let id = self.responses[index].id.clone();
            self.push(
                due,
                Action::Send(cleared_event(&id)),
                Effect::Interrupt { index },
            );
        }
        vec![Action::Send(speech_started_event(start_ms))]
    }

    /// The response a listener is hearing: the latest one created and not cancelled that
    /// is still sending, or whose audio is not acknowledged as fully played.
    fn playing(&self) -> Option<usize> {
        self.responses.iter().rposition(|r| {
            r.created && !r.cancelled && (!r.done || r.played_ms != Some(r.audio_ms))
        })
    }

    /// The interruption of response `index` takes effect at `due` (its `cleared` was
    /// just sent): it and the responses queued behind it stop, and, while the input is
    /// open, the answer to the interrupting speech starts.
    pub(super) fn interrupt(&mut self, index: usize, due: Duration) {
        let stopping: Vec<usize> = (index..self.responses.len())
            .filter(|&i| {
                let r = &self.responses[i];
                !r.done && (i == index || !r.cancelled)
            })
            .collect();
        self.timeline
            .retain(|e| !e.response.is_some_and(|i| stopping.contains(&i)));
        for &i in &stopping {
            self.responses[i].cancelled = true;
            if self.responses[i].created {
                // The client saw it start: it ends, cancelled (the done effect closes it).
                let done = barged_done_event(&self.responses[i].id);
                self.push_for(Some(i), due, Action::Send(done), Effect::Done { index: i });
            } else {
                self.by_id.remove(&self.responses[i].id);
                self.open = self.open.saturating_sub(1);
            }
        }
        self.busy_until = due;
        if self.commit == super::Commit::Open {
            self.schedule_response(due);
        }
    }
}

#[cfg(test)]
#[path = "barge_tests.rs"]
mod tests;
