//! Tests for the setup-cost tally and the CPU-timed future.

use super::*;

#[test]
fn the_tally_sums_cpu_and_counts_sessions_across_clones() {
    let tally = SetupTally::default();
    let other = tally.clone();
    tally.add(1_500_000_000);
    other.add(500_000_000);
    assert_eq!(
        tally.cost(),
        SetupCost {
            cpu_s: 2.0,
            sessions: 2
        }
    );
}

#[test]
fn a_timed_future_hands_back_its_output_and_the_cpu_its_polls_used() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let (out, cpu_ns) = rt.block_on(OnCpu::new(async {
        // Work the thread clock must see: a yield makes it two polls.
        let mut x = 0u64;
        for i in 0..200_000u64 {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(i));
        }
        std::hint::black_box(x);
        tokio::task::yield_now().await;
        7
    }));
    assert_eq!(out, 7);
    assert!(cpu_ns > 0, "two polls of real work read no CPU");
}

#[test]
fn the_thread_clock_moves_forward() {
    let a = thread_cpu_ns();
    let mut x = 0u64;
    for i in 0..100_000u64 {
        x = std::hint::black_box(x ^ i);
    }
    assert!(thread_cpu_ns() >= a, "{x}");
}
