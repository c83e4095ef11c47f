//! Per-turn metrics over a run: every turn of every measured successful session that
//! spoke turns ([`crate::workload::omni::session::turns`]) contributes one value per
//! metric it reached; the terminal block reads the same recorded values.

use super::CaseRun;
use crate::workload::results::{Recorded, Stamp};

/// End of the user's speech → the reply's first audio, ms.
pub const FIRST_AUDIO_MS: &str = "turn_first_audio_ms";
/// End of the user's speech → the reply's first non-empty text, ms.
pub const FIRST_TEXT_MS: &str = "turn_first_text_ms";
/// The server's `speech_stopped` → the reply's first audio, ms.
pub const VAD_STOP_MS: &str = "vad_stop_to_first_audio_ms";
/// The turn's explicit commit → the reply's first audio, ms.
pub const COMMIT_MS: &str = "explicit_commit_to_first_audio_ms";

/// The metrics with their terminal labels, in display order.
const ROWS: [(&str, &str); 4] = [
    (FIRST_AUDIO_MS, "End of speech to first audio (ms)"),
    (FIRST_TEXT_MS, "End of speech to first text (ms)"),
    (VAD_STOP_MS, "Server speech_stopped to first audio (ms)"),
    (COMMIT_MS, "Commit to first audio (ms)"),
];

/// Record every turn's values of every measured successful session into `rec`.
pub(super) fn record(rec: &mut Recorded, runs: &[CaseRun<'_>]) {
    for r in runs.iter().filter(|r| r.outcome.success) {
        let at = r.sample.ended_s;
        for t in r.out.map_or(&[][..], |o| &o.turns[..]) {
            for (name, v) in [
                (FIRST_AUDIO_MS, t.first_audio_ms),
                (FIRST_TEXT_MS, t.first_text_ms),
                (VAD_STOP_MS, t.vad_stop_to_first_audio_ms),
                (COMMIT_MS, t.explicit_commit_to_first_audio_ms),
            ] {
                let stamp = Stamp {
                    age_s: t.speech_end_s.unwrap_or(t.speech_start_s),
                    turn: Some(t.turn as u32),
                };
                if let Some(v) = v {
                    let at = super::taken_at(r.sample, stamp.age_s, at);
                    rec.push_stamped(name, at, stamp, v);
                }
            }
        }
    }
}

/// The terminal block, when any session spoke turns (`turns` of them in all).
pub(super) fn text(rec: &Recorded, turns: usize, pcts: &[f64]) -> String {
    if turns == 0 {
        return String::new();
    }
    super::block::block(
        "Turns",
        &[
            ("Turns spoken:", turns),
            ("Turns answered:", rec.values(FIRST_AUDIO_MS).len()),
        ],
        &ROWS,
        rec,
        pcts,
    )
}
