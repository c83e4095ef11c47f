//! The workload flags on the command line: built from the registry's flag tables, no
//! clash with `run`'s own flags, every flag accepted by `run` and `check` and handed over
//! with its text as typed, and `--help` listing each with the key it sets.

use crate::cli::{Cli, command};
use clap::FromArgMatches as _;
use rtload::workload::{FlagKind, FlagSpec, WorkloadFlag};

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
    for kind in rtload::scenario::registry() {
        for spec in kind.flags {
            let long = spec.long();
            let sample: &[&str] = match spec.kind {
                FlagKind::Switch => &[],
                FlagKind::List => &["a", "b"],
                FlagKind::Int => &["3"],
                FlagKind::Float => &["2.5"],
                FlagKind::JsonObject => &["{\"a\": 1}"],
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

/// The first registered flag of `kind`.
fn first_flag(kind: FlagKind) -> &'static FlagSpec {
    rtload::scenario::registry()
        .iter()
        .flat_map(|k| k.flags)
        .find(|f| f.kind == kind)
        .unwrap_or_else(|| panic!("no {kind:?} flag registered"))
}

#[test]
fn a_repeated_list_flag_keeps_every_value() {
    let (list, int) = (first_flag(FlagKind::List), first_flag(FlagKind::Int));
    let (list_long, int_long) = (list.long(), int.long());
    let w = given(
        "run",
        &[&list_long, "a=1", &list_long, "b=2", "c=3", &int_long, "7"],
    );
    let by = |f: &str| w.iter().find(|w| w.flag == f).unwrap().values.clone();
    assert_eq!(by(list.flag), ["a=1", "b=2", "c=3"]);
    assert_eq!(by(int.flag), ["7"]);
}

#[test]
fn help_lists_each_workload_flag_under_its_kind_with_its_key() {
    let help = command()
        .find_subcommand_mut("run")
        .unwrap()
        .render_long_help()
        .to_string();
    for kind in rtload::scenario::registry() {
        for spec in kind.flags {
            // Each option is its name line and its help, up to a blank line.
            let entry = help
                .split("\n\n")
                .find(|e| {
                    e.lines().any(|l| {
                        l.trim() == spec.long()
                            || l.trim().starts_with(&format!("{} ", spec.long()))
                    })
                })
                .unwrap_or_else(|| panic!("{} not in --help:\n{help}", spec.long()));
            assert!(entry.contains(&format!("[{}", spec.key)), "{entry}");
        }
    }
    let first = &rtload::scenario::registry()[0];
    assert!(help.contains(&format!("{}:", first.flag_heading)), "{help}");
}
