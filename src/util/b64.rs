//! Base64 through one crate, `base64`, at SIMD speed: its `Simd` engine picks AVX2
//! (x86_64) or NEON (aarch64) once, at first use, for the bulk of a payload and leaves the
//! final quad and any error to the scalar decoder of the same configuration, so it
//! accepts, refuses and reports exactly what that configuration's `GeneralPurpose` engine
//! does (the proptests below and in `omni/ledger`, `server/duplex_plan` hold that). Other
//! targets get the `GeneralPurpose` engine itself. Two rules: [`standard`] (canonical
//! padding, zero trailing bits: the server's checks) and [`trailing_bits_allowed`] (what
//! the reference's `base64.b64decode` accepts in an audio delta).

use std::sync::LazyLock;

use base64::Engine as _;
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
use base64::alphabet;
use base64::engine::GeneralPurposeConfig;

#[cfg(test)]
#[path = "b64_tests.rs"]
mod tests;

/// The engine this target decodes and encodes with.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
pub type Fast = base64::engine::Simd;
/// The engine this target decodes and encodes with.
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
pub type Fast = base64::engine::GeneralPurpose;

#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
fn fast(config: GeneralPurposeConfig) -> Fast {
    base64::engine::Simd::standard(config)
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
fn fast(config: GeneralPurposeConfig) -> Fast {
    base64::engine::GeneralPurpose::new(&alphabet::STANDARD, config)
}

/// The strict rule (`base64`'s `STANDARD`): canonical padding, zero trailing bits.
pub fn standard() -> &'static Fast {
    static ENGINE: LazyLock<Fast> = LazyLock::new(|| fast(GeneralPurposeConfig::new()));
    &ENGINE
}

/// Canonical padding, any trailing bits: what the reference client's `base64.b64decode`
/// accepts in an audio delta.
pub fn trailing_bits_allowed() -> &'static Fast {
    static ENGINE: LazyLock<Fast> =
        LazyLock::new(|| fast(GeneralPurposeConfig::new().with_decode_allow_trailing_bits(true)));
    &ENGINE
}

/// Decodes `text` into `out` (cleared first, its allocation reused) under `engine`'s rule.
pub fn decode_into(
    engine: &Fast,
    text: &str,
    out: &mut Vec<u8>,
) -> Result<(), base64::DecodeError> {
    out.clear();
    engine.decode_vec(text, out)
}
