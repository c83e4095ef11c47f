//! OmniInteract datasets (in progress).

pub mod shuffle;
