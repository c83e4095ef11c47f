//! The floor: the cheapest client we know how to write that puts the same bytes on the
//! wire as an `omniinteract` run, used by `scripts/bench-duplex-sessions.sh --floor` to
//! state rtload's CPU cost as a ratio measured in the same run.
//!
//! Every frame is built before timing with rtload's own pure code (the dataset's cases
//! decoded by `media::prepare`, `session.update` from `DuplexSettings`, the 200 ms
//! appends with their 1 fps frames from `AppendPlan` + `append_message`), masked with the
//! all-zero key so no byte is touched while sending, and packed into huge pages as rtload
//! packs its prepared appends (`Packer`). During the run each session is one
//! task on a current-thread tokio runtime: a raw TCP socket, the HTTP upgrade, then
//! `write_all` of the prebuilt frames at their intended times; a second task counts the
//! inbound frames without parsing them. It sends no `playback.ack` and no completion
//! wait: after the commit it sends `session.close` and ends when the server closes.
//!
//! It prints one JSON line: CPU µs per live session-second (same definition as rtload's
//! `resources`: process CPU between the first release and the last session's end over
//! the sum of connect-to-end spans), send lateness percentiles, inbound frames and bytes.
//!
//!     floor_duplex ADDR DATASET_DIR SESSIONS [RATE_PER_S]
//!
//! ADDR must be a 127.0.0.1 address (this is a benchmark tool, not a client).

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use rtload::bench::{
    AppendPlan, BYTES_PER_SECOND, DuplexSettings, MediaOptions, Packer, Subset, Ticket,
    append_message, join_endpoint, omni_data_dir, prepare_media, realtime_url, ref_audio_data_url,
    streamed_len, subset_cases,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::time::{Instant, sleep_until};

use common::{
    Seen, close_and_tally, command_line, count_inbound, frame, print_summary, release_offsets,
    run_all, upgrade,
};

#[path = "floor_common/mod.rs"]
mod common;

/// The model name every session asks for.
const MODEL: &str = "openbmb/MiniCPM-o-4_5";

/// A case's prebuilt upload: the appends (shared by every session of the case) and the
/// commit's offset in seconds.
struct Upload {
    appends: Vec<(Duration, Bytes)>,
    commit_at: Duration,
}

/// A case's appends packed into huge pages as rtload packs its own (`Packer`): the
/// frames' tickets and the commit's offset, resolved once every case is packed.
fn upload(
    pcm: &[u8],
    frames: &[Option<Arc<str>>],
    packer: &mut Packer,
) -> (Vec<(Duration, Ticket)>, Duration) {
    let len = streamed_len(pcm.len(), 1000);
    let at = |offset: usize| Duration::from_secs_f64(offset as f64 / BYTES_PER_SECOND as f64);
    let appends = AppendPlan::new(len, frames.len())
        .map(|a| {
            let f = frame(0x1, append_message(&a, pcm, frames).0.as_bytes());
            (
                at(a.offset),
                packer.push(&f).expect("pack the prepared frames"),
            )
        })
        .collect();
    (appends, at(len))
}

/// One session: connect, upgrade, `session.update`, wait for the first server event, the
/// appends at their intended times, commit, `session.close`, until the server closes.
async fn session(addr: String, update: Bytes, up: Arc<Upload>, sid: String) -> Seen {
    let opened = Instant::now();
    let mut seen = Seen::default();
    let path = realtime_url(
        &join_endpoint(&format!("http://{addr}"), "/v1/realtime"),
        MODEL,
        &sid,
    )
    .map(|url| {
        url.split_once(addr.as_str())
            .map_or("/", |(_, p)| p)
            .to_owned()
    });
    let upgraded = match path {
        Ok(path) => upgrade(&addr, &path).await,
        Err(e) => Err(e.to_string()),
    };
    let (sock, rest) = match upgraded {
        Ok(ok) => ok,
        Err(e) => {
            seen.failed = Some(e);
            return seen;
        }
    };
    let (rd, mut wr) = sock.into_split();
    // The first server frame (session.created) starts the upload, as in rtload.
    let (first_tx, first_rx) = tokio::sync::oneshot::channel::<()>();
    let reader = tokio::task::spawn_local(async move {
        let mut rd = rd;
        let mut buf = rest;
        let mut chunk = [0u8; 4096];
        while buf.len() < 2 {
            match rd.read(&mut chunk).await {
                Ok(0) | Err(_) => break,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        }
        let _ = first_tx.send(());
        count_inbound(rd, buf, None).await
    });
    let mut write_ok = wr.write_all(&update).await.is_ok();
    if write_ok && first_rx.await.is_ok() {
        let t0 = Instant::now();
        for (at, msg) in &up.appends {
            let due = t0 + *at;
            sleep_until(due).await;
            seen.lateness_ms.push(due.elapsed().as_secs_f64() * 1e3);
            if wr.write_all(msg).await.is_err() {
                write_ok = false;
                break;
            }
        }
        sleep_until(t0 + up.commit_at).await;
        let commit = frame(0x1, br#"{"type":"input_audio_buffer.commit","final":true}"#);
        let close = frame(0x1, br#"{"type":"session.close"}"#);
        write_ok = write_ok && wr.write_all(&commit).await.is_ok();
        write_ok = write_ok && wr.write_all(&close).await.is_ok();
    }
    let (frames_in, bytes_in) = reader.await.unwrap_or_default();
    close_and_tally(wr, seen, (frames_in, bytes_in), opened, write_ok).await
}

/// Before timing: every case decoded and every frame built, as rtload's prepare does;
/// session `i` streams case `i mod cases`.
fn build_sessions(dataset: &Path, root: &Path, n: usize) -> Vec<(Bytes, Arc<Upload>, String)> {
    let opts = MediaOptions::default();
    let mut cases = Vec::new();
    for subset in Subset::ALL {
        let dir = root.join(subset.name());
        if dir.is_dir() {
            cases.extend(subset_cases(&dir, subset).expect("cases"));
        }
    }
    assert!(!cases.is_empty(), "no cases under {}", root.display());
    let mut packer = Packer::new();
    let drafts: Vec<_> = cases
        .iter()
        .map(|c| {
            let m = prepare_media(&c.video_path, &opts).expect("media");
            upload(&m.pcm, &m.frames, &mut packer)
        })
        .collect();
    let packed = packer.finish().expect("seal the prepared frames");
    let uploads: Vec<Arc<Upload>> = drafts
        .into_iter()
        .map(|(appends, commit_at)| {
            Arc::new(Upload {
                appends: (appends.iter())
                    .map(|(at, t)| (*at, packed.get(t).expect("a ticket of this packer")))
                    .collect(),
                commit_at,
            })
        })
        .collect();
    let ref_audio = ref_audio_data_url(&dataset.join("ref_audio.wav"))
        .expect("ref_audio.wav in the dataset dir");
    let settings = DuplexSettings::new(MODEL, ref_audio);
    (0..n)
        .map(|i| {
            let sid = format!("omniinteract:floor:{i}:0");
            let update = frame(0x1, settings.session_update(&sid).as_bytes());
            (update, Arc::clone(&uploads[i % uploads.len()]), sid)
        })
        .collect()
}

fn main() {
    let (addr, args, rate) = command_line(
        "floor_duplex 127.0.0.1:PORT DATASET_DIR SESSIONS [RATE_PER_S]",
        3,
    );
    let root = omni_data_dir(Path::new(&args[0])).expect("dataset");
    let n: usize = args[1].parse().expect("SESSIONS is a number");

    let sessions = build_sessions(Path::new(&args[0]), &root, n)
        .into_iter()
        .map(|(update, up, sid)| {
            let addr = addr.clone();
            move || session(addr, update, up, sid)
        })
        .collect();
    let (seen, start, end) = run_all(sessions, release_offsets(n, rate));
    print_summary(&seen, n, start, end);
}
