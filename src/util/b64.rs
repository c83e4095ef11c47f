//! Base64 decoding at SIMD speed with a given engine's exact verdict: `base64-simd` goes
//! first, and accepts only canonical padded base64 with zero trailing bits, which every
//! standard-alphabet engine with canonical padding decodes to the same bytes; whatever
//! it refuses goes to the engine, whose verdict stands. So callers keep their engine's
//! rules (the reference's trailing bits, the server's strictness) and their error cases.

use base64::Engine as _;
use base64::engine::GeneralPurpose;

/// Decodes `text` into `out` (cleared first) exactly as `engine` (standard alphabet,
/// canonical padding) would.
pub fn decode_into(
    engine: &GeneralPurpose,
    text: &str,
    out: &mut Vec<u8>,
) -> Result<(), base64::DecodeError> {
    out.clear();
    if base64_simd::STANDARD.decode_append(text, &mut *out).is_ok() {
        return Ok(());
    }
    out.clear();
    engine.decode_vec(text, out)
}
