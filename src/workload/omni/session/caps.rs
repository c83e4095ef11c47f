//! A session's caps on what it keeps (`[workload] max_events_per_session`,
//! `max_audio_bytes_per_session`): past one, the session fails saying which cap, what it
//! protects and the key to raise, and the other sessions go on. Pure.

/// Why a session that already recorded `events` events must stop at the next one, if
/// `max` says so.
pub(super) fn events_over(events: usize, max: usize) -> Option<String> {
    (events >= max).then(|| {
        format!(
            "the server sent more than {max} events in one session: rtload keeps every event \
             of a session for its artifacts, so it stops here (the other sessions go on); \
             raise `[workload] max_events_per_session` if the server really sends this many"
        )
    })
}

/// Why a session whose server sent `audio_bytes` bytes of output audio must stop, if
/// `max` says so.
pub(super) fn audio_over(audio_bytes: u64, max: u64) -> Option<String> {
    (audio_bytes > max).then(|| {
        format!(
            "the server sent more than {max} bytes of output audio in one session ({audio_bytes} \
             so far): rtload spools a measured session's audio for its output.wav, so it stops \
             here (the other sessions go on); raise `[workload] max_audio_bytes_per_session` \
             if the server really sends this much"
        )
    })
}
