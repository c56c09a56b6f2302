//! Rule `sequence-numbers` on a primary-key table: the payload does not say whether its
//! writer was an append or an overwrite writer, but the sequence numbers of its files do.
//! An overwrite writer starts every bucket at 0; an append writer continues the bucket's
//! numbers from the snapshot it started on. A payload committed in the other mode, or by a
//! writer that missed another commit to its bucket, is refused before anything is written,
//! and committed as it should be by the right coordinator.

use paimon::table::{CommitMessage, Table};
use paimon_wire::coordinator::{Binding, CommitOutcome, CoordinatorError, Rule};
use paimon_wire::{serialize_list, SerializerVersion};

use super::support::{
    append_coordinator, batch_with_values, bind, read_rows, snapshot_count, Kind, Warehouse, USER,
};

const V: SerializerVersion = SerializerVersion::CURRENT;

/// How a test worker's writer is made.
#[derive(Clone, Copy)]
enum WriterMode {
    Append,
    Overwrite,
}

/// Rows `(id, pt, v)` of partition `pt`, each id with value `v<id>-<tag>`.
fn rows(ids: &[i32], pt: &'static str, tag: &str) -> Vec<(i32, &'static str, String)> {
    ids.iter()
        .map(|id| (*id, pt, format!("v{id}-{tag}")))
        .collect()
}

/// The rows as [`read_rows`] returns them, sorted.
fn as_read(rows: &[(i32, &'static str, String)]) -> Vec<(i32, String, String)> {
    let mut out: Vec<_> = rows
        .iter()
        .map(|(id, pt, v)| (*id, pt.to_string(), v.clone()))
        .collect();
    out.sort();
    out
}

/// A writer of `mode` made now (it restores the buckets it writes from the latest snapshot),
/// writing `rows`; its messages are prepared when the returned writer is asked.
async fn write(
    table: &Table,
    mode: WriterMode,
    rows: &[(i32, &'static str, String)],
) -> paimon::table::TableWrite {
    let builder = table
        .new_write_builder()
        .with_commit_user(USER)
        .expect("commit user");
    let builder = match mode {
        WriterMode::Append => builder,
        WriterMode::Overwrite => builder.with_overwrite(),
    };
    let mut write = builder.new_write().expect("table write");
    write
        .write_arrow_batch(&batch_with_values(rows))
        .await
        .expect("write");
    write
}

async fn payload(mut write: paimon::table::TableWrite) -> Vec<u8> {
    let messages: Vec<CommitMessage> = write.prepare_commit().await.expect("prepare commit");
    serialize_list(&messages, V).expect("serialize")
}

fn refused_rule(result: Result<CommitOutcome, CoordinatorError>) -> (Rule, String) {
    let error = result.expect_err("the commit must be refused");
    let validation = error
        .as_validation()
        .unwrap_or_else(|| panic!("expected a validation error, got {error}"));
    (validation.rule, error.to_string())
}

/// Commits the `rows` through a fresh append writer and coordinator as `identifier`.
async fn commit_rows(table: &Table, rows: &[(i32, &'static str, String)], identifier: i64) {
    let bytes = payload(write(table, WriterMode::Append, rows).await).await;
    let coordinator = append_coordinator(table).await;
    let messages = coordinator.deserialize(V, &bytes).unwrap();
    assert!(matches!(
        coordinator.commit(messages, identifier).await.unwrap(),
        CommitOutcome::Committed { .. }
    ));
}

#[tokio::test]
async fn an_overwrite_writers_payload_is_refused_by_an_append_coordinator() {
    let warehouse = Warehouse::new();
    let table = warehouse.create("users", Kind::FixedBucketPk).await;
    let first = rows(&[1, 2, 3, 4, 5, 6], "a", "old");
    commit_rows(&table, &first, 1).await;

    // An overwrite writer's files start at sequence number 0 in every bucket: appended,
    // its rows would merge as older than the committed ones and the update would be lost.
    let replacement = rows(&[1, 2, 3, 4, 5, 6], "a", "new");
    let bytes = payload(write(&table, WriterMode::Overwrite, &replacement).await).await;
    let append = append_coordinator(&table).await;
    let (rule, message) = refused_rule(
        append
            .commit(append.deserialize(V, &bytes).unwrap(), 2)
            .await,
    );
    assert_eq!(rule, Rule::SequenceNumbers, "{message}");
    assert!(message.contains("overwrite writer"), "{message}");
    assert_eq!(snapshot_count(&table).await, 1);
    assert_eq!(read_rows(&table).await, as_read(&first));

    // The same payload through an overwrite coordinator replaces the partition.
    let overwrite = bind(&table, Binding::overwrite(USER)).await;
    let outcome = overwrite
        .commit(overwrite.deserialize(V, &bytes).unwrap(), 2)
        .await
        .unwrap();
    assert_eq!(outcome, CommitOutcome::Committed { snapshot_id: 2 });
    assert_eq!(read_rows(&table).await, as_read(&replacement));
}

#[tokio::test]
async fn an_append_writers_payload_is_refused_by_an_overwrite_coordinator() {
    let warehouse = Warehouse::new();
    let table = warehouse.create("users", Kind::FixedBucketPk).await;
    let first = rows(&[1, 2, 3, 4, 5, 6], "a", "old");
    commit_rows(&table, &first, 1).await;

    // An append writer continues the buckets' numbers: its two updates were meant to merge
    // with the partition's other rows, which an overwrite would delete.
    let updates = rows(&[2, 5], "a", "new");
    let bytes = payload(write(&table, WriterMode::Append, &updates).await).await;
    let overwrite = bind(&table, Binding::overwrite(USER)).await;
    let (rule, message) = refused_rule(
        overwrite
            .commit(overwrite.deserialize(V, &bytes).unwrap(), 2)
            .await,
    );
    assert_eq!(rule, Rule::SequenceNumbers, "{message}");
    assert!(message.contains("append writer"), "{message}");
    assert_eq!(snapshot_count(&table).await, 1);
    assert_eq!(read_rows(&table).await, as_read(&first));

    // Through an append coordinator the updates win and the other rows stay.
    let append = append_coordinator(&table).await;
    let outcome = append
        .commit(append.deserialize(V, &bytes).unwrap(), 2)
        .await
        .unwrap();
    assert_eq!(outcome, CommitOutcome::Committed { snapshot_id: 2 });
    let mut expected = rows(&[1, 3, 4, 6], "a", "old");
    expected.extend(updates);
    assert_eq!(read_rows(&table).await, as_read(&expected));
}

#[tokio::test]
async fn a_writer_made_before_another_commit_wrote_its_bucket_is_refused() {
    let warehouse = Warehouse::new();
    let table = warehouse.create("users", Kind::FixedBucketPk).await;
    commit_rows(&table, &rows(&[1, 2, 3, 4], "a", "first"), 1).await;

    // A slow writer restores the buckets now; another commit then updates the same keys.
    let slow = write(
        &table,
        WriterMode::Append,
        &rows(&[1, 2, 3, 4], "a", "slow"),
    )
    .await;
    let newer = rows(&[1, 2, 3, 4], "a", "newer");
    commit_rows(&table, &newer, 2).await;

    // The slow writer's files overlap the newer commit's sequence numbers: which row wins
    // would be arbitrary, so the payload is refused and the newer rows stay.
    let bytes = payload(slow).await;
    let append = append_coordinator(&table).await;
    let (rule, message) = refused_rule(
        append
            .commit(append.deserialize(V, &bytes).unwrap(), 3)
            .await,
    );
    assert_eq!(rule, Rule::SequenceNumbers, "{message}");
    assert!(message.contains("reach sequence number"), "{message}");
    assert_eq!(snapshot_count(&table).await, 2);
    assert_eq!(read_rows(&table).await, as_read(&newer));

    // Written again by a new writer, the same rows commit and win.
    let again = rows(&[1, 2, 3, 4], "a", "slow");
    commit_rows(&table, &again, 3).await;
    assert_eq!(read_rows(&table).await, as_read(&again));
}

#[tokio::test]
async fn append_tables_and_empty_buckets_are_not_checked() {
    let warehouse = Warehouse::new();
    // An overwrite writer's payload into a bucket with no live files: both modes agree on
    // what the files hold, so an append coordinator commits it.
    let table = warehouse.create("users", Kind::FixedBucketPk).await;
    let rows_b = rows(&[7, 8, 9], "b", "only");
    let bytes = payload(write(&table, WriterMode::Overwrite, &rows_b).await).await;
    let append = append_coordinator(&table).await;
    append
        .commit(append.deserialize(V, &bytes).unwrap(), 1)
        .await
        .unwrap();
    assert_eq!(read_rows(&table).await, as_read(&rows_b));

    // An append table has no key order: an overwrite writer's payload appends.
    let events = warehouse.create("events", Kind::PartitionedAppend).await;
    let first = rows(&[1, 2], "a", "x");
    let bytes = payload(write(&events, WriterMode::Append, &first).await).await;
    let append = append_coordinator(&events).await;
    append
        .commit(append.deserialize(V, &bytes).unwrap(), 1)
        .await
        .unwrap();
    let second = rows(&[3], "a", "y");
    let bytes = payload(write(&events, WriterMode::Overwrite, &second).await).await;
    append
        .commit(append.deserialize(V, &bytes).unwrap(), 2)
        .await
        .unwrap();
    let mut all = first;
    all.extend(second);
    assert_eq!(read_rows(&events).await, as_read(&all));
}
