//! The fold against the reference's list form, and the reference's own cases.

use super::*;

const BPS: f64 = 48_000.0; // PCM16 mono at 24 kHz

#[test]
fn steady_stream_is_continuous() {
    // 125 ms chunks every 125 ms (exact in binary): never behind.
    let t: Vec<f64> = (0..10).map(|i| f64::from(i) * 0.125).collect();
    let s = compute_continuity_stats(&t, &[6000; 10], BPS, THRESHOLD_S);
    assert_eq!((s.underrun_event_count, s.is_continuous), (0, true));
    assert!(s.max_underrun_s.abs() < 1e-12);
}

#[test]
fn one_gap_is_one_event_and_its_worst_deficit() {
    // 100 ms, then nothing until 350 ms: 250 ms starved at the second chunk.
    let s = compute_continuity_stats(&[0.0, 0.35, 0.4], &[4800, 4800, 4800], BPS, 0.1);
    assert_eq!(s.underrun_event_count, 2);
    assert!((s.max_underrun_s - 0.25).abs() < 1e-12);
    assert!(!s.is_continuous);
    // Degenerate inputs are continuous, as in the reference.
    let empty = compute_continuity_stats(&[], &[], BPS, 0.1);
    assert_eq!((empty.max_underrun_s, empty.is_continuous), (0.0, true));
    let mismatched = compute_continuity_stats(&[0.0, 1.0], &[1], BPS, 0.1);
    assert_eq!(mismatched.underrun_event_count, 0);
}

#[test]
fn fold_matches_the_list_form() {
    // A deterministic bursty sequence (an LCG), chunk sizes 0..9600 bytes.
    let mut x: u64 = 7;
    let mut next = || {
        x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        x >> 33
    };
    let (mut t, mut times, mut sizes) = (0.0, Vec::new(), Vec::new());
    for _ in 0..200 {
        t += (next() % 300) as f64 / 1000.0;
        times.push(t);
        sizes.push(next() % 9600);
    }
    let want = compute_continuity_stats(&times, &sizes, BPS, THRESHOLD_S);
    let mut fold = Continuity::default();
    assert!(fold.stats().is_none());
    for (at, n) in times.iter().zip(&sizes) {
        fold.push(*at, *n, BPS);
    }
    let got = fold.stats().unwrap();
    assert_eq!(got.underrun_event_count, want.underrun_event_count);
    assert_eq!(got.is_continuous, want.is_continuous);
    assert_eq!(got.max_underrun_s.to_bits(), want.max_underrun_s.to_bits());
    assert!(
        want.underrun_event_count > 0,
        "the sequence exercises underruns"
    );
}
