use super::*;

#[test]
fn proc_parsers() {
    let stat = "42 (rt load (x)) S 1 2 3 4 5 6 7 8 9 10 250 50 0 0";
    assert_eq!(cpu_s_from_stat(stat), Some(3.0));
    assert_eq!(cpu_s_from_stat("garbage"), None);
    let status = "Name:\trtload\nVmHWM:\t  2048 kB\nVmRSS:\t 1000 kB\n";
    assert_eq!(peak_rss_from_status(status), Some(2048 * 1024));
    assert_eq!(rss_from_status(status), Some(1000 * 1024));
    assert_eq!(rss_from_status("Name:\tx\n"), None);
    assert_eq!(
        rss_from_statm("812 250 100 10 0 300 0\n", 4096),
        Some(250 * 4096)
    );
    assert_eq!(rss_from_statm("812\n", 4096), None);
    assert!(rss_now().is_some_and(|b| b > 0));
    let now = UsageSnapshot::now();
    assert!(now.cpu_s.is_some() && now.peak_rss_bytes.is_some() && now.rss_bytes.is_some());
    // Fixed readings: (c + 0.5) − c is not exactly 0.5 for every c the process has.
    let at = UsageSnapshot::cpu_only;
    assert_eq!(core_share(at(2.0), at(2.5), 1.0), Some(0.5));
    assert_eq!(core_share(at(2.0), at(2.5), 0.0), None);
    assert_eq!(core_share(UsageSnapshot::default(), at(2.5), 1.0), None);
}

#[test]
fn growth_per_session_is_peak_minus_start_over_sessions() {
    let mut u = PhaseUsage {
        start: UsageSnapshot {
            rss_bytes: Some(100 << 20),
            ..UsageSnapshot::default()
        },
        end: UsageSnapshot::default(),
        rss_peak_bytes: Some((100 << 20) + 64 * 1024 * 10),
        series: Vec::new(),
    };
    assert_eq!(u.rss_growth_per_session(10), Some(64.0 * 1024.0));
    assert_eq!(u.rss_growth_per_session(0), None);
    // A phase that ended smaller than it began grew by nothing.
    u.rss_peak_bytes = Some(1 << 20);
    assert_eq!(u.rss_growth_per_session(4), Some(0.0));
    u.start.rss_bytes = None;
    assert_eq!(u.rss_growth_per_session(4), None, "missing, never zero");
}

/// Set in the child process that runs one RSS test alone ([`ran_alone_in_a_child`]).
const ALONE: &str = "RTLOAD_USAGE_TEST_ALONE";

/// RSS is the whole process's, and the other unit tests allocate and free beside an RSS
/// test (the binary held ~250 MB when a CI run saw a peak only 58.8 MiB above the start):
/// such a test runs again alone in a child process. `true` in the parent, once the child
/// ran this module's test `name` and it passed; `false` in the child, which runs it.
fn ran_alone_in_a_child(name: &str) -> bool {
    if std::env::var_os(ALONE).is_some() {
        return false;
    }
    let name = format!(
        "{}::{name}",
        module_path!().split_once("::").map_or("", |(_, rest)| rest)
    );
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([name.as_str(), "--exact", "--test-threads=1"])
        .env(ALONE, "1")
        .output()
        .unwrap();
    let shown = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{shown}");
    assert!(shown.contains("1 passed"), "the child ran no test: {shown}");
    true
}

#[test]
fn the_sampler_sees_memory_held_during_the_phase() {
    if ran_alone_in_a_child("the_sampler_sees_memory_held_during_the_phase") {
        return;
    }
    let sampler = RssSampler::start(None);
    // Touch 64 MiB so it is resident, then free it before the phase ends: only a
    // sample taken while it was held (at the latest, `finish`'s end snapshot taken
    // before the drop below) can see it.
    let held = vec![1u8; 64 << 20];
    let checksum: u64 = held.iter().step_by(4096).map(|&b| b as u64).sum();
    let usage = sampler.finish();
    drop(held);
    assert_eq!(checksum, (64 << 20) / 4096);
    let (start, peak) = (
        usage.start.rss_bytes.unwrap(),
        usage.rss_peak_bytes.unwrap(),
    );
    assert!(peak >= start + (60 << 20), "start {start} peak {peak}");
}

#[test]
fn a_series_ends_with_the_phase_end_reading() {
    // Whatever whole intervals passed, the last reading closes the open one at the
    // phase's end, with the end snapshot's CPU and RSS.
    let sampler = RssSampler::start(Some(std::time::Duration::from_millis(1)));
    let usage = sampler.finish();
    let last = usage.series.last().expect("the open interval's reading");
    assert!(last.t_s.is_finite() && last.t_s > 0.0, "{last:?}");
    assert_eq!(last.cpu_s, usage.end.cpu_s);
    assert_eq!(last.rss_bytes, usage.end.rss_bytes);
    assert!(
        usage.series.windows(2).all(|w| w[0].t_s <= w[1].t_s),
        "{:?}",
        usage.series
    );
}

#[test]
fn the_held_statm_reads_the_rss_anew_each_time() {
    if ran_alone_in_a_child("the_held_statm_reads_the_rss_anew_each_time") {
        return;
    }
    let held = Statm::open();
    assert!(held.file.is_some(), "Linux has /proc/self/statm");
    let before = held.rss().expect("rss");
    // 128 MiB touched page by page: the next reading from the same handle sees them.
    let touched = std::hint::black_box(vec![1u8; 128 << 20]);
    let after = held.rss().expect("rss");
    let fresh = rss_now().expect("rss");
    drop(touched);
    assert!(after >= before + (64 << 20), "{before} -> {after}");
    assert!(
        after.abs_diff(fresh) < 32 << 20,
        "held {after}, fresh {fresh}"
    );
}
