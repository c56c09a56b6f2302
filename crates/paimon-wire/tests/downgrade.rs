//! Writing an older version never drops data silently: each field the target version
//! cannot carry is refused by name, unless the caller names it as droppable.

mod common;

use indexmap::IndexMap;
use paimon_wire::paimon::spec::{DeletionVectorMeta, GlobalIndexMeta, IndexFileMeta};
use paimon_wire::{
    deserialize_list, serialize_list, serialize_list_with, CodecErrorKind, CommitMessage,
    EncodeOptions, LossyField, SerializerVersion,
};

fn index_file() -> IndexFileMeta {
    IndexFileMeta {
        index_type: "DELETION_VECTORS".into(),
        file_name: "index-0".into(),
        file_size: 10,
        row_count: 1,
        deletion_vectors_ranges: Some(IndexMap::from([(
            "data-0.parquet".to_string(),
            DeletionVectorMeta {
                offset: 1,
                length: 2,
                cardinality: None,
            },
        )])),
        external_path: None,
        global_index_meta: None,
    }
}

/// A message that every writable version can carry.
fn message() -> CommitMessage {
    let mut file = common::fixed_data_file("data-0.parquet");
    file.file_source = None;
    CommitMessage::new(vec![0; 12], 0, vec![file])
}

/// One field the model can hold: its name, its path in errors, how to set it, the first
/// version that carries it and the last one before that.
struct Case {
    field: LossyField,
    path: &'static str,
    set: Box<dyn Fn(&mut CommitMessage)>,
    carries: SerializerVersion,
    lacks: SerializerVersion,
}

fn case(
    field: LossyField,
    path: &'static str,
    set: impl Fn(&mut CommitMessage) + 'static,
    carries: SerializerVersion,
    lacks: SerializerVersion,
) -> Case {
    Case {
        field,
        path,
        set: Box::new(set),
        carries,
        lacks,
    }
}

fn cases() -> Vec<Case> {
    use SerializerVersion::*;
    vec![
        case(
            LossyField::CheckFromSnapshot,
            "check_from_snapshot",
            |m: &mut CommitMessage| m.check_from_snapshot = Some(5),
            V14,
            V13,
        ),
        case(
            LossyField::TotalBuckets,
            "total_buckets",
            |m: &mut CommitMessage| m.total_buckets = Some(4),
            V7,
            V6,
        ),
        case(
            LossyField::FileSource,
            "new_files[0].file_source",
            |m: &mut CommitMessage| m.new_files[0].file_source = Some(1),
            V3,
            V2,
        ),
        case(
            LossyField::ValueStatsCols,
            "new_files[0].value_stats_cols",
            |m: &mut CommitMessage| m.new_files[0].value_stats_cols = Some(vec!["a".into()]),
            V6,
            V3,
        ),
        case(
            LossyField::ExternalPath,
            "new_files[0].external_path",
            |m: &mut CommitMessage| m.new_files[0].external_path = Some("s3://b/x".into()),
            V6,
            V3,
        ),
        case(
            LossyField::FirstRowId,
            "new_files[0].first_row_id",
            |m: &mut CommitMessage| m.new_files[0].first_row_id = Some(1),
            V10,
            V7,
        ),
        case(
            LossyField::WriteCols,
            "new_files[0].write_cols",
            |m: &mut CommitMessage| m.new_files[0].write_cols = Some(vec!["a".into()]),
            V10,
            V7,
        ),
        case(
            LossyField::ColumnMaxSequenceNumbers,
            "new_files[0].column_max_sequence_numbers",
            |m: &mut CommitMessage| m.new_files[0].column_max_sequence_numbers = Some(vec![1]),
            V13,
            V12,
        ),
        case(
            LossyField::DeletionVectorCardinality,
            "new_index_files[0].deletion_vectors_ranges.cardinality",
            |m: &mut CommitMessage| {
                let mut f = index_file();
                f.deletion_vectors_ranges.as_mut().unwrap()[0].cardinality = Some(3);
                m.new_index_files = vec![f];
            },
            V6,
            V3,
        ),
        case(
            LossyField::IndexExternalPath,
            "new_index_files[0].external_path",
            |m: &mut CommitMessage| {
                let mut f = index_file();
                f.external_path = Some("s3://b/i".into());
                m.new_index_files = vec![f];
            },
            V10,
            V7,
        ),
        case(
            LossyField::GlobalIndexMeta,
            "new_index_files[0].global_index_meta",
            |m: &mut CommitMessage| {
                let mut f = index_file();
                f.global_index_meta = Some(GlobalIndexMeta {
                    row_range_start: 0,
                    row_range_end: 9,
                    index_field_id: 1,
                    extra_field_ids: None,
                    index_meta: None,
                    source_meta: None,
                });
                m.new_index_files = vec![f];
            },
            V11,
            V10,
        ),
        case(
            LossyField::GlobalIndexSourceMeta,
            "new_index_files[0].global_index_meta.source_meta",
            |m: &mut CommitMessage| {
                let mut f = index_file();
                f.global_index_meta = Some(GlobalIndexMeta {
                    row_range_start: 0,
                    row_range_end: 9,
                    index_field_id: 1,
                    extra_field_ids: None,
                    index_meta: None,
                    source_meta: Some(vec![1]),
                });
                m.new_index_files = vec![f];
            },
            V12,
            V11,
        ),
    ]
}

#[test]
fn each_field_is_refused_by_name_where_it_does_not_fit() {
    for Case {
        field,
        path,
        set,
        carries,
        lacks,
    } in cases()
    {
        let mut m = message();
        set(&mut m);
        serialize_list(std::slice::from_ref(&m), carries)
            .unwrap_or_else(|e| panic!("{field} fits version {carries}: {e}"));
        let err = serialize_list(std::slice::from_ref(&m), lacks).unwrap_err();
        assert!(
            matches!(err.kind(), CodecErrorKind::Unrepresentable { .. }),
            "{field}: {err}"
        );
        assert_eq!(err.field_path(), format!("messages[0].{path}"), "{field}");
        assert_eq!(err.version(), Some(lacks.as_i32()));
        assert!(err.to_string().contains(field.name()), "{err}");
    }
}

#[test]
fn a_named_field_is_dropped_and_nothing_else() {
    for Case {
        field, set, lacks, ..
    } in cases()
    {
        let mut m = message();
        set(&mut m);
        let options = EncodeOptions::default().allow_dropping(field);
        let bytes = serialize_list_with(std::slice::from_ref(&m), lacks, &options)
            .unwrap_or_else(|e| panic!("{field} may be dropped: {e}"));
        let back = deserialize_list(lacks, &bytes).unwrap();
        // What came back equals the plain message: the field is gone, the rest intact.
        let mut plain = message();
        if field == LossyField::GlobalIndexSourceMeta {
            set(&mut plain);
            plain.new_index_files[0]
                .global_index_meta
                .as_mut()
                .unwrap()
                .source_meta = None;
        } else if matches!(
            field,
            LossyField::DeletionVectorCardinality
                | LossyField::IndexExternalPath
                | LossyField::GlobalIndexMeta
        ) {
            plain.new_index_files = vec![index_file()];
        }
        assert_eq!(common::dump(&back), common::dump(&[plain]), "{field}");
    }
}

#[test]
fn pre_v10_index_files_must_sit_where_java_reads_them() {
    // Before version 10, index files belong to the compact increment when it has files.
    let mut m = message();
    m.compact_after = vec![common::fixed_data_file("compacted")];
    m.new_index_files = vec![index_file()];
    let err = serialize_list(&[m.clone()], SerializerVersion::V7).unwrap_err();
    assert_eq!(err.field_path(), "messages[0].new_index_files");
    assert!(err.to_string().contains("compact increment"), "{err}");

    m.compact_new_index_files = std::mem::take(&mut m.new_index_files);
    let bytes = serialize_list(&[m.clone()], SerializerVersion::V7).unwrap();
    let back = deserialize_list(SerializerVersion::V7, &bytes).unwrap();
    assert_eq!(common::dump(&back), common::dump(&[m]));
}

#[test]
fn version_2_has_no_deleted_index_files() {
    let mut m = message();
    m.deleted_index_files = vec![index_file()];
    let err = serialize_list(&[m], SerializerVersion::V2).unwrap_err();
    assert_eq!(err.field_path(), "messages[0].deleted_index_files");
}

#[test]
fn development_versions_are_not_written() {
    for v in [1, 4, 5, 8, 9] {
        let version = SerializerVersion::try_from(v).unwrap();
        let err = serialize_list(&[message()], version).unwrap_err();
        assert_eq!(
            err.kind(),
            &CodecErrorKind::VersionNotWritable { version: v }
        );
        assert!(
            err.to_string().contains("2, 3, 6, 7, 10, 11, 12, 13, 14"),
            "{err}"
        );
    }
}
