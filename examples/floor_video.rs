//! The video floor: the cheapest client we know how to write that receives what a
//! `video-cadence` run receives, used by `scripts/bench-video-sessions.sh --floor` to
//! state rtload's CPU cost as a ratio measured in the same run.
//!
//! Each session is one task on a current-thread tokio runtime: a raw TCP socket, the
//! HTTP upgrade to `/v1/realtime/video`, one prebuilt `session.start` asking for the same
//! number of frames at rtload's default geometry, then it reads every server frame, parsing only frame headers, until
//! a text frame carries `session.done`; it then sends a close frame and ends. No JSON is
//! parsed, nothing is timed per chunk and nothing is kept.
//!
//! It prints the same JSON line as `floor_duplex` (send lateness is that of the one start
//! message, due at connect).
//!
//!     floor_video ADDR SESSIONS NUM_FRAMES [RATE_PER_S]
//!
//! ADDR must be a 127.0.0.1 address (this is a benchmark tool, not a client).

use bytes::Bytes;
use rtload::bench::{VIDEO_DEFAULT_HEIGHT, VIDEO_DEFAULT_WIDTH};
use tokio::io::AsyncWriteExt;
use tokio::time::Instant;

use common::{
    Seen, close_and_tally, command_line, count_inbound, frame, print_summary, release_offsets,
    run_all, upgrade,
};

#[path = "floor_common/mod.rs"]
mod common;

/// One session: connect, upgrade, `session.start`, read until `session.done`, close.
async fn session(addr: String, start: Bytes) -> Seen {
    let opened = Instant::now();
    let mut seen = Seen::default();
    let (sock, rest) = match upgrade(&addr, "/v1/realtime/video").await {
        Ok(ok) => ok,
        Err(e) => {
            seen.failed = Some(e);
            return seen;
        }
    };
    let (rd, mut wr) = sock.into_split();
    let due = Instant::now();
    let write_ok = wr.write_all(&start).await.is_ok();
    seen.lateness_ms.push(due.elapsed().as_secs_f64() * 1e3);
    let (frames_in, bytes_in) = if write_ok {
        count_inbound(rd, rest, Some(b"session.done".as_slice())).await
    } else {
        (0, 0)
    };
    close_and_tally(wr, seen, (frames_in, bytes_in), opened, write_ok).await
}

fn main() {
    let (addr, args, rate) = command_line(
        "floor_video 127.0.0.1:PORT SESSIONS NUM_FRAMES [RATE_PER_S]",
        3,
    );
    let n: usize = args[0].parse().expect("SESSIONS is a number");
    let frames: u64 = args[1].parse().expect("NUM_FRAMES is a number");
    let start = frame(
        0x1,
        serde_json::json!({"type": "session.start", "num_frames": frames,
            "width": VIDEO_DEFAULT_WIDTH, "height": VIDEO_DEFAULT_HEIGHT})
        .to_string()
        .as_bytes(),
    );
    let sessions = (0..n)
        .map(|_| {
            let (addr, start) = (addr.clone(), start.clone());
            move || session(addr, start)
        })
        .collect();
    let (seen, t0, t1) = run_all(sessions, release_offsets(n, rate));
    print_summary(&seen, n, t0, t1);
}
