//! Property tests: generated messages survive encode → decode at every writable version,
//! and re-encoding the decoded messages gives the same bytes.

mod common;

use paimon_wire::{deserialize_list, serialize_list, SerializerVersion};
use proptest::collection::vec;
use proptest::prelude::*;

fn round_trip(version: SerializerVersion, messages: Vec<paimon_wire::CommitMessage>) {
    let bytes = serialize_list(&messages, version).expect("encode");
    let decoded = deserialize_list(version, &bytes).expect("decode");
    assert_eq!(common::dump(&decoded), common::dump(&messages));
    assert_eq!(serialize_list(&decoded, version).expect("re-encode"), bytes);
}

macro_rules! round_trip_tests {
    ($($name:ident => $version:ident),* $(,)?) => {$(
        proptest! {
            #![proptest_config(ProptestConfig::with_cases(48))]
            #[test]
            fn $name(messages in vec(common::message(SerializerVersion::$version), 0..4)) {
                round_trip(SerializerVersion::$version, messages);
            }
        }
    )*};
}

round_trip_tests! {
    round_trip_v2 => V2,
    round_trip_v3 => V3,
    round_trip_v6 => V6,
    round_trip_v7 => V7,
    round_trip_v10 => V10,
    round_trip_v11 => V11,
    round_trip_v12 => V12,
    round_trip_v13 => V13,
    round_trip_v14 => V14,
}
