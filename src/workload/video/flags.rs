//! The video-cadence workload's command-line options: one row per `[workload]` key a
//! flag sets (clap's arguments, `--help` and every error about a flag's value read it).

use crate::workload::{FlagKind, FlagSpec};

/// The command-line options of the video-cadence workload, named as in the LingBot-World
/// benchmark; each sets the `[workload]` key beside it (`--video-seed` sets `seed`:
/// rtload's `--seed` is the arrival seed).
pub const FLAGS: &[FlagSpec] = &[
    FlagSpec::new(
        "model",
        "model",
        "Model id sent in session.start",
        "MODEL",
        FlagKind::Text,
    ),
    FlagSpec::new(
        "workload_file",
        "workload",
        "JSON rollout file (the reference's --workload format). The file wins: the built-in \
         rollout's --num-chunks and --camera-pattern (and those `[workload]` keys) are \
         ignored, as the reference does",
        "FILE",
        FlagKind::Path,
    ),
    FlagSpec::new(
        "image",
        "image",
        "First frame: URL, data URL or image file (default: generated)",
        "IMAGE",
        FlagKind::UrlOrPath,
    ),
    FlagSpec::new("prompt", "prompt", "Prompt text", "TEXT", FlagKind::Text),
    FlagSpec::new(
        "negative_prompt",
        "negative-prompt",
        "Negative prompt (an empty string is a real value)",
        "TEXT",
        FlagKind::Text,
    ),
    FlagSpec::new(
        "num_chunks",
        "num-chunks",
        "Chunks of the built-in rollout",
        "N",
        FlagKind::Int,
    ),
    FlagSpec::new(
        "camera_pattern",
        "camera-pattern",
        "Camera pattern of the built-in rollout: forward, orbit, hold",
        "PATTERN",
        FlagKind::Text,
    ),
    FlagSpec::new(
        "width",
        "width",
        "Frame width (multiple of 16)",
        "PX",
        FlagKind::Int,
    ),
    FlagSpec::new(
        "height",
        "height",
        "Frame height (multiple of 16)",
        "PX",
        FlagKind::Int,
    ),
    FlagSpec::new(
        "fps",
        "fps",
        "Integer fps label sent to the server (mux label)",
        "FPS",
        FlagKind::Int,
    ),
    FlagSpec::new(
        "seed",
        "video-seed",
        "Generation seed sent to the server (the reference's --seed; rtload's --seed is the \
         arrival seed)",
        "N",
        FlagKind::Int,
    ),
    FlagSpec::new(
        "flow_shift",
        "flow-shift",
        "flow_shift extra parameter",
        "X",
        FlagKind::Float,
    ),
    FlagSpec::new(
        "target_fps",
        "target-fps",
        "Real-time basis for RTF, deadline and playback (default: --fps)",
        "FPS",
        FlagKind::Float,
    ),
    FlagSpec::new(
        "warmup_chunks",
        "warmup-chunks",
        "Chunks excluded from steady-state metrics",
        "N",
        FlagKind::Int,
    ),
    FlagSpec::new(
        "chunk_slo_ms",
        "chunk-slo-ms",
        "Steady chunk deadline in ms (default 12 / target fps)",
        "MS",
        FlagKind::Float,
    ),
    FlagSpec::new(
        "playback_buffer_chunks",
        "playback-buffer-chunks",
        "Chunks the simulated viewer buffers before playing",
        "N",
        FlagKind::Int,
    ),
    FlagSpec::new(
        "first_chunk_timeout",
        "first-chunk-timeout",
        "Seconds to wait for the first media chunk",
        "S",
        FlagKind::Float,
    ),
    FlagSpec::new(
        "chunk_timeout",
        "chunk-timeout",
        "Seconds to wait between media chunks",
        "S",
        FlagKind::Float,
    ),
    FlagSpec::new(
        "ping_interval",
        "ping-interval",
        "session.ping period in seconds (0 disables)",
        "S",
        FlagKind::Float,
    ),
    FlagSpec::new(
        "print_chunks",
        "print-chunks",
        "Print one line per chunk as it arrives",
        "",
        FlagKind::Switch,
    ),
    FlagSpec::new(
        "save_video",
        "save-video",
        "Save each measured session's received media (fragmented MP4) in this directory",
        "DIR",
        FlagKind::Path,
    ),
];
