//! The duplex endpoint's ears (`[server.duplex.vad]`): a per-append speech detector on
//! the input's RMS level, and what the plan does with it — `speech_started` /
//! `speech_stopped` at once, a response at each end of speech under server-VAD turns,
//! and barge-in: when the user starts speaking over a playing response, after the
//! reaction time `output_audio_buffer.cleared`, a cancelled `response.done` if it was
//! still sending, and the answer to the interrupting speech. Pure: levels and offsets in.

use std::time::Duration;

use super::super::vad::{Heard, Vad};
use super::events::{barged_done_event, cleared_event, speech_started_event, speech_stopped_event};
use super::{Action, DuplexPlan, Effect, INPUT_BYTES_PER_S, millis};
use crate::server::config::{TurnMode, VadConfig};
#[cfg(test)]
use crate::util::wav::pcm16_rms as rms;

/// The detector with the barge-in reaction time, if barge-in is on.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Ears {
    vad: Vad,
    reaction: Option<Duration>,
}

impl Ears {
    /// The detector `cfg` describes (silence counted in input bytes, 16 kHz PCM16).
    pub(super) fn new(cfg: &VadConfig) -> Ears {
        let silence_bytes = (cfg.silence_ms * INPUT_BYTES_PER_S as f64 / 1000.0).round() as u64;
        Ears {
            vad: Vad::new(cfg.threshold_dbfs, silence_bytes),
            reaction: cfg.barge_in_reaction_ms.map(millis),
        }
    }
}

impl DuplexPlan {
    /// An accepted append of `bytes` at level `rms`, received at `at` (the input count
    /// already includes it): the speech start or end it makes, if any, and what follows
    /// (an interruption, a server-VAD turn's response).
    pub(super) fn hear(&mut self, rms: f64, bytes: u64, at: Duration) -> Vec<Action> {
        let Some(ears) = self.vad.as_mut() else {
            return Vec::new();
        };
        let reaction = ears.reaction;
        match ears.vad.feed(rms, bytes) {
            Heard::Same => Vec::new(),
            Heard::Started => self.speech_started(bytes, reaction.map(|r| at + r)),
            Heard::Stopped { quiet_bytes } => {
                let end_ms =
                    self.input_bytes.saturating_sub(quiet_bytes) * 1000 / INPUT_BYTES_PER_S;
                if self.cfg.turns == TurnMode::ServerVad && self.commit == super::Commit::Open {
                    self.schedule_response(at);
                }
                vec![Action::Send(speech_stopped_event(end_ms))]
            }
        }
    }

    /// Speech started with the last append (`bytes` long): `speech_started`, and with
    /// barge-in (`interrupt_at`) the playing response's interruption.
    fn speech_started(&mut self, bytes: u64, interrupt_at: Option<Duration>) -> Vec<Action> {
        let start_ms = self.input_bytes.saturating_sub(bytes) * 1000 / INPUT_BYTES_PER_S;
        if let Some(due) = interrupt_at
            && let Some(index) = self.playing()
        {
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

    /// A turn's commit (`"final": false`, `turns = "commit"`) received at `at`: it is
    /// acknowledged and answered (after any response still in flight).
    pub(super) fn turn_commit(&mut self, at: Duration) -> Vec<Action> {
        let input_ms = self.input_bytes * 1000 / INPUT_BYTES_PER_S;
        self.schedule_response(at);
        vec![Action::Send(super::events::committed_event(
            input_ms, false,
        ))]
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
                self.push_for(
                    Some(i),
                    due,
                    Action::Send(done).into(),
                    Effect::Done { index: i },
                );
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
#[path = "speech_tests.rs"]
mod tests;
