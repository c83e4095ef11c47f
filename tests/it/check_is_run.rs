//! `check` is `run` minus running: for every invalid scenario fixture and for each input
//! a hostile probe found `check` passing while `run` refused it, both commands give the
//! same verdict (exit 2) and the same error, and `check` writes nothing.

use std::path::{Path, PathBuf};

use crate::support::rtload;

/// `(exit code, stderr)` of `rtload <cmd> <args…>` in `dir`.
fn verdict(cmd: &str, args: &[&str], dir: &Path) -> (Option<i32>, String) {
    let o = rtload()
        .arg(cmd)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// The first `error:` line (the one that says what is wrong).
fn first_error(stderr: &str) -> String {
    stderr
        .lines()
        .find(|l| l.starts_with("error"))
        .unwrap_or_default()
        .to_string()
}

#[track_caller]
fn same(args: &[&str], dir: &Path, want: &str) {
    let (c, ce) = verdict("check", args, dir);
    let (r, re) = verdict("run", args, dir);
    assert_eq!(
        (c, r),
        (Some(2), Some(2)),
        "{args:?}\ncheck: {ce}\nrun: {re}"
    );
    assert_eq!(first_error(&ce), first_error(&re), "{args:?}");
    assert!(first_error(&ce).contains(want), "{args:?}: {ce}");
}

const VIDEO: &str = "name = \"v\"\n[workload]\nkind = \"video-cadence\"\nnum_chunks = 3\n";

#[test]
fn check_and_run_refuse_the_same_inputs_with_the_same_error() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("v.toml"), VIDEO).unwrap();
    same(
        &["v.toml", "--target", "ws://127.0.0.1:99999"],
        d,
        "port 99999",
    );
    same(
        &["v.toml", "--shard", "0/1", "--start-at", "1"],
        d,
        "in the past",
    );
    same(
        &[
            "v.toml",
            "--shard",
            "0/1",
            "--start-at",
            "99999999999999999",
        ],
        d,
        "more than a week",
    );
    std::fs::write(
        d.join("s.toml"),
        "name = \"s\"\n[workload]\nkind = \"scripted\"\n[[workload.steps]]\nsend_text = \"hi\"\n\
         [workload.metrics]\ncompleted = \"count(x)\"\n[workload.events]\nx = { type = \"x\" }\n",
    )
    .unwrap();
    same(&["s.toml"], d, "metric name `completed` is taken");
    same(&["/dev/zero"], d, "not a regular file");
    let fifo = d.join("fifo.toml");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    same(&["fifo.toml"], d, "not a regular file");
    // Nothing `check` looked at was written to.
    let names: Vec<String> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 3, "{names:?}");
}

#[test]
fn every_invalid_fixture_fails_check_and_run_alike() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/scenarios/invalid");
    let mut fixtures: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    fixtures.sort();
    assert!(fixtures.len() > 5);
    for f in &fixtures {
        let arg = f.to_str().unwrap();
        let (c, ce) = verdict("check", &[arg], &root);
        let (r, re) = verdict("run", &[arg], &root);
        assert_eq!(
            (c, r),
            (Some(2), Some(2)),
            "{}\ncheck: {ce}\nrun: {re}",
            f.display()
        );
        assert_eq!(ce, re, "{}", f.display());
    }
}
