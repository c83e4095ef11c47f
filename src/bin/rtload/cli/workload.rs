//! The workload flags of `rtload run` and `rtload check`, added to clap at run time from
//! every registered kind's flag table (`WorkloadKind::flags`): this file names no
//! workload. A flag several kinds declare is one option (listed under the first kind's
//! heading); its text is handed over as given, and the scenario's kind types it into a
//! patch of its `[workload]` key (or names the flag in an error when it has no such
//! option).

use clap::parser::ValueSource;
use clap::{Arg, ArgAction, ArgMatches, Command};
use rtload::workload::{FlagKind, FlagSpec, WorkloadFlag};

/// One command-line option: its first declaration, the heading it is listed under, and
/// every kind declaring it.
struct Declared {
    spec: &'static FlagSpec,
    heading: &'static str,
    kinds: Vec<&'static str>,
}

/// Every distinct workload flag, in registry order.
fn options() -> Vec<Declared> {
    let mut out: Vec<Declared> = Vec::new();
    for kind in rtload::scenario::registry() {
        for spec in kind.flags {
            match out.iter_mut().find(|o| o.spec.flag == spec.flag) {
                Some(o) => o.kinds.push(kind.name),
                None => out.push(Declared {
                    spec,
                    heading: kind.flag_heading,
                    kinds: vec![kind.name],
                }),
            }
        }
    }
    out
}

/// `cmd` with every workload flag.
pub(super) fn with_flags(cmd: Command) -> Command {
    cmd.args(options().iter().map(arg))
}

/// The clap argument of one option: help from its table, the `[workload]` key it sets
/// in brackets.
fn arg(o: &Declared) -> Arg {
    let spec = o.spec;
    let also = match o.kinds.get(1..) {
        Some(more) if !more.is_empty() => format!("; also {}", more.join(", ")),
        _ => String::new(),
    };
    let a = Arg::new(spec.flag)
        .long(spec.flag)
        .help(format!("{} [{}{also}]", spec.help, spec.key))
        .help_heading(o.heading);
    match spec.kind {
        FlagKind::Switch => a.action(ArgAction::SetTrue),
        FlagKind::List => a
            .action(ArgAction::Append)
            .num_args(1..)
            .value_name(spec.value_name),
        FlagKind::Int => a
            .value_name(spec.value_name)
            .value_parser(clap::value_parser!(i64)),
        FlagKind::Float => a
            .value_name(spec.value_name)
            .value_parser(clap::value_parser!(f64)),
        FlagKind::Path => a
            .value_name(spec.value_name)
            .value_parser(clap::value_parser!(std::path::PathBuf)),
        FlagKind::Text | FlagKind::UrlOrPath | FlagKind::JsonObject => {
            a.value_name(spec.value_name)
        }
    }
}

/// The workload flags given on the command line `m`, with their text as typed.
pub(super) fn given(m: &ArgMatches) -> Vec<WorkloadFlag> {
    options()
        .iter()
        .filter(|o| m.value_source(o.spec.flag) == Some(ValueSource::CommandLine))
        .map(|o| WorkloadFlag {
            flag: o.spec.flag.to_string(),
            values: match o.spec.kind {
                FlagKind::Switch => Vec::new(),
                _ => m
                    .get_raw(o.spec.flag)
                    .into_iter()
                    .flatten()
                    .map(|v| v.to_string_lossy().into_owned())
                    .collect(),
            },
        })
        .collect()
}

#[cfg(test)]
#[path = "workload_tests.rs"]
mod tests;
