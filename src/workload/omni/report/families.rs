//! The duplex workload's metric catalogue: what every recorded metric means, where it is
//! measured from and to, how shards merge it, and which make the headline.

use super::{barge, listener, timeline, turns, upstream};
use crate::workload::catalogue::{Catalogue, Direction::*, Family, Merge};
use crate::workload::results::Recorded;

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
        upstream::STREAM_TTFT_MS,
        "ms",
        Lower,
        "time to first text of a session's input stream",
    )
    .origin("per session: input stream start (client, just before the first append) → first non-empty text delta received of any response (vLLM-Omni 0.30.0 stream_ttft_ms)")
    .dist(),
    Family::new(
        upstream::STREAM_TTFP_MS,
        "ms",
        Lower,
        "time to first audio of a session's input stream",
    )
    .origin("per session: input stream start (client, just before the first append) → first audio delta received of any response (vLLM-Omni 0.30.0 stream_ttfp_ms)")
    .dist(),
    Family::new(
        upstream::STREAM_RTF,
        "ratio",
        Lower,
        "a session's stream time to last audio / its emitted audio",
    )
    .origin("per session: input stream start → last audio delta received, ÷ the session's total emitted audio duration; includes the concurrent realtime input (vLLM-Omni 0.30.0 stream_rtf)")
    .dist(),
    Family::new(
        upstream::RESPONSE_TTFP_MS,
        "ms",
        Lower,
        "time to first audio of one response",
    )
    .origin("per response: response.created received → its first non-empty audio delta received (vLLM-Omni 0.30.0 ttfp_ms); stamped with its session age and turn")
    .dist(),
    Family::new(
        upstream::RESPONSE_RTF,
        "ratio",
        Lower,
        "audio generation time / audio duration of one response",
    )
    .origin("per response: (response.created received → last audio delta received) ÷ the response's audio duration (vLLM-Omni 0.30.0 rtf); stamped with its session age and turn")
    .dist(),
    Family::new(
        upstream::UNDERRUN_S,
        "s",
        Lower,
        "worst time a realtime player of one response was starved",
    )
    .origin("per response: a player started at the client receipt of its first non-empty audio delta, playing at the output rate; the largest deficit at a later delta's receipt (vLLM-Omni 0.30.0 compute_continuity_stats)")
    .dist(),
    Family::new(
        upstream::UNDERRUN_EVENTS,
        "events",
        Lower,
        "audio deltas of one response that arrived after its player ran dry",
    )
    .origin("per response: the deltas at whose client receipt the player (started at the first non-empty audio delta) had a deficit (vLLM-Omni 0.30.0 compute_continuity_stats)")
    .dist(),
    Family::new(
        upstream::CONTINUITY_OK,
        "fraction",
        Higher,
        "responses whose worst underrun stayed within 0.1 s (mean: their share)",
    )
    .origin("per response: 1 when the worst underrun of its player (started at the first non-empty audio delta's receipt) is at most 0.1 s, else 0")
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
    Family::new(
        turns::FIRST_AUDIO_MS,
        "ms",
        Lower,
        "from the end of the user's speech to the reply's first audio",
    )
    .origin("per turn: intended send time of the end of the turn's last append → first audio delta received of the first response created after it")
    .dist(),
    Family::new(
        turns::FIRST_TEXT_MS,
        "ms",
        Lower,
        "from the end of the user's speech to the reply's first text",
    )
    .origin("per turn: end of the turn's speech → first non-empty text delta received of its reply")
    .dist(),
    Family::new(
        turns::VAD_STOP_MS,
        "ms",
        Lower,
        "from the server's speech_stopped to the reply's first audio",
    )
    .origin("per turn: input_audio_buffer.speech_stopped received after the end of speech → first audio delta received of its reply")
    .dist(),
    Family::new(
        turns::COMMIT_MS,
        "ms",
        Lower,
        "from the turn's explicit commit to the reply's first audio",
    )
    .origin("per turn ended by a commit: the commit's intended send time → first audio delta received of its reply")
    .dist(),
];

/// Scalar names in [`FAMILIES`] (the distributions publish `<name>.<stat>`).
const SCALARS: [&str; 11] = [
    "completed",
    "failed",
    "duration_s",
    "request_throughput",
    "request_goodput",
    "good_requests",
    "output_throughput",
    "output_tokens.total",
    "audio_throughput",
    "max_concurrent_requests",
    "pacing_max_lag_ms.max",
];

/// The summary-row metrics, in display order.
pub const HEADLINE: &[&str] = &[
    "ttft_ms.p99",
    "audio_ttfp_ms.p99",
    "audio_rtf.mean",
    "request_throughput",
];

/// The duplex workload's unit of work: output audio seconds per second of run
/// (`audio_throughput`, the `vllm bench serve` formula). Spoken audio is what the server
/// generates and what saturates it; responses per second (`request_throughput`) moves with
/// the sweep's completed sessions/s column and would repeat it, while audio s/s also shows
/// a server that keeps answering but with shorter or slower speech.
pub const UNIT_RATE: (&str, &str) = ("audio_throughput", "audio s/s");

/// `<metric>.median`, the name of earlier results, reads as `<metric>.p50`.
pub const ALIASES: &[(&str, &str)] = &[
    ("ttft_ms.median", "ttft_ms.p50"),
    ("tpot_ms.median", "tpot_ms.p50"),
    ("itl_ms.median", "itl_ms.p50"),
    ("e2el_ms.median", "e2el_ms.p50"),
    ("audio_ttfp_ms.median", "audio_ttfp_ms.p50"),
    ("audio_rtf.median", "audio_rtf.p50"),
    ("audio_duration_s.median", "audio_duration_s.p50"),
    ("audio_underrun_s.median", "audio_underrun_s.p50"),
    ("audio_stall_count.median", "audio_stall_count.p50"),
    ("audio_stall_ms.median", "audio_stall_ms.p50"),
    (
        "audio_time_to_first_stall_ms.median",
        "audio_time_to_first_stall_ms.p50",
    ),
];

/// The catalogue of a duplex run reporting `percentiles` (on top of the standard ones).
pub fn catalogue(percentiles: &[f64]) -> Catalogue {
    let mut pcts = crate::util::stats::STANDARD_PERCENTILES.to_vec();
    pcts.extend_from_slice(percentiles);
    let rec = Recorded::new(&pcts);
    let dists: Vec<Family> = FAMILIES.iter().filter(|f| f.is_dist()).cloned().collect();
    let mut names = Catalogue::of(&dists, rec.percents(), &[]).names();
    names.extend(SCALARS.iter().map(|s| (*s).to_string()));
    let vllm = vllm_keys(&pcts);
    let vllm: Vec<(&str, &str)> = vllm.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    Catalogue::build(names, FAMILIES, HEADLINE)
        .with_unit_rate(UNIT_RATE.0, UNIT_RATE.1)
        .with_aliases(ALIASES)
        .with_aliases(&vllm)
        .with_charts(timeline::charts())
}

/// The `vllm bench serve` summary keys of the result's top level (`duration`,
/// `mean_ttft_ms`, `median_…`, `std_…`, `p99_…`) and the metric each one is: the same values through the
/// same formulas (held by `tests/it/differential.rs`), so thresholds and `compare` accept
/// them and `rtload merge` writes the merged metric under them.
fn vllm_keys(pcts: &[f64]) -> Vec<(String, String)> {
    let mut out = vec![("duration".to_string(), "duration_s".to_string())];
    for m in crate::workload::omni::bench_metrics::Metric::ALL {
        let x = format!("{}{}", m.name(), m.key_suffix());
        for (stat, of) in [("mean", "mean"), ("median", "p50"), ("std", "std")] {
            out.push((format!("{stat}_{x}"), format!("{x}.{of}")));
        }
        for &p in pcts {
            let label = crate::util::stats::percent_label(p);
            out.push((format!("{label}_{x}"), format!("{x}.{label}")));
        }
    }
    out
}
