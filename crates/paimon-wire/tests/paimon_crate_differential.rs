//! Differential test against the `paimon` crate's own version 14 codec
//! (`CommitMessage::serialize` / `deserialize`), which its authors checked against Java:
//! both must write the same bytes for the same message and read each other's bytes.

mod common;

use paimon_wire::{deserialize_message, serialize_message, CommitMessage, SerializerVersion};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]
    #[test]
    fn same_bytes_as_the_paimon_crate(message in common::message(SerializerVersion::V14)) {
        let ours = serialize_message(&message, SerializerVersion::V14).unwrap();
        let theirs = message.serialize().unwrap();
        prop_assert_eq!(&ours, &theirs);
        let read_by_them = CommitMessage::deserialize(14, &ours).unwrap();
        let read_by_us = deserialize_message(SerializerVersion::V14, &theirs).unwrap();
        prop_assert_eq!(common::dump(&[read_by_them]), common::dump(&[read_by_us]));
    }
}
