use paimon_wire::paimon::spec::{DataFileMeta, DeletionVectorMeta, GlobalIndexMeta, IndexFileMeta};
use paimon_wire::*;

fn row(arity: i32, fill: u8, extra: usize) -> Vec<u8> {
    let mut v = arity.to_be_bytes().to_vec();
    let fixed = ((arity as usize + 71) / 64) * 8 + 8 * arity as usize;
    v.extend(std::iter::repeat(fill).take(fixed + extra));
    v
}

fn file(name: &str) -> DataFileMeta {
    DataFileMeta {
        file_name: name.into(),
        file_size: 10,
        row_count: 3,
        min_key: row(1, 0, 0),
        max_key: row(2, 1, 8),
        key_stats: table_stats(row(1, 0, 0), row(1, 0, 0), vec![Some(1), None]),
        value_stats: table_stats(row(3, 0, 0), row(3, 2, 16), vec![]),
        min_sequence_number: 1,
        max_sequence_number: 9,
        schema_id: 0,
        level: 2,
        extra_files: vec!["x".into(), "a much longer extra file".into()],
        creation_time: chrono::DateTime::from_timestamp_millis(1_700_000_000_123),
        delete_row_count: Some(1),
        embedded_index: Some(vec![1, 2, 3, 4, 5, 6, 7, 8, 9]),
        file_source: Some(1),
        value_stats_cols: Some(vec!["c".into()]),
        external_path: Some("file:/tmp/ext/x".into()),
        first_row_id: Some(5),
        write_cols: None,
        column_max_sequence_numbers: Some(vec![3, 4]),
    }
}

#[test]
fn matches_paimon_crate_v14() {
    let mut m = CommitMessage::new(row(2, 0, 8), 3, vec![file("data-1.parquet"), file("d")]);
    m.total_buckets = Some(4);
    m.check_from_snapshot = Some(7);
    let mut ranges = indexmap::IndexMap::new();
    ranges.insert(
        "data-1.parquet".to_string(),
        DeletionVectorMeta {
            offset: 1,
            length: 2,
            cardinality: Some(3),
        },
    );
    m.compact_new_index_files = vec![IndexFileMeta {
        index_type: "DELETION_VECTORS".into(),
        file_name: "index-1".into(),
        file_size: 5,
        row_count: 1,
        deletion_vectors_ranges: Some(ranges),
        external_path: None,
        global_index_meta: Some(GlobalIndexMeta {
            row_range_start: 0,
            row_range_end: 10,
            index_field_id: 1,
            extra_field_ids: Some(vec![1, 2, 3]),
            index_meta: None,
            source_meta: Some(vec![9]),
        }),
    }];
    m.compact_after = vec![file("c")];
    let ours = serialize_message(&m, SerializerVersion::V14).unwrap();
    let theirs = m.serialize().unwrap();
    assert_eq!(ours, theirs);
    let back = deserialize_message(SerializerVersion::V14, &ours).unwrap();
    assert_eq!(format!("{back:?}"), format!("{m:?}"));
    let list = serialize_list(&[m.clone(), m.clone()], SerializerVersion::V14).unwrap();
    assert_eq!(
        deserialize_list(SerializerVersion::V14, &list)
            .unwrap()
            .len(),
        2
    );
    let err = serialize_list(&[m], SerializerVersion::V3).unwrap_err();
    println!("{err}");
}
