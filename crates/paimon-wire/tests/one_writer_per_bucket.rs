//! One writer per bucket of a primary-key table: the coordinator refuses two payloads that
//! write one (partition, bucket), and rows routed with `BucketRouter` commit and read back
//! once. Real local tables, workers writing through the paimon crate.

#[path = "coordinator/support.rs"]
#[allow(dead_code)]
mod support;

use std::collections::BTreeMap;

use futures::TryStreamExt;
use paimon_wire::coordinator::{CommitOutcome, CoordinatorError};
use paimon_wire::{BucketRouter, RoutingError, RoutingKind, SerializerVersion};
use support::{
    append_coordinator, batch, batch_with_values, expected, read_rows, snapshot_count,
    worker_messages, worker_payload, Kind, Warehouse, USER,
};

const V: SerializerVersion = SerializerVersion::CURRENT;

/// Rows `(id, pt)` for ids `from..to`, over partitions a and b.
fn rows(from: i32, to: i32) -> Vec<(i32, &'static str)> {
    (from..to)
        .map(|id| (id, if id % 2 == 0 { "a" } else { "b" }))
        .collect()
}

#[tokio::test]
async fn two_workers_writing_one_bucket_of_a_primary_key_table_are_refused() {
    let warehouse = Warehouse::new();
    let table = warehouse.create("users", Kind::FixedBucketPk).await;
    // 40 keys per worker over 2 buckets and 2 partitions: both workers write every bucket.
    let p1 = worker_payload(&table, &rows(0, 40)).await;
    let p2 = worker_payload(&table, &rows(40, 80)).await;
    let coordinator = append_coordinator(&table).await;
    let error = coordinator
        .merge([
            coordinator.deserialize(V, &p1).unwrap(),
            coordinator.deserialize(V, &p2).unwrap(),
        ])
        .unwrap_err();
    let CoordinatorError::SharedBucket(shared) = &error else {
        panic!("expected SharedBucket, got {error}");
    };
    assert!((0..2).contains(&shared.bucket), "{error}");
    assert!(
        ["pt='a'", "pt='b'"].contains(&shared.partition.as_str()),
        "{error}"
    );
    assert_eq!((shared.first.part, shared.second.part), (0, 1), "{error}");
    let text = error.to_string();
    assert!(
        text.contains(&format!(
            "bucket {} of partition {}",
            shared.bucket, shared.partition
        )) && text.contains("payload 0 message")
            && text.contains("payload 1 message")
            && text.contains("nothing was committed"),
        "{text}"
    );
    assert_eq!(snapshot_count(&table).await, 0);
}

#[tokio::test]
async fn rows_routed_by_bucket_commit_and_read_back_once_with_the_latest_row_winning() {
    let warehouse = Warehouse::new();
    let table = warehouse.create("users", Kind::FixedBucketPk).await;
    let router = BucketRouter::for_table(&table).unwrap();
    assert_eq!(router.buckets(), 2);
    assert_eq!(router.bucket_key(), ["id"]);
    let all = rows(0, 80);
    let buckets = router.bucket_ids(&batch(&all)).unwrap();
    // One worker per bucket.
    let mut per_bucket: BTreeMap<i32, Vec<(i32, &str)>> = BTreeMap::new();
    for (row, bucket) in all.iter().zip(&buckets) {
        per_bucket.entry(*bucket).or_default().push(*row);
    }
    assert_eq!(per_bucket.len(), 2, "80 keys fill both buckets");
    let coordinator = append_coordinator(&table).await;
    let mut parts = Vec::new();
    for worker_rows in per_bucket.values() {
        let messages = worker_messages(&table, worker_rows).await;
        let payload = paimon_wire::serialize_list(&messages, V).unwrap();
        parts.push(coordinator.deserialize(V, &payload).unwrap());
    }
    let merged = coordinator.merge(parts).unwrap();
    assert_eq!(
        coordinator.commit(merged, 1).await.unwrap(),
        CommitOutcome::Committed { snapshot_id: 1 }
    );
    assert_eq!(read_rows(&table).await, expected(&all));

    // A later round: the first bucket's worker writes some of its keys again with new
    // values; the later rows win and every key is still read once.
    let (bucket, first_rows) = per_bucket.iter().next().unwrap();
    let rewritten: Vec<(i32, &str, String)> = first_rows
        .iter()
        .take(5)
        .map(|(id, pt)| (*id, *pt, format!("w{id}")))
        .collect();
    assert_eq!(
        router.bucket_ids(&batch_with_values(&rewritten)).unwrap(),
        vec![*bucket; rewritten.len()]
    );
    let mut write = table
        .new_write_builder()
        .with_commit_user(USER)
        .unwrap()
        .new_write()
        .unwrap();
    write
        .write_arrow_batch(&batch_with_values(&rewritten))
        .await
        .unwrap();
    let payload = paimon_wire::serialize_list(&write.prepare_commit().await.unwrap(), V).unwrap();
    let merged = coordinator
        .merge([coordinator.deserialize(V, &payload).unwrap()])
        .unwrap();
    assert_eq!(
        coordinator.commit(merged, 2).await.unwrap(),
        CommitOutcome::Committed { snapshot_id: 2 }
    );
    let mut latest = expected(&all);
    for (id, pt, value) in &rewritten {
        let row = latest
            .iter_mut()
            .find(|(i, p, _)| i == id && p == pt)
            .unwrap();
        row.2 = value.clone();
    }
    let read = read_rows(&table).await;
    assert_eq!(read, latest);
    assert_eq!(read.iter().filter(|r| r.2.starts_with('w')).count(), 5);
}

#[tokio::test]
async fn router_buckets_are_the_buckets_the_paimon_crate_writer_chose() {
    let warehouse = Warehouse::new();
    let table = warehouse.create("users", Kind::FixedBucketPk).await;
    let all = rows(-500, 500);
    let messages = worker_messages(&table, &all).await;
    let coordinator = append_coordinator(&table).await;
    coordinator
        .commit(coordinator.bind_messages(messages).unwrap(), 1)
        .await
        .unwrap();
    let router = BucketRouter::for_table(&table).unwrap();
    let builder = table.new_read_builder();
    let plan = builder.new_scan().plan().await.unwrap();
    let mut seen = 0;
    for split in plan.splits() {
        let batches: Vec<_> = builder
            .new_read()
            .unwrap()
            .to_arrow(std::slice::from_ref(split))
            .unwrap()
            .try_collect()
            .await
            .unwrap();
        for b in &batches {
            let computed = router.bucket_ids(b).unwrap();
            assert!(computed.iter().all(|&c| c == split.bucket()));
            seen += b.num_rows();
        }
    }
    assert_eq!(seen, all.len());
}

#[tokio::test]
async fn dynamic_bucket_primary_key_table_refuses_two_writers_and_has_no_router() {
    let warehouse = Warehouse::new();
    let table = warehouse.create("dynamic", Kind::DynamicBucketPk).await;
    assert_eq!(RoutingKind::of(&table), RoutingKind::SingleWriter);
    let error = BucketRouter::for_table(&table).unwrap_err();
    assert!(
        matches!(
            error,
            RoutingError::NotFixedBucket {
                kind: RoutingKind::SingleWriter,
                ..
            }
        ),
        "{error}"
    );
    assert!(error.to_string().contains("single writer"), "{error}");
    // Each writer assigns keys to buckets on its own: both start at bucket 0.
    let p1 = worker_payload(&table, &rows(0, 10)).await;
    let p2 = worker_payload(&table, &rows(100, 110)).await;
    let coordinator = append_coordinator(&table).await;
    let error = coordinator
        .merge([
            coordinator.deserialize(V, &p1).unwrap(),
            coordinator.deserialize(V, &p2).unwrap(),
        ])
        .unwrap_err();
    assert!(
        matches!(error, CoordinatorError::SharedBucket(_)),
        "{error}"
    );
    // One writer is fine.
    let merged = coordinator
        .merge([coordinator.deserialize(V, &p1).unwrap()])
        .unwrap();
    assert_eq!(
        coordinator.commit(merged, 1).await.unwrap(),
        CommitOutcome::Committed { snapshot_id: 1 }
    );
}

#[tokio::test]
async fn postpone_and_append_tables_take_many_writers_of_one_bucket() {
    let warehouse = Warehouse::new();
    for (name, kind) in [
        ("postponed", Kind::Postpone),
        ("events", Kind::PartitionedAppend),
    ] {
        let table = warehouse.create(name, kind).await;
        assert_eq!(RoutingKind::of(&table), RoutingKind::AnyWriter);
        assert!(BucketRouter::for_table(&table).is_err());
        let p1 = worker_payload(&table, &rows(0, 10)).await;
        let p2 = worker_payload(&table, &rows(10, 20)).await;
        let coordinator = append_coordinator(&table).await;
        let merged = coordinator
            .merge([
                coordinator.deserialize(V, &p1).unwrap(),
                coordinator.deserialize(V, &p2).unwrap(),
            ])
            .unwrap();
        assert_eq!(
            coordinator.commit(merged, 1).await.unwrap(),
            CommitOutcome::Committed { snapshot_id: 1 },
            "{name}"
        );
    }
}

#[tokio::test]
async fn a_batch_without_the_bucket_key_is_refused_by_name() {
    let warehouse = Warehouse::new();
    let table = warehouse.create("users", Kind::FixedBucketPk).await;
    let router = BucketRouter::for_table(&table).unwrap();
    let without_id = batch(&rows(0, 3)).project(&[1, 2]).unwrap();
    let error = router.bucket_ids(&without_id).unwrap_err();
    assert!(matches!(error, RoutingError::MissingColumn { ref column } if column == "id"));
    // Columns in another order are found by name.
    let reordered = batch(&rows(0, 30)).project(&[2, 0, 1]).unwrap();
    assert_eq!(
        router.bucket_ids(&reordered).unwrap(),
        router.bucket_ids(&batch(&rows(0, 30))).unwrap()
    );
}
