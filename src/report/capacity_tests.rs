//! The search without sockets: staircase, bisection, confirmation, a confirmation that
//! breaks, the generator-bound stop; and what a step is judged on.

use super::*;

const HOLDS: Verdict = Verdict::Holds;

fn breaks() -> Verdict {
    Verdict::Breaks(vec!["1 rejected sessions".into()])
}

/// Runs a search against an endpoint whose answer at each concurrency is `at`; returns
/// the concurrencies run (with phases) and the outcome.
fn drive(bounds: Bounds, at: impl Fn(usize) -> Verdict) -> (Vec<(Phase, usize)>, Outcome) {
    let mut s = Search::new(bounds);
    let mut ran = Vec::new();
    while let Some((phase, n)) = s.next() {
        ran.push((phase, n));
        s.record(n, &at(n));
        assert!(ran.len() < 100, "the search does not end: {ran:?}");
    }
    (ran, s.outcome().cloned().unwrap())
}

fn values(ran: &[(Phase, usize)]) -> Vec<usize> {
    ran.iter().map(|r| r.1).collect()
}

const DEFAULT: Bounds = Bounds {
    start: 1,
    max: 256,
    ramp: None,
};

#[test]
fn staircase_then_bisect_then_confirm_lands_exactly() {
    let (ran, out) = drive(DEFAULT, |n| if n <= 6 { HOLDS } else { breaks() });
    assert_eq!(values(&ran), [1, 2, 4, 8, 6, 7, 6]);
    use Phase::*;
    let phases: Vec<Phase> = ran.iter().map(|r| r.0).collect();
    assert_eq!(
        phases,
        [
            Staircase, Staircase, Staircase, Staircase, Bisect, Bisect, Confirm
        ]
    );
    assert_eq!(
        out,
        Outcome::Capacity {
            sessions: 6,
            limit: Some(7)
        }
    );
}

#[test]
fn every_answer_from_1_to_40_is_found_exactly() {
    for cap in 1..=40 {
        let (_, out) = drive(DEFAULT, |n| if n <= cap { HOLDS } else { breaks() });
        assert_eq!(
            out,
            Outcome::Capacity {
                sessions: cap,
                limit: Some(cap + 1)
            },
            "{cap}"
        );
    }
}

#[test]
fn a_power_of_two_answer_confirms_without_bisecting() {
    let (ran, out) = drive(DEFAULT, |n| if n <= 4 { HOLDS } else { breaks() });
    assert_eq!(values(&ran), [1, 2, 4, 8, 6, 5, 4]);
    assert_eq!(
        out,
        Outcome::Capacity {
            sessions: 4,
            limit: Some(5)
        }
    );
}

#[test]
fn even_one_session_breaking_is_no_capacity() {
    let (ran, out) = drive(DEFAULT, |_| breaks());
    assert_eq!(values(&ran), [1]);
    assert_eq!(out, Outcome::None { at: 1 });
}

#[test]
fn a_start_above_the_answer_bisects_down_to_it() {
    let b = Bounds {
        start: 8,
        max: 64,
        ramp: None,
    };
    let (ran, out) = drive(b, |n| if n <= 2 { HOLDS } else { breaks() });
    assert_eq!(values(&ran), [8, 4, 2, 3, 2]);
    assert_eq!(
        out,
        Outcome::Capacity {
            sessions: 2,
            limit: Some(3)
        }
    );
    let (ran, out) = drive(b, |_| breaks());
    assert_eq!(values(&ran), [8, 4, 2, 1]);
    assert_eq!(out, Outcome::None { at: 1 });
}

#[test]
fn holding_at_max_is_at_least_max_confirmed() {
    let (ran, out) = drive(
        Bounds {
            start: 1,
            max: 12,
            ramp: None,
        },
        |_| HOLDS,
    );
    assert_eq!(values(&ran), [1, 2, 4, 8, 12, 12]);
    assert_eq!(ran.last().unwrap().0, Phase::Confirm);
    assert_eq!(
        out,
        Outcome::Capacity {
            sessions: 12,
            limit: None
        }
    );
}

#[test]
fn a_confirmation_that_breaks_resumes_the_bisection_below_it() {
    // 6 holds the first time only: the answer must hold twice.
    let mut seen6 = 0;
    let mut s = Search::new(DEFAULT);
    let mut ran = Vec::new();
    while let Some((_, n)) = s.next() {
        ran.push(n);
        let v = match n {
            6 => {
                seen6 += 1;
                if seen6 == 1 { HOLDS } else { breaks() }
            }
            n if n <= 5 => HOLDS,
            _ => breaks(),
        };
        s.record(n, &v);
    }
    assert_eq!(ran, [1, 2, 4, 8, 6, 7, 6, 5, 5]);
    assert_eq!(
        s.outcome(),
        Some(&Outcome::Capacity {
            sessions: 5,
            limit: Some(6)
        })
    );
}

#[test]
fn a_generator_bound_step_stops_the_search_with_a_lower_bound() {
    let gb = Verdict::Inconclusive("generator-bound (send lateness p99 40 ms)".into());
    let (ran, out) = drive(DEFAULT, |n| if n < 16 { HOLDS } else { gb.clone() });
    assert_eq!(values(&ran), [1, 2, 4, 8, 16]);
    assert_eq!(
        out,
        Outcome::Stopped {
            at: 16,
            at_least: 8
        }
    );
}

fn point(checks: Vec<Check>) -> PointResult {
    PointResult {
        value: 4.0,
        passed: true,
        reached: true,
        achieved_concurrency: Some(4),
        checks,
        ..PointResult::default()
    }
}

fn classes(good: usize, degraded: usize, rejected: usize, failed: usize) -> ClassCounts {
    ClassCounts {
        good,
        degraded,
        rejected,
        failed,
    }
}

fn criteria() -> Criteria {
    Criteria {
        good_share: 0.99,
        slo: vec!["stall_count == 0".into()],
        hold_s: None,
    }
}

#[test]
fn judge_names_rejections_degraded_slo_failures_and_thresholds() {
    let c = criteria();
    assert_eq!(
        judge(&c, &point(vec![]), classes(16, 0, 0, 0), &[]),
        Verdict::Holds
    );
    let v = judge(&c, &point(vec![]), classes(12, 0, 4, 0), &[]);
    assert_eq!(v, Verdict::Breaks(vec!["4 rejected sessions".into()]));
    let v = judge(
        &c,
        &point(vec![]),
        classes(13, 3, 0, 0),
        &["stall_count == 0".into()],
    );
    assert_eq!(
        v,
        Verdict::Breaks(vec![
            "3 degraded sessions (stall_count == 0)".into(),
            "good 81.2% < 99%".into()
        ])
    );
    let check = Check {
        metric: "audio_rtf.p99".into(),
        expr: "< 1".into(),
        measured: Some(1.42),
        passed: false,
    };
    let v = judge(&c, &point(vec![check]), classes(16, 0, 0, 0), &[]);
    assert_eq!(
        v,
        Verdict::Breaks(vec!["audio_rtf.p99 = 1.420 (< 1)".into()])
    );
    // One failure in 200 is within a 99% good share.
    assert_eq!(
        judge(&c, &point(vec![]), classes(199, 0, 0, 1), &[]),
        Verdict::Holds
    );
}

#[test]
fn judge_calls_generator_bound_and_short_steps_inconclusive() {
    let c = criteria();
    let mut p = point(vec![]);
    p.generator_bound = Some("send lateness p99 40 ms".into());
    let v = judge(&c, &p, classes(16, 0, 0, 0), &[]);
    assert!(matches!(v, Verdict::Inconclusive(w) if w.starts_with("generator-bound")));
    // The server's refusals break a step even when the generator was busy.
    let v = judge(&c, &p, classes(12, 0, 4, 0), &[]);
    assert_eq!(
        v,
        Verdict::Breaks(vec![
            "4 rejected sessions".into(),
            "also generator-bound (send lateness p99 40 ms)".into()
        ])
    );
    let mut p = point(vec![]);
    p.reached = false;
    p.achieved_concurrency = Some(3);
    let v = judge(&c, &p, classes(16, 0, 0, 0), &[]);
    assert!(
        matches!(v, Verdict::Inconclusive(ref w) if w.contains("peak 3")),
        "{v:?}"
    );
}

fn step(concurrency: usize, verdict: Verdict) -> Step {
    Step {
        phase: Phase::Staircase,
        concurrency,
        classes: classes(4 * concurrency, 0, 0, 0),
        point: point(vec![]),
        slo_broken: Vec::new(),
        verdict,
        file: format!("step-max_concurrency-{concurrency}.json"),
    }
}

#[test]
fn a_stopped_search_says_generator_bound_at_n_and_the_lower_bound() {
    let gb = Verdict::Inconclusive("generator-bound (the generator used 97% of a core)".into());
    let steps = [step(8, HOLDS), step(16, gb)];
    let out = Outcome::Stopped {
        at: 16,
        at_least: 8,
    };
    assert_eq!(
        sentence(&criteria(), &steps, &out),
        "Capacity: not found: generator-bound at 16 (the generator used 97% of a core): the \
         capacity is at least 8 (good ≥ 99% ([slo] stall_count == 0), no rejections; no \
         [thresholds] set)"
    );
    let doc = capacity_json("s", &criteria(), DEFAULT, &steps, Some(&out));
    assert_eq!(doc["capacity"]["answer"], serde_json::Value::Null);
    assert_eq!(doc["capacity"]["at_least"], 8);
    assert_eq!(doc["capacity"]["steps"][1]["verdict"], "inconclusive");
}

#[test]
fn the_limit_is_named_from_the_first_breaking_concurrency() {
    let b = Verdict::Breaks(vec!["3 degraded sessions (stall_count == 0)".into()]);
    let steps = [step(16, HOLDS), step(17, b), step(16, HOLDS)];
    let out = Outcome::Capacity {
        sessions: 16,
        limit: Some(17),
    };
    let text = render(&criteria(), &steps, &out);
    assert!(
        text.starts_with(
            "Capacity: 16 concurrent sessions (good ≥ 99% ([slo] stall_count == 0), no \
             rejections held; no [thresholds] set); limited by: 3 degraded sessions \
             (stall_count == 0) at 17\n\nstep"
        ),
        "{text}"
    );
    assert_eq!(text.lines().count(), 6, "{text}");
    let doc = capacity_json("s", &criteria(), DEFAULT, &steps, Some(&out));
    assert_eq!(doc["capacity"]["limited_by"]["max_concurrency"], 17);
}

/// A step whose point carries its concurrency as value, as `capacity.json` reads back.
fn recorded_step(concurrency: usize, phase: Phase, verdict: Verdict) -> Step {
    let mut s = step(concurrency, verdict);
    s.phase = phase;
    s.point.value = concurrency as f64;
    s.point.sessions_per_s = Some(concurrency as f64 / 2.0);
    s.point
        .metrics
        .insert("ttft_ms.p99".into(), 100.0 + concurrency as f64);
    s
}

#[test]
fn capacity_json_reads_back_to_the_same_steps_outcome_and_sentence() {
    let b = || Verdict::Breaks(vec!["2 rejected sessions".into()]);
    let gb = Verdict::Inconclusive("generator-bound (the generator used 97% of a core)".into());
    use Phase::*;
    let cases = [
        (
            vec![
                recorded_step(1, Staircase, HOLDS),
                recorded_step(2, Staircase, b()),
                recorded_step(1, Confirm, HOLDS),
            ],
            Outcome::Capacity {
                sessions: 1,
                limit: Some(2),
            },
        ),
        (
            vec![
                recorded_step(4, Staircase, HOLDS),
                recorded_step(4, Confirm, HOLDS),
            ],
            Outcome::Capacity {
                sessions: 4,
                limit: None,
            },
        ),
        (
            vec![recorded_step(1, Staircase, b())],
            Outcome::None { at: 1 },
        ),
        (
            vec![
                recorded_step(8, Staircase, HOLDS),
                recorded_step(16, Staircase, gb),
            ],
            Outcome::Stopped {
                at: 16,
                at_least: 8,
            },
        ),
    ];
    for (steps, out) in cases {
        let doc = capacity_json("s", &criteria(), DEFAULT, &steps, Some(&out));
        let r = from_json(&doc).expect("reads back");
        assert_eq!(r.steps, steps);
        assert_eq!(r.outcome.as_ref(), Some(&out));
        assert_eq!(r.criteria, criteria());
        assert_eq!(r.sentence, Some(sentence(&r.criteria, &r.steps, &out)));
        assert_eq!(table_rows(&r.steps), table_rows(&steps));
        assert!(!r.interrupted);
    }
    let doc = capacity_json("s", &criteria(), DEFAULT, &[], None);
    let r = from_json(&doc).expect("reads back");
    assert_eq!((r.outcome, r.sentence), (None, None));
}

/// Windows of a ramp up to `max` by `k`, judged by an endpoint whose answer is `cap`.
fn ramp_windows(k: usize, max: usize, cap: usize) -> Vec<(usize, Verdict)> {
    (1..=max.div_ceil(k))
        .map(|j| (j * k).min(max))
        .map(|n| (n, if n <= cap { HOLDS } else { breaks() }))
        .collect()
}

#[test]
fn a_ramp_seeds_the_search_which_bisects_and_confirms_with_whole_runs() {
    for cap in 1..=30 {
        let mut s = Search::new(Bounds {
            start: 1,
            max: 28,
            ramp: None,
        });
        let w = ramp_windows(4, 28, cap);
        let taken = s.seed(&w);
        // Windows up to and including the first that broke.
        assert_eq!(
            taken,
            w.iter().take_while(|x| x.0 <= cap).count() + usize::from(cap < 28)
        );
        let mut ran = Vec::new();
        while let Some((phase, n)) = s.next() {
            assert_ne!(phase, Phase::Staircase, "cap {cap}: {ran:?}");
            ran.push((phase, n));
            s.record(n, &if n <= cap { HOLDS } else { breaks() });
        }
        let want = if cap >= 28 {
            Outcome::Capacity {
                sessions: 28,
                limit: None,
            }
        } else {
            Outcome::Capacity {
                sessions: cap,
                limit: Some(cap + 1),
            }
        };
        assert_eq!(s.outcome(), Some(&want), "cap {cap}: {ran:?}");
        assert_eq!(ran.last().map(|r| r.0), Some(Phase::Confirm), "cap {cap}");
    }
}

#[test]
fn an_inconclusive_window_ends_the_ramp_evidence_and_the_search_goes_on() {
    let mut s = Search::new(DEFAULT);
    let taken = s.seed(&[
        (4, HOLDS),
        (8, Verdict::Inconclusive("generator-bound (x)".into())),
        (12, breaks()),
    ]);
    assert_eq!(taken, 2);
    // What held stays: the search doubles on from it with its own runs.
    assert_eq!(s.next(), Some((Phase::Staircase, 8)));
}
