//! Size-bounded payloads (`paimon_wire::split`): every payload is a standard list within the
//! limit, the set decodes to the same files as the one payload, and a coordinator commits the
//! set as it would the one payload — in any order, with a payload delivered twice, and never
//! with one missing. Real local tables, workers writing through the paimon crate.

mod common;
#[path = "coordinator/support.rs"]
#[allow(dead_code)]
mod support;

use std::collections::BTreeMap;

use paimon::spec::DataFileMeta;
use paimon::table::CommitMessage;
use paimon_wire::coordinator::{CommitOutcome, CoordinatorError, PartsError, PayloadPart};
use paimon_wire::split::MIN_PAYLOAD_BYTES;
use paimon_wire::{
    deserialize_list, serialize_list, serialize_list_with, split_list, split_list_with,
    EncodeOptions, SerializerVersion, SplitError,
};
use proptest::prelude::*;
use support::{
    append_coordinator, expected, read_rows, snapshot_count, worker_messages, Kind, Warehouse,
};

const V: SerializerVersion = SerializerVersion::CURRENT;

/// The serialized empty row, as an empty partition is written and read back.
const EMPTY_PARTITION: [u8; 12] = [0; 12];

/// Every file of `messages` as `(partition, bucket, list, file JSON)`, sorted: what a commit
/// of them adds and removes, whatever message carries each file.
fn files_by_bucket(messages: &[CommitMessage]) -> Vec<(Vec<u8>, i32, &'static str, String)> {
    let mut out = Vec::new();
    for m in messages {
        let partition = if m.partition.is_empty() {
            EMPTY_PARTITION.to_vec()
        } else {
            m.partition.clone()
        };
        let lists: [(&'static str, &[DataFileMeta]); 6] = [
            ("new_files", &m.new_files),
            ("deleted_files", &m.deleted_files),
            ("new_changelog_files", &m.new_changelog_files),
            ("compact_before", &m.compact_before),
            ("compact_after", &m.compact_after),
            ("compact_changelog_files", &m.compact_changelog_files),
        ];
        for (list, files) in lists {
            for file in files {
                let json = common::dump(&[CommitMessage::new(vec![], 0, vec![file.clone()])]);
                out.push((partition.clone(), m.bucket, list, json.to_string()));
            }
        }
        let index_lists = [
            ("new_index_files", &m.new_index_files),
            ("deleted_index_files", &m.deleted_index_files),
            ("compact_new_index_files", &m.compact_new_index_files),
            (
                "compact_deleted_index_files",
                &m.compact_deleted_index_files,
            ),
        ];
        for (list, files) in index_lists {
            for file in files {
                out.push((partition.clone(), m.bucket, list, format!("{file:?}")));
            }
        }
    }
    out.sort();
    out
}

/// The messages of a split set, decoded and concatenated.
fn decode_all(payloads: &[Vec<u8>], version: SerializerVersion) -> Vec<CommitMessage> {
    payloads
        .iter()
        .flat_map(|p| deserialize_list(version, p).expect("each payload decodes on its own"))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Random messages at random limits: within the limit, the same files, the same
    /// message fields, and the unsplittable lists whole; or a refusal that is true.
    #[test]
    fn a_split_set_holds_the_files_of_the_one_payload(
        messages in proptest::collection::vec(common::message(V), 0..6),
        max_bytes in MIN_PAYLOAD_BYTES..6_000usize,
    ) {
        let whole = serialize_list(&messages, V).unwrap();
        match split_list(&messages, V, max_bytes) {
            Ok(payloads) => {
                for p in &payloads {
                    prop_assert!(p.len() <= max_bytes, "{} > {max_bytes}", p.len());
                }
                if whole.len() <= max_bytes {
                    prop_assert_eq!(&payloads, &vec![whole.clone()]);
                }
                let decoded = decode_all(&payloads, V);
                prop_assert_eq!(files_by_bucket(&decoded), files_by_bucket(&messages));
                // The compact increment and index lists of each message travel in one piece.
                let with_whole_lists = |m: &CommitMessage| {
                    !(m.compact_before.is_empty() && m.compact_after.is_empty()
                        && m.compact_changelog_files.is_empty() && m.new_index_files.is_empty()
                        && m.deleted_index_files.is_empty()
                        && m.compact_new_index_files.is_empty()
                        && m.compact_deleted_index_files.is_empty())
                };
                prop_assert_eq!(
                    decoded.iter().filter(|m| with_whole_lists(m)).count(),
                    messages.iter().filter(|m| with_whole_lists(m)).count()
                );
                for m in &decoded {
                    prop_assert!(messages.iter().any(|o| (o.partition == m.partition
                            || o.partition.is_empty() && m.partition == EMPTY_PARTITION)
                        && o.bucket == m.bucket
                        && o.total_buckets == m.total_buckets
                        && o.check_from_snapshot == m.check_from_snapshot));
                }
            }
            Err(SplitError::TooLarge { bytes, max_bytes: limit, .. }) => {
                prop_assert!(whole.len() > max_bytes);
                prop_assert_eq!(limit, max_bytes);
                prop_assert!(bytes > max_bytes, "claimed {bytes} <= {max_bytes}");
            }
            Err(other) => prop_assert!(false, "unexpected error: {other}"),
        }
    }
}

/// A message of `files` new files, each with statistics like a real writer's.
fn wide_message(bucket: i32, files: usize) -> CommitMessage {
    let metas = (0..files)
        .map(|i| common::fixed_data_file(&format!("data-{bucket}-{i}.parquet")))
        .collect();
    CommitMessage::new(vec![], bucket, metas)
}

#[test]
fn one_large_message_becomes_messages_of_its_bucket_within_the_limit() {
    let messages = vec![wide_message(0, 3), wide_message(1, 400), wide_message(2, 5)];
    let whole = serialize_list(&messages, V).unwrap();
    let max_bytes = 8 * 1024;
    let payloads = split_list(&messages, V, max_bytes).unwrap();
    assert!(
        payloads.len() > whole.len() / max_bytes,
        "{}",
        payloads.len()
    );
    assert!(payloads.iter().all(|p| p.len() <= max_bytes));
    let decoded = decode_all(&payloads, V);
    assert_eq!(files_by_bucket(&decoded), files_by_bucket(&messages));
    // Bucket 1's files are in several messages of bucket 1, in their order.
    let bucket_1: Vec<&str> = decoded
        .iter()
        .filter(|m| m.bucket == 1)
        .flat_map(|m| m.new_files.iter().map(|f| f.file_name.as_str()))
        .collect();
    let original: Vec<&str> = messages[1]
        .new_files
        .iter()
        .map(|f| f.file_name.as_str())
        .collect();
    assert_eq!(bucket_1, original);
    assert!(decoded.iter().filter(|m| m.bucket == 1).count() > 1);
}

#[test]
fn lists_that_stay_whole_are_refused_by_name_when_they_alone_exceed_the_limit() {
    let mut m = CommitMessage::new(vec![], 3, vec![]);
    m.compact_before = (0..50)
        .map(|i| common::fixed_data_file(&format!("before-{i}.parquet")))
        .collect();
    m.compact_after = vec![common::fixed_data_file("after.parquet")];
    let error = split_list(&[m], V, 2048).unwrap_err();
    let text = error.to_string();
    assert!(
        matches!(error, SplitError::TooLarge { message_index: 0, bucket: 3, bytes, max_bytes: 2048, .. } if bytes > 2048),
        "{error:?}"
    );
    assert!(
        text.contains("compact_before (50 files), compact_after (1 files)")
            && text.contains("at most 2048 bytes"),
        "{text}"
    );
    assert!(matches!(
        split_list(&[], V, 10).unwrap_err(),
        SplitError::LimitTooSmall { max_bytes: 10 }
    ));
}

#[test]
fn an_empty_list_is_one_empty_payload_as_in_java() {
    let payloads = split_list(&[], V, MIN_PAYLOAD_BYTES).unwrap();
    assert_eq!(payloads, vec![serialize_list(&[], V).unwrap()]);
}

#[test]
fn older_versions_split_with_the_same_options_as_serialize_list() {
    let messages = vec![wide_message(0, 100)];
    let lossy = paimon_wire::LossyField::ALL
        .into_iter()
        .fold(EncodeOptions::default(), EncodeOptions::allow_dropping);
    for version in [
        SerializerVersion::V3,
        SerializerVersion::V7,
        SerializerVersion::V12,
    ] {
        let refused = serialize_list(&messages, version).is_err();
        assert_eq!(split_list(&messages, version, 4096).is_err(), refused);
        let payloads = split_list_with(&messages, version, 4096, &lossy).unwrap();
        let whole = deserialize_list(
            version,
            &serialize_list_with(&messages, version, &lossy).unwrap(),
        )
        .unwrap();
        assert_eq!(
            files_by_bucket(&decode_all(&payloads, version)),
            files_by_bucket(&whole)
        );
    }
}

// ---- Through the coordinator, on real tables ----

/// Adds `messages` to `merged`, one message per (partition, bucket) holding every new file.
fn merge_by_bucket(
    merged: &mut BTreeMap<(Vec<u8>, i32), CommitMessage>,
    messages: Vec<CommitMessage>,
) {
    for m in messages {
        merged
            .entry((m.partition.clone(), m.bucket))
            .and_modify(|into| into.new_files.extend(m.new_files.iter().cloned()))
            .or_insert(m);
    }
}

/// `workers` workers' messages for `table` merged into one message per (partition, bucket),
/// as one writer that rolled many files reports them.
async fn one_worker_with_many_files(
    table: &paimon::table::Table,
    workers: i32,
) -> (Vec<CommitMessage>, Vec<(i32, &'static str)>) {
    let mut rows = Vec::new();
    let mut merged: BTreeMap<(Vec<u8>, i32), CommitMessage> = BTreeMap::new();
    for w in 0..workers {
        let these: Vec<(i32, &'static str)> = (w * 10..w * 10 + 10)
            .map(|id| (id, if id % 2 == 0 { "a" } else { "b" }))
            .collect();
        merge_by_bucket(&mut merged, worker_messages(table, &these).await);
        rows.extend(these);
    }
    (merged.into_values().collect(), rows)
}

fn parts_of(payloads: &[Vec<u8>]) -> Vec<PayloadPart<'_>> {
    let count = payloads.len() as u32;
    payloads
        .iter()
        .enumerate()
        .map(|(index, bytes)| PayloadPart {
            index: index as u32,
            count,
            bytes,
        })
        .collect()
}

#[tokio::test]
async fn a_split_set_in_any_order_with_a_duplicate_commits_every_row_once() {
    let warehouse = Warehouse::new();
    let table = warehouse.create("events", Kind::PartitionedAppend).await;
    let (messages, rows) = one_worker_with_many_files(&table, 12).await;
    let whole = serialize_list(&messages, V).unwrap();
    let payloads = split_list(&messages, V, 2048).unwrap();
    assert!(payloads.len() >= 3, "{} payloads", payloads.len());
    assert!(whole.len() > 2048);

    let coordinator = append_coordinator(&table).await;
    let mut parts = parts_of(&payloads);
    parts.reverse();
    parts.push(parts[1]);
    let bound = coordinator.deserialize_parts(V, &parts).unwrap();
    let unsplit = coordinator.deserialize(V, &whole).unwrap();
    assert_eq!(
        files_by_bucket(bound.messages()),
        files_by_bucket(unsplit.messages()),
        "the set binds the files of the one payload"
    );
    let outcome = coordinator.commit(bound, 1).await.unwrap();
    assert!(
        matches!(outcome, CommitOutcome::Committed { .. }),
        "{outcome:?}"
    );
    assert_eq!(read_rows(&table).await, expected(&rows));
    assert_eq!(snapshot_count(&table).await, 1);

    // The whole set again, as a rerun after a lost answer, commits nothing.
    let again = coordinator
        .deserialize_parts(V, &parts_of(&payloads))
        .unwrap();
    let rerun = coordinator.commit(again, 1).await.unwrap();
    assert!(
        matches!(rerun, CommitOutcome::AlreadyCommitted { .. }),
        "{rerun:?}"
    );
    assert_eq!(snapshot_count(&table).await, 1);
}

#[tokio::test]
async fn a_set_with_a_payload_missing_commits_nothing_and_names_it() {
    let warehouse = Warehouse::new();
    let table = warehouse.create("events", Kind::PartitionedAppend).await;
    let (messages, _) = one_worker_with_many_files(&table, 12).await;
    let payloads = split_list(&messages, V, 2048).unwrap();
    let coordinator = append_coordinator(&table).await;
    let mut parts = parts_of(&payloads);
    parts.remove(1);
    let error = coordinator.deserialize_parts(V, &parts).unwrap_err();
    let CoordinatorError::Parts(PartsError::Missing {
        count,
        missing,
        first_missing,
    }) = &error
    else {
        panic!("expected a missing payload, got {error}");
    };
    assert_eq!(
        (*count as usize, *missing, first_missing.as_slice()),
        (payloads.len(), 1, &[1][..])
    );
    assert!(
        error.to_string().contains("nothing was committed"),
        "{error}"
    );
    assert_eq!(snapshot_count(&table).await, 0);
}

/// One writer of `table` writing `rows` in `batches` batches, preparing a commit after each
/// (the writer keeps its buckets between them, so sequence numbers continue), its messages
/// merged into one per (partition, bucket): one writer that flushed `batches` times.
async fn writer_with_many_flushes(
    table: &paimon::table::Table,
    rows: &[(i32, &str)],
    batches: usize,
) -> Vec<CommitMessage> {
    let builder = table
        .new_write_builder()
        .with_commit_user(support::USER)
        .expect("commit user");
    let mut write = builder.new_write().expect("table write");
    let mut merged: BTreeMap<(Vec<u8>, i32), CommitMessage> = BTreeMap::new();
    for chunk in rows.chunks(rows.len().div_ceil(batches)) {
        write
            .write_arrow_batch(&support::batch(chunk))
            .await
            .expect("write");
        merge_by_bucket(
            &mut merged,
            write.prepare_commit().await.expect("prepare commit"),
        );
    }
    merged.into_values().collect()
}

#[tokio::test]
async fn a_primary_key_bucket_split_over_payloads_is_one_writer() {
    let warehouse = Warehouse::new();
    let table = warehouse.create("users", Kind::FixedBucketPk).await;
    let rows: Vec<(i32, &str)> = (0..2000)
        .map(|id| (id, if id % 2 == 0 { "a" } else { "b" }))
        .collect();
    let messages = writer_with_many_flushes(&table, &rows, 40).await;
    let most_files = messages.iter().map(|m| m.new_files.len()).max().unwrap();
    assert!(most_files >= 4, "{most_files} files in the largest message");
    let payloads = split_list(&messages, V, 2048).unwrap();
    let decoded = decode_all(&payloads, V);
    // Some bucket's files are spread over two payloads.
    let bucket_payloads = |partition: &[u8], bucket: i32| {
        payloads
            .iter()
            .filter(|p| {
                deserialize_list(V, p)
                    .unwrap()
                    .iter()
                    .any(|m| m.partition == partition && m.bucket == bucket)
            })
            .count()
    };
    assert!(
        decoded
            .iter()
            .any(|m| bucket_payloads(&m.partition, m.bucket) > 1),
        "no bucket spans two payloads"
    );

    let coordinator = append_coordinator(&table).await;
    // As separate workers' payloads, the one-writer rule refuses the shared bucket ...
    let separately: Vec<_> = payloads
        .iter()
        .map(|p| coordinator.deserialize(V, p).unwrap())
        .collect();
    assert!(matches!(
        coordinator.merge(separately),
        Err(CoordinatorError::SharedBucket(_))
    ));
    // ... as one split set it is one writer's, and commits every row once.
    let bound = coordinator
        .deserialize_parts(V, &parts_of(&payloads))
        .unwrap();
    let merged = coordinator.merge([bound]).unwrap();
    coordinator.commit(merged, 1).await.unwrap();
    assert_eq!(read_rows(&table).await, expected(&rows));
}
