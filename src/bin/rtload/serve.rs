//! `rtload serve`: the embedded reference server in the foreground, or with `--replay
//! DIR` a recording's server side played back (loaded, and refused with the file and
//! the fix, before anything listens).

use anyhow::Context as _;

/// Runs the server until Ctrl-C; prints the address it listens on.
pub fn serve_cmd(s: &crate::cli::ServeArgs) -> anyhow::Result<()> {
    use rtload::server::ServerConfig;
    let cfg = match &s.config {
        Some(p) => ServerConfig::from_toml_file(p)?,
        None => ServerConfig::default(),
    };
    let addr: std::net::SocketAddr =
        format!("{}:{}", s.host, s.port).parse().with_context(|| {
            format!(
                "--host {} --port {} is not a socket address",
                s.host, s.port
            )
        })?;
    let tls = match (&s.tls_cert, &s.tls_key) {
        (Some(cert), Some(key)) => Some(rtload::server::load_tls(cert, key)?),
        _ => None,
    };
    let scheme = if tls.is_some() { "wss" } else { "ws" };
    if s.replay.is_none() && (s.replay_speed.is_some() || s.replay_tolerance.is_some()) {
        anyhow::bail!(
            "--replay-speed and --replay-tolerance apply to a recording: add --replay DIR"
        );
    }
    if let Some(dir) = &s.replay {
        let opts = rtload::server::ReplayOptions {
            speed: s.replay_speed.unwrap_or(1.0),
            tolerance: s.replay_tolerance.unwrap_or(0),
        };
        let replay = rtload::server::load_replay(dir, opts)?;
        let sessions = replay.sessions();
        return rtload::server::serve_replay_blocking(addr, cfg, tls, replay, |bound| {
            eprintln!(
                "rtload replay server listening on {scheme}://{bound} (every path replays {} \
recorded session(s) of {} round-robin at speed {}, tolerance {}; Prometheus at /metrics); \
Ctrl-C stops it",
                sessions.len(),
                dir.display(),
                opts.speed,
                opts.tolerance
            );
        })
        .with_context(|| format!("serving on {addr}"));
    }
    rtload::server::serve_blocking(addr, cfg, tls, |bound| {
        eprintln!("rtload reference server listening on {scheme}://{bound} (/v1/realtime/video, /v1/realtime; Prometheus at /metrics); Ctrl-C stops it");
    })
    .with_context(|| format!("serving on {addr}"))
}
