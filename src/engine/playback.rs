//! The playback role. **Owns** the sample's one listener/viewer simulation
//! ([`Listener`]) and its clock origin (the instant the socket opened). Its job: play
//! every [`MediaUnit`] the session emits the moment the session emits it (stamped at the
//! receipt of the message that carried it), so its state is at every instant what the
//! listener has experienced so far — stalls included — and, when the sample ends, the
//! sample's [`PlaybackSummary`] (`SampleRecord::playback`), which the reports print. No
//! other simulation of the listener runs for the sample's figures.

use tokio::time::Instant;

use crate::workload::MediaUnit;
use crate::workload::playback::{Listener, PlayUnit, PlaybackConfig, PlaybackSummary};

/// The playback role (see the module header).
pub struct Playback {
    origin: Instant,
    listener: Listener,
}

impl Playback {
    /// A listener buffering as `cfg` says, on a clock starting at `origin`.
    pub fn new(cfg: PlaybackConfig, origin: Instant) -> Self {
        Playback {
            origin,
            listener: Listener::new(cfg),
        }
    }

    /// Plays `u` as it arrives.
    pub fn play(&mut self, u: &MediaUnit) {
        self.listener.push(PlayUnit {
            stream: u.stream,
            index: u.index,
            arrival_s: u.at.saturating_duration_since(self.origin).as_secs_f64(),
            duration_s: u.duration_s,
        });
    }

    /// The listener as it stands (what it had heard at an instant, its summary so far).
    #[cfg(test)]
    pub fn listener(&mut self) -> &mut Listener {
        &mut self.listener
    }

    /// The sample ended: what the listener experienced.
    pub fn finish(self) -> PlaybackSummary {
        self.listener.finish()
    }
}
