//! A full disk never passes. Each case runs `rtload` inside a private mount namespace
//! (`unshare -m`, as root: what CI runs as) with a small tmpfs where it writes:
//! * the output folder: a second run onto a full disk exits 1 before its first session,
//!   naming the folder and `No space left on device` (its bundles' WAVs cannot fit), and
//!   the first run's bundles, batch summary and manifest survive byte for byte;
//! * `TMPDIR` (the capture spool): exit 1 naming the spool and the OS error;
//! * the `--output-json` folder: exit 2 before the first session, naming the path.

use std::path::Path;
use std::process::Command;

/// The duplex quickstart data with its artifacts under `--omniinteract-output-dir`.
fn scenario(dir: &Path) -> std::path::PathBuf {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/data/omni-synth");
    let p = dir.join("sc.toml");
    std::fs::write(
        &p,
        format!(
            "name = \"fd\"\n[workload]\nkind = \"omniinteract\"\ndataset_path = \"{0}\"\n\
             ref_audio = \"{0}/ref_audio.wav\"\noutput_dir = \"unused\"\n\
             [load]\nsamples = 2\nmax_concurrency = 2\n\
             [server.duplex]\nrespond_every_s = 1.0\nfinal_decision = \"listen\"\n",
            data.display()
        ),
    )
    .unwrap();
    p
}

/// Runs `script` (sh) in a new mount namespace with `$R` the rtload binary and `$D` the
/// test's directory; returns its stdout.
fn in_namespace(d: &Path, script: &str) -> String {
    let probe = Command::new("unshare").args(["-m", "true"]).status();
    assert!(
        probe.is_ok_and(|s| s.success()),
        "this test mounts a small tmpfs in a private mount namespace (`unshare -m`): run it as root"
    );
    let out = Command::new("unshare")
        .args(["-m", "sh", "-c", script])
        .env("R", env!("CARGO_BIN_EXE_rtload"))
        .env("D", d)
        .current_dir(d)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[test]
fn a_full_output_disk_fails_the_run_and_keeps_the_previous_bundles() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    scenario(d);
    std::fs::create_dir_all(d.join("out")).unwrap();
    let script = r#"set -u
mount -t tmpfs -o size=16m tmpfs "$D/out" || exit 97
$R run sc.toml --omniinteract-output-dir "$D/out/art" --quiet > "$D/run1.txt" 2>&1; echo "rc1=$?"
cp -r "$D/out/art" "$D/art1"
dd if=/dev/zero of="$D/out/filler" bs=64k 2>/dev/null; sync
$R run sc.toml --omniinteract-output-dir "$D/out/art" --quiet > "$D/run2.txt" 2>&1; echo "rc2=$?"
cp -r "$D/out/art" "$D/art2"
"#;
    let out = in_namespace(d, script);
    let run2 = read(&d.join("run2.txt"));
    assert!(
        out.contains("rc1=0"),
        "{out}\n{}",
        read(&d.join("run1.txt"))
    );
    // The bundles' full-length WAVs cannot fit: refused before the first session (the
    // session would have run only to fail publishing), naming the folder and ENOSPC.
    assert!(out.contains("rc2=1"), "{out}\n{run2}");
    for part in [
        "/out/art: No space left on device (ENOSPC, checked before the run)",
        "the bundles of 2 case(s) need about",
        "nothing was run",
    ] {
        assert!(run2.contains(part), "{part}: {run2}");
    }
    for f in ["official_eval_manifest.jsonl", "batch_summary.json"] {
        assert_eq!(
            read(&d.join("art1").join(f)),
            read(&d.join("art2").join(f)),
            "{f}"
        );
    }
    // Every complete bundle of the first run is still there, whole.
    let done = |root: &Path| -> Vec<String> {
        let mut v: Vec<String> = walk(root)
            .into_iter()
            .filter(|p| p.ends_with(".done"))
            .map(|p| p.strip_prefix(root).unwrap().display().to_string())
            .collect();
        v.sort();
        v
    };
    assert_eq!(done(&d.join("art1")).len(), 2);
    assert_eq!(done(&d.join("art1")), done(&d.join("art2")));
    for f in walk(&d.join("art1"))
        .iter()
        .filter(|p| !p.ends_with(".omniinteract.lock"))
    {
        let rel = f.strip_prefix(d.join("art1")).unwrap();
        assert_eq!(
            std::fs::read(f).unwrap(),
            std::fs::read(d.join("art2").join(rel)).unwrap(),
            "{}",
            rel.display()
        );
    }
}

/// Every file below `dir`.
fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn a_full_spool_fails_the_run_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    scenario(d);
    std::fs::create_dir_all(d.join("tmp")).unwrap();
    let script = r#"set -u
mount -t tmpfs -o size=64k tmpfs "$D/tmp" || exit 97
TMPDIR="$D/tmp" $R run sc.toml --omniinteract-output-dir "$D/art" --quiet > "$D/run.txt" 2>&1; echo "rc=$?"
"#;
    let out = in_namespace(d, script);
    let run = read(&d.join("run.txt"));
    assert!(out.contains("rc=1"), "{out}\n{run}");
    assert!(
        run.contains("spool") && run.contains("No space left on device"),
        "{run}"
    );
}

#[test]
fn an_unwritable_result_path_stops_before_the_first_session() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    scenario(d);
    std::fs::create_dir_all(d.join("res")).unwrap();
    let script = r#"set -u
mount -t tmpfs -o size=64k tmpfs "$D/res" || exit 97
dd if=/dev/zero of="$D/res/filler" bs=4k 2>/dev/null; sync
$R run sc.toml --omniinteract-output-dir "$D/art" --output-json "$D/res/r.json" --quiet > "$D/run.txt" 2>&1; echo "rc=$?"
"#;
    let out = in_namespace(d, script);
    let run = read(&d.join("run.txt"));
    assert!(out.contains("rc=2"), "{out}\n{run}");
    assert!(
        run.contains("r.json") && run.contains("No space left on device"),
        "{run}"
    );
    assert!(!run.contains("verdict:"), "no session ran: {run}");
}
