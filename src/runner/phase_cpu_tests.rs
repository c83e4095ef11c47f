//! Tests for the per-phase CPU block.

use super::*;

fn readings(start: Option<f64>, end: Option<f64>, published: Option<f64>) -> PhaseCpu {
    PhaseCpu {
        usage_start_cpu_s: start,
        usage_end_cpu_s: end,
        published_cpu_s: published,
        setup: SetupCost {
            cpu_s: 0.5,
            sessions: 1000,
        },
        sessions: 1000,
    }
}

#[test]
fn each_phase_is_its_readings_difference_per_session() {
    let b = readings(Some(1.5), Some(2.5), Some(5.0)).block(Some(5000.0));
    let p = &b["phase_cpu"];
    assert_eq!(p["before_live"]["cpu_s"], 1.5);
    assert_eq!(p["before_live"]["cpu_us_per_session"], 1500.0);
    assert_eq!(p["setup"]["cpu_us_per_session"], 500.0);
    assert_eq!(p["setup"]["sessions"], 1000);
    assert_eq!(p["publication"]["cpu_s"], 2.5);
    assert_eq!(p["publication"]["cpu_us_per_session"], 2500.0);
    assert_eq!(p["through_publication"]["cpu_s"], 5.0);
    assert_eq!(p["through_publication"]["cpu_us_per_session_s"], 1000.0);
}

#[test]
fn a_missing_reading_is_null_never_zero() {
    let b = readings(None, Some(2.5), None).block(None);
    let p = &b["phase_cpu"];
    assert!(p["before_live"]["cpu_s"].is_null());
    assert!(p["before_live"]["cpu_us_per_session"].is_null());
    assert!(p["publication"]["cpu_s"].is_null());
    assert!(p["through_publication"]["cpu_us_per_session_s"].is_null());
    let none = PhaseCpu {
        setup: SetupCost::default(),
        sessions: 0,
        ..readings(Some(1.0), Some(2.0), Some(3.0))
    };
    let p = &none.block(Some(0.0))["phase_cpu"];
    assert!(p["setup"]["cpu_us_per_session"].is_null());
    assert!(p["publication"]["cpu_us_per_session"].is_null());
    assert!(p["through_publication"]["cpu_us_per_session_s"].is_null());
}
