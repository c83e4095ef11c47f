//! The playback role. **Owns** the sample's one listener/viewer simulation
//! ([`Listener`]) and its clock origin (the instant the socket opened). Its job: play
//! every [`MediaUnit`] the session emits the moment the session emits it (stamped at the
//! receipt of the message that carried it), so its state is at every instant what the
//! listener has experienced so far — stalls included — and, when the sample ends, the
//! sample's [`PlaybackSummary`] (`SampleRecord::playback`), which the reports print. No
//! other simulation of the listener runs for the sample's figures.
//!
//! In a run with a spool, each closed stream that nothing can change any more
//! ([`Listener::let_go`]) goes to a log of the sample's own there (512 bytes in memory,
//! as the send lateness; no IO here), tallied as it goes ([`SpilledStreams`]), so a held
//! session's playback memory stays within its window; the records are read back after
//! the run ([`crate::workload::spool::playback::restore_run`]).

use tokio::time::Instant;

use crate::workload::MediaUnit;
use crate::workload::playback::{
    Listener, PlayUnit, PlaybackConfig, PlaybackSummary, SpilledStreams,
};
use crate::workload::spool::SessionSpool;
use crate::workload::spool::spilled::SpilledLog;

/// How a sample's playback role buffers, and where it spills.
#[derive(Debug, Default)]
pub struct PlaybackSetup {
    /// How the listener buffers before it starts each stream.
    pub cfg: PlaybackConfig,
    /// The sample's own log in the run's spool for the closed streams it lets go of
    /// (`None`: they stay in memory).
    pub spool: Option<SessionSpool>,
}

/// The playback role (see the module header).
pub struct Playback {
    origin: Instant,
    listener: Listener,
    /// Where closed streams go once nothing can change them, and their tallies (`None`:
    /// they stay in the listener).
    spill: Option<(SpilledLog, SpilledStreams)>,
    /// One record's bytes.
    scratch: Vec<u8>,
}

impl Playback {
    /// A listener buffering as `setup.cfg` says, on a clock starting at `origin`,
    /// spilling its settled streams to `setup.spool` when there is one.
    pub fn new(setup: PlaybackSetup, origin: Instant) -> Self {
        let spill = (setup.spool).map(|s| (SpilledLog::spilling(s), SpilledStreams::default()));
        Playback {
            origin,
            listener: Listener::new(setup.cfg),
            spill,
            scratch: Vec::new(),
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
        if let Some((log, tally)) = &mut self.spill {
            let scratch = &mut self.scratch;
            self.listener.let_go(|s| {
                scratch.clear();
                tally.add(s, scratch);
                log.push(scratch);
            });
        }
    }

    /// The listener as it stands (what it had heard at an instant, its summary so far).
    #[cfg(test)]
    pub fn listener(&mut self) -> &mut Listener {
        &mut self.listener
    }

    /// The sample ended: what the listener experienced (the streams let go unread).
    pub fn finish(self) -> PlaybackSummary {
        let mut summary = self.listener.finish();
        if let Some((log, mut tally)) = self.spill.filter(|(_, t)| t.count > 0) {
            tally.parts = log.into_parts();
            summary.spilled = Some(tally);
        }
        summary
    }
}

#[cfg(test)]
#[path = "playback_tests.rs"]
mod tests;
