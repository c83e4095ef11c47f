//! The OmniInteract workload's command-line options: one row per `[workload]` key a
//! flag sets (clap's arguments, `--help` and every error about a flag's value read it).

use crate::workload::{FlagKind, FlagSpec};

/// The command-line options of the OmniInteract workload, named as in
/// `vllm bench serve --omni` (the PR's `--omniinteract-*` options and vllm's result
/// options); each sets the `[workload]` key beside it.
pub const FLAGS: &[FlagSpec] = &[
    FlagSpec::new("model", "model", "Model name", "MODEL", FlagKind::Text),
    FlagSpec::new(
        "dataset_path",
        "dataset-path",
        "Local OmniInteract directory or archive",
        "PATH",
        FlagKind::Path,
    ),
    FlagSpec::new(
        "subsets",
        "omniinteract-subsets",
        "Subsets in concatenation order: 1q1a 1q1a_math 1qna",
        "SUBSET",
        FlagKind::List,
    ),
    FlagSpec::new(
        "ref_audio",
        "omniinteract-ref-audio",
        "Reference voice WAV",
        "WAV",
        FlagKind::Path,
    ),
    FlagSpec::new(
        "timeout_s",
        "omniinteract-timeout-s",
        "Session idle timeout / completion wait, seconds",
        "S",
        FlagKind::Float,
    ),
    FlagSpec::new(
        "media_timeout_s",
        "omniinteract-media-timeout-s",
        "Per ffprobe/ffmpeg command, seconds",
        "S",
        FlagKind::Float,
    ),
    FlagSpec::new(
        "max_video_duration_s",
        "omniinteract-max-video-duration-s",
        "Longest accepted video, seconds",
        "S",
        FlagKind::Float,
    ),
    FlagSpec::new(
        "require_response",
        "omniinteract-require-response",
        "Fail LISTEN-only cases",
        "",
        FlagKind::Switch,
    ),
    FlagSpec::new(
        "output_dir",
        "omniinteract-output-dir",
        "Artifact root",
        "DIR",
        FlagKind::Path,
    ),
    FlagSpec::new(
        "lock_timeout_s",
        "lock-timeout",
        "When another run holds the output directory's lock: give up (exit 2) after this \
         many seconds instead of waiting until it is released; the holder's pid is printed \
         either way",
        "SECONDS",
        FlagKind::Float,
    ),
    FlagSpec::new(
        "disable_shuffle",
        "disable-shuffle",
        "Keep dataset order",
        "",
        FlagKind::Switch,
    ),
    FlagSpec::new(
        "extra_body",
        "extra-body",
        "JSON object forwarded in session.update extra_body",
        "JSON",
        FlagKind::JsonObject,
    ),
    FlagSpec::new(
        "pacing",
        "pacing",
        "realtime, saturate, or a speed factor like 2x",
        "MODE",
        FlagKind::Text,
    ),
    FlagSpec::new(
        "save_result",
        "save-result",
        "Save the vllm-style result JSON",
        "",
        FlagKind::Switch,
    ),
    FlagSpec::new(
        "result_dir",
        "result-dir",
        "Directory of the saved result",
        "DIR",
        FlagKind::Path,
    ),
    FlagSpec::new(
        "result_filename",
        "result-filename",
        "File name of the saved result",
        "NAME",
        FlagKind::Text,
    ),
    FlagSpec::new(
        "label",
        "label",
        "Label of the result",
        "LABEL",
        FlagKind::Text,
    ),
    FlagSpec::new(
        "metadata",
        "metadata",
        "KEY=VALUE added to the saved result (repeatable)",
        "KEY=VALUE",
        FlagKind::List,
    ),
    FlagSpec::new(
        "goodput",
        "goodput",
        "Goodput SLOs KEY:MS, keys ttft tpot e2el itl audio_ttfp audio_rtf",
        "KEY:MS",
        FlagKind::List,
    ),
    FlagSpec::new(
        "percentile_metrics",
        "percentile-metrics",
        "Comma-separated metrics with percentiles",
        "LIST",
        FlagKind::Text,
    ),
    FlagSpec::new(
        "metric_percentiles",
        "metric-percentiles",
        "Comma-separated percentiles, e.g. 50,90,99",
        "LIST",
        FlagKind::Text,
    ),
];
