//! Barge-in metrics over a run: each measured successful session that interrupted its
//! agent ([`crate::workload::omni::session::barge`]) contributes one value per metric
//! it reached; the terminal block is read from the same recorded values.

use super::CaseRun;
use crate::workload::results::Recorded;

/// Onset → the interrupted reply stopped (cleared, cancelled or its last audio), ms.
pub const STOP_MS: &str = "barge_in_stop_ms";
/// The reply's audio received after the onset, ms.
pub const AUDIO_AFTER_MS: &str = "barge_in_audio_after_onset_ms";
/// The reply's audio the listener heard after the onset, ms.
pub const HEARD_AFTER_MS: &str = "barge_in_heard_after_onset_ms";
/// Onset → first audio of the answer to the interrupting speech, ms.
pub const ANSWER_MS: &str = "barge_in_answer_ms";

/// The metrics with their terminal labels, in display order.
const ROWS: [(&str, &str); 4] = [
    (STOP_MS, "Stop latency (ms)"),
    (AUDIO_AFTER_MS, "Reply audio received after onset (ms)"),
    (HEARD_AFTER_MS, "Reply audio heard after onset (ms)"),
    (ANSWER_MS, "Answer latency (ms)"),
];

/// Record every measured successful session's barge-in values into `rec`.
pub(super) fn record(rec: &mut Recorded, runs: &[CaseRun<'_>]) {
    for r in runs.iter().filter(|r| r.outcome.success) {
        let Some(b) = r.out.and_then(|o| o.barge_in.as_ref()) else {
            continue;
        };
        let at = r.sample.ended_s;
        for (name, v) in [
            (STOP_MS, b.stop_ms),
            (AUDIO_AFTER_MS, b.audio_after_onset_ms),
            (HEARD_AFTER_MS, b.heard_after_onset_ms),
            (ANSWER_MS, b.answer_ms),
        ] {
            if let Some(v) = v {
                rec.push(name, at, v);
            }
        }
    }
}

/// The terminal block, when any session interrupted its agent.
pub(super) fn text(rec: &Recorded, sessions: usize, pcts: &[f64]) -> String {
    if sessions == 0 {
        return String::new();
    }
    super::block::block(
        "Barge-in",
        &[
            ("Sessions interrupting:", sessions),
            ("Replies stopped:", rec.values(STOP_MS).len()),
        ],
        &ROWS,
        rec,
        pcts,
    )
}
