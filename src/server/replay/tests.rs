//! Which recorded sessions a replay serves (measured ones, round-robin; warm-ups only
//! when nothing else was recorded), the speed's range, and a live text message's shape
//! read the way the recorder reads it.

use super::*;
use plan::Recorded;

fn script(idx: usize, warmup: bool) -> Script {
    Script::new(idx, warmup, vec![Recorded::Open { t_s: 0.0 }])
}

#[test]
fn measured_sessions_are_served_round_robin_and_warmups_only_alone() {
    let opts = ReplayOptions::default();
    let r = Replay::new(
        vec![script(0, true), script(1, false), script(2, false)],
        opts,
        "rec",
    )
    .unwrap();
    assert_eq!(r.sessions(), vec![1, 2]);
    let picked: Vec<usize> = (0..5).map(|o| r.pick(o).idx).collect();
    assert_eq!(picked, vec![1, 2, 1, 2, 1]);
    let r = Replay::new(vec![script(0, true)], opts, "rec").unwrap();
    assert_eq!(r.sessions(), vec![0]);
    let err = Replay::new(vec![], opts, "rec").unwrap_err().to_string();
    assert!(
        err.starts_with("rec: the recording holds no session"),
        "{err}"
    );
}

#[test]
fn the_speed_must_be_positive_and_bounded() {
    for speed in [0.0, -1.0, f64::NAN, f64::INFINITY, 1001.0] {
        let opts = ReplayOptions {
            speed,
            tolerance: 0,
        };
        let err = Replay::new(vec![script(0, false)], opts, "rec").unwrap_err();
        assert!(err.to_string().contains("--replay-speed must be"), "{err}");
    }
}

#[test]
fn a_text_shape_is_its_json_type() {
    let ty = |t: &str| text_shape(t).ty;
    assert_eq!(ty(r#" {"type":"a","x":[1,2]}"#).as_deref(), Some("a"));
    assert_eq!(ty(r#"{"x":1}"#), None);
    assert_eq!(ty("[1]"), None);
    assert_eq!(ty("not json"), None);
}
