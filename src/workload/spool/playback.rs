//! The closed playback streams a sample's playback role let go of as it ran, read back
//! after the run ([`restore_run`]): the one read that puts them before the streams the
//! listener still held, in `SampleRecord::playback`.
//!
//! While the run is live a summary with spilled streams carries their tallies
//! ([`crate::workload::playback::SpilledStreams`]: how many, their stalls, the first),
//! which is what the coordinator, the progress line and the outcome rules read. After the
//! run (at the start of publication, beside the send lateness) the runner flushes the
//! spool and [`restore_run`] decodes each sample's records: every output (the JSON's
//! `listener_playback`, the per-response stall metrics, the video viewer) reads the
//! records the listener closed, bit for bit (`engine/playback_tests.rs` holds a spilled
//! session's restored summary equal to an unspilled one's).

use super::Spool;
use crate::workload::{Failure, FailureKind, RunRecord, SampleRecord};

/// Reads every sample's spilled playback streams back into its summary (call once every
/// sample has ended; flushes `spool` first when a sample spilled to it). A sample whose
/// records cannot be read back fails with a `report` failure naming why, and keeps no
/// stream (its figures are missing, never partial).
pub fn restore_run<O>(run: &mut RunRecord<O>, spool: Option<&Spool>) {
    let spilled = |s: &SampleRecord<O>| {
        (s.playback.as_ref()).is_some_and(|p| {
            p.spilled
                .as_ref()
                .is_some_and(|x| x.parts.spilled.is_some())
        })
    };
    if let Some(spool) = spool.filter(|_| run.samples.iter().any(spilled)) {
        spool.flush();
    }
    for s in &mut run.samples {
        restore_sample(s, spool);
    }
}

/// [`restore_run`] for one sample (`spool` already flushed).
pub fn restore_sample<O>(s: &mut SampleRecord<O>, spool: Option<&Spool>) {
    let Some(p) = s.playback.as_mut() else {
        return;
    };
    let Some(spilled) = p.spilled.take() else {
        return;
    };
    match spilled.records(spool) {
        Ok(mut records) => {
            records.append(&mut p.streams);
            p.streams = records;
        }
        Err(e) => {
            p.streams.clear();
            if s.outcome.is_ok() {
                let msg = format!("playback streams could not be read back: {e}");
                s.outcome = Err(Failure::new(FailureKind::Report, msg));
            }
        }
    }
}
