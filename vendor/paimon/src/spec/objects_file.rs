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

use apache_avro::{
    from_value, to_value, Codec, DeflateSettings, Reader, Schema, Writer, ZstandardSettings,
};
use serde::de::DeserializeOwned;
use serde::Serialize;

/// The bytes of records an Avro block holds before it is compressed and written: Avro Java's
/// default sync interval (`DataFileConstants.DEFAULT_SYNC_INTERVAL`, 4,000 x the 16-byte sync
/// marker), which Paimon Java's manifest writers keep. Each block is compressed on its own, so
/// smaller blocks cost a compressor set-up more often and compress worse.
pub(crate) const DEFAULT_AVRO_BLOCK_SIZE: usize = 64_000;
/// The zstd level of Avro files compressed with zstd: Paimon Java's
/// `file.compression.zstd-level` default, which its manifest, manifest-list and index-manifest
/// writers use (zstd's own default, level 3, is about twice as slow).
pub(crate) const DEFAULT_AVRO_ZSTD_LEVEL: u8 = 1;
pub(crate) const DEFAULT_AVRO_COMPRESSION: &str = "zstd";

pub fn from_avro_bytes<T: DeserializeOwned>(bytes: &[u8]) -> crate::Result<Vec<T>> {
    Reader::new(bytes)?
        .map(|r| {
            let value = r?;
            from_value::<T>(&value).map_err(crate::Error::from)
        })
        .collect()
}

/// Serialize records into Avro Object Container File bytes.
///
/// The `schema_json` must be a valid Avro schema JSON string that matches
/// the serde serialization layout of `T`.
pub fn to_avro_bytes<T: Serialize>(schema_json: &str, records: &[T]) -> crate::Result<Vec<u8>> {
    to_avro_bytes_with_compression(schema_json, records, DEFAULT_AVRO_COMPRESSION)
}

pub(crate) fn to_avro_bytes_with_compression<T: Serialize>(
    schema_json: &str,
    records: &[T],
    compression: &str,
) -> crate::Result<Vec<u8>> {
    let schema = Schema::parse_str(schema_json)?;
    let mut writer = new_avro_writer(&schema, compression, DEFAULT_AVRO_BLOCK_SIZE)?;
    for record in records {
        let value = to_value(record).and_then(|value| value.resolve(&schema))?;
        writer.append(value)?;
    }
    Ok(writer.into_inner()?)
}

pub(crate) fn new_avro_writer<'a>(
    schema: &'a Schema,
    compression: &str,
    block_size: usize,
) -> crate::Result<Writer<'a, Vec<u8>>> {
    Ok(Writer::builder()
        .schema(schema)
        .writer(Vec::new())
        .codec(avro_codec(compression)?)
        .block_size(block_size.max(1))
        .build())
}

pub(crate) fn avro_codec(compression: &str) -> crate::Result<Codec> {
    match compression.to_ascii_lowercase().as_str() {
        "zstd" | "zstandard" => Ok(Codec::Zstandard(ZstandardSettings::new(
            DEFAULT_AVRO_ZSTD_LEVEL,
        ))),
        "null" | "none" | "uncompressed" => Ok(Codec::Null),
        "deflate" => Ok(Codec::Deflate(DeflateSettings::default())),
        "snappy" => Ok(Codec::Snappy),
        other => Err(crate::Error::Unsupported {
            message: format!("Unsupported Avro compression: {other}"),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::avro::from_avro_bytes_fast;
    use crate::spec::index_manifest::INDEX_MANIFEST_ENTRY_SCHEMA;
    use crate::spec::manifest_common::FileKind;
    use crate::spec::manifest_entry::{ManifestEntry, MANIFEST_ENTRY_SCHEMA};
    use crate::spec::manifest_file_meta::MANIFEST_FILE_META_SCHEMA;
    use crate::spec::stats::BinaryTableStats;
    use crate::spec::{DataFileMeta, IndexManifestEntry, ManifestFileMeta};
    use apache_avro::types::Value;
    use chrono::{DateTime, Utc};

    // Check the record decoded from the OCF writer schema, including fields whose
    // values were omitted by serde and filled from Avro defaults.
    fn assert_record_field_order<'a>(value: &'a Value, expected: &[&str]) -> &'a [(String, Value)] {
        let fields = match value {
            Value::Union(_, value) => return assert_record_field_order(value, expected),
            Value::Record(fields) => fields,
            other => panic!("Expected an Avro record, got {other:?}"),
        };
        assert_eq!(
            fields
                .iter()
                .map(|(name, _)| name.as_str())
                .collect::<Vec<_>>(),
            expected
        );
        fields
    }

    fn manifest_entry() -> ManifestEntry {
        manifest_entry_with_sequences(None)
    }

    fn manifest_entry_with_sequences(
        column_max_sequence_numbers: Option<Vec<i64>>,
    ) -> ManifestEntry {
        let value_bytes = vec![
            0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 49, 0, 0, 0, 0, 0, 0, 129, 1, 0, 0, 0, 0, 0, 0, 0,
        ];
        let single_value = vec![0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0];
        ManifestEntry::new(
            FileKind::Add,
            single_value.clone(),
            1,
            10,
            DataFileMeta {
                file_name: "test.parquet".to_string(),
                file_size: 100,
                row_count: 50,
                min_key: single_value.clone(),
                max_key: single_value,
                key_stats: BinaryTableStats::new(
                    value_bytes.clone(),
                    value_bytes.clone(),
                    vec![Some(1), Some(2)],
                ),
                value_stats: BinaryTableStats::new(
                    value_bytes.clone(),
                    value_bytes,
                    vec![Some(1), Some(2)],
                ),
                min_sequence_number: 1,
                max_sequence_number: 50,
                schema_id: 0,
                level: 0,
                extra_files: vec![],
                creation_time: Some(
                    "2024-09-06T07:45:55.039+00:00"
                        .parse::<DateTime<Utc>>()
                        .unwrap(),
                ),
                delete_row_count: Some(0),
                embedded_index: None,
                first_row_id: None,
                write_cols: None,
                external_path: None,
                file_source: None,
                value_stats_cols: None,
                column_max_sequence_numbers,
            },
            2,
        )
    }

    #[test]
    fn test_roundtrip_manifest_file_meta() {
        let value_bytes = vec![
            0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 49, 0, 0, 0, 0, 0, 0, 129,
        ];
        let original = vec![ManifestFileMeta::new(
            "manifest-test-0".to_string(),
            1024,
            5,
            2,
            BinaryTableStats::new(value_bytes.clone(), value_bytes.clone(), vec![Some(1)]),
            0,
        )];
        let bytes = to_avro_bytes(MANIFEST_FILE_META_SCHEMA, &original).unwrap();
        let value = Reader::new(bytes.as_slice())
            .unwrap()
            .next()
            .unwrap()
            .unwrap();
        // ManifestFileMetaSerializer.toRow, including optional pruning statistics.
        let fields = assert_record_field_order(
            &value,
            &[
                "_VERSION",
                "_FILE_NAME",
                "_FILE_SIZE",
                "_NUM_ADDED_FILES",
                "_NUM_DELETED_FILES",
                "_PARTITION_STATS",
                "_SCHEMA_ID",
                "_MIN_BUCKET",
                "_MAX_BUCKET",
                "_MIN_LEVEL",
                "_MAX_LEVEL",
                "_MIN_ROW_ID",
                "_MAX_ROW_ID",
                "_TOTAL_BUCKETS",
                "_EXTRA_FILES",
            ],
        );
        assert_record_field_order(
            &fields[5].1,
            &["_MIN_VALUES", "_MAX_VALUES", "_NULL_COUNTS"],
        );
        let decoded = from_avro_bytes::<ManifestFileMeta>(&bytes).unwrap();
        assert_eq!(original, decoded);
    }

    #[test]
    fn test_roundtrip_manifest_file_meta_with_row_ids() {
        let value_bytes = vec![
            0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 49, 0, 0, 0, 0, 0, 0, 129,
        ];
        let original = vec![ManifestFileMeta::new_with_version(
            2,
            "manifest-row-tracking-0".to_string(),
            2048,
            7,
            0,
            BinaryTableStats::new(value_bytes.clone(), value_bytes.clone(), vec![Some(1)]),
            0,
            None,
            None,
            None,
            None,
            Some(100),
            Some(199),
            None,
            Some(vec!["manifest-row-tracking-0.idx".to_string()]),
        )];
        let bytes = to_avro_bytes(MANIFEST_FILE_META_SCHEMA, &original).unwrap();
        let decoded = from_avro_bytes::<ManifestFileMeta>(&bytes).unwrap();
        assert_eq!(original, decoded);
        assert_eq!(decoded[0].min_row_id(), Some(100));
        assert_eq!(decoded[0].max_row_id(), Some(199));
        assert_eq!(
            decoded[0].extra_files(),
            Some(["manifest-row-tracking-0.idx".to_string()].as_slice())
        );
    }

    #[test]
    fn test_roundtrip_total_buckets_and_read_legacy_manifest_meta() {
        let original = vec![ManifestFileMeta::new(
            "manifest-java-0".to_string(),
            1024,
            5,
            0,
            BinaryTableStats::empty(),
            0,
        )
        .with_bucket_level_stats(Some(2), Some(2), Some(0), Some(0))
        .with_total_buckets(Some(8))];
        let bytes = to_avro_bytes(MANIFEST_FILE_META_SCHEMA, &original).unwrap();
        let decoded = from_avro_bytes_fast::<ManifestFileMeta>(&bytes).unwrap();
        assert_eq!(decoded[0].total_buckets(), Some(8));

        let legacy_schema = MANIFEST_FILE_META_SCHEMA.replacen(
            "        {\"name\": \"_TOTAL_BUCKETS\", \"type\": [\"null\", \"int\"], \"default\": null},\n",
            "",
            1,
        );
        assert!(!legacy_schema.contains("_TOTAL_BUCKETS"));
        let legacy = vec![ManifestFileMeta::new(
            "manifest-legacy-0".to_string(),
            1024,
            5,
            0,
            BinaryTableStats::empty(),
            0,
        )];
        let bytes = to_avro_bytes(&legacy_schema, &legacy).unwrap();
        let decoded = from_avro_bytes_fast::<ManifestFileMeta>(&bytes).unwrap();
        assert_eq!(decoded[0].total_buckets(), None);
    }

    #[test]
    fn test_roundtrip_manifest_entry() {
        let original = vec![manifest_entry()];
        let bytes = to_avro_bytes(MANIFEST_ENTRY_SCHEMA, &original).unwrap();
        let value = Reader::new(bytes.as_slice())
            .unwrap()
            .next()
            .unwrap()
            .unwrap();
        // ManifestEntrySerializer.toRow and DataFileMetaSerializer.toRow.
        let fields = assert_record_field_order(
            &value,
            &[
                "_VERSION",
                "_KIND",
                "_PARTITION",
                "_BUCKET",
                "_TOTAL_BUCKETS",
                "_FILE",
            ],
        );
        let file = assert_record_field_order(
            &fields[5].1,
            &[
                "_FILE_NAME",
                "_FILE_SIZE",
                "_ROW_COUNT",
                "_MIN_KEY",
                "_MAX_KEY",
                "_KEY_STATS",
                "_VALUE_STATS",
                "_MIN_SEQUENCE_NUMBER",
                "_MAX_SEQUENCE_NUMBER",
                "_SCHEMA_ID",
                "_LEVEL",
                "_EXTRA_FILES",
                "_CREATION_TIME",
                "_DELETE_ROW_COUNT",
                "_EMBEDDED_FILE_INDEX",
                "_FILE_SOURCE",
                "_VALUE_STATS_COLS",
                "_EXTERNAL_PATH",
                "_FIRST_ROW_ID",
                "_WRITE_COLS",
                "_WRITE_COLS_SEQUENCES",
            ],
        );
        for stats in [&file[5].1, &file[6].1] {
            assert_record_field_order(stats, &["_MIN_VALUES", "_MAX_VALUES", "_NULL_COUNTS"]);
        }
        let decoded = from_avro_bytes::<ManifestEntry>(&bytes).unwrap();
        assert_eq!(original, decoded);
    }

    #[test]
    fn test_roundtrip_manifest_entry_deflate() {
        // Writing with the deflate codec and reading back through the fast
        // decoder must round-trip, exercising both the write-side codec mapping
        // and the read-side deflate decompression.
        let original = vec![manifest_entry()];
        let bytes =
            to_avro_bytes_with_compression(MANIFEST_ENTRY_SCHEMA, &original, "deflate").unwrap();
        let decoded = from_avro_bytes_fast::<ManifestEntry>(&bytes).unwrap();
        assert_eq!(original, decoded);
    }

    #[test]
    fn test_roundtrip_index_manifest_field_order() {
        let entry: IndexManifestEntry = serde_json::from_value(serde_json::json!({
            "_VERSION": 1,
            "_KIND": 0,
            "_PARTITION": [0, 0, 0, 0],
            "_BUCKET": 2,
            "_INDEX_TYPE": "DELETION_VECTORS",
            "_FILE_NAME": "index-0",
            "_FILE_SIZE": 42,
            "_ROW_COUNT": 7,
            "_DELETIONS_VECTORS_RANGES": [{"f0": "data-0", "f1": 1, "f2": 24, "_CARDINALITY": 3}],
            "_EXTERNAL_PATH": "s3://bucket/index-0"
        }))
        .unwrap();
        let global_entry: IndexManifestEntry = serde_json::from_value(serde_json::json!({
            "_INDEX_TYPE": "GLOBAL_INDEX",
            "_FILE_NAME": "index-1",
            "_GLOBAL_INDEX": {
                "_ROW_RANGE_START": 10, "_ROW_RANGE_END": 20, "_INDEX_FIELD_ID": 3,
                "_EXTRA_FIELD_IDS": [4], "_INDEX_META": [5, 6], "_SOURCE_META": [7, 8]
            },
            "_VERSION": 1, "_KIND": 0, "_PARTITION": [0, 0, 0, 0], "_BUCKET": -1,
            "_FILE_SIZE": 64, "_ROW_COUNT": 11
        }))
        .unwrap();
        let original = vec![entry, global_entry];
        let bytes = to_avro_bytes(INDEX_MANIFEST_ENTRY_SCHEMA, &original).unwrap();
        for value in Reader::new(bytes.as_slice()).unwrap() {
            let value = value.unwrap();
            // IndexManifestEntrySerializer.toRow flattens IndexFileMeta after _BUCKET.
            let fields = assert_record_field_order(
                &value,
                &[
                    "_VERSION",
                    "_KIND",
                    "_PARTITION",
                    "_BUCKET",
                    "_INDEX_TYPE",
                    "_FILE_NAME",
                    "_FILE_SIZE",
                    "_ROW_COUNT",
                    "_DELETIONS_VECTORS_RANGES",
                    "_EXTERNAL_PATH",
                    "_GLOBAL_INDEX",
                ],
            );
            if let Value::Union(_, ranges) = &fields[8].1 {
                if let Value::Array(ranges) = ranges.as_ref() {
                    assert_record_field_order(&ranges[0], &["f0", "f1", "f2", "_CARDINALITY"]);
                }
            }
            if let Value::Union(_, global) = &fields[10].1 {
                if !matches!(global.as_ref(), Value::Null) {
                    assert_record_field_order(
                        global,
                        &[
                            "_ROW_RANGE_START",
                            "_ROW_RANGE_END",
                            "_INDEX_FIELD_ID",
                            "_EXTRA_FIELD_IDS",
                            "_INDEX_META",
                            "_SOURCE_META",
                        ],
                    );
                }
            }
        }
        assert_eq!(
            from_avro_bytes::<IndexManifestEntry>(&bytes).unwrap(),
            original
        );
        assert_eq!(
            from_avro_bytes_fast::<IndexManifestEntry>(&bytes).unwrap(),
            original
        );
    }

    /// The Avro manifest record carries `_WRITE_COLS_SEQUENCES`, so a populated value must
    /// survive a write/read round trip rather than being dropped on either side.
    #[test]
    fn test_roundtrip_manifest_entry_with_column_max_sequence_numbers() {
        for value in [Some(vec![15, 100, 150, 200]), Some(Vec::new()), None] {
            let original = vec![manifest_entry_with_sequences(value.clone())];
            let bytes = to_avro_bytes(MANIFEST_ENTRY_SCHEMA, &original).unwrap();

            let decoded = from_avro_bytes::<ManifestEntry>(&bytes).unwrap();
            assert_eq!(decoded, original);
            assert_eq!(decoded[0].file().column_max_sequence_numbers, value);

            // The hand-written decoder reads the same bytes by field name.
            let fast = from_avro_bytes_fast::<ManifestEntry>(&bytes).unwrap();
            assert_eq!(fast, original);
            assert_eq!(fast[0].file().column_max_sequence_numbers, value);
        }
    }

    /// A writer that predates the field omits it entirely; it must read back as absent.
    #[test]
    fn test_read_manifest_entry_without_column_max_sequence_numbers_field() {
        let mut schema: serde_json::Value = serde_json::from_str(MANIFEST_ENTRY_SCHEMA).unwrap();
        let fields = schema.as_array_mut().unwrap()[1]
            .as_object_mut()
            .unwrap()
            .get_mut("fields")
            .unwrap()
            .as_array_mut()
            .unwrap();
        let file_fields = fields
            .iter_mut()
            .find(|field| field.get("name").and_then(|name| name.as_str()) == Some("_FILE"))
            .unwrap()
            .get_mut("type")
            .unwrap()
            .get_mut("fields")
            .unwrap()
            .as_array_mut()
            .unwrap();
        let before = file_fields.len();
        file_fields.retain(|field| {
            field.get("name").and_then(|name| name.as_str()) != Some("_WRITE_COLS_SEQUENCES")
        });
        assert_eq!(
            file_fields.len(),
            before - 1,
            "field must exist to be removed"
        );
        let legacy_schema = serde_json::to_string(&schema).unwrap();

        let original = vec![manifest_entry()];
        let bytes = to_avro_bytes(&legacy_schema, &original).unwrap();
        let decoded = from_avro_bytes_fast::<ManifestEntry>(&bytes).unwrap();
        assert_eq!(decoded[0].file().column_max_sequence_numbers, None);
    }

    #[test]
    fn test_read_manifest_entry_with_legacy_rust_schema() {
        let mut schema: serde_json::Value = serde_json::from_str(MANIFEST_ENTRY_SCHEMA).unwrap();
        let fields = schema.as_array_mut().unwrap()[1]
            .as_object_mut()
            .unwrap()
            .get_mut("fields")
            .unwrap()
            .as_array_mut()
            .unwrap();
        let file = fields
            .iter_mut()
            .find(|field| field.get("name").and_then(|name| name.as_str()) == Some("_FILE"))
            .unwrap()
            .as_object_mut()
            .unwrap();
        let file_type = file.remove("type").unwrap();
        file.insert("type".to_string(), serde_json::json!(["null", file_type]));
        file.insert("default".to_string(), serde_json::Value::Null);

        let version = fields.remove(0);
        fields.push(version);
        let legacy_schema = serde_json::to_string(&schema).unwrap();

        let original = vec![manifest_entry()];
        let bytes = to_avro_bytes(&legacy_schema, &original).unwrap();
        let decoded = from_avro_bytes_fast::<ManifestEntry>(&bytes).unwrap();
        assert_eq!(original, decoded);
    }

    #[tokio::test]
    async fn test_read_manifest_list() {
        let workdir =
            std::env::current_dir().unwrap_or_else(|err| panic!("current_dir must exist: {err}"));
        let path = workdir
            .join("tests/fixtures/manifest/manifest-list-5c7399a0-46ae-4a5e-9c13-3ab07212cdb6-0");
        let v = std::fs::read(path.to_str().unwrap()).unwrap();
        let res = from_avro_bytes::<ManifestFileMeta>(&v).unwrap();
        let value_bytes = vec![
            0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 49, 0, 0, 0, 0, 0, 0, 129,
        ];
        assert_eq!(
            res,
            vec![
                ManifestFileMeta::new(
                    "manifest-19d138df-233f-46f7-beb6-fadaf4741c0e".to_string(),
                    10,
                    10,
                    10,
                    BinaryTableStats::new(
                        value_bytes.clone(),
                        value_bytes.clone(),
                        vec![Some(1), Some(2)]
                    ),
                    1
                ),
                ManifestFileMeta::new(
                    "manifest-a703ee48-c411-413e-b84e-c03bdb179631".to_string(),
                    11,
                    0,
                    10,
                    BinaryTableStats::new(
                        value_bytes.clone(),
                        value_bytes.clone(),
                        vec![Some(1), Some(2)]
                    ),
                    2
                )
            ],
        );
    }

    #[tokio::test]
    async fn test_read_manifest_entry() {
        let workdir =
            std::env::current_dir().unwrap_or_else(|err| panic!("current_dir must exist: {err}"));
        let path =
            workdir.join("tests/fixtures/manifest/manifest-8ded1f09-fcda-489e-9167-582ac0f9f846-0");
        let v = std::fs::read(path.to_str().unwrap()).unwrap();
        let res = from_avro_bytes::<ManifestEntry>(&v).unwrap();
        let value_bytes = vec![
            0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 49, 0, 0, 0, 0, 0, 0, 129, 1, 0, 0, 0, 0, 0, 0, 0,
        ];
        let single_value = vec![0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0];
        assert_eq!(
            res,
            vec![
                ManifestEntry::new(
                    FileKind::Delete,
                    single_value.clone(),
                    1,
                    10,
                    DataFileMeta {
                        file_name: "f1.parquet".to_string(),

                        file_size: 10,
                        row_count: 100,
                        min_key: single_value.clone(),
                        max_key: single_value.clone(),
                        key_stats: BinaryTableStats::new(
                            value_bytes.clone(),
                            value_bytes.clone(),
                            vec![Some(1), Some(2)]
                        ),
                        value_stats: BinaryTableStats::new(
                            value_bytes.clone(),
                            value_bytes.clone(),
                            vec![Some(1), Some(2)]
                        ),
                        min_sequence_number: 1,
                        max_sequence_number: 100,
                        schema_id: 0,
                        level: 1,
                        extra_files: vec![],
                        creation_time: Some(
                            "2024-09-06T07:45:55.039+00:00"
                                .parse::<DateTime<Utc>>()
                                .unwrap()
                        ),
                        delete_row_count: Some(0),
                        embedded_index: None,
                        first_row_id: None,
                        write_cols: None,
                        external_path: None,
                        file_source: None,
                        value_stats_cols: None,
                        column_max_sequence_numbers: None,
                    },
                    2
                ),
                ManifestEntry::new(
                    FileKind::Add,
                    single_value.clone(),
                    2,
                    10,
                    DataFileMeta {
                        file_name: "f2.parquet".to_string(),
                        file_size: 10,
                        row_count: 100,
                        min_key: single_value.clone(),
                        max_key: single_value.clone(),
                        key_stats: BinaryTableStats::new(
                            value_bytes.clone(),
                            value_bytes.clone(),
                            vec![Some(1), Some(2)]
                        ),
                        value_stats: BinaryTableStats::new(
                            value_bytes.clone(),
                            value_bytes.clone(),
                            vec![Some(1), Some(2)]
                        ),
                        min_sequence_number: 1,
                        max_sequence_number: 100,
                        schema_id: 0,
                        level: 1,
                        extra_files: vec![],
                        creation_time: Some(
                            "2024-09-06T07:45:55.039+00:00"
                                .parse::<DateTime<Utc>>()
                                .unwrap()
                        ),
                        delete_row_count: Some(1),
                        embedded_index: None,
                        first_row_id: None,
                        write_cols: None,
                        external_path: None,
                        file_source: None,
                        value_stats_cols: None,
                        column_max_sequence_numbers: None,
                    },
                    2
                ),
            ]
        )
    }
}
