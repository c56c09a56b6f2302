// Licensed to the Apache Software Foundation (ASF) under one
// or more contributor license agreements.  See the NOTICE file
// distributed with this work for additional information
// regarding copyright ownership.  The ASF licenses this file
// to you under the Apache License, Version 2.0 (the
// "License"); you may not use this file except in compliance
// with the License.  You may obtain a copy of the License at
//
//   http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing,
// software distributed under the License is distributed on an
// "AS IS" BASIS, WITHOUT WARRANTIES OR CONDITIONS OF ANY
// KIND, either express or implied.  See the License for the
// specific language governing permissions and limitations
// under the License.

//! Avro binary encoding of a [`ManifestEntry`] against [`MANIFEST_ENTRY_SCHEMA`], written
//! straight from the entry's fields in the schema's order.
//!
//! The counterpart of `manifest_entry_decode`. The bytes are the ones `apache_avro` writes for
//! the entry's resolved `Value` (checked by `encoding_equals_the_resolved_value` below, over
//! every optional field present and absent), without the serializer's cost: its schema-aware
//! serde path looks each field up by name and buffers every array item in a `Vec` of its own,
//! which made encoding about half of a large commit's manifest CPU.
//!
//! [`MANIFEST_ENTRY_SCHEMA`]: crate::spec::MANIFEST_ENTRY_SCHEMA

use crate::arrow::format::delta_varint::encode_varint;
use crate::spec::stats::BinaryTableStats;
use crate::spec::{DataFileMeta, ManifestEntry};

/// The union index of a nullable field's value: Avro's `["null", T]` unions are written as the
/// branch index (a zig-zag long: 0 for `null`, 1 for `T`, encoded as the byte 2) before the
/// value.
const UNION_NULL: u8 = 0;
const UNION_VALUE: u8 = 2;

/// Appends `entry`, as the record branch of the schema's top-level `["null", record]` union.
pub(crate) fn encode_manifest_entry(out: &mut Vec<u8>, entry: &ManifestEntry) {
    out.push(UNION_VALUE);
    put_int(out, entry.version());
    put_int(out, *entry.kind() as i32);
    put_bytes(out, entry.partition());
    put_int(out, entry.bucket());
    put_int(out, entry.total_buckets());
    encode_data_file(out, entry.file());
}

/// The `_FILE` record.
fn encode_data_file(out: &mut Vec<u8>, file: &DataFileMeta) {
    put_bytes(out, file.file_name.as_bytes());
    put_long(out, file.file_size);
    put_long(out, file.row_count);
    put_bytes(out, &file.min_key);
    put_bytes(out, &file.max_key);
    out.push(UNION_VALUE);
    encode_stats(out, &file.key_stats);
    out.push(UNION_VALUE);
    encode_stats(out, &file.value_stats);
    put_long(out, file.min_sequence_number);
    put_long(out, file.max_sequence_number);
    put_long(out, file.schema_id);
    put_int(out, file.level);
    put_array(out, &file.extra_files, put_string);
    put_optional(
        out,
        file.creation_time.map(|time| time.timestamp_millis()),
        put_long,
    );
    put_optional(out, file.delete_row_count, put_long);
    put_optional(out, file.embedded_index.as_deref(), put_bytes);
    put_optional(out, file.file_source, put_int);
    put_optional(out, file.value_stats_cols.as_deref(), |out, columns| {
        put_array(out, columns, put_string)
    });
    put_optional(out, file.external_path.as_deref(), |out, path| {
        put_bytes(out, path.as_bytes())
    });
    put_optional(out, file.first_row_id, put_long);
    put_optional(out, file.write_cols.as_deref(), |out, columns| {
        put_array(out, columns, put_string)
    });
    put_optional(
        out,
        file.column_max_sequence_numbers.as_deref(),
        |out, sequences| put_array(out, sequences, |out, sequence| put_long(out, *sequence)),
    );
}

/// A `_KEY_STATS` or `_VALUE_STATS` record; its null counts are always present.
fn encode_stats(out: &mut Vec<u8>, stats: &BinaryTableStats) {
    put_bytes(out, stats.min_values());
    put_bytes(out, stats.max_values());
    out.push(UNION_VALUE);
    put_array(out, stats.null_counts(), |out, count| {
        put_optional(out, *count, put_long)
    });
}

/// A `long`: zig-zag, then a variable-length integer of 7 bits a byte, low bits first (the
/// crate's one encoder of it).
pub(super) fn put_long(out: &mut Vec<u8>, value: i64) {
    encode_varint(value, out);
}

/// An `int`, encoded as a `long` is.
fn put_int(out: &mut Vec<u8>, value: i32) {
    put_long(out, i64::from(value));
}

/// `bytes` (and a `string`'s UTF-8): the length, then the bytes.
fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    put_long(out, bytes.len() as i64);
    out.extend_from_slice(bytes);
}

fn put_string(out: &mut Vec<u8>, value: &String) {
    put_bytes(out, value.as_bytes());
}

/// A `["null", T]` union.
fn put_optional<T>(out: &mut Vec<u8>, value: Option<T>, put: impl FnOnce(&mut Vec<u8>, T)) {
    match value {
        None => out.push(UNION_NULL),
        Some(value) => {
            out.push(UNION_VALUE);
            put(out, value);
        }
    }
}

/// An array: one block (its item count, then the items) unless empty, then the empty block
/// that ends it, as `apache_avro` encodes an array `Value`.
fn put_array<T>(out: &mut Vec<u8>, items: &[T], put: impl Fn(&mut Vec<u8>, &T)) {
    if !items.is_empty() {
        put_long(out, items.len() as i64);
        for item in items {
            put(out, item);
        }
    }
    out.push(0);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::{FileKind, MANIFEST_ENTRY_SCHEMA};
    use apache_avro::Schema;
    use chrono::{TimeZone, Utc};

    fn stats(columns: usize) -> BinaryTableStats {
        BinaryTableStats::new(
            vec![1; 8 * columns + 8],
            vec![2; 8 * columns + 8],
            (0..columns)
                .map(|i| (i % 3 != 0).then_some(i as i64 * 1_000_003 - 7))
                .collect(),
        )
    }

    fn file(name: &str) -> DataFileMeta {
        DataFileMeta {
            file_name: name.into(),
            file_size: 1 << 40,
            row_count: -3,
            min_key: vec![],
            max_key: vec![9; 300],
            key_stats: stats(0),
            value_stats: stats(20),
            min_sequence_number: i64::MIN,
            max_sequence_number: i64::MAX,
            schema_id: 3,
            level: 5,
            extra_files: vec![],
            creation_time: None,
            delete_row_count: None,
            embedded_index: None,
            file_source: None,
            value_stats_cols: None,
            external_path: None,
            first_row_id: None,
            write_cols: None,
            column_max_sequence_numbers: None,
        }
    }

    /// Entries with every optional field absent, present, and present and empty, and arrays of
    /// over a thousand items.
    fn entries() -> Vec<ManifestEntry> {
        let plain = file("plain.parquet");
        let mut full = file("full.parquet");
        full.extra_files = vec!["a.index".into(), "ü.index".into()];
        full.creation_time = Some(Utc.timestamp_millis_opt(1_764_000_000_123).unwrap());
        full.delete_row_count = Some(17);
        full.embedded_index = Some(vec![1, 2, 3]);
        full.file_source = Some(1);
        full.value_stats_cols = Some(vec!["a".into(), "b".into()]);
        full.external_path = Some("s3://bucket/dt=1/bucket-0/full.parquet".into());
        full.first_row_id = Some(100);
        full.write_cols = Some(vec!["a".into()]);
        full.column_max_sequence_numbers = Some(vec![42, -42]);
        full.key_stats = stats(3);
        let mut empty = file("empty-lists.parquet");
        empty.value_stats_cols = Some(vec![]);
        empty.write_cols = Some(vec![]);
        empty.column_max_sequence_numbers = Some(vec![]);
        empty.embedded_index = Some(vec![]);
        empty.value_stats = stats(0);
        let mut long = file("long-arrays.parquet");
        long.extra_files = (0..2_100).map(|i| format!("extra-{i}")).collect();
        long.value_stats = stats(1_030);
        long.column_max_sequence_numbers = Some((0..1_025).collect());
        vec![
            ManifestEntry::new(FileKind::Add, vec![], 0, 1, plain, 2),
            ManifestEntry::new(FileKind::Delete, vec![0, 0, 0, 1, 9], -2, -1, full, 2),
            ManifestEntry::new(FileKind::Add, vec![7; 24], i32::MAX, i32::MIN, empty, 2),
            ManifestEntry::new(FileKind::Delete, vec![1], 3, 16, long, 1),
        ]
    }

    #[test]
    fn encoding_equals_the_resolved_value() {
        let schema = Schema::parse_str(MANIFEST_ENTRY_SCHEMA).unwrap();
        for entry in entries() {
            let value = apache_avro::to_value(&entry)
                .and_then(|value| value.resolve(&schema))
                .unwrap();
            let reference = apache_avro::to_avro_datum(&schema, value).unwrap();
            let mut encoded = Vec::new();
            encode_manifest_entry(&mut encoded, &entry);
            // Not `assert_eq!`: a failure would print kilobytes of bytes.
            assert!(
                encoded == reference,
                "{}: {} bytes encoded, {} expected, first difference at byte {:?}",
                entry.file().file_name,
                encoded.len(),
                reference.len(),
                encoded.iter().zip(&reference).position(|(a, b)| a != b)
            );
        }
    }

    #[test]
    fn longs_and_ints_encode_as_apache_avro_encodes_them() {
        let mut values = vec![i64::MIN, i64::MAX, i64::from(i32::MIN), i64::from(i32::MAX)];
        for shift in 0..63 {
            values.extend([1i64 << shift, (1i64 << shift) - 1, -(1i64 << shift)]);
        }
        for value in values {
            let mut out = Vec::new();
            put_long(&mut out, value);
            let reference =
                apache_avro::to_avro_datum(&Schema::Long, apache_avro::types::Value::Long(value))
                    .unwrap();
            assert_eq!(out, reference, "{value}");
            if let Ok(value) = i32::try_from(value) {
                let mut out = Vec::new();
                put_int(&mut out, value);
                let reference =
                    apache_avro::to_avro_datum(&Schema::Int, apache_avro::types::Value::Int(value))
                        .unwrap();
                assert_eq!(out, reference, "{value}");
            }
        }
    }
}
