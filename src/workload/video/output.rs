//! Turns a finished video run into its report: per-session metrics, the aggregate, the
//! reference's JSON layout (§2.7: benchmark, timestamp, endpoint, model, git revision,
//! hostname, workload, config, sessions, metrics) plus an `rtload` block that reports what
//! the reference hides: failed sessions, queue waits, send lateness, playback-role stalls
//! and the cross-check of client cadence against the server's own send stamps.

use serde_json::{Value, json};

use super::metrics::{self, ChunkOutput, ChunkRecord, MetricsConfig, SessionMetrics};
use super::report::{ReportInput, SessionFailure, SessionReport, render_report};
use super::rollout::Rollout;
use super::session::VideoOutput;
use crate::workload::catalogue::chart;
use crate::workload::results::Recorded;

type RunRecord = crate::workload::RunRecord<VideoOutput>;
type SampleRecord = crate::workload::SampleRecord<VideoOutput>;

/// The built report (sessions whose socket run succeeded but whose metrics could not be
/// computed are its `failures`).
pub type VideoReport = crate::workload::kit::BuiltReport;

/// Build the report for `run`.
pub fn build_report(
    r: &Rollout,
    cfg: &MetricsConfig,
    run: RunRecord,
) -> Result<VideoReport, String> {
    let endpoint = crate::util::target::redact_url(&run.endpoint);
    let warmup_sessions = run.samples.iter().filter(|s| s.warmup).count();
    let Sessions {
        sessions,
        failures,
        late_failures,
        json_sessions,
        ok_records,
        engine_rows,
        interrupted,
        series,
        timeline,
    } = collect_sessions(&run, cfg);
    let ok: Vec<SessionMetrics> = sessions.iter().map(|s| s.metrics.clone()).collect();
    let aggregate = if ok.is_empty() {
        None
    } else {
        Some(metrics::aggregate(&ok).map_err(|e| e.to_string())?)
    };
    let input = ReportInput {
        endpoint: endpoint.clone(),
        model: r.model.clone(),
        num_chunks: u64::from(r.num_chunks()),
        num_frames: u64::from(r.num_frames()),
        width: r.width,
        height: r.height,
        mux_fps: r.fps,
        target_fps: cfg.fps,
        warmup_sessions: warmup_sessions as u32,
        warmup_chunks: cfg.warmup_chunks,
        chunk_slo_ms: cfg.slo_ms,
        playback_buffer_chunks: cfg.buffer_chunks,
        sessions,
        failures,
        aggregate: aggregate.clone(),
    };
    let mut rt = rtload_block(&run, &engine_rows, input.failures.len());
    rt["interrupted_sessions"] = json!(interrupted);
    let mut text = render_report(&input);
    text.push_str(&engine_text(&rt));
    let done: Vec<super::names::Done<'_>> = ok
        .iter()
        .zip(&ok_records)
        .map(|(m, (o, open))| (m, o.records.as_slice(), *open))
        .collect();
    let (mut scalars, recorded) = super::names::normalized(&done, cfg, input.failures.len());
    let chunks = ok.iter().map(|m| m.chunks_received).sum();
    if let Some(r) = super::names::chunk_throughput(ok.len(), chunks, run.duration_s) {
        scalars.insert(super::names::CHUNK_THROUGHPUT.into(), r);
    }
    text.push_str(&pooled_text(&recorded, &scalars));
    let mut flat = scalars.clone();
    flat.extend(recorded.flat());
    rt["metrics"] = serde_json::to_value(&flat).unwrap_or(Value::Null);
    rt["workload"] = json!(super::KIND);
    rt[chart::SESSION_SERIES_KEY] = json!(series);
    rt[chart::TIMELINE_KEY] = json!(timeline);
    let doc = result_doc(
        r,
        cfg,
        &endpoint,
        warmup_sessions,
        input.sessions.len() + input.failures.len() + interrupted,
        (json_sessions, aggregate),
        rt,
    );
    Ok(VideoReport {
        text,
        json: doc,
        scalars,
        recorded,
        failures: late_failures,
        warnings: Vec::new(),
    })
}

/// The measured sessions of a run, sorted into the report's parts.
struct Sessions<'a> {
    /// Sessions with metrics.
    sessions: Vec<SessionReport>,
    /// Sessions that failed, in the run or in the metrics.
    failures: Vec<SessionFailure>,
    /// Failures only the metrics could see: (measured position, message).
    late_failures: Vec<(usize, String)>,
    /// The per-session JSON objects of the result file.
    json_sessions: Vec<Value>,
    /// The outputs of the sessions with metrics, in the order of `sessions`, with when
    /// each socket opened (seconds since the run start).
    ok_records: Vec<(&'a VideoOutput, f64)>,
    /// The generator's per-sample rows.
    engine_rows: Vec<Value>,
    /// Sessions cancelled by Ctrl-C: their own outcome, neither a session nor a failure.
    interrupted: usize,
    /// Each session's chunk cadence (`rtload.session_series`).
    series: Vec<chart::SeriesRow>,
    /// Every measured session's timeline row (`rtload.timeline`).
    timeline: Vec<chart::TimelineRow>,
}

/// Compute each measured session's metrics and sort the sessions into successes and
/// failures.
fn collect_sessions<'a>(run: &'a RunRecord, cfg: &MetricsConfig) -> Sessions<'a> {
    let mut sessions = Vec::new();
    let mut failures = Vec::new();
    let mut late_failures = Vec::new();
    let mut json_sessions = Vec::new();
    let mut ok_records: Vec<(&VideoOutput, f64)> = Vec::new();
    let mut engine_rows = Vec::new();
    let mut interrupted = 0usize;
    let (mut series, mut timeline) = (Vec::new(), Vec::new());
    for (pos, s) in run.samples.iter().filter(|s| !s.warmup).enumerate() {
        // The run's session number (the same across shards), not the position here.
        let session_index = s.session.unwrap_or(pos);
        let out = s.output.as_ref();
        engine_rows.push(engine_row(session_index, s, out));
        timeline.push(chart::timeline_row(s, vec![chart::queue_span(s)]));
        let metrics = match (&s.outcome, out) {
            (Ok(()), Some(o)) => metrics::compute_metrics(&o.records, cfg, o.ttfc_s, o.wall_s),
            (Ok(()), None) => Err(metrics::MetricsError::NoRecords),
            // Cancelled by Ctrl-C: its own outcome (kept in `rtload.samples`), neither a
            // session nor a failed one.
            (Err(e), _) if e.kind == crate::workload::FailureKind::Interrupted => {
                interrupted += 1;
                continue;
            }
            (Err(e), _) => {
                failures.push(SessionFailure {
                    session_index,
                    message: e.message.clone(),
                });
                continue;
            }
        };
        let (o, m) = match (out, metrics) {
            (Some(o), Ok(mut m)) => {
                // What the sample's playback role saw is what the report prints.
                if let Some(p) = s.playback.as_ref().and_then(|p| p.first_stream()) {
                    m.playback = metrics::viewer_summary(Some(p), cfg.buffer_chunks);
                }
                (o, m)
            }
            (_, Err(e)) => {
                late_failures.push((pos, e.to_string()));
                failures.push(SessionFailure {
                    session_index,
                    message: e.to_string(),
                });
                continue;
            }
            (None, Ok(_)) => continue,
        };
        let video_start_ms = o.video_start_s.map(|v| v * 1000.0);
        json_sessions.push(json!({
            "session_index": session_index,
            "request_id": o.request_id,
            "video_start_ms": video_start_ms,
            "chunks": o.records.iter().map(ChunkOutput::from).collect::<Vec<_>>(),
            "metrics": m,
        }));
        series.push(cadence_row(session_index, &o.records, cfg.warmup_chunks));
        sessions.push(SessionReport {
            session_index,
            video_start_ms,
            metrics: m,
        });
        ok_records.push((o, s.opened_s.unwrap_or(s.started_s)));
    }
    Sessions {
        sessions,
        failures,
        late_failures,
        json_sessions,
        ok_records,
        engine_rows,
        interrupted,
        series,
        timeline,
    }
}

/// One session's chunk cadence: (chunk index, inter-arrival ms) from chunk 1 on (chunk
/// 0's value is the TTFC), the warm-up chunks shaded when there are any after chunk 0.
fn cadence_row(session: usize, records: &[ChunkRecord], warmup: u32) -> chart::SeriesRow {
    let mut points: Vec<(f64, f64)> = records
        .iter()
        .filter(|r| r.index >= 1)
        .map(|r| (r.index as f64, r.inter_arrival_s * 1000.0))
        .collect();
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
    chart::SeriesRow {
        series: super::names::CADENCE_SERIES.into(),
        session,
        points,
        band_to_x: (warmup > 1).then(|| f64::from(warmup) - 0.5),
    }
}

/// The pooled steady-state numbers the headline carries (from the recorded values, as
/// every output reads them): steady inter-arrival p50 / p99 and the SLO attainment.
fn pooled_text(rec: &Recorded, scalars: &std::collections::BTreeMap<String, f64>) -> String {
    let mut t = String::from("\nSteady state pooled over sessions (rtload)\n");
    if let Some(s) = rec.summary("chunk_interval_ms") {
        let p = |q| s.percentile(q).map_or("n/a".into(), |v| format!("{v:.3}"));
        t.push_str(&format!(
            "  steady interval p50 / p99     {} / {} ms over {} intervals\n",
            p(50.0),
            p(99.0),
            s.count
        ));
    }
    if let Some(a) = scalars.get("slo_attainment") {
        t.push_str(&format!(
            "  SLO attainment                {a:.4} (steady intervals within the chunk deadline)\n"
        ));
    }
    t
}

/// The result JSON document in the reference's layout, with the generator block `rt`.
fn result_doc(
    r: &Rollout,
    cfg: &MetricsConfig,
    endpoint: &str,
    warmup_sessions: usize,
    n_sessions: usize,
    (json_sessions, aggregate): (Vec<Value>, Option<metrics::AggregateMetrics>),
    rt: Value,
) -> Value {
    json!({
        "benchmark": "lingbot_world_realtime",
        "timestamp": crate::workload::env_info::utc_timestamp(),
        "endpoint": endpoint,
        "model": r.model,
        "git_revision": crate::workload::env_info::git_revision(),
        "hostname": crate::workload::env_info::hostname(),
        "workload": r.describe_json(),
        "config": {
            "sessions": n_sessions,
            "warmup_sessions": warmup_sessions,
            "warmup_chunks": cfg.warmup_chunks,
            "camera_pattern": r.camera_pattern,
            // As the reference: null when --chunk-slo-ms was not given.
            "chunk_slo_ms": cfg.slo_ms,
            "target_fps": cfg.fps,
            "mux_fps": r.fps,
            "playback_buffer_chunks": cfg.buffer_chunks,
            "workload_file": r.workload_file.as_ref().map(|p| p.display().to_string()),
        },
        "sessions": json_sessions,
        "metrics": aggregate,
        "rtload": rt,
    })
}

fn engine_row(session_index: usize, s: &SampleRecord, out: Option<&VideoOutput>) -> Value {
    let mut row = crate::workload::kit::sample_row(s);
    let own = json!({
        "session_index": session_index,
        "playback_role": s.playback,
        "server_sent_at_s": out.map(|o| o.server_sent_at_s.clone()),
        "client_arrival_s": out.map(|o| o.records.iter().map(|r| r.arrival_s).collect::<Vec<_>>()),
    });
    if let Value::Object(own) = own {
        row.extend(own);
    }
    Value::Object(row)
}

/// Mean client inter-arrival vs mean server inter-send over the same chunk pairs, ms.
fn cadence_check(run: &RunRecord) -> Option<(f64, f64, usize)> {
    let (mut client, mut server, mut n) = (0.0, 0.0, 0usize);
    for s in run
        .samples
        .iter()
        .filter(|s| !s.warmup && s.outcome.is_ok())
    {
        let Some(o) = s.output.as_ref() else {
            continue;
        };
        for i in 1..o.records.len() {
            if let (Some(Some(a)), Some(Some(b))) =
                (o.server_sent_at_s.get(i - 1), o.server_sent_at_s.get(i))
            {
                client += o.records[i].arrival_s - o.records[i - 1].arrival_s;
                server += b - a;
                n += 1;
            }
        }
    }
    (n > 0).then(|| (client / n as f64 * 1000.0, server / n as f64 * 1000.0, n))
}

fn rtload_block(run: &RunRecord, rows: &[Value], failed: usize) -> Value {
    // The same summaries the runner's generator block writes (one formula, in the kit).
    let (queue_wait, send_lateness) = crate::workload::kit::wait_and_lateness(run);
    let cadence = cadence_check(run).map(|(c, s, n)| {
        json!({"pairs": n, "client_mean_interval_ms": c, "server_mean_interval_ms": s, "difference_ms": c - s})
    });
    json!({
        "version": env!("CARGO_PKG_VERSION"),
        "pacing_mode": "realtime",
        "duration_s": run.duration_s,
        "failed_sessions": failed,
        "queue_wait": queue_wait,
        "send_lateness": send_lateness,
        "cadence_vs_server": cadence,
        "samples": rows,
    })
}

fn engine_text(rt: &Value) -> String {
    let mut t = String::from("\nGenerator (rtload)\n");
    let f = |v: &Value, k: &str| v.get(k).and_then(Value::as_f64);
    if let Some(q) = rt.get("queue_wait").filter(|v| !v.is_null()) {
        t.push_str(&format!(
            "  queue wait for a slot      mean {:>9.3} ms   p99 {:>9.3} ms   max {:>9.3} ms\n",
            f(q, "mean_ms").unwrap_or(0.0),
            f(q, "p99_ms").unwrap_or(0.0),
            f(q, "max_ms").unwrap_or(0.0)
        ));
    }
    if let Some(l) = rt.get("send_lateness").filter(|v| !v.is_null()) {
        t.push_str(&format!(
            "  send lateness (n={:<5})    mean {:>9.3} ms   p99 {:>9.3} ms   max {:>9.3} ms\n",
            l.get("count").and_then(Value::as_u64).unwrap_or(0),
            f(l, "mean_ms").unwrap_or(0.0),
            f(l, "p99_ms").unwrap_or(0.0),
            f(l, "max_ms").unwrap_or(0.0)
        ));
    }
    if let Some(c) = rt.get("cadence_vs_server").filter(|v| !v.is_null()) {
        t.push_str(&format!(
            "  cadence vs server stamps   client {:.3} ms   server {:.3} ms   diff {:+.3} ms over {} intervals\n",
            f(c, "client_mean_interval_ms").unwrap_or(0.0),
            f(c, "server_mean_interval_ms").unwrap_or(0.0),
            f(c, "difference_ms").unwrap_or(0.0),
            c.get("pairs").and_then(Value::as_u64).unwrap_or(0)
        ));
    }
    t
}
