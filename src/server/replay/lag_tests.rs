//! The lag estimate is the median of the recent timers' lateness.

use super::*;

fn ms(x: f64) -> Duration {
    Duration::from_secs_f64(x / 1e3)
}

#[test]
fn before_any_timer_the_estimate_is_the_ticks_rounding() {
    assert_eq!(TimerLag::default().get(), PRIOR);
}

#[test]
fn the_estimate_is_the_median_and_a_rare_late_wake_up_does_not_move_it() {
    let lag = TimerLag::default();
    for late in [0.2, 0.9, 0.4, 80.0, 0.6, 0.5, 0.3] {
        lag.observe(ms(late));
    }
    assert_eq!(lag.get(), ms(0.5));
}

#[test]
fn it_follows_the_last_window_of_timers() {
    let lag = TimerLag::default();
    for _ in 0..WINDOW {
        lag.observe(ms(3.0));
    }
    assert_eq!(lag.get(), ms(3.0));
    for _ in 0..WINDOW / 2 + 1 {
        lag.observe(ms(1.0));
    }
    assert_eq!(lag.get(), ms(1.0));
    for _ in 0..WINDOW {
        lag.observe(Duration::from_secs(5));
    }
    assert_eq!(lag.get(), MAX_LAG, "capped");
}
