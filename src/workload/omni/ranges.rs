//! The ranges of the OmniInteract `[workload]` numbers, checked at load (each error
//! names its key, the bad value and the range; the schema states the same ranges).

use super::workload::OmniParams;
use crate::util::scenario_error::ScenarioError;
use crate::workload::WorkloadInput;

/// Every number's range: the time limits, the lock timeout, the prebuffer, the caps.
pub(super) fn check_ranges(
    input: &WorkloadInput<'_>,
    p: &OmniParams,
    errors: &mut Vec<ScenarioError>,
) {
    check_durations(input, p, errors);
    check_barge_in(input, p, errors);
    for (key, msg) in [
        ("lock_timeout_s", check_lock_timeout(p.lock_timeout_s)),
        (
            "playback_prebuffer_ms",
            check_prebuffer(p.playback_prebuffer_ms),
        ),
        (
            "max_events_per_session",
            check_max_events(p.max_events_per_session),
        ),
        (
            "max_audio_bytes_per_session",
            check_max_audio(p.max_audio_bytes_per_session),
        ),
    ] {
        if let Some(msg) = msg {
            errors.push(input.key_error(key, msg));
        }
    }
}

/// The time limits (`timeout_s`, `media_timeout_s`, `max_video_duration_s`) must lie in
/// (0, 1e9] seconds.
fn check_durations(input: &WorkloadInput<'_>, p: &OmniParams, errors: &mut Vec<ScenarioError>) {
    for (key, v) in [
        ("timeout_s", p.timeout_s),
        ("media_timeout_s", p.media_timeout_s),
        ("max_video_duration_s", p.max_video_duration_s),
    ] {
        if let Some(v) = v.filter(|v| !(v.is_finite() && *v > 0.0 && *v <= 1e9)) {
            errors.push(input.key_error(
                key,
                format!(
                    "`{key}` must be in (0, 1e9] seconds (got {})",
                    crate::util::textpos::num(v)
                ),
            ));
        }
    }
}

/// Largest barge-in offset, ms.
const MAX_BARGE_IN_AFTER_MS: f64 = 600_000.0;

/// The barge-in keys: offsets in [0, 600000] ms, the range's top at or above its
/// bottom and only with it, the speech in [200, 60000] ms, and paced input (the onset is
/// a point on the append schedule).
fn check_barge_in(input: &WorkloadInput<'_>, p: &OmniParams, errors: &mut Vec<ScenarioError>) {
    let num = crate::util::textpos::num;
    let bad =
        |v: Option<f64>, lo: f64, hi: f64| v.filter(|v| !(v.is_finite() && (lo..=hi).contains(v)));
    for key in ["barge_in_after_ms", "barge_in_after_max_ms"] {
        let v = if key == "barge_in_after_ms" {
            p.barge_in_after_ms
        } else {
            p.barge_in_after_max_ms
        };
        if let Some(v) = bad(v, 0.0, MAX_BARGE_IN_AFTER_MS) {
            let msg = format!(
                "`{key}` must be in [0, {MAX_BARGE_IN_AFTER_MS}] ms (got {})",
                num(v)
            );
            errors.push(input.key_error(key, msg));
        }
    }
    if let Some(v) = bad(p.barge_in_speech_ms, 200.0, 60_000.0) {
        let msg = format!(
            "`barge_in_speech_ms` must be in [200, 60000] ms (got {})",
            num(v)
        );
        errors.push(input.key_error("barge_in_speech_ms", msg));
    }
    match (p.barge_in_after_ms, p.barge_in_after_max_ms) {
        (None, Some(_)) => errors.push(input.key_error(
            "barge_in_after_max_ms",
            "`barge_in_after_max_ms` needs `barge_in_after_ms` (the range's low end)".into(),
        )),
        (Some(lo), Some(hi)) if hi < lo => errors.push(input.key_error(
            "barge_in_after_max_ms",
            format!(
                "`barge_in_after_max_ms` ({}) is below `barge_in_after_ms` ({}); swap them",
                num(hi),
                num(lo)
            ),
        )),
        _ => {}
    }
    if p.barge_in_speech_ms.is_some() && p.barge_in_after_ms.is_none() {
        errors.push(input.key_error(
            "barge_in_speech_ms",
            "`barge_in_speech_ms` needs `barge_in_after_ms` (when to interrupt)".into(),
        ));
    }
    if p.turns.is_some_and(|n| !(1..=1000).contains(&n)) {
        let msg = format!(
            "`turns` must be in [1, 1000] (got {})",
            p.turns.unwrap_or(0)
        );
        errors.push(input.key_error("turns", msg));
    }
    if let Some(v) = bad(p.turn_gap_ms, 0.0, MAX_BARGE_IN_AFTER_MS) {
        let msg = format!(
            "`turn_gap_ms` must be in [0, {MAX_BARGE_IN_AFTER_MS}] ms (got {})",
            num(v)
        );
        errors.push(input.key_error("turn_gap_ms", msg));
    }
    if p.turns.is_some() && p.barge_in_after_ms.is_some() {
        errors.push(input.key_error(
            "turns",
            "`turns` and `barge_in_after_ms` cannot be combined yet: a session either speaks more turns or interrupts its reply; drop one".into(),
        ));
    }
    if p.hold_s.is_some() && p.barge_in_after_ms.is_some() {
        errors.push(input.key_error(
            "barge_in_after_ms",
            "`barge_in_after_ms` and `[load] duration_s` cannot be combined yet: a held session speaks turns until its duration; drop one".into(),
        ));
    }
    let paced = p.barge_in_after_ms.is_some() || p.speaks_turns();
    if paced && p.pacing.as_deref() == Some("saturate") {
        errors.push(input.key_error(
            "pacing",
            "a barge-in, turns or `[load] duration_s` need paced input: their onsets and ends of speech are moments on the append schedule; use `pacing = \"realtime\"` (or a speed factor like \"2x\")".into(),
        ));
    }
}

/// Largest `lock_timeout_s`, seconds.
const MAX_LOCK_TIMEOUT_S: f64 = 3600.0;

/// Why `lock_timeout_s` is out of range, if it is.
fn check_lock_timeout(v: Option<f64>) -> Option<String> {
    let v = v.filter(|v| !(v.is_finite() && (0.0..=MAX_LOCK_TIMEOUT_S).contains(v)))?;
    Some(format!(
        "`lock_timeout_s` must be a number of seconds in [0, {MAX_LOCK_TIMEOUT_S}] (got {}); use e.g. 5",
        crate::util::textpos::num(v)
    ))
}

/// Largest `max_events_per_session`.
const MAX_EVENTS_LIMIT: u64 = 10_000_000;

/// Why `max_events_per_session` is out of range, if it is.
fn check_max_events(v: Option<u64>) -> Option<String> {
    let v = v.filter(|v| !(1..=MAX_EVENTS_LIMIT).contains(v))?;
    Some(format!(
        "`max_events_per_session` must be in [1, {MAX_EVENTS_LIMIT}] events (got {v}); use e.g. 100000"
    ))
}

/// Smallest and largest `max_audio_bytes_per_session`: 1 MiB to 1 TiB.
const AUDIO_CAP_RANGE: std::ops::RangeInclusive<u64> = (1 << 20)..=(1 << 40);

/// Why `max_audio_bytes_per_session` is out of range, if it is.
fn check_max_audio(v: Option<u64>) -> Option<String> {
    let v = v.filter(|v| !AUDIO_CAP_RANGE.contains(v))?;
    Some(format!(
        "`max_audio_bytes_per_session` must be in [{}, {}] bytes (got {v}); use e.g. 1073741824",
        AUDIO_CAP_RANGE.start(),
        AUDIO_CAP_RANGE.end()
    ))
}

/// Largest `playback_prebuffer_ms`.
pub const MAX_PREBUFFER_MS: f64 = 60_000.0;

/// Why `playback_prebuffer_ms` is out of range, if it is.
fn check_prebuffer(v: Option<f64>) -> Option<String> {
    let v = v.filter(|v| !(v.is_finite() && (0.0..=MAX_PREBUFFER_MS).contains(v)))?;
    Some(format!(
        "`playback_prebuffer_ms` must be in [0, {MAX_PREBUFFER_MS}] ms (got {})",
        crate::util::textpos::num(v)
    ))
}

impl super::workload::OmniParams {
    /// Its sessions speak turns: `turns` was given, or `[load] duration_s` holds them.
    pub fn speaks_turns(&self) -> bool {
        self.turns.is_some() || self.hold_s.is_some()
    }

    /// A session's turns: how many, the gap after each reply (ms), whether each ends with
    /// an explicit commit, and how long it is held (`hold_s`, the engine's
    /// [`SessionContext::hold_s`](crate::workload::SessionContext::hold_s)). Warm-ups are
    /// not held (their hold is `None`): they speak `turns` (default one) and end.
    pub fn turn_plan(&self, hold_s: Option<f64>) -> (usize, f64, bool, Option<f64>) {
        use super::workload::TurnDetection;
        let held = hold_s.filter(|_| self.hold_s.is_some());
        let all = if held.is_some() { usize::MAX } else { 1 };
        let n = self.turns.map_or(all, |n| n as usize);
        let explicit = self.turn_detection.unwrap_or_default() == TurnDetection::Commit;
        (n, self.turn_gap_ms.unwrap_or(1000.0), explicit, held)
    }
}
