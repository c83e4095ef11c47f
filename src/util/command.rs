//! A bounded external command: stdin closed, killed after its timeout, stdout kept up to a
//! limit (the rest read and discarded), the tail of stderr kept for the error message.
//! Used for `ffprobe`/`ffmpeg` by the OmniInteract media preparation and the
//! transcription dataset ([`ffmpeg_pcm16`]).

use std::ffi::{OsStr, OsString};
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use crate::util::pyfmt::py_float;

/// Bytes kept (the tail) of a command's stderr.
pub const STDERR_TAIL_BYTES: usize = 8 * 1024;
/// Longest pause between two checks of a running command.
const POLL: Duration = Duration::from_millis(10);

/// What can go wrong running a command.
#[derive(Debug, thiserror::Error)]
pub enum CommandError {
    /// The command outlived its timeout and was killed.
    #[error("Media command timed out after {timeout}s: {cmd}")]
    TimedOut {
        /// The timeout, Python-float style (`600.0`).
        timeout: String,
        /// The whole command line, shell-quoted.
        cmd: String,
    },
    /// The program could not be found (or is not executable).
    #[error("Required media command is unavailable: {0}")]
    Unavailable(String),
    /// The program exited unsuccessfully.
    #[error("{cmd} failed: {stderr}")]
    Failed {
        /// The program.
        cmd: String,
        /// The tail of its stderr, trimmed (or the exit status when stderr was empty).
        stderr: String,
    },
    /// Starting or waiting for the process failed.
    #[error("cannot {what} {}: {source}", .path.display())]
    Io {
        /// The operation.
        what: &'static str,
        /// The program.
        path: PathBuf,
        /// The OS error.
        source: io::Error,
    },
}

/// Whitespace-separated `words` (none of which holds a space) followed by `tail`.
pub fn argv(words: &str, tail: &[&OsStr]) -> Vec<OsString> {
    let words = words.split_whitespace().map(OsString::from);
    words.chain(tail.iter().map(OsString::from)).collect()
}

/// Decode the audio of any file ffmpeg reads into mono PCM16 LE at `rate` Hz with one
/// bounded run of `ffmpeg`; at most `max_bytes + 2` bytes are kept, so the caller can tell
/// audio longer than its limit from audio that fits.
pub fn ffmpeg_pcm16(
    ffmpeg: &str,
    path: &Path,
    rate: u32,
    timeout: Duration,
    max_bytes: usize,
) -> Result<Vec<u8>, CommandError> {
    let mut args = argv(
        "-nostdin -hide_banner -loglevel error -i",
        &[path.as_os_str()],
    );
    let audio = format!("-vn -sn -dn -ac 1 -ar {rate} -c:a pcm_s16le -f s16le pipe:1");
    args.extend(argv(&audio, &[]));
    run_command(ffmpeg, &args, timeout, timeout.as_secs_f64(), max_bytes + 2)
}

/// Run `program args` with stdin closed, killing it after `timeout`. Returns at most
/// `keep_stdout` bytes of stdout (the rest is read and discarded).
pub fn run_command(
    program: &str,
    args: &[OsString],
    timeout: Duration,
    timeout_s: f64,
    keep_stdout: usize,
) -> Result<Vec<u8>, CommandError> {
    let deadline = Instant::now() + timeout;
    let timed_out = || CommandError::TimedOut {
        timeout: py_float(timeout_s),
        cmd: shell_join(program, args),
    };
    let mut child = spawn(program, args)?;
    let stdout = drain(child.stdout.take(), keep_stdout, false);
    let stderr = drain(child.stderr.take(), STDERR_TAIL_BYTES, true);
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) => {}
            Err(e) => {
                let _ = child.kill();
                return Err(io_err("wait for", Path::new(program))(e));
            }
        }
        let now = Instant::now();
        if now >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Err(timed_out());
        }
        thread::sleep(POLL.min(deadline - now));
    };
    // Normally immediate; waits only while a grandchild still holds a pipe open.
    let collect = |rx: mpsc::Receiver<Vec<u8>>| {
        let wait = deadline.saturating_duration_since(Instant::now());
        rx.recv_timeout(wait).map_err(|_| timed_out())
    };
    let (stdout, stderr) = (collect(stdout)?, collect(stderr)?);
    if status.success() {
        return Ok(stdout);
    }
    let text = String::from_utf8_lossy(&stderr).trim().to_owned();
    let stderr = if text.is_empty() {
        status.to_string()
    } else {
        text
    };
    Err(CommandError::Failed {
        cmd: program.to_owned(),
        stderr,
    })
}

/// Read `r` on its own thread (see [`read_bounded`]); the bytes arrive on the receiver.
fn drain<R: Read + Send + 'static>(
    r: Option<R>,
    keep: usize,
    tail: bool,
) -> mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let _ = tx.send(r.map(|r| read_bounded(r, keep, tail)).unwrap_or_default());
    });
    rx
}

/// Start the command; a freshly written executable can be briefly busy (ETXTBSY) while
/// another thread forks, so that one error is retried a few times.
fn spawn(program: &str, args: &[OsString]) -> Result<Child, CommandError> {
    let mut attempts = 0;
    loop {
        let res = Command::new(program)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn();
        match res {
            Ok(child) => return Ok(child),
            Err(e) if e.kind() == io::ErrorKind::ExecutableFileBusy && attempts < 20 => {
                attempts += 1;
                thread::sleep(POLL);
            }
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::NotFound | io::ErrorKind::PermissionDenied
                ) =>
            {
                return Err(CommandError::Unavailable(program.to_owned()));
            }
            Err(e) => return Err(io_err("start", Path::new(program))(e)),
        }
    }
}

/// Read `r` to its end, keeping the first (or, with `tail`, the last) `keep` bytes.
fn read_bounded(mut r: impl Read, keep: usize, tail: bool) -> Vec<u8> {
    let mut kept = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match r.read(&mut buf) {
            Ok(0) | Err(_) => return kept,
            Ok(n) => n,
        };
        if tail {
            kept.extend_from_slice(&buf[..n]);
            if kept.len() > 2 * keep {
                kept.drain(..kept.len() - keep);
            }
        } else if kept.len() < keep {
            let take = n.min(keep - kept.len());
            kept.extend_from_slice(&buf[..take]);
        }
    }
}

/// The command line as `shlex.join` would print it.
pub fn shell_join(program: &str, args: &[OsString]) -> String {
    let quote = |s: &str| {
        let safe = |c: char| c.is_ascii_alphanumeric() || "@%+=:,./-_".contains(c);
        if !s.is_empty() && s.chars().all(safe) {
            s.to_owned()
        } else {
            format!("'{}'", s.replace('\'', "'\"'\"'"))
        }
    };
    std::iter::once(quote(program))
        .chain(args.iter().map(|a| quote(&a.to_string_lossy())))
        .collect::<Vec<_>>()
        .join(" ")
}

fn io_err(what: &'static str, path: &Path) -> impl Fn(io::Error) -> CommandError {
    let path = path.to_path_buf();
    move |source| CommandError::Io {
        what,
        path: path.clone(),
        source,
    }
}
