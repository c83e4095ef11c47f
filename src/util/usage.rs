//! The process's own resource use, read from `/proc/self` (`getrusage` would need
//! `unsafe`, which this crate denies outside the stamped read): CPU seconds, peak and
//! current RSS at an instant, and a sampler that follows the RSS through a phase, so the
//! generator can report what it cost — CPU per session-second, memory per session in
//! flight — next to what it measured. Values are `None` where `/proc` is unavailable:
//! missing, never zero.

use std::thread::JoinHandle;
use std::time::Duration;

use crossbeam_channel::{RecvTimeoutError, Sender};

/// Linux's `USER_HZ` (`/proc/<pid>/stat` CPU times are in these ticks; fixed by the ABI).
const USER_HZ: f64 = 100.0;

/// How often [`RssSampler`] reads the RSS.
pub const RSS_SAMPLE_PERIOD: Duration = Duration::from_millis(100);

/// The process's CPU use and memory at one instant.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct UsageSnapshot {
    /// User + system CPU seconds so far.
    pub cpu_s: Option<f64>,
    /// Peak resident set size so far, bytes (`VmHWM`).
    pub peak_rss_bytes: Option<u64>,
    /// Resident set size now, bytes (`VmRSS`).
    pub rss_bytes: Option<u64>,
}

impl UsageSnapshot {
    /// Take a snapshot now.
    pub fn now() -> Self {
        let status = std::fs::read_to_string("/proc/self/status").ok();
        Self {
            cpu_s: std::fs::read_to_string("/proc/self/stat")
                .ok()
                .and_then(|s| cpu_s_from_stat(&s)),
            peak_rss_bytes: status.as_deref().and_then(peak_rss_from_status),
            rss_bytes: status.as_deref().and_then(rss_from_status),
        }
    }

    /// A snapshot holding only a CPU reading.
    pub fn cpu_only(cpu_s: f64) -> Self {
        Self {
            cpu_s: Some(cpu_s),
            ..Self::default()
        }
    }
}

/// User + system CPU seconds from `/proc/<pid>/stat` text (fields 14 and 15, counted
/// after the parenthesised command name, which may itself contain spaces).
pub fn cpu_s_from_stat(stat: &str) -> Option<f64> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // `rest` starts at field 3 (state); utime is field 14, stime field 15.
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) / USER_HZ)
}

/// A `kB` field of `/proc/<pid>/status` text, in bytes.
fn status_kb(status: &str, field: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with(field))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// `VmHWM` in bytes from `/proc/<pid>/status` text.
pub fn peak_rss_from_status(status: &str) -> Option<u64> {
    status_kb(status, "VmHWM:")
}

/// `VmRSS` in bytes from `/proc/<pid>/status` text.
pub fn rss_from_status(status: &str) -> Option<u64> {
    status_kb(status, "VmRSS:")
}

/// The resident set size now, bytes, from `/proc/self/statm`: the same count as
/// `VmRSS`, but the kernel renders it from a few counters, where `status` (and `stat`)
/// cost ~0.2 ms a read: what the sampler reads ten times a second during the live phase.
pub fn rss_now() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    rss_from_statm(&statm, rustix::param::page_size() as u64)
}

/// `/proc/self/statm` held open and read again from its start for each reading (a file
/// in `/proc` gives the current values at every read from offset 0). The sampler reads
/// it ten times a second for the whole run; opened each time, the path's walk and the
/// open were most of the sampler's cost (perf, 200 held sessions: the sampler thread
/// 2.3 % of the client's CPU, nearly all of it in `open`'s lookup).
struct Statm {
    file: Option<std::fs::File>,
    page_bytes: u64,
}

impl Statm {
    fn open() -> Self {
        Self {
            file: std::fs::File::open("/proc/self/statm").ok(),
            page_bytes: rustix::param::page_size() as u64,
        }
    }

    /// `VmRSS` now, bytes ([`rss_now`] when the file could not be held open).
    fn rss(&self) -> Option<u64> {
        use std::os::unix::fs::FileExt;
        let Some(file) = &self.file else {
            return rss_now();
        };
        // Seven decimal numbers: well under 256 bytes.
        let mut buf = [0u8; 256];
        let n = file.read_at(&mut buf, 0).ok()?;
        rss_from_statm(std::str::from_utf8(&buf[..n]).ok()?, self.page_bytes)
    }
}

/// The resident pages (second field) of `/proc/<pid>/statm` text, in bytes.
pub fn rss_from_statm(statm: &str, page_bytes: u64) -> Option<u64> {
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * page_bytes)
}

/// CPU seconds used between `start` and `end` divided by `wall_s`: the share of one core
/// the process used (`None` when `/proc` was unavailable or no time passed).
pub fn core_share(start: UsageSnapshot, end: UsageSnapshot, wall_s: f64) -> Option<f64> {
    let cpu = end.cpu_s? - start.cpu_s?;
    (wall_s > 0.0).then(|| cpu.max(0.0) / wall_s)
}

/// The process's usage at the end of one interval of a phase ([`PhaseUsage::series`]).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct IntervalUsage {
    /// Seconds since the phase started, at the interval's end.
    pub t_s: f64,
    /// User + system CPU seconds so far (the process's, as [`UsageSnapshot::cpu_s`]).
    pub cpu_s: Option<f64>,
    /// `VmRSS` at the interval's end, bytes.
    pub rss_bytes: Option<u64>,
    /// The largest `VmRSS` sampled during the interval, bytes.
    pub rss_max_bytes: Option<u64>,
}

/// The process's usage over one phase: a snapshot at each boundary, the largest RSS
/// sampled in between (every [`RSS_SAMPLE_PERIOD`], and at both boundaries) and, when
/// asked, a reading at the end of every interval.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PhaseUsage {
    /// At the phase's start.
    pub start: UsageSnapshot,
    /// At the phase's end.
    pub end: UsageSnapshot,
    /// The largest `VmRSS` seen during the phase, bytes. Unlike `end.peak_rss_bytes`
    /// (the process's all-time peak), this excludes whatever came before the phase.
    pub rss_peak_bytes: Option<u64>,
    /// One reading per whole interval of the phase, then one at its end (empty when the
    /// sampler was started without an interval).
    pub series: Vec<IntervalUsage>,
}

impl PhaseUsage {
    /// How much the RSS grew during the phase, per unit of `peak_sessions` (the most
    /// sessions in flight at once), bytes; `None` without readings or sessions.
    pub fn rss_growth_per_session(&self, peak_sessions: usize) -> Option<f64> {
        let grew = self.rss_peak_bytes?.saturating_sub(self.start.rss_bytes?);
        (peak_sessions > 0).then(|| grew as f64 / peak_sessions as f64)
    }
}

/// What the sampler thread found: the phase's largest RSS and the interval readings.
type Sampled = (Option<u64>, Vec<IntervalUsage>);

/// Follows the RSS on a thread of its own until [`RssSampler::finish`].
#[derive(Debug)]
pub struct RssSampler {
    start: UsageSnapshot,
    began: std::time::Instant,
    stop: Sender<()>,
    thread: Option<JoinHandle<Sampled>>,
}

impl RssSampler {
    /// Takes the start snapshot and starts sampling (without a thread, only the two
    /// boundaries are sampled), with a reading at the end of every `interval` of the
    /// phase when given ([`PhaseUsage::series`]).
    pub fn start(interval: Option<Duration>) -> Self {
        let start = UsageSnapshot::now();
        let began = std::time::Instant::now();
        let (stop, stopped) = crossbeam_channel::bounded::<()>(1);
        let thread = std::thread::Builder::new()
            .name("rtload-rss".into())
            .spawn(move || sample(began, interval, &stopped))
            .ok();
        Self {
            start,
            began,
            stop,
            thread,
        }
    }

    /// Stops sampling and takes the end snapshot (and the last, partial interval's
    /// reading when the sampler keeps a series).
    pub fn finish(mut self) -> PhaseUsage {
        let end = UsageSnapshot::now();
        let t_s = self.began.elapsed().as_secs_f64();
        let _ = self.stop.send(());
        let (sampled, mut series) = (self.thread.take())
            .and_then(|t| t.join().ok())
            .unwrap_or_default();
        let peak = max_of(max_of(sampled, self.start.rss_bytes), end.rss_bytes);
        if let Some(open) = series.pop_if(|l| l.t_s.is_infinite()) {
            // `sample` ended its open interval at the stop; it closes at `end`. A reading
            // the thread took after the phase ended (between `end` and the stop) is
            // past the phase: its largest RSS joins the closing one.
            let mut rss_max = max_of(open.rss_max_bytes, end.rss_bytes);
            while let Some(late) = series.pop_if(|l| l.t_s > t_s) {
                rss_max = max_of(rss_max, late.rss_max_bytes);
            }
            series.push(IntervalUsage {
                t_s,
                cpu_s: end.cpu_s,
                rss_bytes: end.rss_bytes,
                rss_max_bytes: rss_max,
            });
        }
        PhaseUsage {
            start: self.start,
            end,
            rss_peak_bytes: peak,
            series,
        }
    }
}

/// The sampler thread: the RSS every [`RSS_SAMPLE_PERIOD`], a reading at the end of
/// every `interval` and, at the stop, one for the open interval (which
/// [`RssSampler::finish`] completes with its end snapshot).
fn sample(
    began: std::time::Instant,
    interval: Option<Duration>,
    stopped: &crossbeam_channel::Receiver<()>,
) -> Sampled {
    let (mut peak, mut in_interval, mut series) = (None, None, Vec::new());
    let mut next = interval.map(|i| began + i);
    let statm = Statm::open();
    loop {
        let rss = statm.rss();
        peak = max_of(peak, rss);
        in_interval = max_of(in_interval, rss);
        if let (Some(i), Some(due)) = (interval, next)
            && std::time::Instant::now() >= due
        {
            // Labelled when it was read (at most a sample period after `due`).
            series.push(IntervalUsage {
                t_s: began.elapsed().as_secs_f64(),
                cpu_s: UsageSnapshot::now().cpu_s,
                rss_bytes: rss,
                rss_max_bytes: in_interval.take(),
            });
            next = Some(due + i);
        }
        match stopped.recv_timeout(RSS_SAMPLE_PERIOD) {
            Err(RecvTimeoutError::Timeout) => {}
            _ => break,
        }
    }
    if interval.is_some() {
        // The open interval's largest RSS; its end is the phase's end.
        series.push(IntervalUsage {
            t_s: f64::INFINITY,
            rss_max_bytes: in_interval,
            ..IntervalUsage::default()
        });
    }
    (peak, series)
}

fn max_of(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}

#[cfg(test)]
#[path = "usage_tests.rs"]
mod tests;
