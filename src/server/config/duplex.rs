//! Configuration of the simulated duplex speech model behind `/v1/realtime`: response
//! timing, decisions, and fault switches.

use serde::{Deserialize, Serialize};

use super::{MAX_MILLIS, MAX_SECONDS, ServerError, default_true};

/// Behaviour of the simulated duplex speech model behind `/v1/realtime` (spec §1, server
/// role). Responses are driven by received input audio time (32000 B/s of PCM16 16 kHz).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DuplexServerConfig {
    /// Model-unit length advertised as `session.created.session.capabilities.chunk_period_ms`.
    /// Range [1, 3600000].
    #[serde(default = "default_chunk_period_ms")]
    pub chunk_period_ms: u64,
    /// A response starts after every this many seconds of received input audio. Range
    /// (0, 1e9].
    #[serde(default = "default_respond_every_s")]
    pub respond_every_s: f64,
    /// `response.audio.delta` events per response (one transcript word rides each). Range
    /// [1, 1000000].
    #[serde(default = "default_audio_deltas")]
    pub audio_deltas: u32,
    /// Audio carried by each delta (PCM16 24 kHz mono tone), in ms. Range [1, 60000].
    #[serde(default = "default_delta_ms")]
    pub delta_ms: u32,
    /// Generation real-time factor: a delta of `delta_ms` audio is sent
    /// `delta_ms * rtf` ms after the previous one (the first that long after `response.created`).
    /// Range [0, 1e9].
    #[serde(default = "default_rtf")]
    pub rtf: f64,
    /// `response.created` is sent this many ms after the input that triggered it arrived.
    /// Range [0, 1e9].
    #[serde(default = "default_first_response_delay_ms")]
    pub first_response_delay_ms: f64,
    /// While no response is in flight, a `response.listen` decision follows every this
    /// many seconds of input audio; 0 = never. Range [0, 1e9].
    #[serde(default)]
    pub listen_every_s: f64,
    /// Also send buffering notifications (`response.listen` with `buffering: true`): on
    /// every append that decides nothing while no response is in flight, and right
    /// before the final decision.
    #[serde(default)]
    pub buffering_listens: bool,
    /// A final commit that arrives while a response is in flight is acknowledged with
    /// `overlap_deferred: true` and the final decision waits for that response's end.
    #[serde(default = "default_true")]
    pub deferred_commit: bool,
    /// What the model decides for the input left at the final commit.
    #[serde(default)]
    pub final_decision: FinalDecision,
    /// `session.close` while a response that carried audio lacks its completion
    /// `playback.ack` (played_ms = all its audio) gets an `error` event before `session.closed`.
    #[serde(default)]
    pub require_acks: bool,
    /// Frequency of the tone in the output audio, in Hz. Range (0, 12000].
    #[serde(default = "default_tone_hz")]
    pub tone_hz: f64,
    /// Name the audio and transcript deltas as later vLLM-Omni servers do
    /// (`response.output_audio.delta`, `response.output_audio_transcript.delta`) instead
    /// of the seed's `response.audio.delta` / `response.audio_transcript.delta`, for
    /// clients that know only those names (vLLM-Omni's own benchmark client, 0.30).
    #[serde(default)]
    pub upstream_event_names: bool,
    /// What starts a response: `"input_time"` (every `respond_every_s` of input),
    /// `"server_vad"` (each end of the user's speech, heard by `[server.duplex.vad]`) or
    /// `"commit"` (each `input_audio_buffer.commit` with `"final": false`).
    #[serde(default)]
    pub turns: TurnMode,
    /// The speech detector (`[server.duplex.vad]`): `speech_started` / `speech_stopped`
    /// events, server-VAD turns and barge-in. Off when absent, on with its defaults under
    /// `turns = "server_vad"`.
    #[serde(default)]
    pub vad: Option<VadConfig>,
    /// Fault switches; all off by default.
    #[serde(default)]
    pub faults: DuplexFaults,
}

/// What starts a response of the simulated duplex model.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum TurnMode {
    /// Every `respond_every_s` of received input audio.
    #[default]
    InputTime,
    /// Each end of the user's speech (`input_audio_buffer.speech_stopped`).
    ServerVad,
    /// Each `input_audio_buffer.commit` with `"final": false` (answered with
    /// `input_audio_buffer.committed`).
    Commit,
}

/// How the simulated model hears the user. Speech is judged per append by its RMS
/// level: an append at least `threshold_dbfs` loud after `silence_ms` of quieter input
/// (or at the start) starts speech, answered at once with
/// `input_audio_buffer.speech_started`; `silence_ms` of quieter input ends it,
/// `input_audio_buffer.speech_stopped` (with `audio_end_ms` where the quiet began).
/// With `barge_in_reaction_ms`, speech that starts while a response is playing (created
/// and not cancelled, and either not done or not yet acknowledged as fully played)
/// interrupts it: that many ms after the append arrived the server sends
/// `output_audio_buffer.cleared`, ends the response `cancelled` (reason `turn_detected`)
/// when it was still sending, drops the responses queued behind it and starts the answer
/// to the interrupting speech (a response like any other).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VadConfig {
    /// From the arrival of the append that starts the user's speech over a playing
    /// response to its cancellation, in ms; absent: no barge-in. Range [0, 1e9].
    #[serde(default)]
    pub barge_in_reaction_ms: Option<f64>,
    /// RMS level from which an append counts as speech, in dBFS (0 is a full-scale square
    /// wave). Range [-96, 0].
    #[serde(default = "default_threshold_dbfs")]
    pub threshold_dbfs: f64,
    /// Input quieter than the threshold for this long ends the user's speech, in ms.
    /// Range [0, 1e9].
    #[serde(default = "default_silence_ms")]
    pub silence_ms: f64,
}

impl Default for VadConfig {
    fn default() -> Self {
        VadConfig {
            barge_in_reaction_ms: None,
            threshold_dbfs: default_threshold_dbfs(),
            silence_ms: default_silence_ms(),
        }
    }
}

fn default_threshold_dbfs() -> f64 {
    -40.0
}

fn default_silence_ms() -> f64 {
    400.0
}

/// The model's decision for the input that remains at the final commit.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum FinalDecision {
    /// A final response (created, deltas, done).
    #[default]
    Respond,
    /// A final `response.listen` with `model_listen: true, buffering: false`.
    Listen,
}

/// Fault injection for the duplex endpoint. Times ("after N s") count from receipt of
/// `session.update`. Response faults touch only the session's first response (which is
/// the final response when `respond_every_s` exceeds the input); `omit_*` touch every delta.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DuplexFaults {
    /// Answer `session.update` with `{"type":"error","message":<this>}` and close.
    #[serde(default)]
    pub error_on_update: Option<String>,
    /// Never send `session.created` (the session otherwise runs).
    #[serde(default)]
    pub no_session_created: bool,
    /// Send `session.expired` (reason `injected_fault`) after N s, then close. Range
    /// [0, 1e9].
    #[serde(default)]
    pub expire_after_s: Option<f64>,
    /// Close the socket (normal close frame) after N s without `session.closed`. Range
    /// [0, 1e9].
    #[serde(default)]
    pub close_mid_session_after_s: Option<f64>,
    /// Answer `session.close` with `session.closed` carrying this `reason`.
    #[serde(default)]
    pub close_with_reason: Option<String>,
    /// The first response is a lone `response.created` without an id (no deltas, no
    /// done), which only the client's ledger check can catch.
    #[serde(default)]
    pub missing_response_id: bool,
    /// The first `response.created` is sent twice.
    #[serde(default)]
    pub duplicate_created: bool,
    /// A `response.done` for an id never created (`resp_orphan`) precedes the first response.
    #[serde(default)]
    pub done_without_created: bool,
    /// The first `response.done` is sent twice.
    #[serde(default)]
    pub duplicate_done: bool,
    /// The first response ends with status `failed`.
    #[serde(default)]
    pub failed_response: bool,
    /// The first response ends with status `cancelled`.
    #[serde(default)]
    pub cancelled_response: bool,
    /// The first audio delta says `format: "opus"`.
    #[serde(default)]
    pub audio_wrong_format: bool,
    /// The first audio delta says `sample_rate_hz: 16000`.
    #[serde(default)]
    pub audio_wrong_rate: bool,
    /// The first audio delta's payload is not base64.
    #[serde(default)]
    pub audio_bad_base64: bool,
    /// The first audio delta's payload decodes to an odd number of bytes.
    #[serde(default)]
    pub audio_odd_length: bool,
    /// An extra audio delta for an id never created (`resp_unknown`) precedes the first.
    #[serde(default)]
    pub audio_unknown_response: bool,
    /// An extra transcript delta for an id never created (`resp_unknown`) precedes the first.
    #[serde(default)]
    pub transcript_unknown_response: bool,
    /// Audio deltas carry no `format`.
    #[serde(default)]
    pub omit_format: bool,
    /// Audio deltas carry no `sample_rate_hz`.
    #[serde(default)]
    pub omit_sample_rate: bool,
    /// Send an `error` event after N s; the session goes on. Range [0, 1e9].
    #[serde(default)]
    pub error_event_after_s: Option<f64>,
    /// Never send `input_audio_buffer.committed` (the final decision still follows).
    #[serde(default)]
    pub never_commit_ack: bool,
    /// Make no final decision after the commit.
    #[serde(default)]
    pub no_final_decision: bool,
    /// An invalid `input_audio_buffer.append` gets its `error` event and then a close
    /// (off: the session stays open).
    #[serde(default)]
    pub fatal_append_errors: bool,
    /// Apply the faults only to these sessions (0-based, in the order this server
    /// accepted their `session.update`); empty = every session.
    #[serde(default)]
    pub only_sessions: Vec<u64>,
}

impl DuplexFaults {
    /// The faults for the session with this ordinal: these, or none.
    pub fn for_session(&self, ordinal: u64) -> DuplexFaults {
        if self.only_sessions.is_empty() || self.only_sessions.contains(&ordinal) {
            self.clone()
        } else {
            DuplexFaults::default()
        }
    }
}

impl Default for DuplexServerConfig {
    fn default() -> Self {
        DuplexServerConfig {
            chunk_period_ms: default_chunk_period_ms(),
            respond_every_s: default_respond_every_s(),
            audio_deltas: default_audio_deltas(),
            delta_ms: default_delta_ms(),
            rtf: default_rtf(),
            first_response_delay_ms: default_first_response_delay_ms(),
            listen_every_s: 0.0,
            buffering_listens: false,
            deferred_commit: true,
            final_decision: FinalDecision::Respond,
            require_acks: false,
            tone_hz: default_tone_hz(),
            upstream_event_names: false,
            turns: TurnMode::InputTime,
            vad: None,
            faults: DuplexFaults::default(),
        }
    }
}

impl DuplexServerConfig {
    /// Every value out of its documented range (names are `duplex.`-prefixed).
    pub fn problems(&self) -> Vec<ServerError> {
        let mut out = Vec::new();
        let mut check = |ok: bool, key: &str, msg: String| push_invalid(&mut out, ok, key, msg);
        check(
            (1..=3_600_000).contains(&self.chunk_period_ms),
            "duplex.chunk_period_ms",
            format!(
                "duplex.chunk_period_ms must be between 1 and 3600000, got {}",
                self.chunk_period_ms
            ),
        );
        check(
            self.respond_every_s > 0.0 && self.respond_every_s <= MAX_SECONDS,
            "duplex.respond_every_s",
            format!(
                "duplex.respond_every_s must be a number of seconds in (0, 1e9], got {}",
                self.respond_every_s
            ),
        );
        check(
            (1..=1_000_000).contains(&self.audio_deltas),
            "duplex.audio_deltas",
            format!(
                "duplex.audio_deltas must be between 1 and 1000000, got {}",
                self.audio_deltas
            ),
        );
        check(
            (1..=60_000).contains(&self.delta_ms),
            "duplex.delta_ms",
            format!(
                "duplex.delta_ms must be between 1 and 60000, got {}",
                self.delta_ms
            ),
        );
        check(
            self.tone_hz > 0.0 && self.tone_hz <= 12_000.0,
            "duplex.tone_hz",
            format!("duplex.tone_hz must be in (0, 12000], got {}", self.tone_hz),
        );
        if let Some(b) = &self.vad {
            check(
                (-96.0..=0.0).contains(&b.threshold_dbfs),
                "duplex.vad.threshold_dbfs",
                format!(
                    "duplex.vad.threshold_dbfs must be a level in [-96, 0] dBFS, got {}",
                    b.threshold_dbfs
                ),
            );
        }
        self.time_problems(&mut out);
        out
    }

    /// The problems of the optional non-negative times and factors (rtf, delays,
    /// intervals, fault times): each must lie in `[0, max]`.
    fn time_problems(&self, out: &mut Vec<ServerError>) {
        let f = &self.faults;
        let b = self.vad.as_ref();
        for (name, value, max) in [
            (
                "duplex.vad.barge_in_reaction_ms",
                b.and_then(|b| b.barge_in_reaction_ms),
                MAX_MILLIS,
            ),
            ("duplex.vad.silence_ms", b.map(|b| b.silence_ms), MAX_MILLIS),
            ("duplex.rtf", Some(self.rtf), MAX_MILLIS),
            (
                "duplex.first_response_delay_ms",
                Some(self.first_response_delay_ms),
                MAX_MILLIS,
            ),
            (
                "duplex.listen_every_s",
                Some(self.listen_every_s),
                MAX_SECONDS,
            ),
            (
                "duplex.faults.expire_after_s",
                f.expire_after_s,
                MAX_SECONDS,
            ),
            (
                "duplex.faults.close_mid_session_after_s",
                f.close_mid_session_after_s,
                MAX_SECONDS,
            ),
            (
                "duplex.faults.error_event_after_s",
                f.error_event_after_s,
                MAX_SECONDS,
            ),
        ] {
            if let Some(value) = value {
                push_invalid(
                    out,
                    (0.0..=max).contains(&value),
                    name,
                    format!("{name} must be a number in [0, {max:e}], got {value}"),
                );
            }
        }
    }
}

/// Pushes `ServerError::Invalid { key, msg }` onto `out` unless `ok`.
fn push_invalid(out: &mut Vec<ServerError>, ok: bool, key: &str, msg: String) {
    if !ok {
        out.push(ServerError::Invalid {
            key: key.to_string(),
            msg,
        });
    }
}

fn default_chunk_period_ms() -> u64 {
    1000
}

fn default_respond_every_s() -> f64 {
    2.0
}

fn default_audio_deltas() -> u32 {
    5
}

fn default_delta_ms() -> u32 {
    200
}

fn default_rtf() -> f64 {
    0.5
}

fn default_first_response_delay_ms() -> f64 {
    300.0
}

fn default_tone_hz() -> f64 {
    440.0
}
