//! Live progress for `rtload run`: the [`ProgressEvent`]s the engine emits, the pure
//! [`Progress`] tally that turns them into one status line, and [`spawn_printer`], the thread
//! that prints that line to a terminal (redrawn in place), a log (a plain line every few
//! seconds) or nowhere.
//!
//! Counting rules: `done` counts every *measured* sample that ended, failed or not; `failed`
//! is the failed subset; `in flight` is measured samples started but not yet ended.
//! Warm-up samples are counted only in the `warm-up done/planned` segment. The headline
//! percentiles are exact (linear interpolation, as in [`crate::util::stats::percentile`], so they
//! agree with the final report) over every finite `headline_ms` of a measured sample, and
//! of one still in flight its latest headline so far ([`ProgressEvent::HeadlineSoFar`]: a
//! held session's shows while it is held), replaced by the value it ends with.

use std::io::Write;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError};

use crate::util::stats::percentile_sorted;

/// Live-mode redraw period in seconds (at most 10 redraws per second).
pub const LIVE_REDRAW_S: f64 = 0.1;

/// Default period of [`Mode::Plain`] lines, in seconds.
pub const DEFAULT_PLAIN_EVERY_S: f64 = 5.0;

/// Shortest accepted [`Mode::Plain`] period; shorter (or non-finite) periods are clamped.
pub const MIN_PLAIN_EVERY_S: f64 = 0.1;

/// Longest [`Mode::Plain`] period; longer ones are clamped.
pub const MAX_PLAIN_EVERY_S: f64 = 86_400.0;

/// Clear from the cursor to the end of the line (ANSI `EL`).
const CLEAR_TO_EOL: &str = "\x1b[K";

/// Something that happened to a sample, sent by the engine to the progress printer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ProgressEvent {
    /// The run's plan, sent once before any sample starts, so the line can show
    /// `done n/total` and `warm-up n/total`. Without it the totals are omitted.
    Planned {
        /// Number of measured samples the run will execute.
        measured: usize,
        /// Number of warm-up samples executed before them.
        warmup: usize,
    },
    /// A sample's session began.
    SampleStarted {
        /// The sample's index in the run.
        idx: usize,
        /// Whether it is a warm-up sample (not measured).
        warmup: bool,
    },
    /// A sample's session ended.
    SampleEnded {
        /// The sample's index in the run.
        idx: usize,
        /// Whether it is a warm-up sample (not measured).
        warmup: bool,
        /// Why the sample failed (`None`: it succeeded).
        failure: Option<crate::workload::FailureKind>,
        /// Its outcome class (`None`: cancelled by an interrupt, or not classified);
        /// a rejected one is counted apart from the failed ones.
        class: Option<crate::workload::outcome::Class>,
        /// Its headline metric in ms, if it produced one (the sender decides whether a
        /// failed sample's value counts; `None` values are never counted).
        headline_ms: Option<f64>,
    },
    /// The scheduled sends of a measured sample that ended (sent before its
    /// [`ProgressEvent::SampleEnded`], only when it made any).
    Sends {
        /// Sends it made (each with a lateness).
        sends: u32,
        /// Of those, sends later than the run's generator-bound threshold.
        late: u32,
    },
    /// What the listener of a measured sample that ended experienced, from its playback
    /// role's summary (the values the report prints); sent before its
    /// [`ProgressEvent::SampleEnded`], only when media played.
    Played {
        /// Times its listener ran dry.
        stalls: u64,
    },
    /// A measured sample in flight has a headline value so far (what its session's
    /// record would give if it ended now: a held session's mean TTFP over its responses
    /// so far). The line counts the latest one in its percentiles until the sample ends,
    /// when the value it ends with replaces it; sent only when the value changes.
    HeadlineSoFar {
        /// The sample's index in the run.
        idx: usize,
        /// Its headline so far, ms (finite).
        ms: f64,
    },
}

/// Running tally of a run's progress; a pure state machine fed with [`ProgressEvent`]s.
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    headline: String,
    planned: Option<(usize, usize)>,
    started: usize,
    done: usize,
    failed: usize,
    /// Measured failures per kind label.
    failed_by_kind: std::collections::BTreeMap<&'static str, usize>,
    /// Measured sessions refused for capacity, and completed ones that broke an SLO.
    rejected: usize,
    degraded: usize,
    warm_started: usize,
    warm_done: usize,
    /// Finite headline values of measured samples, ascending.
    values: Vec<f64>,
    /// Each measured sample in flight and its latest headline so far, if any.
    so_far: std::collections::HashMap<usize, Option<f64>>,
    last_event_s: Option<f64>,
    /// Measured samples whose media played, those whose listener stalled, and stalls.
    played: usize,
    stalled: usize,
    stalls: u64,
    /// Scheduled sends of measured samples, and those later than `bound_ms`.
    sends: usize,
    late_sends: usize,
    bound_ms: Option<f64>,
    /// Share of one core the process used over the last redraw window.
    core_share: Option<f64>,
}

impl Progress {
    /// An empty tally whose line labels the headline metric `headline` (e.g. `"ttfc"`).
    pub fn new(headline: impl Into<String>) -> Self {
        Self {
            headline: headline.into(),
            planned: None,
            started: 0,
            done: 0,
            failed: 0,
            failed_by_kind: std::collections::BTreeMap::new(),
            rejected: 0,
            degraded: 0,
            warm_started: 0,
            warm_done: 0,
            values: Vec::new(),
            so_far: std::collections::HashMap::new(),
            last_event_s: None,
            played: 0,
            stalled: 0,
            stalls: 0,
            sends: 0,
            late_sends: 0,
            bound_ms: None,
            core_share: None,
        }
    }

    /// Use `bound_ms` as the send-lateness threshold of the generator-bound warning
    /// (`None`, the default: no warning on the line).
    pub fn with_generator_bound(mut self, bound_ms: Option<f64>) -> Self {
        self.bound_ms = bound_ms;
        self
    }

    /// Record the share of one core the process used recently (CPU s / wall s).
    pub fn set_core_share(&mut self, share: Option<f64>) {
        self.core_share = share;
    }

    /// "results may be generator-bound: …" when enough measured sends so far were later
    /// than the threshold that their p99 surely exceeds it ([`p99_surely_above`], the
    /// same interpolated p99 the result reports) or the process recently used most of a
    /// core; `None` otherwise.
    pub fn generator_bound(&self) -> Option<String> {
        use crate::workload::kit;
        let bound_ms = self.bound_ms?;
        let late = p99_surely_above(self.late_sends, self.sends).then(|| {
            format!(
                "send lateness p99 > {} ms ({} of {} sends)",
                crate::util::textpos::num(bound_ms),
                self.late_sends,
                self.sends
            )
        });
        let busy = kit::saturation_reason(self.core_share)
            .map(|r| r.replace("during the live phase", "over the last second"));
        kit::bound_message(late.into_iter().chain(busy))
    }

    /// Applies one event that happened at `now_s` seconds since the run started.
    pub fn on_event(&mut self, ev: ProgressEvent, now_s: f64) {
        if now_s.is_finite() {
            self.last_event_s = Some(self.last_event_s.map_or(now_s, |t| t.max(now_s)));
        }
        match ev {
            ProgressEvent::Planned { measured, warmup } => self.planned = Some((measured, warmup)),
            ProgressEvent::SampleStarted { warmup: true, .. } => self.warm_started += 1,
            ProgressEvent::SampleStarted { idx, warmup: false } => {
                self.started += 1;
                self.so_far.insert(idx, None);
            }
            ProgressEvent::HeadlineSoFar { idx, ms } => {
                // Only for a sample still in flight (never one that ended).
                if let Some(v) = self.so_far.get_mut(&idx) {
                    *v = Some(ms).filter(|m| m.is_finite());
                }
            }
            ProgressEvent::SampleEnded { warmup: true, .. } => self.warm_done += 1,
            ProgressEvent::Sends { sends, late } => {
                self.sends += sends as usize;
                self.late_sends += late as usize;
            }
            ProgressEvent::Played { stalls } => {
                self.played += 1;
                self.stalled += usize::from(stalls > 0);
                self.stalls += stalls;
            }
            ProgressEvent::SampleEnded {
                idx,
                warmup: false,
                failure,
                class,
                headline_ms,
            } => {
                use crate::workload::outcome::Class;
                self.done += 1;
                self.so_far.remove(&idx);
                match (class, failure) {
                    (Some(Class::Rejected), _) => self.rejected += 1,
                    (Some(Class::Degraded), _) => self.degraded += 1,
                    (_, Some(kind)) => {
                        self.failed += 1;
                        *self.failed_by_kind.entry(kind.label()).or_insert(0) += 1;
                    }
                    _ => {}
                }
                if let Some(v) = headline_ms.filter(|v| v.is_finite()) {
                    let at = self.values.partition_point(|x| *x < v);
                    self.values.insert(at, v);
                }
            }
        }
    }

    /// Measured samples that ended (including failed ones).
    #[cfg(test)]
    pub fn done(&self) -> usize {
        self.done
    }

    /// Measured samples that ended with a failure.
    #[cfg(test)]
    pub fn failed(&self) -> usize {
        self.failed
    }

    /// Measured samples started and not yet ended.
    pub fn in_flight(&self) -> usize {
        self.started.saturating_sub(self.done)
    }

    /// Warm-up samples that ended.
    #[cfg(test)]
    pub fn warmups_done(&self) -> usize {
        self.warm_done
    }

    /// Warm-up samples started and not yet ended.
    #[cfg(test)]
    pub fn warmups_in_flight(&self) -> usize {
        self.warm_started.saturating_sub(self.warm_done)
    }

    /// Number of headline values of samples that ended.
    #[cfg(test)]
    pub fn headline_count(&self) -> usize {
        self.values.len()
    }

    /// Samples in flight whose headline so far the percentiles count.
    pub fn in_flight_headlines(&self) -> usize {
        self.so_far.values().flatten().count()
    }

    /// The values the percentiles are taken over, ascending: every ended sample's
    /// headline and every in-flight sample's latest one so far.
    fn headline_values(&self) -> std::borrow::Cow<'_, [f64]> {
        let mut live: Vec<f64> = self.so_far.values().flatten().copied().collect();
        if live.is_empty() {
            return std::borrow::Cow::Borrowed(&self.values);
        }
        live.extend_from_slice(&self.values);
        live.sort_by(f64::total_cmp);
        std::borrow::Cow::Owned(live)
    }

    /// Median headline value in ms so far, if any.
    #[cfg(test)]
    pub fn p50_ms(&self) -> Option<f64> {
        percentile_sorted(&self.headline_values(), 0.5).ok()
    }

    /// 99th-percentile headline value in ms so far, if any.
    #[cfg(test)]
    pub fn p99_ms(&self) -> Option<f64> {
        percentile_sorted(&self.headline_values(), 0.99).ok()
    }

    /// Time of the latest event applied (seconds since the run started), if any.
    #[cfg(test)]
    pub fn last_event_s(&self) -> Option<f64> {
        self.last_event_s
    }

    /// The status line at `now_s` seconds since the run started, e.g.
    /// `[  12.3s] done 40/100  in flight 8  failed 1  warm-up 2/2  ttfc p50 312.4 ms p99 401.2 ms  stalled 2/39 (3 stalls)`.
    /// Rejected and degraded sessions appear after `failed` once there are any
    /// (`failed 1 (timeout 1)  rejected 3  degraded 2`). Totals appear once
    /// [`ProgressEvent::Planned`] was seen; the warm-up segment only when
    /// warm-ups are planned or seen; `–` stands for a percentile with no value yet (the
    /// percentiles count in-flight samples' headlines so far: `(n in flight so far)`); the
    /// playback segment once a measured sample's media played (sessions whose listener
    /// stalled, of those, and their stalls).
    pub fn line(&self, now_s: f64) -> String {
        let elapsed = if now_s.is_finite() {
            now_s.max(0.0)
        } else {
            0.0
        };
        let mut s = format!("[{elapsed:>6.1}s] done {}", self.done);
        if let Some((measured, _)) = self.planned {
            s.push_str(&format!("/{measured}"));
        }
        s.push_str(&format!(
            "  in flight {}  failed {}",
            self.in_flight(),
            self.failed
        ));
        if !self.failed_by_kind.is_empty() {
            s.push_str(&format!(
                " ({})",
                crate::workload::outcome::render_counts(&self.failed_by_kind)
            ));
        }
        for (n, label) in [(self.rejected, "rejected"), (self.degraded, "degraded")] {
            if n > 0 {
                s.push_str(&format!("  {label} {n}"));
            }
        }
        let warm_total = self.planned.map(|(_, w)| w);
        if warm_total.unwrap_or(0) > 0 || self.warm_started > 0 || self.warm_done > 0 {
            s.push_str(&format!("  warm-up {}", self.warm_done));
            if let Some(w) = warm_total {
                s.push_str(&format!("/{w}"));
            }
        }
        s.push_str("  ");
        if !self.headline.is_empty() {
            s.push_str(&self.headline);
            s.push(' ');
        }
        let values = self.headline_values();
        s.push_str(&format!(
            "p50 {} p99 {}",
            fmt_ms(percentile_sorted(&values, 0.5).ok()),
            fmt_ms(percentile_sorted(&values, 0.99).ok())
        ));
        let live = self.in_flight_headlines();
        if live > 0 {
            s.push_str(&format!(" ({live} in flight so far)"));
        }
        if self.played > 0 {
            let plural = if self.stalls == 1 { "" } else { "s" };
            s.push_str(&format!(
                "  stalled {}/{} ({} stall{plural})",
                self.stalled, self.played, self.stalls
            ));
        }
        if let Some(w) = self.generator_bound() {
            s.push_str("  ");
            s.push_str(&w);
        }
        s
    }
}

fn fmt_ms(v: Option<f64>) -> String {
    match v {
        Some(v) => format!("{v:.1} ms"),
        None => "–".to_owned(),
    }
}

/// How the printer shows progress.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Mode {
    /// Terminal: one line redrawn in place (`\r` + clear-to-end-of-line) at most every
    /// `LIVE_REDRAW_S`, ended with a newline when the run finishes.
    Live,
    /// No terminal (log file, CI): one plain line every `every_s` seconds (clamped to
    /// `MIN_PLAIN_EVERY_S`..=`MAX_PLAIN_EVERY_S`) and a final line at the end.
    Plain {
        /// Seconds between lines; `DEFAULT_PLAIN_EVERY_S` by default.
        every_s: f64,
    },
    /// Print nothing (events are still drained).
    Quiet,
}

/// The mode for an output that `is_terminal` (or not), unless `quiet` was asked for.
pub fn mode_for(is_terminal: bool, quiet: bool) -> Mode {
    match (quiet, is_terminal) {
        (true, _) => Mode::Quiet,
        (false, true) => Mode::Live,
        (false, false) => Mode::Plain {
            every_s: DEFAULT_PLAIN_EVERY_S,
        },
    }
}

/// After an event wakes the printer and the queue is empty, it rests this long (or until
/// its next draw) before it takes more: a held run sends an event per response of every
/// session, and a wake per event cost the process a context switch each (perf sched:
/// ~2,300 a second at 5,000 sessions); rested, it wakes at most ~20 times a second and
/// takes what queued meanwhile without a syscall. Events are counted when taken, so the
/// line lags them by at most this.
pub const COALESCE: Duration = Duration::from_millis(50);

/// The printer thread ([`spawn_printer`]).
#[derive(Debug)]
pub struct Printer(JoinHandle<()>);

impl Printer {
    /// Waits for the printer to finish, once every sender is dropped: it is woken from
    /// its rest ([`COALESCE`]) so it sees the channel closed at once.
    pub fn finish(self) -> std::thread::Result<()> {
        self.0.thread().unpark();
        self.0.join()
    }
}

/// Starts the printer thread: it applies events from `rx` to a [`Progress`] labelled
/// `headline`, prints to `out` per `mode` (elapsed time measured from the spawn), and returns
/// once every sender is dropped, after printing the final line (Live and Plain modes).
/// With `bound_ms`, the line says "results may be generator-bound: …" when more than 1 %
/// of sends were later than `bound_ms` or the process used ≥ 90 % of a core recently.
/// Write errors (e.g. a closed stderr) are ignored.
pub fn spawn_printer(
    mode: Mode,
    rx: Receiver<ProgressEvent>,
    out: Box<dyn Write + Send>,
    headline: String,
    bound_ms: Option<f64>,
) -> Printer {
    Printer(std::thread::spawn(move || {
        run_printer(mode, rx, out, headline, bound_ms)
    }))
}

/// Rests the printer for [`COALESCE`], at most `until_draw`, when nothing is queued.
fn rest(rx: &Receiver<ProgressEvent>, until_draw: Duration) {
    if rx.is_empty() {
        std::thread::park_timeout(COALESCE.min(until_draw));
    }
}

fn run_printer(
    mode: Mode,
    rx: Receiver<ProgressEvent>,
    mut out: Box<dyn Write + Send>,
    headline: String,
    bound_ms: Option<f64>,
) {
    let (period_s, live) = match mode {
        Mode::Quiet => {
            while rx.recv().is_ok() {
                rest(&rx, COALESCE);
            }
            return;
        }
        Mode::Live => (LIVE_REDRAW_S, true),
        Mode::Plain { every_s } => (clamp_every(every_s), false),
    };
    let origin = Instant::now();
    let mut progress = Progress::new(headline).with_generator_bound(bound_ms);
    let mut next_draw_s = period_s;
    let mut cpu = CpuWindow::new();
    loop {
        let now_s = origin.elapsed().as_secs_f64();
        if now_s >= next_draw_s {
            if let Some(share) = cpu.sample(now_s).filter(|_| bound_ms.is_some()) {
                progress.set_core_share(Some(share));
            }
            draw(&mut out, live, &progress.line(now_s), false);
            // Skip ticks missed while busy rather than bursting to catch up.
            next_draw_s = ((now_s / period_s).floor() + 1.0) * period_s;
        }
        let wait = Duration::try_from_secs_f64(next_draw_s - now_s).unwrap_or(Duration::ZERO);
        match rx.recv_timeout(wait) {
            Ok(ev) => {
                let now_s = origin.elapsed().as_secs_f64();
                progress.on_event(ev, now_s);
                rest(
                    &rx,
                    Duration::try_from_secs_f64(next_draw_s - now_s).unwrap_or_default(),
                );
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => break,
        }
    }
    draw(
        &mut out,
        live,
        &progress.line(origin.elapsed().as_secs_f64()),
        true,
    );
}

/// The process's share of one core over windows of at least a second (from `/proc`).
struct CpuWindow {
    since: Option<(f64, f64)>,
}

impl CpuWindow {
    fn new() -> Self {
        let cpu = crate::workload::kit::UsageSnapshot::now().cpu_s;
        Self {
            since: cpu.map(|c| (0.0, c)),
        }
    }

    /// The share since the window opened, once a second has passed (then a new window
    /// opens); `None` before that or without `/proc`.
    fn sample(&mut self, now_s: f64) -> Option<f64> {
        let (t0, c0) = self.since?;
        if now_s - t0 < 1.0 {
            return None;
        }
        let c = crate::workload::kit::UsageSnapshot::now().cpu_s?;
        self.since = Some((now_s, c));
        use crate::workload::kit::{UsageSnapshot, core_share};
        core_share(
            UsageSnapshot::cpu_only(c0),
            UsageSnapshot::cpu_only(c),
            now_s - t0,
        )
    }
}

fn clamp_every(every_s: f64) -> f64 {
    if every_s.is_finite() {
        every_s.clamp(MIN_PLAIN_EVERY_S, MAX_PLAIN_EVERY_S)
    } else {
        DEFAULT_PLAIN_EVERY_S
    }
}

fn draw(out: &mut Box<dyn Write + Send>, live: bool, line: &str, last: bool) {
    let text = match (live, last) {
        (true, false) => format!("\r{line}{CLEAR_TO_EOL}"),
        (true, true) => format!("\r{line}{CLEAR_TO_EOL}\n"),
        (false, _) => format!("{line}\n"),
    };
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}

/// Whether `late` of `n` values above a bound put their linearly interpolated p99 (the
/// percentile the result reports) above it whatever the values are: the p99 lies between
/// the sorted values at ranks `⌊0.99 (n − 1)⌋` and the one after, so it is surely above
/// when the lower of the two is one of the late ones. 1 late send of 57 is not enough
/// (the result's p99 may stay under the bound); 2 are.
pub fn p99_surely_above(late: usize, n: usize) -> bool {
    if late == 0 || late > n {
        return false;
    }
    let lower_rank = (0.99 * (n - 1) as f64).floor() as usize;
    n - late <= lower_rank
}

#[cfg(test)]
#[path = "progress_tests.rs"]
mod tests;
