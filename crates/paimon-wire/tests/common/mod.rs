//! Generators of commit messages for the property tests: every field of the model, limited
//! to what a given serializer version can carry.

#![allow(dead_code)]

use indexmap::IndexMap;
use paimon_wire::paimon::spec::{DataFileMeta, DeletionVectorMeta, GlobalIndexMeta, IndexFileMeta};
use paimon_wire::{table_stats, CommitMessage, SerializerVersion};
use proptest::collection::vec;
use proptest::option;
use proptest::prelude::*;

/// What a version can carry, from the Java history of the format.
#[derive(Debug, Clone, Copy)]
pub struct Capabilities {
    pub total_buckets: bool,
    pub check_from_snapshot: bool,
    pub deleted_index_files: bool,
    pub index_files_per_increment: bool,
    pub file_source: bool,
    pub value_stats_cols: bool,
    pub external_path: bool,
    pub first_row_id: bool,
    pub write_cols: bool,
    pub column_max_sequence_numbers: bool,
    pub deletion_vector_cardinality: bool,
    pub index_external_path: bool,
    pub global_index: bool,
    pub global_index_source_meta: bool,
}

impl Capabilities {
    pub fn of(version: SerializerVersion) -> Self {
        let v = version.as_i32();
        Self {
            total_buckets: v >= 7,
            check_from_snapshot: v >= 14,
            deleted_index_files: v >= 3,
            index_files_per_increment: v >= 10,
            file_source: v >= 3,
            value_stats_cols: v >= 4,
            external_path: v >= 6,
            first_row_id: v >= 8,
            write_cols: v >= 9,
            column_max_sequence_numbers: v >= 13,
            deletion_vector_cardinality: v >= 5,
            index_external_path: v >= 9,
            global_index: v >= 11,
            global_index_source_meta: v >= 12,
        }
    }

    /// Everything the current version carries.
    pub fn all() -> Self {
        Self::of(SerializerVersion::CURRENT)
    }
}

/// Strings of 0 to 24 characters, some non-ASCII, so inline (<= 7 bytes) and var-length
/// strings both occur.
pub fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z0-9._-]{0,7}",
        "[a-zA-Z0-9._/-]{8,24}",
        "[a-zé€😀]{1,6}",
    ]
}

pub fn bytes() -> impl Strategy<Value = Vec<u8>> {
    vec(any::<u8>(), 0..24)
}

/// A serialized `BinaryRow` (big-endian arity, then a row with its fixed part and some
/// variable-length bytes) of arity 0 to 4.
pub fn serialized_row() -> impl Strategy<Value = Vec<u8>> {
    (0usize..5, 0usize..3).prop_flat_map(|(arity, var_words)| {
        let fixed = (arity + 71) / 64 * 8 + 8 * arity;
        vec(any::<u8>(), fixed + 8 * var_words).prop_map(move |mut row| {
            row[0] = 0; // row kind INSERT
            let mut out = (arity as i32).to_be_bytes().to_vec();
            out.append(&mut row);
            out
        })
    })
}

pub fn creation_time() -> impl Strategy<Value = Option<chrono::DateTime<chrono::Utc>>> {
    option::of(
        (-62_000_000_000_000i64..253_000_000_000_000)
            .prop_map(|ms| chrono::DateTime::from_timestamp_millis(ms).expect("in range")),
    )
}

fn gated<T: std::fmt::Debug + Clone + 'static>(
    allowed: bool,
    s: impl Strategy<Value = Option<T>> + 'static,
) -> BoxedStrategy<Option<T>> {
    if allowed {
        s.boxed()
    } else {
        Just(None).boxed()
    }
}

pub fn data_file(caps: Capabilities) -> impl Strategy<Value = DataFileMeta> {
    let core = (
        text(),
        any::<i64>(),
        any::<i64>(),
        serialized_row(),
        serialized_row(),
        (
            serialized_row(),
            serialized_row(),
            vec(option::of(any::<i64>()), 0..5),
        ),
        (
            serialized_row(),
            serialized_row(),
            vec(option::of(any::<i64>()), 0..5),
        ),
        (any::<i64>(), any::<i64>(), any::<i64>(), any::<i32>()),
        vec(text(), 0..4),
        creation_time(),
    );
    let optional = (
        option::of(any::<i64>()),
        option::of(bytes()),
        gated(caps.file_source, option::of(0i32..2)),
        gated(caps.value_stats_cols, option::of(vec(text(), 0..4))),
        gated(caps.external_path, option::of(text())),
        gated(caps.first_row_id, option::of(any::<i64>())),
        gated(caps.write_cols, option::of(vec(text(), 0..4))),
        gated(
            caps.column_max_sequence_numbers,
            option::of(vec(any::<i64>(), 0..4)),
        ),
    );
    (core, optional).prop_map(|(c, o)| DataFileMeta {
        file_name: c.0,
        file_size: c.1,
        row_count: c.2,
        min_key: c.3,
        max_key: c.4,
        key_stats: table_stats(c.5 .0, c.5 .1, c.5 .2),
        value_stats: table_stats(c.6 .0, c.6 .1, c.6 .2),
        min_sequence_number: c.7 .0,
        max_sequence_number: c.7 .1,
        schema_id: c.7 .2,
        level: c.7 .3,
        extra_files: c.8,
        creation_time: c.9,
        delete_row_count: o.0,
        embedded_index: o.1,
        file_source: o.2,
        value_stats_cols: o.3,
        external_path: o.4,
        first_row_id: o.5,
        write_cols: o.6,
        column_max_sequence_numbers: o.7,
    })
}

pub fn index_file(caps: Capabilities) -> impl Strategy<Value = IndexFileMeta> {
    let cardinality = gated(caps.deletion_vector_cardinality, option::of(any::<i64>()));
    let range = (text(), any::<i32>(), any::<i32>(), cardinality).prop_map(
        |(name, offset, length, cardinality)| {
            (
                name,
                DeletionVectorMeta {
                    offset,
                    length,
                    cardinality,
                },
            )
        },
    );
    let ranges =
        option::of(vec(range, 0..4).prop_map(|v| v.into_iter().collect::<IndexMap<_, _>>()));
    let source_meta = gated(caps.global_index_source_meta, option::of(bytes()));
    let global = (
        any::<i64>(),
        any::<i64>(),
        any::<i32>(),
        option::of(vec(any::<i32>(), 0..5)),
        option::of(bytes()),
        source_meta,
    )
        .prop_map(|g| GlobalIndexMeta {
            row_range_start: g.0,
            row_range_end: g.1,
            index_field_id: g.2,
            extra_field_ids: g.3,
            index_meta: g.4,
            source_meta: g.5,
        });
    (
        prop_oneof![
            Just("DELETION_VECTORS".to_string()),
            Just("HASH".to_string()),
            text()
        ],
        text(),
        any::<i64>(),
        any::<i64>(),
        ranges,
        gated(caps.index_external_path, option::of(text())),
        gated(caps.global_index, option::of(global)),
    )
        .prop_map(|f| IndexFileMeta {
            index_type: f.0,
            file_name: f.1,
            file_size: f.2,
            row_count: f.3,
            deletion_vectors_ranges: f.4,
            external_path: f.5,
            global_index_meta: f.6,
        })
}

/// A message holding only what `version` can carry.
pub fn message(version: SerializerVersion) -> impl Strategy<Value = CommitMessage> {
    let caps = Capabilities::of(version);
    let files = move || vec(data_file(caps), 0..3);
    let indexes = move || vec(index_file(caps), 0..3);
    let deleted_indexes = move || {
        if caps.deleted_index_files {
            vec(index_file(caps), 0..3).boxed()
        } else {
            Just(Vec::new()).boxed()
        }
    };
    (
        serialized_row(),
        any::<i32>(),
        gated(caps.total_buckets, option::of(any::<i32>())),
        gated(caps.check_from_snapshot, option::of(any::<i64>())),
        (files(), files(), files()),
        (files(), files(), files()),
        (indexes(), deleted_indexes(), indexes(), deleted_indexes()),
    )
        .prop_map(
            move |(partition, bucket, total_buckets, check, data, compact, idx)| {
                let mut m = CommitMessage::new(partition, bucket, data.0);
                m.total_buckets = total_buckets;
                m.check_from_snapshot = check;
                m.deleted_files = data.1;
                m.new_changelog_files = data.2;
                m.compact_before = compact.0;
                m.compact_after = compact.1;
                m.compact_changelog_files = compact.2;
                let compact_has_files = !(m.compact_before.is_empty()
                    && m.compact_after.is_empty()
                    && m.compact_changelog_files.is_empty());
                if caps.index_files_per_increment {
                    m.new_index_files = idx.0;
                    m.deleted_index_files = idx.1;
                    m.compact_new_index_files = idx.2;
                    m.compact_deleted_index_files = idx.3;
                } else if compact_has_files {
                    // Before version 10, one pair of index lists belongs to the compact
                    // increment when it has files.
                    m.compact_new_index_files = idx.0;
                    m.compact_deleted_index_files = idx.1;
                } else {
                    m.new_index_files = idx.0;
                    m.deleted_index_files = idx.1;
                }
                m
            },
        )
}

/// Messages as comparable JSON (every field of the model).
pub fn dump(messages: &[CommitMessage]) -> serde_json::Value {
    paimon_wire::dump::messages_to_json(messages)
}

/// A data file with every field set, fixed values (for tests that poke at known offsets).
pub fn fixed_data_file(name: &str) -> DataFileMeta {
    let empty_row = vec![0u8; 12];
    DataFileMeta {
        file_name: name.to_string(),
        file_size: 1024,
        row_count: 10,
        min_key: empty_row.clone(),
        max_key: empty_row.clone(),
        key_stats: table_stats(empty_row.clone(), empty_row.clone(), vec![]),
        value_stats: table_stats(empty_row.clone(), empty_row, vec![Some(0), None]),
        min_sequence_number: 0,
        max_sequence_number: 9,
        schema_id: 0,
        level: 0,
        extra_files: vec![],
        creation_time: chrono::DateTime::from_timestamp_millis(1_700_000_000_000),
        delete_row_count: Some(0),
        embedded_index: None,
        file_source: Some(0),
        value_stats_cols: None,
        external_path: None,
        first_row_id: None,
        write_cols: None,
        column_max_sequence_numbers: None,
    }
}

/// Every payload written by a real Paimon release (`fixtures/java/<release>/*-v<V>.bin`), with
/// the serializer version its name gives, sorted by path.
pub fn java_fixtures() -> Vec<(std::path::PathBuf, SerializerVersion)> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/java");
    let mut found = Vec::new();
    for release in std::fs::read_dir(&root).expect("fixtures/java exists") {
        let release = release.unwrap().path();
        if !release.is_dir() {
            continue;
        }
        for file in std::fs::read_dir(&release).unwrap() {
            let path = file.unwrap().path();
            if path.extension().is_some_and(|e| e == "bin") {
                let stem = path.file_stem().unwrap().to_str().unwrap();
                let version: i32 = stem.rsplit("-v").next().unwrap().parse().unwrap();
                found.push((path, SerializerVersion::try_from(version).unwrap()));
            }
        }
    }
    found.sort();
    found
}
