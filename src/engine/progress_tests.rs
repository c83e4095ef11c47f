//! Tests for the progress tally, its line format and the printer thread.

use std::sync::{Arc, Mutex};

use super::*;

fn started(idx: usize, warmup: bool) -> ProgressEvent {
    ProgressEvent::SampleStarted { idx, warmup }
}

/// A sample that ended; a failed one failed with a timeout.
fn ended(idx: usize, warmup: bool, ok: bool, headline_ms: Option<f64>) -> ProgressEvent {
    ProgressEvent::SampleEnded {
        idx,
        warmup,
        failure: (!ok).then_some(crate::workload::FailureKind::Timeout),
        class: None,
        headline_ms,
    }
}

fn feed(p: &mut Progress, evs: &[ProgressEvent]) {
    for (i, ev) in evs.iter().enumerate() {
        p.on_event(*ev, i as f64 * 0.1);
    }
}

#[test]
fn empty_line() {
    let p = Progress::new("ttfc");
    assert_eq!(
        p.line(0.0),
        "[   0.0s] done 0  in flight 0  failed 0  ttfc p50 – p99 –"
    );
}

#[test]
fn example_line_with_plan() {
    let mut p = Progress::new("ttfc");
    p.on_event(
        ProgressEvent::Planned {
            measured: 100,
            warmup: 2,
        },
        0.0,
    );
    feed(
        &mut p,
        &[
            started(0, true),
            started(1, true),
            ended(0, true, true, Some(1.0)),
        ],
    );
    feed(&mut p, &[ended(1, true, false, None)]);
    for i in 0..48 {
        p.on_event(started(i, false), 1.0);
    }
    for i in 0..40 {
        // 39 ok with values 100..=490 step 10 (one failed, without a value)
        let ok = i != 7;
        let v = ok.then(|| 100.0 + 10.0 * (i - usize::from(i > 7)) as f64);
        p.on_event(ended(i, false, ok, v), 2.0);
    }
    // values 100, 110, ..., 480 (39 values): p50 = 290, p99 at pos 37.62 → 476.2
    assert_eq!(
        p.line(12.34),
        "[  12.3s] done 40/100  in flight 8  failed 1 (timeout 1)  warm-up 2/2  ttfc p50 290.0 ms p99 476.2 ms"
    );
    assert_eq!(p.warmups_done(), 2);
    assert_eq!(p.warmups_in_flight(), 0);
    assert_eq!(p.headline_count(), 39);
}

#[test]
fn warmups_counted_separately_from_measured() {
    let mut p = Progress::new("ttfc");
    feed(
        &mut p,
        &[
            started(0, true),
            started(1, true),
            ended(0, true, false, Some(999.0)),
            started(2, false),
        ],
    );
    assert_eq!((p.done(), p.failed(), p.in_flight()), (0, 0, 1));
    assert_eq!((p.warmups_done(), p.warmups_in_flight()), (1, 1));
    assert_eq!(p.headline_count(), 0, "warm-up values are not measured");
    // No plan: totals omitted, warm-up segment shown because warm-ups were seen.
    assert_eq!(
        p.line(1.0),
        "[   1.0s] done 0  in flight 1  failed 0  warm-up 1  ttfc p50 – p99 –"
    );
    feed(&mut p, &[ended(2, false, false, None), started(3, false)]);
    assert_eq!((p.done(), p.failed(), p.in_flight()), (1, 1, 1));
}

#[test]
fn no_warmup_segment_when_none_planned() {
    let mut p = Progress::new("e2e");
    p.on_event(
        ProgressEvent::Planned {
            measured: 3,
            warmup: 0,
        },
        0.0,
    );
    feed(
        &mut p,
        &[started(0, false), ended(0, false, true, Some(5.0))],
    );
    assert_eq!(
        p.line(100.0),
        "[ 100.0s] done 1/3  in flight 0  failed 0  e2e p50 5.0 ms p99 5.0 ms"
    );
}

#[test]
fn percentiles_update_with_each_value() {
    let mut p = Progress::new("ttfc");
    assert_eq!((p.p50_ms(), p.p99_ms()), (None, None));
    p.on_event(ended(0, false, true, Some(400.0)), 0.0);
    assert_eq!((p.p50_ms(), p.p99_ms()), (Some(400.0), Some(400.0)));
    p.on_event(ended(1, false, true, Some(100.0)), 0.0);
    assert_eq!(p.p50_ms(), Some(250.0));
    p.on_event(ended(2, false, true, Some(300.0)), 0.0);
    p.on_event(ended(3, false, true, Some(200.0)), 0.0);
    // [100, 200, 300, 400]: p50 = 250, p99 at pos 2.97 → 397
    assert_eq!(p.p50_ms(), Some(250.0));
    let p99 = p.p99_ms().expect("has values");
    assert!((p99 - 397.0).abs() < 1e-9, "{p99}");
    // None and non-finite values are ignored; failed samples' values count.
    p.on_event(ended(4, false, true, None), 0.0);
    p.on_event(ended(5, false, true, Some(f64::NAN)), 0.0);
    assert_eq!(p.headline_count(), 4);
    p.on_event(ended(6, false, false, Some(500.0)), 0.0);
    assert_eq!(p.p50_ms(), Some(300.0));
    assert_eq!(
        p.line(3.0),
        "[   3.0s] done 7  in flight 0  failed 1 (timeout 1)  ttfc p50 300.0 ms p99 496.0 ms"
    );
}

#[test]
fn line_edge_cases() {
    let mut p = Progress::new("");
    assert_eq!(
        p.line(-1.0),
        "[   0.0s] done 0  in flight 0  failed 0  p50 – p99 –"
    );
    assert_eq!(p.line(f64::NAN), p.line(0.0));
    p.on_event(ended(0, false, true, Some(1.0)), 0.0); // end without a start
    assert_eq!(p.in_flight(), 0);
    assert_eq!(p.last_event_s(), Some(0.0));
    p.on_event(started(1, false), 5.0);
    p.on_event(started(2, false), 2.0);
    assert_eq!(p.last_event_s(), Some(5.0));
}

#[test]
fn mode_selection() {
    assert_eq!(mode_for(true, false), Mode::Live);
    assert_eq!(mode_for(false, false), Mode::Plain { every_s: 5.0 });
    assert_eq!(mode_for(true, true), Mode::Quiet);
    assert_eq!(mode_for(false, true), Mode::Quiet);
}

/// A writer the test can read after the printer thread is joined.
#[derive(Clone, Default)]
struct SharedBuf(Arc<Mutex<Vec<u8>>>);

impl Write for SharedBuf {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().expect("lock").extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl SharedBuf {
    fn text(&self) -> String {
        String::from_utf8(self.0.lock().expect("lock").clone()).expect("utf8")
    }
}

/// Runs a printer over a fixed event list, then disconnects and joins it.
fn run(mode: Mode) -> String {
    let buf = SharedBuf::default();
    let (tx, rx) = crossbeam_channel::unbounded();
    let handle = spawn_printer(mode, rx, Box::new(buf.clone()), "ttfc".to_owned(), None);
    for ev in [
        ProgressEvent::Planned {
            measured: 2,
            warmup: 0,
        },
        started(0, false),
        started(1, false),
        ended(0, false, true, Some(312.4)),
        ended(1, false, false, None),
    ] {
        tx.send(ev).expect("printer alive");
    }
    drop(tx);
    handle.finish().expect("printer thread");
    buf.text()
}

const FINAL: &str =
    "s] done 2/2  in flight 0  failed 1 (timeout 1)  ttfc p50 312.4 ms p99 312.4 ms";

#[test]
fn plain_printer_writes_final_line_on_disconnect() {
    let text = run(Mode::Plain { every_s: 3600.0 });
    assert_eq!(text.matches('\n').count(), 1, "{text:?}");
    assert!(text.starts_with('['), "{text:?}");
    assert!(text.ends_with(&format!("{FINAL}\n")), "{text:?}");
    assert!(!text.contains('\r'));
}

#[test]
fn quiet_printer_writes_nothing() {
    assert_eq!(run(Mode::Quiet), "");
}

#[test]
fn live_printer_redraws_with_carriage_return() {
    let text = run(Mode::Live);
    assert!(text.starts_with('\r'), "{text:?}");
    assert!(text.ends_with(&format!("{FINAL}\x1b[K\n")), "{text:?}");
    assert_eq!(
        text.matches('\n').count(),
        1,
        "only the final line ends with a newline"
    );
}

#[test]
fn plain_period_is_clamped() {
    assert_eq!(clamp_every(0.0), MIN_PLAIN_EVERY_S);
    assert_eq!(clamp_every(1e300), MAX_PLAIN_EVERY_S);
    assert_eq!(clamp_every(f64::NAN), DEFAULT_PLAIN_EVERY_S);
    assert_eq!(clamp_every(2.5), 2.5);
}

#[test]
fn events_are_send_and_small() {
    fn assert_send<T: Send + 'static>() {}
    assert_send::<ProgressEvent>();
    assert!(std::mem::size_of::<ProgressEvent>() <= 32);
}

#[test]
fn line_warns_when_over_one_percent_of_sends_are_late() {
    let end = |_idx, sends, late| ProgressEvent::Sends { sends, late };
    let mut p = Progress::new("ttfc").with_generator_bound(Some(5.0));
    p.on_event(end(0, 100, 1), 1.0);
    assert_eq!(p.generator_bound(), None, "1 % late is p99 within bound");
    p.on_event(end(1, 100, 2), 2.0);
    let w = p.generator_bound().unwrap();
    assert!(
        w.starts_with("results may be generator-bound: send lateness p99 > 5 ms (3 of 200 sends)")
    );
    assert!(
        p.line(2.0)
            .ends_with("(spread the load over more cores or machines)")
    );
    p.set_core_share(Some(0.97));
    assert!(
        p.line(2.0)
            .contains("; the generator used 97% of a core over the last second")
    );
    let quiet = Progress::new("ttfc");
    assert_eq!(quiet.generator_bound(), None, "no threshold, no warning");
}

#[test]
fn surely_above_agrees_with_the_reported_p99() {
    // When the rule says "surely", the result's interpolated p99 is above the bound for
    // any values: here the others sit exactly at it and the late ones just past it.
    for n in 1..=400usize {
        for late in 0..=n {
            let mut v: Vec<f64> = vec![5.0; n - late];
            v.extend(std::iter::repeat_n(5.001, late));
            let p99 = crate::util::stats::percentile_sorted(&v, 0.99).unwrap();
            if p99_surely_above(late, n) {
                assert!(p99 > 5.0, "n {n} late {late}: p99 {p99}");
            }
        }
    }
    // The quickstart's case: 1 late send of 57 is not enough, 2 are.
    assert!(!p99_surely_above(1, 57));
    assert!(p99_surely_above(2, 57));
    assert!(!p99_surely_above(0, 0));
}

#[test]
fn line_counts_the_stalled_listeners_of_measured_samples_once_media_played() {
    let mut p = Progress::new("ttfp");
    assert!(!p.line(1.0).contains("stall"), "no media yet: no segment");
    p.on_event(ProgressEvent::Played { stalls: 0 }, 1.0);
    assert!(
        p.line(1.0).ends_with("stalled 0/1 (0 stalls)"),
        "{}",
        p.line(1.0)
    );
    p.on_event(ProgressEvent::Played { stalls: 3 }, 2.0);
    p.on_event(ProgressEvent::Played { stalls: 1 }, 3.0);
    assert!(
        p.line(3.0).ends_with("stalled 2/3 (4 stalls)"),
        "{}",
        p.line(3.0)
    );
}

#[test]
fn rejected_and_degraded_sessions_are_counted_apart_from_failed_ones() {
    use crate::workload::{FailureKind, outcome::Class};
    let end = |idx, failure, class| ProgressEvent::SampleEnded {
        idx,
        warmup: false,
        failure,
        class: Some(class),
        headline_ms: None,
    };
    let refused = Some(FailureKind::Handshake { status: Some(429) });
    let mut p = Progress::new("ttfc");
    feed(
        &mut p,
        &[
            end(0, refused, Class::Rejected),
            end(1, None, Class::Degraded),
            end(2, Some(FailureKind::Timeout), Class::Failed),
            end(3, None, Class::Good),
        ],
    );
    assert_eq!(p.failed(), 1);
    assert!(
        p.line(1.0)
            .contains("failed 1 (timeout 1)  rejected 1  degraded 1  ttfc"),
        "{}",
        p.line(1.0)
    );
}

#[test]
fn an_in_flight_samples_headline_so_far_counts_until_it_ends_with_its_own() {
    let mut p = Progress::new("ttfp");
    let start = |idx| ProgressEvent::SampleStarted { idx, warmup: false };
    let so_far = |idx, ms| ProgressEvent::HeadlineSoFar { idx, ms };
    feed(&mut p, &[start(0), start(1), start(2)]);
    assert_eq!(p.p50_ms(), None);
    feed(&mut p, &[so_far(0, 100.0), so_far(1, 300.0)]);
    assert_eq!(p.p50_ms(), Some(200.0));
    assert!(
        p.line(1.0)
            .contains("ttfp p50 200.0 ms p99 298.0 ms (2 in flight so far)"),
        "{}",
        p.line(1.0)
    );
    // The latest value replaces the earlier one; the sample's end replaces both.
    feed(
        &mut p,
        &[so_far(0, 500.0), ended(0, false, true, Some(400.0))],
    );
    assert_eq!(p.p50_ms(), Some(350.0), "400 (ended) and 300 (so far)");
    assert_eq!(p.in_flight_headlines(), 1);
    feed(
        &mut p,
        &[
            ended(1, false, false, None),
            ended(2, false, true, Some(200.0)),
        ],
    );
    assert_eq!(
        p.p50_ms(),
        Some(300.0),
        "only the ended values: 200 and 400"
    );
    assert!(!p.line(2.0).contains("so far"));
}

#[test]
fn a_headline_so_far_of_a_sample_not_in_flight_is_ignored() {
    let mut p = Progress::new("ttfp");
    let warm = ProgressEvent::SampleStarted {
        idx: 7,
        warmup: true,
    };
    let so_far = |idx, ms| ProgressEvent::HeadlineSoFar { idx, ms };
    feed(&mut p, &[so_far(3, 100.0), warm, so_far(7, 50.0)]);
    feed(
        &mut p,
        &[ProgressEvent::SampleStarted {
            idx: 4,
            warmup: false,
        }],
    );
    feed(
        &mut p,
        &[ended(4, false, true, Some(10.0)), so_far(4, 999.0)],
    );
    assert_eq!(p.p99_ms(), Some(10.0));
    assert_eq!(p.in_flight_headlines(), 0);
}
