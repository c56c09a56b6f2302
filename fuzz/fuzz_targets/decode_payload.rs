//! Payload decoding at every serializer version: `[version selector] ++ payload`.
//!
//! Checks, beyond "no panic, no sanitizer report": the limited and unlimited decoders agree
//! within the limits; tight limits are honoured; a decoded payload re-encodes (at a writable
//! version) to bytes that decode to the same messages and re-encode to the same bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use paimon_wire::dump::messages_to_json;
use paimon_wire::{
    deserialize_list, deserialize_list_with_limits, deserialize_message, serialize_list,
    CodecErrorKind, CommitMessage, DecodeLimits,
};
use paimon_wire_fuzz::split_version;

fn file_count(messages: &[CommitMessage]) -> usize {
    messages
        .iter()
        .map(|m| {
            m.new_files.len()
                + m.deleted_files.len()
                + m.new_changelog_files.len()
                + m.new_index_files.len()
                + m.deleted_index_files.len()
                + m.compact_before.len()
                + m.compact_after.len()
                + m.compact_changelog_files.len()
                + m.compact_new_index_files.len()
                + m.compact_deleted_index_files.len()
        })
        .sum()
}

fuzz_target!(|data: &[u8]| {
    static SEEDS: std::sync::Once = std::sync::Once::new();
    SEEDS.call_once(paimon_wire_fuzz::write_decode_seeds_if_asked);
    let Some((version, payload)) = split_version(data) else {
        return;
    };
    let unlimited = deserialize_list(version, payload);
    let limited = deserialize_list_with_limits(version, payload, &DecodeLimits::default());
    // Fuzz inputs are far below the default limits: both decoders must agree exactly.
    match (&unlimited, &limited) {
        (Ok(a), Ok(b)) => assert_eq!(messages_to_json(a), messages_to_json(b)),
        (Err(a), Err(b)) => assert_eq!(a, b),
        _ => panic!("limited and unlimited decoders disagree: {unlimited:?} / {limited:?}"),
    }

    let tight = DecodeLimits {
        max_payload_bytes: usize::MAX,
        max_messages: 2,
        max_files: 3,
    };
    match (
        &unlimited,
        deserialize_list_with_limits(version, payload, &tight),
    ) {
        (Ok(all), Ok(within)) => {
            assert!(within.len() <= 2 && file_count(&within) <= 3);
            assert_eq!(messages_to_json(all), messages_to_json(&within));
        }
        (Ok(all), Err(e)) => {
            assert!(
                matches!(e.kind(), CodecErrorKind::LimitExceeded { .. }),
                "a payload that decodes failed under limits with {e}"
            );
            assert!(all.len() > 2 || file_count(all) > 3);
        }
        (Err(_), _) => {}
    }

    // One message without the count (Java's `serialize(CommitMessage)`).
    if let Ok(message) = deserialize_message(version, payload) {
        let _ = messages_to_json(std::slice::from_ref(&message));
    }

    let Ok(messages) = unlimited else {
        return;
    };
    // Errors and dumps of what decoded must not panic either.
    let dump = messages_to_json(&messages);
    if !version.is_writable() {
        return;
    }
    if let Ok(encoded) = serialize_list(&messages, version) {
        let again = deserialize_list(version, &encoded)
            .unwrap_or_else(|e| panic!("re-encoded payload does not decode: {e}"));
        assert_eq!(
            messages_to_json(&again),
            dump,
            "re-encoding changed the messages"
        );
        let encoded_again = serialize_list(&again, version).expect("encodes a second time");
        assert_eq!(encoded, encoded_again, "encoding is not stable");
    }
});
