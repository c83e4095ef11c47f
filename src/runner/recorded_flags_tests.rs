//! The recorded flags read back as the flags that were given.

use super::*;

fn every_flag() -> LoadOverrides {
    LoadOverrides {
        num_prompts: Some(4),
        num_warmups: Some(1),
        request_rate: Some("2.5".into()),
        burstiness: Some(f64::INFINITY),
        max_concurrency: Some(3),
        seed: Some(u64::MAX / 2),
        ramp_up_strategy: Some("linear".into()),
        ramp_up_start_rps: Some(1.0),
        ramp_up_end_rps: Some(8.0),
        duration_s: Some(30.0),
        series_interval_s: Some(5.0),
    }
}

#[test]
fn the_flags_read_back_as_given() {
    let wf = vec![WorkloadFlag {
        flag: "pacing".into(),
        values: vec!["2x".into()],
    }];
    let (flags, _) = manifest_keys("", (&every_flag(), &wf), str::to_string);
    let (load, workload) = from_manifest(&flags).unwrap();
    assert_eq!(load, every_flag());
    assert_eq!(workload, wf);
    let inf = LoadOverrides {
        request_rate: Some("inf".into()),
        ..LoadOverrides::default()
    };
    let (flags, _) = manifest_keys("", (&inf, &[]), str::to_string);
    assert_eq!(flags["load"]["request_rate"], "inf");
    assert_eq!(from_manifest(&flags).unwrap().0, inf);
}

#[test]
fn the_effective_load_is_the_files_with_the_flags_over_it() {
    let text = "name = \"x\"\n[load]\nsamples = 2\nmax_concurrency = 1\nseed = 7\n";
    let ov = LoadOverrides {
        max_concurrency: Some(2),
        request_rate: Some("10".into()),
        ..LoadOverrides::default()
    };
    let (flags, load) = manifest_keys(text, (&ov, &[]), str::to_string);
    assert_eq!(
        load,
        json!({"samples": 2, "max_concurrency": 2, "seed": 7, "request_rate": 10.0})
    );
    assert_eq!(
        flags["load"],
        json!({"max_concurrency": 2, "request_rate": 10.0})
    );
}

#[test]
fn a_recording_without_flags_has_none_and_a_bad_one_is_named() {
    let (load, workload) = from_manifest(&Value::Null).unwrap();
    assert_eq!(load, LoadOverrides::default());
    assert!(workload.is_empty());
    let err = from_manifest(&json!({"load": {"samples": "four"}})).unwrap_err();
    assert!(err.contains("scenario.flags.load.samples"), "{err}");
}

#[test]
fn workload_flag_values_are_scrubbed() {
    let wf = vec![WorkloadFlag {
        flag: "extra-body".into(),
        values: vec!["{\"key\":\"s3cret\"}".into()],
    }];
    let (flags, _) = manifest_keys("", (&LoadOverrides::default(), &wf), |v| {
        v.replace("s3cret", "REDACTED")
    });
    assert_eq!(flags["workload"][0]["values"][0], "{\"key\":\"REDACTED\"}");
}
