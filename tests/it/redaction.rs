//! Issue 11 item 4: a URL password and query-string tokens never reach any output (stdout,
//! stderr, the JSON result, the saved vllm-style result, the batch files, each bundle, the
//! HTML report); the user info goes to the server as `Authorization: Basic`.

use std::process::Child;

use crate::cli::walk;
use crate::duplex_support::{Opts, duplex, out_dir};
use crate::support::rtload;

const PASSWORD: &str = "SECRETPW";
const KEY: &str = "SECRETKEY";
const TOKENS: [(&str, &str); 6] = [
    ("token", "SECRETTOK"),
    ("access_token", "SECRETACC"),
    ("key", "SECRETK2"),
    ("sig", "SECRETSIG"),
    ("signature", "SECRETSIGN"),
    ("auth", "SECRETAUTH"),
];

/// `rtload serve --port 0` with `config` (server TOML); returns the child and host:port.
fn serve(config: &std::path::Path) -> (Child, String) {
    crate::support::serve(&["--config".as_ref(), config.as_os_str()], "ws")
}

#[track_caller]
fn assert_clean(what: &str, text: &str) {
    let secrets = [PASSWORD, KEY]
        .into_iter()
        .chain(TOKENS.iter().map(|t| t.1));
    for secret in secrets {
        assert!(!text.contains(secret), "{what} leaks {secret}:\n{text}");
    }
}

fn query() -> String {
    let mut q = format!("api_key={KEY}");
    for (k, v) in TOKENS {
        q.push_str(&format!("&{k}={v}"));
    }
    q + "&intent=visible"
}

#[test]
fn url_password_and_query_tokens_appear_in_no_output() {
    let fx = duplex(&Opts::default());
    let config = fx.dir.path().join("server.toml");
    // The second session fails, so a `.failed.json` is written too.
    std::fs::write(
        &config,
        "[duplex]\nrespond_every_s = 0.5\ndelta_ms = 50\nrtf = 0.2\nfirst_response_delay_ms = 20\n\
         [duplex.faults]\nonly_sessions = [1]\nerror_on_update = \"boom\"\n",
    )
    .unwrap();
    let (mut server, addr) = serve(&config);
    let target = format!("ws://u:{PASSWORD}@{addr}/v1/realtime?{}", query());
    let json = fx.dir.path().join("result.json");
    let results = fx.dir.path().join("saved");
    let out = rtload()
        .arg("run")
        .arg(&fx.path)
        .args(["--target", &target, "--output-json"])
        .arg(&json)
        .args(["--save-result", "--result-dir"])
        .arg(&results)
        .output()
        .unwrap();
    let _ = server.kill();
    let _ = server.wait();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert_clean("stdout", &stdout);
    assert_clean("stderr", &stderr);
    let html = fx.dir.path().join("report.html");
    let rep = rtload()
        .arg("report")
        .arg(&json)
        .arg("--html")
        .arg(&html)
        .output()
        .unwrap();
    assert_eq!(rep.status.code(), Some(0), "{rep:?}");
    let mut files = walk(&out_dir(&fx));
    files.extend(walk(&results));
    files.push(json.clone());
    files.push(html);
    let names: Vec<String> = files
        .iter()
        .filter_map(|f| Some(f.file_name()?.to_str()?.to_string()))
        .collect();
    for want in [
        "batch_summary.json",
        ".failed.json",
        "result.json",
        "report.html",
    ] {
        assert!(names.iter().any(|n| n == want), "{want} missing: {names:?}");
    }
    assert!(
        walk(&results)
            .iter()
            .any(|f| f.extension().is_some_and(|e| e == "json"))
    );
    for f in &files {
        let bytes = std::fs::read(f).unwrap();
        assert_clean(&f.display().to_string(), &String::from_utf8_lossy(&bytes));
    }
    // The redacted URL still says where the run went.
    let doc = std::fs::read_to_string(&json).unwrap();
    let want = format!("\"endpoint\": \"ws://{addr}/v1/realtime?api_key=REDACTED&token=REDACTED");
    assert!(
        doc.contains(&want) && doc.contains("&intent=visible"),
        "{doc}"
    );
}

#[test]
fn url_user_info_is_sent_as_basic_authorization() {
    let server = crate::support::RefusingListener::start();
    let addr = server.addr;
    let fx = crate::support::video(2, 1, "");
    let out = rtload()
        .arg("run")
        .arg(&fx.path)
        .args([
            "--target",
            &format!("ws://u:{PASSWORD}@{addr}/v1/realtime/video"),
        ])
        .output()
        .unwrap();
    let request = server.request();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    // base64("u:SECRETPW")
    let auth: Vec<&str> = request
        .lines()
        .filter_map(|l| l.split_once(':'))
        .filter(|(k, _)| k.eq_ignore_ascii_case("authorization"))
        .map(|(_, v)| v.trim())
        .collect();
    assert_eq!(auth, ["Basic dTpTRUNSRVRQVw=="], "{request}");
    assert!(request.starts_with("GET /v1/realtime/video "), "{request}");
    assert_clean("stderr", &String::from_utf8_lossy(&out.stderr));
    assert_clean("stdout", &String::from_utf8_lossy(&out.stdout));
}
