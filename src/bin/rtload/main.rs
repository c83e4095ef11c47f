//! The `rtload` command: parse the command line, call the library, map the outcome to an
//! exit code — 0 passed, 1 samples (or thresholds) failed, 2 usage or configuration error.

mod cli;

use std::process::ExitCode;

use anyhow::Context as _;
use clap::Parser as _;

fn main() -> ExitCode {
    let args = cli::Cli::parse();
    match args.command {
        cli::Command::Run(run) => run_cmd(&run),
        cli::Command::Check(c) => check_cmd(&c),
        cli::Command::Dataset(cli::DatasetCommand::Synth(a)) => match synth_cmd(&a) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("error: {e:#}");
                ExitCode::from(2)
            }
        },
        cli::Command::Serve(s) => match serve_cmd(&s) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("error: {e:#}");
                ExitCode::from(2)
            }
        },
    }
}

fn load(
    path: &std::path::Path,
    ov: &rtload::scenario::Overrides,
) -> Result<rtload::scenario::Scenario, ExitCode> {
    rtload::scenario::load(path, ov).map_err(|errors| {
        for e in &errors {
            eprintln!("error: {e}");
        }
        ExitCode::from(2)
    })
}

fn run_cmd(run: &cli::RunArgs) -> ExitCode {
    let ov = match run.overrides() {
        Ok(ov) => ov,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let scenario = match load(&run.scenario, &ov) {
        Ok(s) => s,
        Err(code) => return code,
    };
    for w in scenario.workload.warnings() {
        eprintln!("{w}");
    }
    match rtload::runner::run(&scenario, Box::new(std::io::stdout())) {
        Ok(summary) => {
            print!("{}", summary.report.render_text());
            if let Some(p) = &summary.json_path {
                eprintln!("wrote {}", p.display());
            }
            for (idx, msg) in &summary.failures {
                eprintln!("ERROR: sample {idx}: {msg}");
            }
            for e in &summary.artifact_errors {
                eprintln!("ERROR: artifact: {e}");
            }
            if summary.passed() {
                ExitCode::SUCCESS
            } else {
                eprintln!(
                    "{} of {} measured samples failed",
                    summary.failures.len(),
                    summary.measured
                );
                ExitCode::from(1)
            }
        }
        Err(rtload::runner::RunError::Scenario(errors)) => {
            for e in &errors {
                eprintln!("error: {e}");
            }
            ExitCode::from(2)
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

fn check_cmd(c: &cli::CheckArgs) -> ExitCode {
    let mut code = ExitCode::SUCCESS;
    for path in &c.scenarios {
        match load(path, &rtload::scenario::Overrides::default()) {
            Ok(s) => print!("{}", rtload::runner::describe(&s)),
            Err(e) => code = e,
        }
    }
    code
}

fn serve_cmd(s: &cli::ServeArgs) -> anyhow::Result<()> {
    let cfg = match &s.config {
        Some(p) => rtload::server::ServerConfig::from_toml_file(p)?,
        None => rtload::server::ServerConfig::default(),
    };
    let addr: std::net::SocketAddr =
        format!("{}:{}", s.host, s.port).parse().with_context(|| {
            format!(
                "--host {} --port {} is not a socket address",
                s.host, s.port
            )
        })?;
    rtload::server::serve_blocking(addr, cfg, |bound| {
        eprintln!("rtload reference server listening on ws://{bound} (/v1/realtime/video); Ctrl-C stops it");
    })
    .with_context(|| format!("serving on {addr}"))
}

fn synth_cmd(a: &cli::SynthArgs) -> anyhow::Result<()> {
    let opts = rtload::dataset::SynthOptions {
        seed: a.seed,
        cases_per_subset: a.cases_per_subset,
        duration_ms: a.duration_ms,
        tar: a.tar,
    };
    let r = rtload::dataset::synth(&a.dir, &opts)
        .with_context(|| format!("writing a synthetic dataset into {}", a.dir.display()))?;
    println!(
        "wrote {} cases ({} frames each) under {}",
        r.cases,
        r.frames_per_case,
        r.data_dir.display()
    );
    println!("reference audio: {}", r.ref_audio.display());
    if let Some(t) = r.archive {
        println!("archive: {}", t.display());
    }
    Ok(())
}
