//! The optional `PWIR` envelope: arbitrary bytes to `envelope::unwrap`, then what it holds to
//! the limited decoder; and `wrap` / `unwrap` round trips of arbitrary payloads.
#![no_main]

use libfuzzer_sys::fuzz_target;
use paimon_wire::envelope::{is_envelope, unwrap, wrap, HEADER_LEN};
use paimon_wire::{deserialize_list_with_limits, DecodeLimits};
use paimon_wire_fuzz::version_of;

fuzz_target!(|data: &[u8]| {
    static SEEDS: std::sync::Once = std::sync::Once::new();
    SEEDS.call_once(paimon_wire_fuzz::write_envelope_seeds_if_asked);
    match unwrap(data) {
        Ok((version, payload)) => {
            assert!(is_envelope(data));
            assert_eq!(payload.len() + HEADER_LEN, data.len());
            let _ = deserialize_list_with_limits(version, payload, &DecodeLimits::default());
        }
        Err(e) => {
            // The message must render and name a place inside (or just past) the input.
            let _ = e.to_string();
            assert!(e.offset <= data.len(), "{e:?} points past the input");
        }
    }

    // Any payload wrapped at any version unwraps to itself; a flipped payload bit is caught.
    if let Some((&selector, payload)) = data.split_first() {
        let version = version_of(selector);
        let framed = wrap(version, payload);
        assert_eq!(unwrap(&framed), Ok((version, payload)));
        if !payload.is_empty() {
            let mut corrupted = framed.clone();
            let at = HEADER_LEN + usize::from(selector) % payload.len();
            corrupted[at] ^= 1 << (selector % 8);
            assert!(
                unwrap(&corrupted).is_err(),
                "a flipped payload bit went unnoticed"
            );
        }
    }
});
