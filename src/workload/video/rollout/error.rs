//! Why a rollout cannot be built; texts are the reference's where it has one.

use std::path::PathBuf;

/// Why the rollout could not be built. Where the reference has a message, the text is
/// the reference's own.
#[derive(Debug, thiserror::Error)]
pub enum RolloutError {
    /// The workload file could not be read.
    #[error("cannot read workload file {path}: {source}")]
    ReadFile {
        /// The resolved path.
        path: PathBuf,
        /// The IO error.
        source: std::io::Error,
    },
    /// The workload file is not JSON.
    #[error("workload file {path} is not valid JSON: {message}")]
    Json {
        /// The resolved path.
        path: PathBuf,
        /// The parser's message (with line and column).
        message: String,
    },
    /// The workload file's top level is not an object.
    #[error("A workload file must contain a JSON object.")]
    NotAnObject,
    /// The workload file has neither a script nor a chunk count.
    #[error("A workload file needs either camera_action_script or num_chunks.")]
    NeedsScriptOrChunks,
    /// The workload file names no image (and no image option was given).
    #[error("A workload file needs an image or image_reference field.")]
    NeedsImage,
    /// `extra_params` is not an object.
    #[error("Workload extra_params must be a JSON object.")]
    ExtraParamsNotObject,
    /// A key the workload file format does not have.
    #[error("unknown workload file key '{key}'; expected one of {expected}")]
    UnknownKey {
        /// The offending key (prefixed with its prompt update for entry keys).
        key: String,
        /// The accepted keys.
        expected: String,
    },
    /// A workload file value of the wrong type.
    #[error("workload file key '{key}' must be {expected}")]
    FieldType {
        /// The key (e.g. `width`, `prompt_updates[0].after_chunk`).
        key: String,
        /// What it must be.
        expected: &'static str,
    },
    /// An option that only the built-in workload uses was set next to a workload file.
    #[error("{key} applies only to the built-in workload; set it in the workload file instead")]
    BuiltinOnly {
        /// The option name.
        key: &'static str,
    },
    /// Chunk count below one.
    #[error("num_chunks must be at least 1.")]
    NumChunks,
    /// Camera pattern not in [`CAMERA_PATTERNS`](super::CAMERA_PATTERNS).
    #[error("Unknown camera pattern {}; expected one of ['forward', 'hold', 'orbit'].", crate::util::pyfmt::py_repr_str(.0))]
    UnknownCameraPattern(String),
    /// The image is neither a URL nor a readable file.
    #[error("--image is neither a URL nor a readable file: {0}")]
    ImageNotFound(String),
    /// Blank prompt.
    #[error("Workload.prompt must contain non-whitespace text.")]
    BlankPrompt,
    /// Empty image reference.
    #[error("Workload.image_reference is required; LingBot-World is image-conditioned.")]
    EmptyImage,
    /// Width or height not a positive multiple of 16.
    #[error("Workload width/height must be positive multiples of 16.")]
    Geometry,
    /// Frame rate not positive.
    #[error("Workload.fps must be positive.")]
    Fps,
    /// `flow_shift` is NaN or infinite.
    #[error("Workload.flow_shift must be a finite number.")]
    FlowShift,
    /// `camera_action_script` is not a list.
    #[error("camera_action_script must be a list of per-chunk action lists.")]
    ScriptNotList,
    /// A script entry is not a list.
    #[error("camera_action_script[{0}] must be a list of three action lists.")]
    ScriptEntryNotList(usize),
    /// A script entry does not hold exactly three frames.
    #[error(
        "camera_action_script[{chunk}] must hold exactly 3 action lists (got {got}); one AR block is 3 latent frames."
    )]
    ScriptEntryLen {
        /// The chunk index.
        chunk: usize,
        /// How many action lists it held.
        got: usize,
    },
    /// A frame's actions are not a list.
    #[error("camera_action_script[{0}][{1}] must be a list of strings.")]
    ScriptFrameNotList(usize, usize),
    /// A frame's actions are not all strings.
    #[error("camera_action_script[{0}][{1}] must contain only strings.")]
    ScriptFrameNotStrings(usize, usize),
    /// Empty script.
    #[error("camera_action_script must not be empty.")]
    ScriptEmpty,
    /// Negative `after_chunk`.
    #[error("PromptUpdate.after_chunk must be non-negative.")]
    UpdateAfterNegative,
    /// Blank update prompt.
    #[error("PromptUpdate.prompt must contain non-whitespace text.")]
    UpdateBlankPrompt,
    /// Negative `transition_chunks`.
    #[error("PromptUpdate.transition_chunks must be non-negative.")]
    UpdateTransitionNegative,
    /// Two updates on the same boundary.
    #[error("Duplicate prompt update after chunk {0}; event IDs must be unique.")]
    DuplicateUpdate(i64),
    /// An update whose boundary is never reached.
    #[error("Prompt update after chunk {after_chunk} never fires in a {num_chunks}-chunk rollout.")]
    UpdateNeverFires {
        /// The update's boundary.
        after_chunk: i64,
        /// The rollout's chunk count.
        num_chunks: usize,
    },
}
