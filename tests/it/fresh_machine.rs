//! Issue 11 item 17: the README's one test command (`scripts/test`) does the whole
//! set-up on a fresh machine, and `.ci/run` calls that same command.

use std::path::Path;
use std::process::Command;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn readme_and_ci_use_the_one_test_command() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let two = readme.split("## The two commands").nth(1).unwrap();
    let block = two.split("```").nth(1).unwrap();
    assert!(block.contains("\nscripts/test\n"), "{block}");
    let ci = std::fs::read_to_string(root().join(".ci/run")).unwrap();
    assert!(ci.lines().any(|l| l.trim() == "scripts/test"), "{ci}");
    assert!(
        !ci.contains("cargo test"),
        ".ci/run must not bypass scripts/test:\n{ci}"
    );
}

/// Without the tools and without root, it says exactly what to install and exits 2
/// (never runs a suite that would fail or skip).
#[test]
fn names_what_to_install_when_it_cannot_install() {
    let bin = tempfile::tempdir().unwrap();
    let link = |name: &str, target: &Path| {
        std::os::unix::fs::symlink(target, bin.path().join(name)).unwrap();
    };
    for tool in ["bash", "dirname"] {
        let found = ["/usr/bin", "/bin"]
            .iter()
            .map(|d| Path::new(d).join(tool))
            .find(|p| p.exists())
            .unwrap_or_else(|| panic!("{tool} not found"));
        link(tool, &found);
    }
    // A non-root `id`, so no install is attempted.
    let id = bin.path().join("id");
    std::fs::write(&id, "#!/bin/sh\necho 1000\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&id, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = Command::new(bin.path().join("bash"))
        .arg(root().join("scripts/test"))
        .env_clear()
        .env("PATH", bin.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("missing ffmpeg chromium prometheus"), "{err}");
    assert!(
        err.contains("apt-get install --no-install-recommends ffmpeg chromium prometheus"),
        "{err}"
    );
}
