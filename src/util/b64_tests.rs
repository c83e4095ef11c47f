//! The SIMD engines against the scalar engine of the same configuration: same bytes,
//! same errors (offsets included), on payloads long enough for the SIMD bulk loop, with
//! a mutation anywhere in them.

use base64::Engine as _;
use base64::alphabet::STANDARD;
use base64::engine::{GeneralPurpose, GeneralPurposeConfig};
use proptest::prelude::*;

use super::{decode_into, standard, trailing_bits_allowed};

/// Valid base64 of up to 3000 bytes, then maybe one character replaced by padding, a
/// space, a newline, the URL-safe alphabet, one removed, padding dropped or added, or the
/// last data character moved one step (other trailing bits).
fn case() -> impl Strategy<Value = String> {
    (
        proptest::collection::vec(any::<u8>(), 0..3000),
        any::<proptest::sample::Index>(),
        0usize..10,
    )
        .prop_map(|(data, at, what)| {
            let mut s = base64::engine::general_purpose::STANDARD
                .encode(&data)
                .into_bytes();
            if !s.is_empty() {
                let i = at.index(s.len());
                match what {
                    0 => s[i] = b'=',
                    1 => s[i] = b' ',
                    2 => s[i] = b'\n',
                    3 => s[i] = b'-',
                    4 => s[i] = b'_',
                    5 => {
                        s.remove(i);
                    }
                    6 => s.retain(|&c| c != b'='),
                    7 => s.push(b'='),
                    8 => {
                        let last = s.iter().rposition(|&c| c != b'=').unwrap_or(0);
                        s[last] = if s[last] == b'z' { b'0' } else { s[last] + 1 };
                    }
                    _ => {}
                }
            }
            String::from_utf8(s).unwrap_or_default()
        })
}

fn scalar(trailing_bits: bool) -> GeneralPurpose {
    let config = GeneralPurposeConfig::new().with_decode_allow_trailing_bits(trailing_bits);
    GeneralPurpose::new(&STANDARD, config)
}

proptest! {
    #[test]
    fn both_rules_decode_and_fail_as_their_scalar_engine(text in case()) {
        let mut out = Vec::new();
        for (engine, trailing) in [(standard(), false), (trailing_bits_allowed(), true)] {
            let got = decode_into(engine, &text, &mut out).map(|()| out.clone());
            prop_assert_eq!(got, scalar(trailing).decode(&text));
        }
    }

    #[test]
    fn encoding_is_the_scalar_engines(data in proptest::collection::vec(any::<u8>(), 0..3000)) {
        prop_assert_eq!(standard().encode(&data), scalar(false).encode(&data));
        // appended to text already there, as an append message is built
        let mut s = String::from("prefix:");
        standard().encode_string(&data, &mut s);
        prop_assert_eq!(s, format!("prefix:{}", scalar(false).encode(&data)));
    }
}

#[test]
fn the_rules_differ_only_in_trailing_bits() {
    let mut out = Vec::new();
    // "QR==" is 0x41 with non-zero trailing bits.
    assert!(decode_into(standard(), "QR==", &mut out).is_err());
    decode_into(trailing_bits_allowed(), "QR==", &mut out).unwrap();
    assert_eq!(out, b"A");
    for bad in ["QQ", "QQ=", "%%not-base64%%"] {
        assert!(decode_into(standard(), bad, &mut out).is_err(), "{bad}");
        assert!(
            decode_into(trailing_bits_allowed(), bad, &mut out).is_err(),
            "{bad}"
        );
    }
}
