//! What every duplex metric means: the catalogue families of the OmniInteract workload,
//! `vllm bench serve` names plus rtload's own (listener playback, barge-in), each with
//! its unit, direction, origin and merge rule.

use super::{barge, listener};
use crate::workload::catalogue::Direction::{Higher, Lower, NotAScore};
use crate::workload::catalogue::{Family, Merge};

/// What every duplex metric means (`vllm bench serve` names plus rtload's own).
pub const FAMILIES: &[Family] = &[
    Family::new("completed", "requests", Higher, "requests that completed")
        .origin("measured cases that completed successfully")
        .merged(Merge::Sum),
    Family::new("failed", "requests", Lower, "requests that failed")
        .origin("measured cases that failed")
        .merged(Merge::Sum),
    Family::new("duration_s", "s", Lower, "benchmark duration")
        .origin("first measured release → last measured completion")
        .merged(Merge::Duration),
    Family::new(
        "request_throughput",
        "req/s",
        Higher,
        "completed requests per second",
    )
    .origin("completed ÷ duration_s")
    .merged(Merge::PerSecond("completed")),
    Family::new(
        "request_goodput",
        "req/s",
        Higher,
        "requests per second meeting the goodput SLOs",
    )
    .origin("completed requests meeting every --goodput SLO ÷ duration_s")
    .merged(Merge::PerSecond("good_requests")),
    Family::new(
        "good_requests",
        "requests",
        Higher,
        "completed requests meeting every goodput SLO",
    )
    .origin("completed requests meeting every --goodput SLO")
    .merged(Merge::Sum),
    Family::new(
        "output_throughput",
        "tok/s",
        Higher,
        "output tokens per second",
    )
    .origin("output tokens of completed requests ÷ duration_s")
    .merged(Merge::PerSecond("output_tokens.total")),
    Family::new(
        "output_tokens",
        "tokens",
        NotAScore,
        "output tokens of completed requests",
    )
    .origin("usage output tokens (else 1 per request with text), summed")
    .merged(Merge::Sum),
    Family::new(
        "audio_throughput",
        "audio s/s",
        Higher,
        "output audio seconds per second",
    )
    .origin("output audio seconds of completed requests ÷ duration_s")
    .merged(Merge::PerSecond("audio_duration_s")),
    Family::new(
        "max_concurrent_requests",
        "requests",
        NotAScore,
        "peak requests in flight",
    )
    .origin("the most completed requests open at one instant (start → end)")
    .merged(Merge::Unmergeable(
        "a peak of one shard says nothing of the shards' overlap; see rtload.achieved",
    )),
    Family::new(
        "pacing_max_lag_ms",
        "ms",
        Lower,
        "largest lag of paced input behind its schedule",
    )
    .origin("an input append's intended send → handed to the socket, the largest")
    .merged(Merge::Max),
    Family::new("ttft_ms", "ms", Lower, "time to first text token")
        .origin("per session: mean over responses of response.created received → first non-empty text delta received")
        .dist(),
    Family::new(
        "tpot_ms",
        "ms",
        Lower,
        "time per output token after the first",
    )
    .origin("per session: mean gap between output tokens after the first (stage-0 token timing projected from the TTFT)")
    .dist(),
    Family::new("itl_ms", "ms", Lower, "inter-token latency")
        .origin("gaps between consecutive output tokens (stage-0 token timing projected from the TTFT)")
        .dist(),
    Family::new("e2el_ms", "ms", Lower, "end-to-end request latency")
        .origin("per session: the case's start → its end")
        .dist(),
    Family::new("audio_ttfp_ms", "ms", Lower, "time to first audio packet")
        .origin("per session: mean over responses of response.created received → first audio delta received")
        .dist(),
    Family::new(
        "audio_rtf",
        "ratio",
        Lower,
        "audio generation time / audio duration",
    )
    .origin("per session: mean over responses of (response.created received → last audio delta received) ÷ the response's audio duration")
    .dist(),
    Family::new(
        "audio_duration_s",
        "s",
        NotAScore,
        "output audio duration (content length)",
    )
    .origin("per session: output audio bytes ÷ 48,000 (PCM16 at 24 kHz)")
    .dist(),
    Family::new(
        "audio_underrun_s",
        "s",
        Lower,
        "time a listener's audio ran dry",
    )
    .origin("per session: streaming underrun as vllm bench serve reports it (not measured by the duplex client)")
    .dist(),
    Family::new(
        listener::STALL_COUNT,
        "stalls",
        Lower,
        "times a listener's audio ran dry within one response (after the prebuffer)",
    )
    .origin("per response: playback start (after playback_prebuffer_ms of its audio) → its last audio played, times the simulated listener ran dry")
    .dist(),
    Family::new(
        listener::STALL_MS,
        "ms",
        Lower,
        "total time a listener waited for audio within one response",
    )
    .origin("per response: playback start → its last audio played, time the simulated listener waited")
    .dist(),
    Family::new(
        listener::FIRST_STALL_MS,
        "ms",
        Higher,
        "from a response's playback start to its first stall (stalled responses only)",
    )
    .origin("per stalled response: playback start → the first stall")
    .dist(),
    Family::new(
        barge::STOP_MS,
        "ms",
        Lower,
        "barge-in: from the interruption's onset until the interrupted reply stopped",
    )
    .origin("per interrupting session: intended send of the first interrupting append → output_audio_buffer.cleared or response.done cancelled received (else the reply's last audio delta)")
    .dist(),
    Family::new(
        barge::AUDIO_AFTER_MS,
        "ms",
        Lower,
        "barge-in: the interrupted reply's audio received after the onset",
    )
    .origin("per interrupting session: audio of the interrupted reply in deltas received at or after the onset")
    .dist(),
    Family::new(
        barge::HEARD_AFTER_MS,
        "ms",
        Lower,
        "barge-in: the interrupted reply's audio the listener heard after the onset",
    )
    .origin("per interrupting session: the reply's audio on the serial playback clock after the onset, truncated at output_audio_buffer.cleared")
    .dist(),
    Family::new(
        barge::ANSWER_MS,
        "ms",
        Lower,
        "barge-in: from the onset to the first audio of the answer",
    )
    .origin("per interrupting session: onset → first audio delta received of the first response created after it")
    .dist(),
];
