//! Every validation rule, broken by a crafted payload: a valid message from a real worker,
//! one field mutated, serialized again. Each must be rejected naming the rule, the message
//! and the field, before anything is committed.

use indexmap::IndexMap;
use paimon::spec::{
    BinaryRow, DataType, Datum, DeletionVectorMeta, IndexFileMeta, IntType, VarCharType,
};
use paimon::table::CommitMessage;
use paimon_wire::coordinator::{Binding, CommitOutcome, Rule};
use paimon_wire::{serialize_list, SerializerVersion};

use super::support::{
    append_coordinator, bind, expected, read_rows, snapshot_count, worker_messages, Kind,
    Warehouse, USER,
};

const V: SerializerVersion = SerializerVersion::CURRENT;

type Mutation = Box<dyn Fn(&mut CommitMessage)>;

/// A case: name, rule, field path, a fragment of the reason, the mutation.
type Case = (&'static str, Rule, &'static str, &'static str, Mutation);

fn index_file(index_type: &str, file_name: &str) -> IndexFileMeta {
    IndexFileMeta {
        index_type: index_type.into(),
        file_name: file_name.into(),
        file_size: 10,
        row_count: 1,
        deletion_vectors_ranges: None,
        external_path: None,
        global_index_meta: None,
    }
}

fn dv_index_file(data_file: &str, offset: i32) -> IndexFileMeta {
    let mut ranges = IndexMap::new();
    ranges.insert(
        data_file.to_string(),
        DeletionVectorMeta {
            offset,
            length: 4,
            cardinality: Some(1),
        },
    );
    IndexFileMeta {
        deletion_vectors_ranges: Some(ranges),
        ..index_file("DELETION_VECTORS", "index-dv-1")
    }
}

fn string_partition(value: &str) -> Vec<u8> {
    let string = DataType::VarChar(VarCharType::string_type());
    BinaryRow::from_datums(&[(Some(&Datum::String(value.into())), &string)]).to_serialized_bytes()
}

/// `"a"` stored in the variable-length part instead of inline: decodes to the same value,
/// but is not the bytes Paimon would write for it.
fn non_canonical_partition() -> Vec<u8> {
    let mut row = 1i32.to_be_bytes().to_vec();
    row.extend([0u8; 8]); // header + null bits
    row.extend(((16u64 << 32) | 1).to_le_bytes()); // offset 16, length 1
    row.extend(b"a\0\0\0\0\0\0\0");
    row
}

/// A string field whose offset points far outside the row.
fn out_of_range_partition() -> Vec<u8> {
    let mut row = 1i32.to_be_bytes().to_vec();
    row.extend([0u8; 8]);
    row.extend(((4096u64 << 32) | 5).to_le_bytes());
    row
}

fn rejection_cases() -> Vec<Case> {
    let string = DataType::VarChar(VarCharType::string_type());
    let int = DataType::Int(IntType::new());
    let two_fields = BinaryRow::from_datums(&[
        (Some(&Datum::String("a".into())), &string),
        (Some(&Datum::Int(1)), &int),
    ])
    .to_serialized_bytes();
    vec![
        (
            "partition arity",
            Rule::Partition,
            "partition",
            "2 field(s)",
            { Box::new(move |m| m.partition = two_fields.clone()) },
        ),
        (
            "partition empty on a partitioned table",
            Rule::Partition,
            "partition",
            "partition row has 0 field(s)",
            { Box::new(|m| m.partition = Vec::new()) },
        ),
        (
            "partition does not decode as STRING",
            Rule::Partition,
            "partition",
            "does not decode",
            { Box::new(|m| m.partition = out_of_range_partition()) },
        ),
        (
            "partition not canonical",
            Rule::Partition,
            "partition",
            "canonical",
            { Box::new(|m| m.partition = non_canonical_partition()) },
        ),
        (
            "bucket past the bucket count",
            Rule::Bucket,
            "bucket",
            "takes buckets 0..1",
            { Box::new(|m| m.bucket = 2) },
        ),
        (
            "bucket negative",
            Rule::Bucket,
            "bucket",
            "takes buckets 0..1",
            Box::new(|m| m.bucket = -1),
        ),
        (
            "total_buckets disagrees",
            Rule::TotalBuckets,
            "total_buckets",
            "has bucket = 2",
            { Box::new(|m| m.total_buckets = Some(3)) },
        ),
        (
            "file name with ..",
            Rule::PlainFileName,
            "new_files[0].file_name",
            "contains '/'",
            { Box::new(|m| m.new_files[0].file_name = "../../escape.parquet".into()) },
        ),
        (
            "file name with /",
            Rule::PlainFileName,
            "new_files[0].file_name",
            "contains '/'",
            { Box::new(|m| m.new_files[0].file_name = "sub/dir.parquet".into()) },
        ),
        (
            "file name with \\",
            Rule::PlainFileName,
            "new_files[0].file_name",
            "contains '\\'",
            { Box::new(|m| m.new_files[0].file_name = "a\\b.parquet".into()) },
        ),
        (
            "file name with NUL",
            Rule::PlainFileName,
            "new_files[0].file_name",
            "NUL",
            { Box::new(|m| m.new_files[0].file_name = "a\0b".into()) },
        ),
        (
            "file name empty",
            Rule::PlainFileName,
            "new_files[0].file_name",
            "is empty",
            { Box::new(|m| m.new_files[0].file_name = String::new()) },
        ),
        (
            "file name ..",
            Rule::PlainFileName,
            "new_files[0].file_name",
            "is '.' or '..'",
            { Box::new(|m| m.new_files[0].file_name = "..".into()) },
        ),
        (
            "extra file name",
            Rule::PlainFileName,
            "new_files[0].extra_files[0]",
            "contains '/'",
            { Box::new(|m| m.new_files[0].extra_files = vec!["/etc/passwd".into()]) },
        ),
        (
            "changelog file name",
            Rule::PlainFileName,
            "new_changelog_files[0].file_name",
            "contains '/'",
            Box::new(|m| {
                let mut file = m.new_files[0].clone();
                file.file_name = "../changelog".into();
                m.new_changelog_files = vec![file];
            }),
        ),
        (
            "external path on a table without external roots",
            Rule::ExternalPath,
            "new_files[0].external_path",
            "configures no external paths",
            Box::new(|m| {
                let name = m.new_files[0].file_name.clone();
                m.new_files[0].external_path = Some(format!("file:///tmp/{name}"));
            }),
        ),
        (
            "unknown schema id",
            Rule::SchemaId,
            "new_files[0].schema_id",
            "schema 7 is not in the schema history",
            { Box::new(|m| m.new_files[0].schema_id = 7) },
        ),
        (
            "negative file size",
            Rule::NonNegative,
            "new_files[0].file_size",
            "-1 is negative",
            { Box::new(|m| m.new_files[0].file_size = -1) },
        ),
        (
            "negative row count",
            Rule::NonNegative,
            "new_files[0].row_count",
            "-5 is negative",
            { Box::new(|m| m.new_files[0].row_count = -5) },
        ),
        (
            "negative level",
            Rule::NonNegative,
            "new_files[0].level",
            "-1 is negative",
            { Box::new(|m| m.new_files[0].level = -1) },
        ),
        (
            "more deleted rows than rows",
            Rule::NonNegative,
            "new_files[0].delete_row_count",
            "deleted rows in a file of",
            Box::new(|m| m.new_files[0].delete_row_count = Some(m.new_files[0].row_count + 1)),
        ),
        (
            "negative first row id",
            Rule::NonNegative,
            "new_files[0].first_row_id",
            "-1 is negative",
            Box::new(|m| m.new_files[0].first_row_id = Some(-1)),
        ),
        (
            "unknown index type",
            Rule::IndexType,
            "new_index_files[0].index_type",
            "not an index type",
            Box::new(|m| m.new_index_files = vec![index_file("BLOOM_FILTER", "index-1")]),
        ),
        (
            "index file name",
            Rule::PlainFileName,
            "new_index_files[0].file_name",
            "contains '/'",
            Box::new(|m| m.new_index_files = vec![index_file("HASH", "../index-1")]),
        ),
        (
            "deleted index file name",
            Rule::PlainFileName,
            "deleted_index_files[0].file_name",
            "contains '/'",
            Box::new(|m| m.deleted_index_files = vec![index_file("HASH", "a/index")]),
        ),
        (
            "negative index file size",
            Rule::NonNegative,
            "new_index_files[0].file_size",
            "-1 is negative",
            Box::new(|m| {
                m.new_index_files = vec![IndexFileMeta {
                    file_size: -1,
                    ..index_file("HASH", "index-1")
                }]
            }),
        ),
        (
            "deletion vector names a path",
            Rule::PlainFileName,
            "new_index_files[0].deletion_vectors_ranges[\"../data.parquet\"]",
            "contains '/'",
            Box::new(|m| m.new_index_files = vec![dv_index_file("../data.parquet", 0)]),
        ),
        (
            "deletion vector negative offset",
            Rule::NonNegative,
            "new_index_files[0].deletion_vectors_ranges[\"data.parquet\"].offset",
            "-8 is negative",
            Box::new(|m| m.new_index_files = vec![dv_index_file("data.parquet", -8)]),
        ),
        (
            "index external path without roots",
            Rule::ExternalPath,
            "new_index_files[0].external_path",
            "configures no external paths",
            Box::new(|m| {
                m.new_index_files = vec![IndexFileMeta {
                    external_path: Some("file:///tmp/index-1".into()),
                    ..index_file("HASH", "index-1")
                }]
            }),
        ),
        (
            "negative check-from snapshot",
            Rule::NonNegative,
            "check_from_snapshot",
            "-3 is negative",
            Box::new(|m| m.check_from_snapshot = Some(-3)),
        ),
        (
            "compaction result at level 0 of a primary-key table",
            Rule::CompactLevels,
            "compact_after[0].level",
            "level 1 or above",
            {
                Box::new(|m| {
                    let mut input = m.new_files[0].clone();
                    input.file_name = "data-input.parquet".into();
                    m.compact_before = vec![input];
                    m.compact_after = vec![m.new_files[0].clone()];
                })
            },
        ),
        (
            "in-place upgrade to a lower level",
            Rule::CompactLevels,
            "compact_after[0].level",
            "from level 3 to level 2",
            {
                Box::new(|m| {
                    let mut file = m.new_files[0].clone();
                    file.level = 3;
                    m.compact_before = vec![file.clone()];
                    file.level = 2;
                    m.compact_after = vec![file];
                })
            },
        ),
        (
            "compaction file with a path in its name",
            Rule::PlainFileName,
            "compact_before[0].file_name",
            "",
            {
                Box::new(|m| {
                    let mut file = m.new_files[0].clone();
                    file.file_name = "../escape.parquet".into();
                    m.compact_before = vec![file];
                })
            },
        ),
    ]
}

#[tokio::test]
async fn every_rule_rejects_its_crafted_payload_and_nothing_is_committed() {
    let warehouse = Warehouse::new();
    let table = warehouse.create("users", Kind::FixedBucketPk).await;
    let rows: &[(i32, &str)] = &[(1, "a"), (2, "a"), (3, "a"), (4, "a")];
    let valid = worker_messages(&table, rows).await;
    assert!(!valid.is_empty());
    // Compaction allowed, so the compaction rules themselves are reached.
    let coordinator = bind(&table, Binding::append(USER).with_compaction()).await;

    for (case, rule, field, reason, mutate) in rejection_cases() {
        // Break the last message, so the index in the error is not trivially 0.
        let mut crafted = valid.clone();
        let target = crafted.len() - 1;
        mutate(&mut crafted[target]);
        let payload = serialize_list(&crafted, V)
            .unwrap_or_else(|e| panic!("{case}: cannot serialize the crafted payload: {e}"));
        let error = match coordinator.deserialize(V, &payload) {
            Ok(_) => panic!("{case}: accepted"),
            Err(error) => error,
        };
        let rejection = error
            .as_validation()
            .unwrap_or_else(|| panic!("{case}: not a validation error: {error}"));
        assert_eq!(rejection.rule, rule, "{case}: {error}");
        assert_eq!(rejection.field, field, "{case}: {error}");
        assert_eq!(rejection.message_index, target, "{case}: {error}");
        assert!(rejection.reason.contains(reason), "{case}: {error}");
        let text = error.to_string();
        assert!(text.contains(rule.name()), "{case}: {text}");
        assert!(
            text.contains(&format!("message {target}")),
            "{case}: {text}"
        );
        assert!(text.contains("nothing was committed"), "{case}: {text}");
        // The bytes were validated on views; the same messages decoded into owned values
        // are validated by the same rules, with the same error.
        let decoded = paimon_wire::deserialize_list(V, &payload).unwrap();
        let owned = coordinator.bind_messages(decoded).unwrap_err();
        assert_eq!(owned.to_string(), text, "{case}");
    }
    assert_eq!(snapshot_count(&table).await, 0);

    // Valid variations pass: Java writers send total_buckets = the table's bucket count,
    // and known index types with plain names are accepted.
    let mut java_style = valid.clone();
    for message in &mut java_style {
        message.total_buckets = Some(2);
    }
    let bound = coordinator
        .deserialize(V, &serialize_list(&java_style, V).unwrap())
        .unwrap();
    assert!(bound.messages().iter().all(|m| m.total_buckets.is_none()));
    // A deletion-vector file deletes rows: only a binding that opts in takes it.
    let mut with_index = valid.clone();
    with_index[0].new_index_files = vec![index_file("HASH", "index-1"), dv_index_file("d", 0)];
    let with_index = serialize_list(&with_index, V).unwrap();
    let error = coordinator.deserialize(V, &with_index).unwrap_err();
    assert_eq!(
        error.as_validation().unwrap().rule,
        Rule::ChangeKind,
        "{error}"
    );
    bind(&table, Binding::append(USER).with_deletes())
        .await
        .deserialize(V, &with_index)
        .unwrap();

    // The default binding refuses compaction, naming the rule and the opt-in; a binding
    // that opted in takes it.
    let mut compacting = valid.clone();
    let target = compacting.len() - 1;
    compacting[target].compact_before = vec![compacting[target].new_files[0].clone()];
    let compacting = serialize_list(&compacting, V).unwrap();
    let error = append_coordinator(&table)
        .await
        .deserialize(V, &compacting)
        .unwrap_err();
    let rejection = error.as_validation().unwrap();
    assert_eq!(rejection.rule, Rule::CompactIncrement, "{error}");
    assert_eq!(rejection.field, "compact_before", "{error}");
    assert!(error.to_string().contains("--allow-compaction"), "{error}");
    coordinator.deserialize(V, &compacting).unwrap();

    // The untouched payload still commits.
    let bound = coordinator
        .deserialize(V, &serialize_list(&valid, V).unwrap())
        .unwrap();
    assert_eq!(
        coordinator.commit(bound, 1).await.unwrap(),
        CommitOutcome::Committed { snapshot_id: 1 }
    );
    assert_eq!(read_rows(&table).await, expected(rows));
}

#[tokio::test]
async fn bucket_unaware_append_tables_take_bucket_zero_only() {
    let warehouse = Warehouse::new();
    let table = warehouse.create("events", Kind::PartitionedAppend).await;
    let valid = worker_messages(&table, &[(1, "a")]).await;
    assert_eq!(valid[0].bucket, 0);
    let coordinator = append_coordinator(&table).await;
    for (bucket, total_buckets, rule) in [
        (1, None, Some(Rule::Bucket)),
        (-2, None, Some(Rule::Bucket)),
        (0, Some(4), Some(Rule::TotalBuckets)),
        (0, Some(-1), None),
    ] {
        let mut crafted = valid.clone();
        crafted[0].bucket = bucket;
        crafted[0].total_buckets = total_buckets;
        let result = coordinator.deserialize(V, &serialize_list(&crafted, V).unwrap());
        match (rule, result) {
            (None, Ok(_)) => {}
            (Some(rule), Err(error)) => {
                assert_eq!(error.as_validation().map(|v| v.rule), Some(rule), "{error}")
            }
            (rule, result) => panic!("bucket {bucket} {total_buckets:?}: {rule:?} vs {result:?}"),
        }
    }
    // A partition key holding a value of the wrong width is caught too: a 2-field row.
    let string = DataType::VarChar(VarCharType::string_type());
    let mut crafted = valid.clone();
    crafted[0].partition = BinaryRow::from_datums(&[
        (Some(&Datum::String("a".into())), &string),
        (Some(&Datum::String("b".into())), &string),
    ])
    .to_serialized_bytes();
    let error = coordinator
        .deserialize(V, &serialize_list(&crafted, V).unwrap())
        .unwrap_err();
    assert!(
        error.to_string().contains("1 partition key(s) (pt)"),
        "{error}"
    );
    // And the partition bytes a worker wrote are exactly the canonical ones.
    assert_eq!(valid[0].partition, string_partition("a"));
    assert_eq!(snapshot_count(&table).await, 0);
}

#[tokio::test]
async fn dynamic_bucket_tables_take_any_bucket_from_zero_and_their_hash_indexes() {
    let warehouse = Warehouse::new();
    let table = warehouse.create("dynamic", Kind::DynamicBucketPk).await;
    let rows: &[(i32, &str)] = &[(1, "a"), (2, "a"), (3, "b")];
    let valid = worker_messages(&table, rows).await;
    let index_types: Vec<&str> = valid
        .iter()
        .flat_map(|m| m.new_index_files.iter().map(|f| f.index_type.as_str()))
        .collect();
    assert!(index_types.contains(&"HASH"), "{index_types:?}");
    let coordinator = append_coordinator(&table).await;
    assert_eq!(
        coordinator.bucket_mode(),
        paimon_wire::coordinator::BucketMode::Dynamic
    );

    let mut far_bucket = valid.clone();
    far_bucket[0].bucket = 1_000;
    coordinator
        .deserialize(V, &serialize_list(&far_bucket, V).unwrap())
        .unwrap();
    let mut negative = valid.clone();
    negative[0].bucket = -1;
    let error = coordinator
        .deserialize(V, &serialize_list(&negative, V).unwrap())
        .unwrap_err();
    assert_eq!(error.as_validation().map(|v| v.rule), Some(Rule::Bucket));
    assert!(error.to_string().contains("0..32767"), "{error}");

    let bound = coordinator
        .deserialize(V, &serialize_list(&valid, V).unwrap())
        .unwrap();
    assert_eq!(
        coordinator.commit(bound, 1).await.unwrap(),
        CommitOutcome::Committed { snapshot_id: 1 }
    );
    assert_eq!(read_rows(&table).await, expected(rows));
}

#[tokio::test]
async fn real_messages_pass_validation_at_every_version_that_can_carry_them() {
    let warehouse = Warehouse::new();
    let table = warehouse.create("users", Kind::FixedBucketPk).await;
    let valid = worker_messages(&table, &[(1, "a"), (2, "b")]).await;
    let coordinator = append_coordinator(&table).await;
    let mut accepted = Vec::new();
    for version in SerializerVersion::WRITABLE {
        // Older versions refuse fields they cannot carry; those are the codec's business.
        let Ok(payload) = serialize_list(&valid, version) else {
            continue;
        };
        let bound = coordinator
            .deserialize(version, &payload)
            .unwrap_or_else(|e| panic!("version {}: {e}", version.as_i32()));
        assert_eq!(bound.data_file_count(), 2, "version {}", version.as_i32());
        accepted.push(version.as_i32());
    }
    assert!(accepted.contains(&SerializerVersion::CURRENT.as_i32()));
    assert!(
        accepted.len() > 1,
        "only {accepted:?} could carry the messages"
    );
}

#[tokio::test]
async fn a_null_partition_value_from_a_real_writer_is_canonical() {
    use arrow_array::{ArrayRef, Int32Array, RecordBatch, StringArray};
    use std::sync::Arc;

    let warehouse = Warehouse::new();
    let table = warehouse.create("events", Kind::PartitionedAppend).await;
    let batch = RecordBatch::try_from_iter([
        ("id", Arc::new(Int32Array::from(vec![1, 2])) as ArrayRef),
        (
            "pt",
            Arc::new(StringArray::from(vec![
                None,
                Some("a long partition value"),
            ])) as ArrayRef,
        ),
        (
            "v",
            Arc::new(StringArray::from(vec!["v1", "v2"])) as ArrayRef,
        ),
    ])
    .unwrap();
    let builder = table
        .new_write_builder()
        .with_commit_user(super::support::USER)
        .unwrap();
    let mut write = builder.new_write().unwrap();
    write.write_arrow_batch(&batch).await.unwrap();
    let messages = write.prepare_commit().await.unwrap();
    assert_eq!(messages.len(), 2);
    let coordinator = append_coordinator(&table).await;
    let bound = coordinator
        .deserialize(V, &serialize_list(&messages, V).unwrap())
        .unwrap();
    assert_eq!(
        coordinator.commit(bound, 1).await.unwrap(),
        CommitOutcome::Committed { snapshot_id: 1 }
    );
}

/// Java reads an index file's deletion-vector ranges into a map: a data file named twice
/// keeps its last range. Validation on views must judge that map, not every entry of the
/// list, exactly as validation of the decoded owned values does.
#[tokio::test]
async fn a_repeated_deletion_vector_range_is_judged_by_its_last_value_as_java_reads_it() {
    let warehouse = Warehouse::new();
    let table = warehouse.create("users", Kind::FixedBucketPk).await;
    let valid = worker_messages(&table, &[(1, "a")]).await;
    let coordinator = bind(&table, Binding::append(USER).with_deletes()).await;
    // Two ranges, one out of the index file's 10 bytes, the other inside; then the second
    // name is rewritten into the first in the bytes (same length), so the list names one
    // data file twice, which no owned value can hold.
    let payload = |first_offset: i32, second_offset: i32| {
        let mut ranges = IndexMap::new();
        for (name, offset) in [("dvfile-a", first_offset), ("dvfile-b", second_offset)] {
            let range = DeletionVectorMeta {
                offset,
                length: 4,
                cardinality: Some(1),
            };
            ranges.insert(name.to_string(), range);
        }
        let mut messages = valid.clone();
        messages[0].new_index_files = vec![IndexFileMeta {
            deletion_vectors_ranges: Some(ranges),
            ..index_file("DELETION_VECTORS", "index-dv-1")
        }];
        let mut bytes = serialize_list(&messages, V).unwrap();
        let at = bytes
            .windows(8)
            .position(|w| w == b"dvfile-b")
            .expect("the second name is in the payload");
        bytes[at..at + 8].copy_from_slice(b"dvfile-a");
        bytes
    };
    let decoded = |bytes: &[u8]| paimon_wire::deserialize_list(V, bytes).unwrap();

    // Bad first, good last: Java's map holds the good range; both paths accept.
    let bad_then_good = payload(100, 0);
    let ranges = decoded(&bad_then_good)[0].new_index_files[0]
        .deletion_vectors_ranges
        .clone()
        .unwrap();
    assert_eq!(ranges.len(), 1);
    assert_eq!(ranges["dvfile-a"].offset, 0);
    coordinator.deserialize(V, &bad_then_good).unwrap();
    coordinator.bind_messages(decoded(&bad_then_good)).unwrap();

    // Good first, bad last: the map holds the bad range; both paths refuse alike.
    let good_then_bad = payload(0, 100);
    let error = coordinator.deserialize(V, &good_then_bad).unwrap_err();
    let rejection = error.as_validation().expect("a validation error");
    assert_eq!(rejection.rule, Rule::Bounds, "{error}");
    assert_eq!(
        rejection.field,
        "new_index_files[0].deletion_vectors_ranges[\"dvfile-a\"]"
    );
    let owned = coordinator
        .bind_messages(decoded(&good_then_bad))
        .unwrap_err();
    assert_eq!(owned.to_string(), error.to_string());
}
