//! The coordinator end to end on real local tables: workers write through the paimon crate,
//! ship Java-compatible payloads, and one coordinator validates, merges and commits once.

mod coordinator {
    pub mod batch_decode;
    pub mod compaction;
    pub mod dpcm;
    pub mod envelope;
    pub mod hash_index;
    pub mod hostile;
    pub mod hostile_round_3;
    pub mod hostile_round_4;
    pub mod lookup_compaction;
    pub mod native_compaction;
    pub mod readme_example;
    pub mod registry;
    pub mod staged;
    pub mod support;
    pub mod validation;
    pub mod writer_mode;
}

use coordinator::support::{
    append_coordinator, bind, expected, find_files, read_rows, snapshot_count, worker_messages,
    worker_payload, Kind, Warehouse, USER,
};
use paimon_wire::coordinator::{
    Binding, BucketMode, CommitOutcome, Coordinator, CoordinatorError, WriteKind,
};
use paimon_wire::{serialize_list, SerializerVersion};

const V: SerializerVersion = SerializerVersion::CURRENT;

#[tokio::test]
async fn append_workers_commit_once_and_every_row_is_read_back_once() {
    let warehouse = Warehouse::new();
    let table = warehouse.create("events", Kind::PartitionedAppend).await;
    let workers: [&[(i32, &str)]; 3] = [
        &[(1, "a"), (2, "b"), (3, "a")],
        &[(4, "a"), (5, "b")],
        &[(6, "b"), (7, "c")],
    ];
    let mut payloads = Vec::new();
    for rows in workers {
        payloads.push(worker_payload(&table, rows).await);
    }
    let all_rows: Vec<(i32, &str)> = workers.concat();

    let coordinator = append_coordinator(&table).await;
    assert_eq!(coordinator.bucket_mode(), BucketMode::Unaware);
    let parts = payloads
        .iter()
        .map(|p| coordinator.deserialize(V, p).unwrap())
        .collect::<Vec<_>>();
    let merged = coordinator.merge(parts).unwrap();
    assert_eq!(merged.reported_row_count(), all_rows.len() as i64);
    assert_eq!(snapshot_count(&table).await, 0);

    let outcome = coordinator.commit(merged, 1).await.unwrap();
    assert_eq!(outcome, CommitOutcome::Committed { snapshot_id: 1 });
    assert_eq!(snapshot_count(&table).await, 1);
    assert_eq!(read_rows(&table).await, expected(&all_rows));

    // The coordinator crashed after committing and reruns the same commit: a new
    // coordinator, the same payloads, the same identifier.
    let restarted = append_coordinator(&table).await;
    let parts = payloads
        .iter()
        .map(|p| restarted.deserialize(V, p).unwrap())
        .collect::<Vec<_>>();
    let merged = restarted.merge(parts).unwrap();
    assert_eq!(
        restarted.commit_status(1).await.unwrap(),
        Some(CommitOutcome::AlreadyCommitted {
            snapshot_id: Some(1)
        })
    );
    let outcome = restarted.commit(merged, 1).await.unwrap();
    assert_eq!(
        outcome,
        CommitOutcome::AlreadyCommitted {
            snapshot_id: Some(1)
        }
    );
    assert_eq!(snapshot_count(&table).await, 1);
    assert_eq!(read_rows(&table).await, expected(&all_rows));

    // The next identifier commits new data; rerunning the first still commits nothing.
    let more = worker_payload(&table, &[(8, "a")]).await;
    let outcome = restarted
        .commit(restarted.deserialize(V, &more).unwrap(), 2)
        .await
        .unwrap();
    assert_eq!(outcome, CommitOutcome::Committed { snapshot_id: 2 });
    let again = restarted.deserialize(V, &payloads[0]).unwrap();
    assert_eq!(
        restarted.commit(again, 1).await.unwrap(),
        CommitOutcome::AlreadyCommitted {
            snapshot_id: Some(1)
        }
    );
    // Identifier 1 reused for other data (new files) is refused, not "already committed".
    let other = worker_payload(&table, &[(9, "b")]).await;
    let reused = restarted.deserialize(V, &other).unwrap();
    match restarted.commit(reused, 1).await {
        Err(CoordinatorError::IdentifierReused {
            identifier: 1,
            snapshot_id: 1,
            ..
        }) => {}
        other => panic!("expected IdentifierReused, got {other:?}"),
    }
    assert_eq!(snapshot_count(&table).await, 2);
    let mut with_more = all_rows.clone();
    with_more.push((8, "a"));
    assert_eq!(read_rows(&table).await, expected(&with_more));
}

#[tokio::test]
async fn primary_key_fixed_bucket_workers_commit_into_valid_buckets() {
    let warehouse = Warehouse::new();
    let table = warehouse.create("users", Kind::FixedBucketPk).await;
    let rows: &[(i32, &str)] = &[
        (1, "a"),
        (2, "a"),
        (3, "b"),
        (4, "b"),
        (5, "a"),
        (10, "a"),
        (11, "b"),
        (12, "b"),
        (13, "a"),
    ];
    // One worker per bucket (two writers of one bucket are refused at merge).
    let buckets = paimon_wire::BucketRouter::for_table(&table)
        .unwrap()
        .bucket_ids(&coordinator::support::batch(rows))
        .unwrap();
    let of_bucket = |b: i32| -> Vec<(i32, &str)> {
        rows.iter()
            .zip(&buckets)
            .filter(|(_, bucket)| **bucket == b)
            .map(|(row, _)| *row)
            .collect()
    };
    let (first, second) = (of_bucket(0), of_bucket(1));
    assert!(!first.is_empty() && !second.is_empty());
    let p1 = worker_payload(&table, &first).await;
    let p2 = worker_payload(&table, &second).await;

    let coordinator = append_coordinator(&table).await;
    assert_eq!(coordinator.bucket_mode(), BucketMode::Fixed { buckets: 2 });
    let merged = coordinator
        .merge([
            coordinator.deserialize(V, &p1).unwrap(),
            coordinator.deserialize(V, &p2).unwrap(),
        ])
        .unwrap();
    assert!(merged.messages().iter().all(|m| (0..2).contains(&m.bucket)));
    let outcome = coordinator.commit(merged, 100).await.unwrap();
    assert_eq!(outcome, CommitOutcome::Committed { snapshot_id: 1 });
    assert_eq!(snapshot_count(&table).await, 1);
    assert_eq!(read_rows(&table).await, expected(rows));
}

#[tokio::test]
async fn overwrite_replaces_only_the_partitions_the_messages_write() {
    let warehouse = Warehouse::new();
    let table = warehouse.create("events", Kind::PartitionedAppend).await;
    let initial: &[(i32, &str)] = &[(1, "a"), (2, "b"), (3, "a")];
    let append = append_coordinator(&table).await;
    let payload = worker_payload(&table, initial).await;
    append
        .commit(append.deserialize(V, &payload).unwrap(), 1)
        .await
        .unwrap();

    let replacement: &[(i32, &str)] = &[(10, "a"), (11, "a")];
    let payload = worker_payload(&table, replacement).await;
    let overwrite = bind(&table, Binding::overwrite(USER)).await;
    let outcome = overwrite
        .commit(overwrite.deserialize(V, &payload).unwrap(), 2)
        .await
        .unwrap();
    assert_eq!(outcome, CommitOutcome::Committed { snapshot_id: 2 });
    assert_eq!(
        read_rows(&table).await,
        expected(&[(2, "b"), (10, "a"), (11, "a")])
    );
    // Rerunning the overwrite must not replace partition a again (and lose nothing).
    let rerun = overwrite.deserialize(V, &payload).unwrap();
    assert_eq!(
        overwrite.commit(rerun, 2).await.unwrap(),
        CommitOutcome::AlreadyCommitted {
            snapshot_id: Some(2)
        }
    );
    assert_eq!(snapshot_count(&table).await, 2);
}

#[tokio::test]
async fn abort_removes_the_files_the_messages_prepared() {
    let warehouse = Warehouse::new();
    let table = warehouse.create("events", Kind::PartitionedAppend).await;
    let payload = worker_payload(&table, &[(1, "a"), (2, "b")]).await;
    let coordinator = append_coordinator(&table).await;
    let bound = coordinator.deserialize(V, &payload).unwrap();
    let names: Vec<String> = bound
        .messages()
        .iter()
        .flat_map(|m| m.new_files.iter().map(|f| f.file_name.clone()))
        .collect();
    assert_eq!(names.len(), 2);
    for name in &names {
        assert_eq!(find_files(warehouse.dir.path(), name).len(), 1, "{name}");
    }
    coordinator.abort(&bound).await.unwrap();
    for name in &names {
        assert!(find_files(warehouse.dir.path(), name).is_empty(), "{name}");
    }
    assert_eq!(snapshot_count(&table).await, 0);
}

#[tokio::test]
async fn messages_bound_to_one_coordinator_are_refused_by_another() {
    let warehouse = Warehouse::new();
    let table = warehouse.create("events", Kind::PartitionedAppend).await;
    let payload = worker_payload(&table, &[(1, "a")]).await;
    let a = append_coordinator(&table).await;
    let b = append_coordinator(&table).await;
    let bound_to_a = a.deserialize(V, &payload).unwrap();

    let error = b.commit(bound_to_a.clone(), 1).await.unwrap_err();
    assert!(
        matches!(error, CoordinatorError::ForeignMessages { .. }),
        "{error}"
    );
    let text = error.to_string();
    assert!(
        text.contains(&format!("coordinator #{}", a.id().get())),
        "{text}"
    );
    assert!(
        text.contains(&format!("coordinator #{}", b.id().get())),
        "{text}"
    );
    assert!(matches!(
        b.merge([bound_to_a.clone()]).unwrap_err(),
        CoordinatorError::ForeignMessages { .. }
    ));
    assert!(matches!(
        b.abort(&bound_to_a).await.unwrap_err(),
        CoordinatorError::ForeignMessages { .. }
    ));
    assert_eq!(snapshot_count(&table).await, 0);
    // Still committable through its own coordinator.
    assert_eq!(
        a.commit(bound_to_a, 1).await.unwrap(),
        CommitOutcome::Committed { snapshot_id: 1 }
    );
}

#[tokio::test]
async fn merge_keeps_one_copy_of_identical_duplicates_and_refuses_conflicts() {
    let warehouse = Warehouse::new();
    let table = warehouse.create("events", Kind::PartitionedAppend).await;
    let rows: &[(i32, &str)] = &[(1, "a"), (2, "b")];
    let messages = worker_messages(&table, rows).await;
    let payload = serialize_list(&messages, V).unwrap();
    let coordinator = append_coordinator(&table).await;

    // The same payload delivered twice (a retried worker), and a duplicate inside one payload.
    let doubled = serialize_list(&[messages.clone(), messages.clone()].concat(), V).unwrap();
    let single = coordinator.deserialize(V, &doubled).unwrap();
    assert_eq!(single.len(), messages.len());
    // Bytes are deduplicated on views before owned values exist; the same bytes decoded
    // into owned values go through the owned path. Both keep the same files.
    let in_memory = coordinator
        .bind_messages(paimon_wire::deserialize_list(V, &doubled).unwrap())
        .unwrap();
    assert_eq!(
        serialize_list(single.messages(), V).unwrap(),
        serialize_list(in_memory.messages(), V).unwrap()
    );
    let merged = coordinator
        .merge([
            coordinator.deserialize(V, &payload).unwrap(),
            coordinator.deserialize(V, &payload).unwrap(),
            single,
        ])
        .unwrap();
    assert_eq!(merged.len(), messages.len());
    assert_eq!(merged.data_file_count(), 2);

    // The same file name with different metadata: refused, naming the file and both places.
    let mut liar = messages.clone();
    liar[0].new_files[0].row_count += 1;
    let liar_payload = serialize_list(&liar, V).unwrap();
    let error = coordinator
        .merge([
            coordinator.deserialize(V, &payload).unwrap(),
            coordinator.deserialize(V, &liar_payload).unwrap(),
        ])
        .unwrap_err();
    let CoordinatorError::Merge(conflict) = &error else {
        panic!("expected a merge conflict, got {error}");
    };
    assert_eq!(conflict.file_name, messages[0].new_files[0].file_name);
    assert_eq!(conflict.list, "new_files");
    assert_eq!(conflict.difference, "file metadata");
    assert_eq!((conflict.first.part, conflict.second.part), (0, 1));
    assert!(error.to_string().contains(&conflict.file_name), "{error}");
    // Inside one payload the views find the same conflict, with the messages' places, and
    // refuse exactly as the owned path does for the same messages in memory.
    let both = serialize_list(&[messages.clone(), liar.clone()].concat(), V).unwrap();
    let error = coordinator.deserialize(V, &both).unwrap_err();
    let CoordinatorError::Merge(conflict) = &error else {
        panic!("expected a merge conflict, got {error}");
    };
    assert_eq!(conflict.difference, "file metadata");
    assert_eq!(
        (conflict.first.message_index, conflict.second.message_index),
        (0, messages.len())
    );
    let owned = coordinator
        .bind_messages(paimon_wire::deserialize_list(V, &both).unwrap())
        .unwrap_err();
    assert_eq!(owned.to_string(), error.to_string());

    // Same file claimed for another bucket: refused too.
    let mut moved = messages.clone();
    moved[0].bucket = 0;
    moved[0].partition = moved[1].partition.clone();
    let moved_payload = serialize_list(&moved, V).unwrap();
    let error = coordinator
        .merge([
            coordinator.deserialize(V, &payload).unwrap(),
            coordinator.deserialize(V, &moved_payload).unwrap(),
        ])
        .unwrap_err();
    assert!(
        matches!(&error, CoordinatorError::Merge(c) if c.difference == "partition"),
        "{error}"
    );
    assert_eq!(snapshot_count(&table).await, 0);

    assert_eq!(
        coordinator.commit(merged, 1).await.unwrap(),
        CommitOutcome::Committed { snapshot_id: 1 }
    );
    assert_eq!(read_rows(&table).await, expected(rows));
}

#[tokio::test]
async fn an_empty_payload_commits_nothing() {
    let warehouse = Warehouse::new();
    let table = warehouse.create("events", Kind::PartitionedAppend).await;
    let coordinator = append_coordinator(&table).await;
    let empty = serialize_list(&[], V).unwrap();
    let bound = coordinator.deserialize(V, &empty).unwrap();
    assert!(bound.is_empty());
    assert_eq!(
        coordinator.commit(bound, 1).await.unwrap(),
        CommitOutcome::NothingToCommit
    );
    assert_eq!(snapshot_count(&table).await, 0);
}

#[tokio::test]
async fn postpone_tables_keep_standard_and_fixed_bucket_messages_apart() {
    let warehouse = Warehouse::new();
    let table = warehouse.create("postponed", Kind::Postpone).await;

    // Fixed-bucket writer: buckets 0..2 with total_buckets = 2.
    let builder = table
        .new_postpone_fixed_bucket_write_builder()
        .unwrap()
        .with_commit_user(USER)
        .unwrap();
    let mut write = builder.new_write().unwrap();
    let fixed_rows: &[(i32, &str)] = &[(1, "x"), (2, "x"), (3, "x"), (4, "x")];
    write
        .write_arrow_batch(&coordinator::support::batch(fixed_rows))
        .await
        .unwrap();
    let fixed_messages = write.prepare_commit().await.unwrap();
    assert!(fixed_messages.iter().all(|m| m.total_buckets == Some(2)));
    let fixed_payload = serialize_list(&fixed_messages, V).unwrap();

    // Standard writer: bucket -2.
    let standard_messages = worker_messages(&table, &[(20, "y")]).await;
    assert!(standard_messages.iter().all(|m| m.bucket == -2));
    let standard_payload = serialize_list(&standard_messages, V).unwrap();

    let standard = append_coordinator(&table).await;
    let error = standard.deserialize(V, &fixed_payload).unwrap_err();
    let rejection = error.as_validation().expect("validation error");
    assert_eq!(rejection.field, "total_buckets");
    assert!(rejection.reason.contains("PostponeFixedBucket"), "{error}");

    let fixed = bind(&table, Binding::append(USER).postpone_fixed_bucket()).await;
    assert_eq!(fixed.binding().write_kind, WriteKind::PostponeFixedBucket);
    let error = fixed.deserialize(V, &standard_payload).unwrap_err();
    assert_eq!(
        error.as_validation().expect("validation").field,
        "total_buckets"
    );
    assert_eq!(snapshot_count(&table).await, 0);

    let outcome = fixed
        .commit(fixed.deserialize(V, &fixed_payload).unwrap(), 1)
        .await
        .unwrap();
    assert_eq!(outcome, CommitOutcome::Committed { snapshot_id: 1 });
    assert_eq!(read_rows(&table).await, expected(fixed_rows));

    // Fixed-bucket overwrite: the wire format does not carry the overwrite flag, so the
    // coordinator's mode supplies it (the paimon crate refuses unmarked messages here).
    let builder = table
        .new_postpone_fixed_bucket_write_builder()
        .unwrap()
        .with_commit_user(USER)
        .unwrap()
        .with_overwrite();
    let mut write = builder.new_write().unwrap();
    let replacement: &[(i32, &str)] = &[(7, "z"), (8, "z")];
    write
        .write_arrow_batch(&coordinator::support::batch(replacement))
        .await
        .unwrap();
    let payload = serialize_list(&write.prepare_commit().await.unwrap(), V).unwrap();
    let overwrite = bind(&table, Binding::overwrite(USER).postpone_fixed_bucket()).await;
    let outcome = overwrite
        .commit(overwrite.deserialize(V, &payload).unwrap(), 2)
        .await
        .unwrap();
    assert_eq!(outcome, CommitOutcome::Committed { snapshot_id: 2 });
    assert_eq!(read_rows(&table).await, expected(replacement));

    // A fixed-bucket coordinator on a table that is not a postpone table is refused at bind.
    let other = warehouse.create("events", Kind::PartitionedAppend).await;
    let error = Coordinator::bind(other, Binding::append(USER).postpone_fixed_bucket())
        .await
        .unwrap_err();
    assert!(
        matches!(error, CoordinatorError::Unsupported { .. }),
        "{error}"
    );
}

#[tokio::test]
async fn external_paths_are_accepted_under_the_configured_root_only() {
    let warehouse = Warehouse::new();
    let table = warehouse.create("ext", Kind::ExternalAppend).await;
    let messages = worker_messages(&table, &[(1, "a"), (2, "a")]).await;
    let path = messages[0].new_files[0]
        .external_path
        .clone()
        .expect("the writer used the external root");
    let coordinator = append_coordinator(&table).await;

    for (bad, why) in [
        (
            path.replace("external-root", "elsewhere"),
            "is not where this table keeps file",
        ),
        (
            path.replace("external-root", "external-root/../elsewhere"),
            "is not where this table keeps file",
        ),
        (
            format!("{path}.other"),
            "is not where this table keeps file",
        ),
    ] {
        let mut crafted = messages.clone();
        crafted[0].new_files[0].external_path = Some(bad.clone());
        let error = coordinator
            .deserialize(V, &serialize_list(&crafted, V).unwrap())
            .unwrap_err();
        let rejection = error.as_validation().unwrap_or_else(|| panic!("{error}"));
        assert_eq!(rejection.rule.name(), "external-path", "{bad}");
        assert!(rejection.reason.contains(why), "{bad}: {error}");
    }

    let bound = coordinator
        .deserialize(V, &serialize_list(&messages, V).unwrap())
        .unwrap();
    assert_eq!(
        coordinator.commit(bound, 1).await.unwrap(),
        CommitOutcome::Committed { snapshot_id: 1 }
    );
    assert_eq!(read_rows(&table).await, expected(&[(1, "a"), (2, "a")]));
}
