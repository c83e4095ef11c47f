//! Turns a finished OmniInteract run into its report (after timing, holding the output
//! lock): one case result per measured sample, the deferred artifact publication (§4.3,
//! one WAV materialized at a time), the `vllm bench serve`-style metrics and summary, and
//! the saved result JSON (§6.1) with rtload's own block.

mod barge;
mod block;
mod families;
mod json;
mod listener;
mod restore;
mod timeline;
mod turns;
mod upstream;

use std::collections::BTreeMap;

use serde_json::Value;

use super::metrics::{CaseOutcome, DuplexMetrics, duplex_metrics, request_outcome};
use super::session::DuplexOutput;
use super::workload::OmniWorkload;
use crate::workload::Report;
use crate::workload::omni::artifacts::capture::{self, CaptureInput, CaseEvents};
use crate::workload::omni::artifacts::layout::CaseLayout;
use crate::workload::omni::artifacts::publish::remove_unrun;
use crate::workload::omni::artifacts::{CaseResult, FinalizeCase, FinalizeSummary, Finalizer};
use crate::workload::omni::bench_metrics::{self, RequestOutcome, SummaryHeader};
use crate::workload::results::Recorded;
use crate::workload::spool::Spool;
pub use families::{ALIASES, FAMILIES, HEADLINE, catalogue};
use restore::{Events, Restored, restore, segment_pcm};

/// The engine's run record with each case's typed output.
pub(super) type RunRecord = crate::workload::RunRecord<Option<DuplexOutput>>;
/// One sample's record with its typed output.
pub(super) type SampleRecord = crate::workload::SampleRecord<Option<DuplexOutput>>;

/// The built report.
#[derive(Debug)]
pub struct DuplexReport {
    text: String,
    json: serde_json::Map<String, Value>,
    scalars: BTreeMap<String, f64>,
    recorded: Recorded,
    /// Bundles and batch files that could not be written.
    artifact_errors: Vec<String>,
    /// Measured samples whose spilled turns could not be read back.
    failed: Vec<(usize, String)>,
}

impl Report for DuplexReport {
    fn render_text(&self) -> String {
        self.text.clone()
    }
    fn to_json(&self) -> Value {
        Value::Object(self.json.clone())
    }
    fn json_text(&self, doc: &Value) -> String {
        let empty = serde_json::Map::new();
        let mut t = bench_metrics::to_vllm_json_string(doc.as_object().unwrap_or(&empty));
        t.push('\n');
        t
    }
    fn recorded(&self) -> &Recorded {
        &self.recorded
    }
    fn scalars(&self) -> BTreeMap<String, f64> {
        self.scalars.clone()
    }
    fn publication_errors(&self) -> Vec<String> {
        self.artifact_errors.clone()
    }
    fn report_failures(&self) -> Vec<(usize, String)> {
        self.failed.clone()
    }
}

/// Every distribution of the run, from the same per-request samples the `vllm bench
/// serve` aggregates take (successful cases only, each at its case's end) and the
/// listener's per-response playback.
fn recorded_of(runs: &[CaseRun<'_>], percentiles: &[f64]) -> Recorded {
    let mut pcts = crate::util::stats::STANDARD_PERCENTILES.to_vec();
    pcts.extend_from_slice(percentiles);
    let mut rec = Recorded::declaring(FAMILIES, &pcts);
    for r in runs.iter().filter(|r| r.outcome.success) {
        let o = &r.outcome;
        let at = r.sample.started_s + o.latency_s;
        for (m, v) in bench_metrics::request_samples(o, o.tpot_s()) {
            rec.push(
                &format!("{}{}", m.name(), m.key_suffix()),
                at,
                v * m.scale(),
            );
        }
    }
    listener::record(&mut rec, runs);
    upstream::record(&mut rec, runs);
    barge::record(&mut rec, runs);
    turns::record(&mut rec, runs);
    rec
}

/// One measured sample, as the report sees it.
pub(super) struct CaseRun<'a> {
    pub(super) sample: &'a SampleRecord,
    pub(super) out: Option<&'a DuplexOutput>,
    pub(super) metrics: DuplexMetrics,
    pub(super) outcome: RequestOutcome,
    /// The timeline's spans of the session, taken while its events were held.
    pub(super) spans: Vec<crate::workload::catalogue::chart::Span>,
}

/// Build the report for `run` (the caller holds the output-root lock).
pub(super) fn build(w: &OmniWorkload, mut run: RunRecord) -> Result<DuplexReport, String> {
    let spool = w.prepared.get().map(|p| &p.spool);
    // Every spooled write was sent before the sessions ended: one barrier, then each
    // case's spilled output is read back as its turn comes (held sessions' past turns
    // first: every pass over the run reads them).
    if let Some(spool) = spool {
        spool.flush();
    }
    let failed = restore::restore_turns(&mut run, spool);
    let (mut finals, runs, ran, finalizer) = build_cases(w, &run, spool);
    let mut summary: FinalizeSummary = finalizer.finish(&mut finals, run.interrupted);
    // Only a whole run that ended on its own decided to leave a selected case out: an
    // interrupted run did not, and a shard (`--shard`) runs only its share of the cases
    // (the other shards' bundles are theirs).
    if !run.interrupted && run.measured_indices.is_none() {
        remove_unran_bundles(w, &ran, &mut summary);
    }
    let doc = upstream::duplex_metrics_doc(&runs);
    if let Err(e) = crate::workload::omni::artifacts::write_duplex_metrics(&w.output_dir, &doc) {
        summary.artifacts_complete = false;
        (summary.artifact_errors).push(format!("Duplex metrics publication failed: {e}"));
    }
    let outcomes: Vec<RequestOutcome> = runs.iter().map(|r| r.outcome.clone()).collect();
    let bm = bench_metrics::calculate(
        &outcomes,
        run.duration_s,
        &w.goodput,
        &w.selected,
        &w.percentiles,
    );
    let load = run.load.clone();
    let header = SummaryHeader {
        max_concurrency: load.as_ref().map(|l| l.max_concurrency),
        request_rate: load
            .as_ref()
            .and_then(|l| l.arrival.request_rate)
            .unwrap_or(f64::INFINITY),
    };
    let scalars = json::flat_metrics(&bm, &runs);
    let recorded = recorded_of(&runs, &w.percentiles);
    let mut flat = scalars.clone();
    flat.extend(recorded.flat());
    let heard = listener::listener(&recorded, w.prebuffer_ms(), &w.percentiles);
    let mut doc = json::saved_result(w, &run, &bm, &runs, &finals, &summary, &flat);
    if run.interrupted {
        doc.insert("interrupted".into(), Value::Bool(true));
    }
    let mut text = bench_metrics::render_summary(&bm, &header);
    text.push_str(&heard.text());
    let interrupting = (runs.iter())
        .filter(|r| r.outcome.success && r.out.is_some_and(|o| o.barge_in.is_some()))
        .count();
    text.push_str(&barge::text(&recorded, interrupting, &w.percentiles));
    let spoken = (runs.iter())
        .filter(|r| r.outcome.success)
        .filter_map(|r| r.out)
        .map(|o| o.turns.len())
        .sum();
    text.push_str(&turns::text(&recorded, spoken, &w.percentiles));
    text.push_str(&json::omni_text(w, &runs, &finals, &summary));
    if w.params.save_result.unwrap_or(false) {
        save_result(w, &header, &doc, &mut text)?;
    }
    Ok(DuplexReport {
        text,
        json: doc,
        scalars,
        recorded,
        artifact_errors: summary.artifact_errors,
        failed,
    })
}

/// Each measured case's result, built and published one case at a time (deferred
/// publication: after timing, and only one case's captured output — events and PCM read
/// back — held at once); with which of the workload's cases ran, and the finalizer that
/// writes the batch files.
fn build_cases<'a>(
    w: &OmniWorkload,
    run: &'a RunRecord,
    spool: Option<&Spool>,
) -> (Vec<FinalizeCase>, Vec<CaseRun<'a>>, Vec<bool>, Finalizer) {
    let measured: Vec<&SampleRecord> = run.samples.iter().filter(|s| !s.warmup).collect();
    let mut finals = Vec::with_capacity(measured.len());
    let mut runs = Vec::with_capacity(measured.len());
    let mut ran = vec![false; w.cases.len()];
    let mut finalizer = Finalizer::new(&w.output_dir);
    for (i, &sample) in measured.iter().enumerate() {
        // A shard's i-th sample is the whole run's sample k (`--shard`).
        let k = run.measured_index(i);
        ran[k % w.cases.len().max(1)] = true;
        // Cancelled by a signal: no outcome to report and no bundle, so a complete
        // earlier bundle of the case is kept rather than replaced by a failure.
        if sample
            .outcome
            .as_ref()
            .is_err_and(|f| f.kind == crate::workload::FailureKind::Interrupted)
        {
            continue;
        }
        let case = &w.cases[k % w.cases.len().max(1)];
        let out = sample.output.as_ref().and_then(Option::as_ref);
        let duration_s = w
            .prepared
            .get()
            .map_or(0.0, |p| p.media[k % p.media.len().max(1)].duration_s);
        let (restored, events_error) = match out.map(|o| restore(o, spool)) {
            Some((r, e)) => (Some(r), e),
            None => (None, None),
        };
        let spooled = (spool, events_error.as_deref());
        let spans = timeline::spans(sample, restored.as_ref());
        // The case's events move into its bundle: one copy held while it is published.
        let (mut fc, mut cr) = case_result(case, sample, restored, (duration_s, spooled));
        finalizer.publish(&mut fc);
        cr.spans = spans;
        finals.push(fc);
        runs.push(cr);
    }
    (finals, runs, ran, finalizer)
}

/// Removes the bundles of the selected cases this run did not run (`ran[i]` false),
/// recording a failure in `summary`.
fn remove_unran_bundles(w: &OmniWorkload, ran: &[bool], summary: &mut FinalizeSummary) {
    let unrun: Vec<CaseLayout> = w
        .cases
        .iter()
        .zip(ran)
        .filter(|(_, ran)| !**ran)
        .map(|(c, _)| CaseLayout::new(c.subset.name(), &c.video_rel))
        .collect();
    if let Err(e) = remove_unrun(&w.output_dir, &unrun) {
        summary.artifacts_complete = false;
        summary
            .artifact_errors
            .push(format!("Stale bundle removal failed: {e}"));
    }
}

/// Writes the saved-result JSON `doc` and notes its path in `text`.
fn save_result(
    w: &OmniWorkload,
    header: &SummaryHeader,
    doc: &serde_json::Map<String, Value>,
    text: &mut String,
) -> Result<(), String> {
    let path = json::result_path(w, header);
    let mut body = crate::util::target::redact_text(&bench_metrics::to_vllm_json_string(doc));
    body.push('\n');
    crate::util::write_atomic(&path, body.as_bytes())
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    text.push_str(&format!("Saved result: {}\n", path.display()));
    Ok(())
}

/// When each turn's speech began (empty for a session without `turns`).
pub(super) fn turn_starts(out: Option<&DuplexOutput>) -> Vec<f64> {
    out.map_or(Vec::new(), |o| {
        o.turns.iter().map(|t| t.speech_start_s).collect()
    })
}

/// The run time of a value taken at session-clock `age_s` (seconds since the session
/// opened) of `sample`: when it happened, so a window of run time (a staircase step,
/// an `.hlog` interval) holds it; `fallback` when the session never opened or the age
/// is unknown.
pub(super) fn taken_at(sample: &SampleRecord, age_s: f64, fallback: f64) -> f64 {
    match sample.opened_s {
        Some(o) if age_s.is_finite() => o + age_s,
        _ => fallback,
    }
}

/// The turn whose speech had begun at session-clock `at_s` (`None` without turns), as
/// [`super::metrics::assign_turns`] assigns rows.
pub(super) fn turn_at(turn_starts_s: &[f64], at_s: f64) -> Option<u32> {
    (!turn_starts_s.is_empty())
        .then(|| turn_starts_s[1..].iter().filter(|s| **s <= at_s).count() as u32)
}

/// Puts the case's token count and its per-response and session metrics into `result`.
fn put_metrics(result: &mut CaseResult, dm: &DuplexMetrics) {
    result.output_tokens = dm.output_tokens;
    result.duplex_request_metrics = dm
        .rows
        .iter()
        .filter_map(|r| serde_json::to_value(r).ok())
        .collect();
    result.duplex_session_metrics = serde_json::to_value(&dm.summary).unwrap_or(Value::Null);
}

/// Copies the output's input/pacing/response counts and warnings into `result`.
fn copy_output_counts(result: &mut CaseResult, r: &Restored<'_>) {
    let o = r.out;
    result.input_audio_chunks = o.input_audio_chunks as u64;
    result.input_video_frames = o.input_video_frames as u64;
    result.pacing_mean_lag_s = o.pacing_mean_lag_s;
    result.pacing_max_lag_s = o.pacing_max_lag_s;
    result.responses = r.responses.len() as u64;
    result.audio_bytes = o.audio_bytes;
    result.artifact_warnings.clone_from(&o.artifact_warnings);
    for r in &o.ineligible_reasons {
        result.add_ineligible_reason(r);
    }
}

/// Captures a successful case's context from its segments (spooled ones read back) and
/// events and applies it to `result`; a spool read-back error is the error.
fn capture_context(
    r: Restored<'_>,
    (duration_s, stream_start_s): (f64, f64),
    spool: Option<&Spool>,
    result: &mut CaseResult,
) -> Result<capture::ArtifactContext, String> {
    let segments = r
        .segments
        .iter()
        .map(|s| {
            Ok(capture::Segment {
                response_id: s.response_id.to_string(),
                start_s: s.start_s,
                end_s: s.end_s,
                pcm: segment_pcm(&s.pcm, spool)?,
            })
        })
        .collect::<Result<Vec<_>, String>>()?;
    let ctx = capture::capture(
        CaptureInput {
            video_duration_s: duration_s,
            stream_start_s,
            segments: &segments,
            responses: &r.responses,
        },
        // Decoded events go to `events.json` as they are; a long log's spilled lines are
        // decoded one at a time.
        match r.events {
            Events::Memory(evs) => CaseEvents::Parsed(evs.iter().map(|(_, e)| e.clone()).collect()),
            Events::Decoded(evs) => CaseEvents::Parsed(evs.into_iter().map(|(_, e)| e).collect()),
            Events::Spooled(bytes) => CaseEvents::Spilled(bytes),
        },
    );
    ctx.apply_to(result);
    Ok(ctx)
}

fn case_result<'a>(
    case: &crate::workload::omni::dataset::Case,
    sample: &'a SampleRecord,
    restored: Option<Restored<'a>>,
    (duration_s, (spool, events_error)): (f64, (Option<&Spool>, Option<&str>)),
) -> (FinalizeCase, CaseRun<'a>) {
    let out = restored.as_ref().map(|r| r.out);
    let layout = CaseLayout::new(case.subset.name(), &case.video_rel);
    // The reference reports the case's full video path (as `gt_json`), not the
    // dataset-relative one.
    let video = case.video_path.display().to_string();
    let mut result = CaseResult::new(case.subset.name(), &video);
    let success = sample.outcome.is_ok() && out.is_some_and(|o| o.success);
    let error = sample
        .outcome
        .as_ref()
        .err()
        .map(|f| f.message.clone())
        .or_else(|| out.and_then(|o| o.error.clone()));
    // The events where they lie (in the output, or decoded line by line from the spool).
    let events = restored.as_ref().into_iter().flat_map(|r| r.events.each());
    let stream_start_s = out.and_then(|o| o.stream_start_s).unwrap_or(0.0);
    let session_id = out.map(|o| o.session_id.clone());
    let mut dm = duplex_metrics(events, stream_start_s, session_id.as_deref());
    dm.summary.stream_started_at_s = out.and_then(|o| o.stream_start_s);
    super::metrics::assign_turns(&mut dm.rows, &turn_starts(out));
    result.success = success;
    // The reference writes `""` (not null) when there is no error.
    result.error = Some(error.unwrap_or_default());
    result.session_id = session_id;
    result.latency_s = out.map_or(sample.ended_s - sample.started_s, |o| o.latency_s);
    if let Some(r) = &restored {
        copy_output_counts(&mut result, r);
    }
    put_metrics(&mut result, &dm);
    let times = (duration_s, stream_start_s);
    let (context, capture_error) = match restored {
        Some(_) if success && events_error.is_some() => (None, events_error.map(str::to_owned)),
        Some(r) if success => match capture_context(r, times, spool, &mut result) {
            Ok(ctx) => (Some(ctx), None),
            Err(e) => (None, Some(e)),
        },
        _ => {
            result.mark_failed("case_failed");
            (None, None)
        }
    };
    let outcome = request_outcome(
        &CaseOutcome {
            success,
            start_s: sample.started_s,
            latency_s: result.latency_s,
            transcript: &result.transcript,
            audio_bytes: result.audio_bytes,
            prompt_len: 0,
        },
        &dm,
    );
    let fc = FinalizeCase {
        layout,
        result,
        context,
        annotation: case.annotation_path.clone(),
        scene_type: case.scene_type.clone(),
        // Reported by the finalizer as the case's artifact failure.
        publication_error: capture_error,
    };
    (
        fc,
        CaseRun {
            sample,
            out,
            metrics: dm,
            outcome,
            spans: Vec::new(),
        },
    )
}
