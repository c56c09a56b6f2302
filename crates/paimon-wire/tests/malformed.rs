//! Every class of bad input gets a typed error that names the problem, and no input makes
//! the decoder panic.

mod common;

use paimon_wire::{
    deserialize_list, serialize_list, CodecErrorKind, CommitMessage, SerializerVersion,
};
use proptest::collection::vec;
use proptest::prelude::*;

const V14: SerializerVersion = SerializerVersion::V14;

/// One message with one data file whose name is longer than 7 bytes (so it lives in the
/// variable-length part), in an empty partition: the payload's layout is then known.
fn one_file_payload() -> Vec<u8> {
    let file = common::fixed_data_file("data-0001.parquet");
    let message = CommitMessage::new(Vec::new(), 1, vec![file]);
    serialize_list(&[message], V14).unwrap()
}

// Offsets in `one_file_payload`: count, partition length + 12-byte empty row, bucket,
// total-buckets flag, new-files count, then the first file's length and row.
const PARTITION_LENGTH_AT: usize = 4;
const TOTAL_BUCKETS_FLAG_AT: usize = 4 + 4 + 12 + 4;
const NEW_FILES_COUNT_AT: usize = TOTAL_BUCKETS_FLAG_AT + 1;
const FILE_LENGTH_AT: usize = NEW_FILES_COUNT_AT + 4;
const FILE_ROW_AT: usize = FILE_LENGTH_AT + 4;
// The file row has 21 fields: 8 bytes of null bits, then 8-byte slots.
const FILE_NAME_SLOT_AT: usize = FILE_ROW_AT + 8;

fn put_i32(bytes: &mut [u8], at: usize, value: i32) {
    bytes[at..at + 4].copy_from_slice(&value.to_be_bytes());
}

fn decode_err(bytes: &[u8]) -> paimon_wire::CodecError {
    deserialize_list(V14, bytes).expect_err("must be refused")
}

#[test]
fn the_valid_payload_decodes() {
    let payload = one_file_payload();
    let messages = deserialize_list(V14, &payload).unwrap();
    assert_eq!(messages[0].new_files[0].file_name, "data-0001.parquet");
}

#[test]
fn every_truncation_is_an_error() {
    let payload = one_file_payload();
    for len in 0..payload.len() {
        let err = decode_err(&payload[..len]);
        assert!(
            matches!(
                err.kind(),
                CodecErrorKind::Truncated { .. }
                    | CodecErrorKind::InvalidLength { .. }
                    | CodecErrorKind::InvalidValue { .. }
            ),
            "prefix of {len} bytes: {err}"
        );
        assert_eq!(err.version(), Some(14));
    }
}

#[test]
fn a_truncated_payload_names_the_field_and_offset() {
    // The last byte is the check-from-snapshot flag.
    let payload = one_file_payload();
    let last = payload.len() - 1;
    let err = decode_err(&payload[..last]);
    assert_eq!(
        err.kind(),
        &CodecErrorKind::Truncated {
            needed: 1,
            available: 0
        }
    );
    assert_eq!(err.field_path(), "messages[0].check_from_snapshot");
    assert_eq!(err.offset(), Some(last));
    assert!(err.to_string().contains("version 14"), "{err}");
}

#[test]
fn negative_lengths_are_refused() {
    let mut payload = one_file_payload();
    put_i32(&mut payload, PARTITION_LENGTH_AT, -1);
    let err = decode_err(&payload);
    assert!(
        matches!(err.kind(), CodecErrorKind::InvalidLength { length: -1, .. }),
        "{err}"
    );
    assert_eq!(err.field_path(), "messages[0].partition");

    let mut payload = one_file_payload();
    put_i32(&mut payload, FILE_LENGTH_AT, -8);
    let err = decode_err(&payload);
    assert_eq!(err.field_path(), "messages[0].new_files[0].length");
}

#[test]
fn counts_larger_than_the_input_fail_before_allocating() {
    // A 100-byte payload claiming 2^31 - 1 messages, then 2^31 - 1 files.
    let mut payload = one_file_payload();
    put_i32(&mut payload, 0, i32::MAX);
    let err = decode_err(&payload);
    assert!(
        matches!(err.kind(), CodecErrorKind::InvalidLength { .. }),
        "{err}"
    );
    assert_eq!(err.field_path(), "messages");

    let mut payload = one_file_payload();
    put_i32(&mut payload, NEW_FILES_COUNT_AT, i32::MAX);
    let err = decode_err(&payload);
    assert!(
        matches!(err.kind(), CodecErrorKind::InvalidLength { .. }),
        "{err}"
    );
    assert_eq!(err.field_path(), "messages[0].new_files");
    assert_eq!(err.offset(), Some(NEW_FILES_COUNT_AT));

    let mut payload = one_file_payload();
    put_i32(&mut payload, NEW_FILES_COUNT_AT, -1);
    assert!(matches!(
        decode_err(&payload).kind(),
        CodecErrorKind::InvalidLength { .. }
    ));
}

#[test]
fn unsupported_versions_list_the_supported_ones() {
    for version in [0, -1, 15, 1000] {
        let err = SerializerVersion::try_from(version).unwrap_err();
        assert_eq!(err.kind(), &CodecErrorKind::UnsupportedVersion { version });
        assert!(
            err.to_string().contains("supported versions are 1 to 14"),
            "{err}"
        );
    }
}

#[test]
fn boolean_bytes_other_than_zero_and_one_are_refused() {
    let mut payload = one_file_payload();
    payload[TOTAL_BUCKETS_FLAG_AT] = 2;
    let err = decode_err(&payload);
    assert_eq!(err.kind(), &CodecErrorKind::InvalidBoolean { value: 2 });
    assert_eq!(err.offset(), Some(TOTAL_BUCKETS_FLAG_AT));
    assert_eq!(err.field_path(), "messages[0].total_buckets");
}

#[test]
fn trailing_bytes_are_refused() {
    let mut payload = one_file_payload();
    let end = payload.len();
    payload.extend_from_slice(&[0, 0, 0]);
    let err = decode_err(&payload);
    assert_eq!(err.kind(), &CodecErrorKind::TrailingBytes { count: 3 });
    assert_eq!(err.offset(), Some(end));
}

#[test]
fn a_row_shorter_than_its_layout_is_refused() {
    // The same file row read as version 13 fits; cut to fewer bytes than 21 fields need, it
    // does not, whatever its length prefix says.
    let payload = one_file_payload();
    let row_length = i32::from_be_bytes(payload[FILE_LENGTH_AT..FILE_ROW_AT].try_into().unwrap());
    let mut cut = payload[..FILE_ROW_AT].to_vec();
    let short_row = 8 + 8 * 20; // one slot short of the 21-field fixed part
    put_i32(&mut cut, FILE_LENGTH_AT, short_row as i32);
    cut.extend_from_slice(&payload[FILE_ROW_AT..FILE_ROW_AT + short_row]);
    cut.extend_from_slice(&payload[FILE_ROW_AT + row_length as usize..]);
    let err = decode_err(&cut);
    assert!(err.to_string().contains("fixed part of 21 fields"), "{err}");
    assert_eq!(err.field_path(), "messages[0].new_files[0].DataFileMeta");
}

#[test]
fn a_var_length_pointer_outside_the_row_is_refused() {
    let mut payload = one_file_payload();
    // offset 0x7fff_0000, length 17: far outside the row.
    let word: u64 = (0x7fff_0000u64 << 32) | 17;
    payload[FILE_NAME_SLOT_AT..FILE_NAME_SLOT_AT + 8].copy_from_slice(&word.to_le_bytes());
    let err = decode_err(&payload);
    assert!(err.to_string().contains("outside"), "{err}");
    assert_eq!(err.field_path(), "messages[0].new_files[0]._FILE_NAME");
    assert_eq!(err.offset(), Some(FILE_NAME_SLOT_AT));
}

#[test]
fn invalid_utf8_is_refused() {
    let mut payload = one_file_payload();
    let word = u64::from_le_bytes(
        payload[FILE_NAME_SLOT_AT..FILE_NAME_SLOT_AT + 8]
            .try_into()
            .unwrap(),
    );
    let name_at = FILE_ROW_AT + (word >> 32) as usize;
    payload[name_at] = 0xff;
    let err = decode_err(&payload);
    assert_eq!(err.kind(), &CodecErrorKind::InvalidUtf8);
    assert_eq!(err.field_path(), "messages[0].new_files[0]._FILE_NAME");
}

#[test]
fn a_not_null_field_marked_null_is_refused() {
    let mut payload = one_file_payload();
    // Null bit of field 0 (_FILE_NAME) is bit 8 of the row: byte 1, bit 0.
    payload[FILE_ROW_AT + 1] |= 1;
    let err = decode_err(&payload);
    assert!(err.to_string().contains("NOT NULL"), "{err}");
}

#[test]
fn an_unknown_file_source_is_refused() {
    let mut payload = one_file_payload();
    let slot = FILE_ROW_AT + 8 + 8 * 15;
    payload[slot] = 7;
    let err = decode_err(&payload);
    assert!(err.to_string().contains("file source byte 7"), "{err}");
    assert_eq!(err.field_path(), "messages[0].new_files[0]._FILE_SOURCE");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn random_bytes_never_panic(bytes in vec(any::<u8>(), 0..512), version in 1i32..=14) {
        let version = SerializerVersion::try_from(version).unwrap();
        let _ = deserialize_list(version, &bytes);
        let _ = paimon_wire::deserialize_message(version, &bytes);
    }

    #[test]
    fn corrupted_payloads_never_panic(
        messages in vec(common::message(SerializerVersion::V14), 1..3),
        flips in vec((any::<prop::sample::Index>(), any::<u8>()), 1..8),
        version in 1i32..=14,
    ) {
        let mut bytes = serialize_list(&messages, V14).unwrap();
        for (at, value) in flips {
            let i = at.index(bytes.len());
            bytes[i] = value;
        }
        let _ = deserialize_list(SerializerVersion::try_from(version).unwrap(), &bytes);
    }
}
