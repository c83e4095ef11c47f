//! The workload flags on the command line: built from the registry's flag tables, no
//! clash with `run`'s own flags, every flag accepted by `run` and `check` and handed over
//! with its text as typed, and `--help` listing each with the key it sets.

use crate::cli::{Cli, command};
use clap::FromArgMatches as _;
use rtload::workload::WorkloadFlag;

/// The workload flags `rtload SUB s.toml ARGS...` hands over (the derived part of the
/// command line parses alongside them).
fn given(sub: &str, args: &[&str]) -> Vec<WorkloadFlag> {
    let mut argv = vec!["rtload", sub, "s.toml"];
    argv.extend(args);
    let m = command().try_get_matches_from(argv).unwrap();
    Cli::from_arg_matches(&m).unwrap();
    super::given(m.subcommand_matches(sub).unwrap())
}

#[test]
fn the_command_is_consistent() {
    command().debug_assert();
}

#[test]
fn every_registered_flag_is_accepted_and_handed_over_as_typed() {
    for kind in rtload::config::registry::registry() {
        for spec in kind.flags {
            let long = spec.long();
            let sample: &[&str] = match spec.kind {
                rtload::workload::FlagKind::Switch => &[],
                rtload::workload::FlagKind::List => &["a", "b"],
                rtload::workload::FlagKind::Int => &["3"],
                rtload::workload::FlagKind::Float => &["2.5"],
                rtload::workload::FlagKind::JsonObject => &["{\"a\": 1}"],
                _ => &["x"],
            };
            let mut args = vec![long.as_str()];
            args.extend(sample);
            for sub in ["run", "check"] {
                let w = given(sub, &args);
                assert_eq!(w.len(), 1, "{sub} {long}: {w:?}");
                assert_eq!(w[0].flag, spec.flag);
                assert_eq!(w[0].values, sample, "{sub} {long}");
            }
        }
    }
    assert!(given("run", &[]).is_empty());
}

#[test]
fn a_repeated_list_flag_keeps_every_value() {
    let w = given(
        "run",
        &[
            "--metadata",
            "a=1",
            "--metadata",
            "b=2",
            "c=3",
            "--video-seed",
            "7",
        ],
    );
    let by = |f: &str| w.iter().find(|w| w.flag == f).unwrap().values.clone();
    assert_eq!(by("metadata"), ["a=1", "b=2", "c=3"]);
    assert_eq!(by("video-seed"), ["7"]);
}

#[test]
fn help_lists_each_workload_flag_with_its_key() {
    let help = command()
        .find_subcommand_mut("run")
        .unwrap()
        .render_long_help()
        .to_string();
    for (flag, key) in [
        ("--omniinteract-timeout-s", "[timeout_s]"),
        (
            "--omniinteract-max-video-duration-s",
            "[max_video_duration_s]",
        ),
        ("--video-seed", "[seed]"),
        ("--workload", "[workload_file]"),
        ("--lock-timeout", "[lock_timeout_s]"),
    ] {
        // Each option is its name line and its help, up to a blank line.
        let entry = help
            .split("\n\n")
            .find(|e| e.trim_start().starts_with(&format!("{flag} ")) || e.trim() == flag)
            .unwrap_or_else(|| panic!("{flag} not in --help:\n{help}"));
        assert!(entry.contains(key), "{flag}: {entry}");
    }
    for heading in ["Video cadence workload:", "OmniInteract workload:"] {
        assert!(help.contains(heading), "{heading}\n{help}");
    }
}
