//! Secrets by rule, not by list: random secret-bearing target URLs (user info whose
//! password holds unencoded `/`, `?`, `#` or `@`; credentials under query keys nobody
//! listed, percent-encoded ones, fragments) and a `metrics_url` with a secret, through
//! `check`, `run` (JSON, `.hlog`), `report` and `compare`: no secret value appears in any
//! output stream or any file the commands wrote.

use std::path::Path;

use rand::{Rng, SeedableRng};

use crate::support::{rtload, serve};

/// Query keys a credential hides under (none of them on rtload's public list).
const KEYS: [&str; 9] = [
    "apikey",
    "password",
    "x-api-key",
    "client_secret",
    "X-Amz-Signature",
    "api%5Fkey",
    "token",
    "q",
    "auth_hint",
];

/// A random secret: recognisable, never a substring of anything rtload writes.
fn secret(rng: &mut rand::rngs::SmallRng) -> String {
    format!("Zq{:016x}", rng.random::<u64>())
}

/// A target URL carrying `secrets` in its user info, query and fragment.
fn url(rng: &mut rand::rngs::SmallRng, host: &str, secrets: &mut Vec<String>) -> String {
    let user = secret(rng);
    let delim = ["/", "?", "#", "@", ""][rng.random_range(0..5)];
    let (a, b) = (secret(rng), secret(rng));
    let pass = format!("{a}{delim}{b}");
    secrets.extend([user.clone(), a, b]);
    let mut query = Vec::new();
    for _ in 0..rng.random_range(1..4) {
        let v = secret(rng);
        query.push(format!("{}={v}", KEYS[rng.random_range(0..KEYS.len())]));
        secrets.push(v);
    }
    query.push("model=m".into());
    let frag = secret(rng);
    secrets.push(frag.clone());
    format!(
        "ws://{user}:{pass}@{host}/v1/realtime/video?{}#access_token={frag}",
        query.join("&")
    )
}

/// Every file under `dir`, as text.
fn files(dir: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(files(&p));
        } else {
            let text = String::from_utf8_lossy(&std::fs::read(&p).unwrap()).into_owned();
            out.push((p.display().to_string(), text));
        }
    }
    out
}

#[test]
fn no_secret_of_a_target_url_reaches_any_output() {
    let (mut server, addr) = serve(&[], "ws");
    let mut rng = rand::rngs::SmallRng::seed_from_u64(0x5ec2e7);
    for case in 0..6 {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let mut secrets = Vec::new();
        let target = url(&mut rng, &addr, &mut secrets);
        let metrics_secret = secret(&mut rng);
        secrets.push(metrics_secret.clone());
        let sc = d.join("s.toml");
        std::fs::write(
            &sc,
            format!(
                "name = \"s\"\n[target]\nmetrics_url = \"http://{addr}/metrics?secret={metrics_secret}&model=m\"\n\
                 [workload]\nkind = \"video-cadence\"\nnum_chunks = 3\nwarmup_chunks = 1\n\
                 [load]\nsamples = 2\nmax_concurrency = 2\n"
            ),
        )
        .unwrap();
        let json = d.join("r.json");
        let mut streams = Vec::new();
        for args in [
            vec!["check".to_string(), "--target".into(), target.clone()],
            vec![
                "run".into(),
                "--target".into(),
                target.clone(),
                "--output-json".into(),
                json.display().to_string(),
            ],
        ] {
            let o = rtload().args(&args).arg(&sc).output().unwrap();
            streams.push(String::from_utf8_lossy(&o.stdout).into_owned());
            streams.push(String::from_utf8_lossy(&o.stderr).into_owned());
        }
        if json.exists() {
            for args in [
                vec![
                    "report".to_string(),
                    json.display().to_string(),
                    "--html".into(),
                ],
                vec!["compare".into(), json.display().to_string()],
            ] {
                let mut c = rtload();
                c.args(&args);
                if args[0] == "report" {
                    c.arg(d.join("r.html"));
                } else {
                    c.arg(&json);
                }
                let o = c.output().unwrap();
                streams.push(String::from_utf8_lossy(&o.stdout).into_owned());
                streams.push(String::from_utf8_lossy(&o.stderr).into_owned());
            }
        }
        let written = files(d);
        assert!(
            written.iter().any(|(p, _)| p.ends_with("r.json")),
            "case {case}: the run wrote no result: {streams:?}"
        );
        for s in &secrets {
            for (i, text) in streams.iter().enumerate() {
                assert!(
                    !text.contains(s.as_str()),
                    "case {case}: {s} in stream {i}: {text}"
                );
            }
            for (p, text) in &written {
                if p.ends_with("s.toml") {
                    continue; // the scenario the user wrote
                }
                assert!(!text.contains(s.as_str()), "case {case}: {s} in {p}");
            }
        }
    }
    let _ = server.kill();
    let _ = server.wait();
}
