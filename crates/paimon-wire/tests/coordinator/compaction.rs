//! Compaction results from writers: the coordinator commits them as Java's
//! `FileStoreCommitImpl` does — an APPEND snapshot of the new files, then a COMPACT snapshot
//! of the compaction, under one identifier — exactly once, and refuses results that do not
//! fit the table.
//!
//! The paimon crate's writer does not compact, so a compaction is made here the way a Java
//! writer reports one: the files of round 1 are `compact_before`, and a second writer's files
//! holding the same rows, moved to level 5, are `compact_after`.

use std::collections::BTreeSet;

use paimon::spec::{CommitKind, DataFileMeta, FileKind, Manifest, ManifestList};
use paimon::table::{CommitMessage, Table, TableCommit};
use paimon_wire::coordinator::{Binding, CommitOutcome, Coordinator, CoordinatorError, Rule};
use paimon_wire::{serialize_list, SerializerVersion};

use super::support::{
    bind, expected, find_files, read_rows, snapshot_count, worker_messages, Kind, Warehouse, USER,
};

const V: SerializerVersion = SerializerVersion::CURRENT;
const ROUND_1: &[(i32, &str)] = &[(1, "a"), (2, "a"), (3, "b"), (4, "b"), (5, "a"), (6, "b")];
const ROUND_2: &[(i32, &str)] = &[(11, "a"), (12, "b"), (13, "a"), (14, "b")];
const COMPACTED_LEVEL: i32 = 5;

/// The table after round 1 (committed under identifier 1), and round 2: new files plus the
/// compaction of every round-1 file into a file at level 5 holding the same rows.
struct Setup {
    warehouse: Warehouse,
    table: Table,
    coordinator: Coordinator,
    round_1_files: BTreeSet<String>,
    compacted_files: BTreeSet<String>,
    round_2: Vec<CommitMessage>,
}

async fn setup() -> Setup {
    let warehouse = Warehouse::new();
    let table = warehouse.create("users", Kind::FixedBucketPk).await;
    let coordinator = bind(&table, Binding::append(USER).with_compaction()).await;
    let round_1 = worker_messages(&table, ROUND_1).await;
    let bound = coordinator.bind_messages(round_1.clone()).unwrap();
    assert_eq!(
        coordinator.commit(bound, 1).await.unwrap(),
        CommitOutcome::Committed { snapshot_id: 1 }
    );
    let rewrite = worker_messages(&table, ROUND_1).await;
    let mut round_2 = worker_messages(&table, ROUND_2).await;
    let mut round_1_files = BTreeSet::new();
    let mut compacted_files = BTreeSet::new();
    for before in &round_1 {
        let mut compaction = CommitMessage::new(before.partition.clone(), before.bucket, vec![]);
        compaction.compact_before = before.new_files.clone();
        compaction.compact_after = rewritten_at(&rewrite, before, COMPACTED_LEVEL);
        round_1_files.extend(before.new_files.iter().map(|f| f.file_name.clone()));
        compacted_files.extend(compaction.compact_after.iter().map(|f| f.file_name.clone()));
        round_2.push(compaction);
    }
    Setup {
        warehouse,
        table,
        coordinator,
        round_1_files,
        compacted_files,
        round_2,
    }
}

/// The new files `rewrite` wrote to `message`'s partition and bucket, moved to `level`: a
/// compaction result for that bucket holding the rows `rewrite` wrote there. A compaction
/// keeps the sequence numbers of the rows it rewrites, so the results carry the sequence
/// range of the files they replace (`message`'s compaction inputs, else its new files).
fn rewritten_at(
    rewrite: &[CommitMessage],
    message: &CommitMessage,
    level: i32,
) -> Vec<DataFileMeta> {
    let after = rewrite
        .iter()
        .find(|m| m.partition == message.partition && m.bucket == message.bucket)
        .expect("the rewrite writes the same buckets");
    let inputs = if message.compact_before.is_empty() {
        &message.new_files
    } else {
        &message.compact_before
    };
    let lowest = inputs.iter().map(|f| f.min_sequence_number).min().unwrap();
    let highest = inputs.iter().map(|f| f.max_sequence_number).max().unwrap();
    let mut files = after.new_files.clone();
    for file in &mut files {
        file.level = level;
        file.min_sequence_number = lowest;
        file.max_sequence_number = highest;
    }
    files
}

/// Commits round 2 without its compaction under identifier 2 (snapshot 2): an identifier
/// committed by an APPEND snapshot that recorded no compaction. (A coordinator killed between
/// its APPEND and COMPACT snapshots records its commit's digest in the APPEND snapshot; that
/// crash is run for real, with SIGKILL, by `crates/paimon-wire-cli/tests/crash_points.rs`.)
async fn commit_append_part_of_round_2(setup: &Setup) {
    let mut data_only = setup.round_2.clone();
    data_only.retain(|m| m.compact_before.is_empty());
    let bound = setup.coordinator.bind_messages(data_only).unwrap();
    assert_eq!(
        setup.coordinator.commit(bound, 2).await.unwrap(),
        CommitOutcome::Committed { snapshot_id: 2 }
    );
}

/// Reruns all of round 2 (compaction included) under identifier 2, twice: each rerun
/// reports the identifier committed by its APPEND snapshot (snapshot 2) and commits nothing.
async fn rerun_round_2_twice_reports_the_append_snapshot(setup: &Setup) {
    for _ in 0..2 {
        let bound = setup
            .coordinator
            .bind_messages(setup.round_2.clone())
            .unwrap();
        assert_eq!(
            setup.coordinator.commit(bound, 2).await.unwrap(),
            CommitOutcome::AlreadyCommitted {
                snapshot_id: Some(2)
            }
        );
    }
}

/// Commit kind, user and identifier of snapshot `id`.
async fn snapshot_kind(table: &Table, id: i64) -> (CommitKind, String, i64) {
    let snapshot = table.snapshot_manager().get_snapshot(id).await.unwrap();
    (
        snapshot.commit_kind().clone(),
        snapshot.commit_user().to_string(),
        snapshot.commit_identifier(),
    )
}

/// The (kind, level, file name) entries of snapshot `id`'s delta manifests.
async fn delta_entries(table: &Table, id: i64) -> BTreeSet<(bool, i32, String)> {
    let manager = table.snapshot_manager();
    let snapshot = manager.get_snapshot(id).await.unwrap();
    let io = table.file_io();
    let mut entries = BTreeSet::new();
    let metas = ManifestList::read(io, &manager.manifest_path(snapshot.delta_manifest_list()))
        .await
        .unwrap();
    for meta in metas {
        for entry in Manifest::read(io, &manager.manifest_path(meta.file_name()))
            .await
            .unwrap()
        {
            entries.insert((
                *entry.kind() == FileKind::Add,
                entry.file().level,
                entry.file().file_name.clone(),
            ));
        }
    }
    entries
}

fn all_rows() -> Vec<(i32, String, String)> {
    expected(&[ROUND_1, ROUND_2].concat())
}

async fn check_compact_snapshot(setup: &Setup, compact_id: i64) {
    let table = &setup.table;
    assert_eq!(
        snapshot_kind(table, compact_id - 1).await,
        (CommitKind::APPEND, USER.to_string(), 2)
    );
    assert_eq!(
        snapshot_kind(table, compact_id).await,
        (CommitKind::COMPACT, USER.to_string(), 2)
    );
    let entries = delta_entries(table, compact_id).await;
    let deleted: BTreeSet<String> = entries
        .iter()
        .filter(|(add, level, _)| !add && *level == 0)
        .map(|e| e.2.clone())
        .collect();
    let added: BTreeSet<String> = entries
        .iter()
        .filter(|(add, level, _)| *add && *level == COMPACTED_LEVEL)
        .map(|e| e.2.clone())
        .collect();
    assert_eq!(entries.len(), deleted.len() + added.len(), "{entries:?}");
    assert_eq!(deleted, setup.round_1_files);
    assert_eq!(added, setup.compacted_files);
    assert_eq!(read_rows(table).await, all_rows(), "every row once");
}

#[tokio::test]
async fn a_commit_with_compaction_writes_append_then_compact_once() {
    let setup = setup().await;
    let payload = serialize_list(&setup.round_2, V).unwrap();
    let bound = setup.coordinator.deserialize(V, &payload).unwrap();
    assert_eq!(
        setup.coordinator.commit(bound, 2).await.unwrap(),
        CommitOutcome::Committed { snapshot_id: 3 }
    );
    check_compact_snapshot(&setup, 3).await;

    // A rerun commits neither snapshot again.
    let bound = setup.coordinator.deserialize(V, &payload).unwrap();
    assert_eq!(
        setup.coordinator.commit(bound, 2).await.unwrap(),
        CommitOutcome::AlreadyCommitted {
            snapshot_id: Some(3)
        }
    );
    assert_eq!(snapshot_count(&setup.table).await, 3);
}

#[tokio::test]
async fn a_rerun_that_adds_a_compaction_to_a_committed_identifier_commits_nothing() {
    let setup = setup().await;
    // Identifier 2 is committed without a compaction; a rerun carrying one is not the
    // crash-recovery case (the APPEND snapshot recorded no compaction), so it commits
    // nothing and reports the identifier committed, as Java's committer does.
    commit_append_part_of_round_2(&setup).await;
    assert_eq!(
        setup.coordinator.commit_status(2).await.unwrap(),
        Some(CommitOutcome::AlreadyCommitted {
            snapshot_id: Some(2)
        })
    );
    rerun_round_2_twice_reports_the_append_snapshot(&setup).await;
    assert_eq!(snapshot_count(&setup.table).await, 2);
    assert_eq!(read_rows(&setup.table).await, all_rows(), "every row once");
}

#[tokio::test]
async fn a_new_file_compacted_by_its_own_commit_is_added_then_removed() {
    let setup = setup().await;
    // Java's writer may compact a file it flushed in the same round: the file is in
    // new_files and in compact_before, and the APPEND snapshot comes first.
    let mut round_2 = setup.round_2.clone();
    let rewrite = worker_messages(&setup.table, ROUND_2).await;
    let fresh = round_2[0].clone();
    let mut compaction = CommitMessage::new(fresh.partition.clone(), fresh.bucket, vec![]);
    compaction.compact_before = fresh.new_files.clone();
    compaction.compact_after = rewritten_at(&rewrite, &fresh, 1);
    round_2.push(compaction);
    let bound = setup.coordinator.bind_messages(round_2).unwrap();
    assert_eq!(
        setup.coordinator.commit(bound, 2).await.unwrap(),
        CommitOutcome::Committed { snapshot_id: 3 }
    );
    assert_eq!(
        snapshot_kind(&setup.table, 2).await,
        (CommitKind::APPEND, USER.to_string(), 2)
    );
    assert_eq!(
        snapshot_kind(&setup.table, 3).await,
        (CommitKind::COMPACT, USER.to_string(), 2)
    );
    assert!(!fresh.new_files.is_empty());
    let appended = delta_entries(&setup.table, 2).await;
    let entries = delta_entries(&setup.table, 3).await;
    for file in &fresh.new_files {
        assert!(
            appended.contains(&(true, 0, file.file_name.clone())),
            "{appended:?}"
        );
        assert!(entries.contains(&(false, 0, file.file_name.clone())));
    }
    assert_eq!(read_rows(&setup.table).await, all_rows(), "every row once");
}

/// Commits `messages` under identifier 2 and returns the refusal's rule and field; checks
/// nothing was committed.
async fn refusal(setup: &Setup, messages: Vec<CommitMessage>) -> (Rule, String) {
    let before = snapshot_count(&setup.table).await;
    let error = match setup.coordinator.bind_messages(messages) {
        Err(error) => error,
        Ok(bound) => setup.coordinator.commit(bound, 2).await.unwrap_err(),
    };
    assert_eq!(snapshot_count(&setup.table).await, before, "{error}");
    let rejection = error
        .as_validation()
        .unwrap_or_else(|| panic!("not a validation error: {error}"));
    (rejection.rule, rejection.field.clone())
}

fn compaction_index(messages: &[CommitMessage]) -> usize {
    messages
        .iter()
        .position(|m| !m.compact_before.is_empty())
        .unwrap()
}

#[tokio::test]
async fn compaction_results_that_do_not_fit_the_table_are_refused_by_rule() {
    let setup = setup().await;
    let at = compaction_index(&setup.round_2);

    // compact_before must be live at the level named.
    let mut messages = setup.round_2.clone();
    messages[at].compact_before[0].level = 2;
    assert_eq!(
        refusal(&setup, messages).await,
        (Rule::NotLive, "compact_before[0].file_name".into())
    );

    // A live file sent as a compaction result without being compacted: with its only
    // input gone, the compaction has none (rule compact-inputs).
    let mut messages = setup.round_2.clone();
    let mut live = messages[at].compact_before[0].clone();
    live.level = COMPACTED_LEVEL;
    messages[at].compact_after.push(live);
    messages[at].compact_before.remove(0);
    let (rule, _) = refusal(&setup, messages).await;
    assert_eq!(rule, Rule::CompactInputs);

    // compact_after must exist in storage.
    let mut messages = setup.round_2.clone();
    messages[at].compact_after[0].file_name = "data-never-written.parquet".into();
    assert_eq!(
        refusal(&setup, messages).await,
        (Rule::MissingFile, "compact_after[0].file_name".into())
    );

    // A file the commit adds may be compacted by it, but not be a compaction result too.
    let mut messages = setup.round_2.clone();
    let mut added = messages[0].new_files[0].clone();
    added.level = 1;
    added.min_sequence_number = messages[at].compact_before[0].min_sequence_number;
    added.max_sequence_number = messages[at].compact_before[0].max_sequence_number;
    added.min_key = messages[at].compact_before[0].min_key.clone();
    added.max_key = messages[at].compact_before[0].max_key.clone();
    messages[at].compact_after.push(added);
    let (rule, _) = refusal(&setup, messages).await;
    assert_eq!(rule, Rule::TwoRoles);

    // The untouched commit goes through.
    let bound = setup
        .coordinator
        .bind_messages(setup.round_2.clone())
        .unwrap();
    setup.coordinator.commit(bound, 2).await.unwrap();
    check_compact_snapshot(&setup, 3).await;
}

/// The messages of `round_2` that carry the compaction of the round-1 files.
fn compaction_part(round_2: &[CommitMessage]) -> Vec<CommitMessage> {
    round_2
        .iter()
        .filter(|m| !m.compact_before.is_empty())
        .cloned()
        .collect()
}

/// Another job (its own commit user, identifier 1) compacts every round-1 file into files of
/// its own holding the same rows, as a Java dedicated compaction job does.
async fn another_job_compacts_round_1(setup: &Setup) -> CommitOutcome {
    let rewrite = worker_messages(&setup.table, ROUND_1).await;
    let mut theirs = compaction_part(&setup.round_2);
    for message in &mut theirs {
        message.compact_after = rewritten_at(&rewrite, message, COMPACTED_LEVEL);
    }
    let other = bind(
        &setup.table,
        Binding::append("dedicated-compaction").with_compaction(),
    )
    .await;
    let bound = other.bind_messages(theirs).unwrap();
    other.commit(bound, 1).await.unwrap()
}

#[tokio::test]
async fn a_compaction_whose_inputs_a_concurrent_commit_removed_fails_and_commits_nothing() {
    let setup = setup().await;
    let compaction = compaction_part(&setup.round_2);
    // Another job (e.g. a Java dedicated compaction job) compacts the same files first.
    assert_eq!(
        another_job_compacts_round_1(&setup).await,
        CommitOutcome::Committed { snapshot_id: 2 }
    );
    // The coordinator's own check sees the inputs gone.
    let bound = setup.coordinator.bind_messages(compaction.clone()).unwrap();
    let error = setup.coordinator.commit(bound, 2).await.unwrap_err();
    assert_eq!(
        error.as_validation().unwrap().rule,
        Rule::NotLive,
        "{error}"
    );
    // Past that check (a commit between the check and the publication), the paimon crate's
    // COMPACT conflict check refuses it as Java's does: files to delete must be live.
    let error = TableCommit::new(setup.table.clone(), USER.to_string())
        .commit_with_identifier(compaction, 2)
        .await
        .unwrap_err();
    assert!(error.to_string().contains("Delete conflict"), "{error}");
    assert_eq!(snapshot_count(&setup.table).await, 2);
    assert_eq!(read_rows(&setup.table).await, expected(ROUND_1));
}

#[tokio::test]
async fn a_rerun_whose_compaction_inputs_were_removed_since_the_append_snapshot_drops_the_compaction(
) {
    let setup = setup().await;
    // Identifier 2's APPEND snapshot is in (snapshot 2); the coordinator died before its
    // COMPACT snapshot.
    commit_append_part_of_round_2(&setup).await;
    // Meanwhile another job compacts the same round-1 files (snapshot 3).
    assert_eq!(
        another_job_compacts_round_1(&setup).await,
        CommitOutcome::Committed { snapshot_id: 3 }
    );
    // The rerun of identifier 2 must not commit its compaction: its inputs are gone, and
    // its results hold the same rows as the other job's. The identifier is committed by its
    // APPEND snapshot; the rerun says so and commits nothing, and every rerun after it too.
    rerun_round_2_twice_reports_the_append_snapshot(&setup).await;
    assert_eq!(snapshot_count(&setup.table).await, 3);
    assert_eq!(read_rows(&setup.table).await, all_rows(), "every row once");
    // The dropped compaction's results stay behind, referenced by no snapshot, as Java
    // leaves them (the APPEND snapshot recorded no compaction, so the rerun cannot tell the
    // results are its own: it deletes nothing).
    for name in &setup.compacted_files {
        assert_eq!(
            find_files(std::path::Path::new(setup.warehouse.path()), name).len(),
            1,
            "{name}"
        );
    }
}

#[tokio::test]
async fn a_rerun_after_the_append_snapshot_with_other_new_files_is_refused() {
    let setup = setup().await;
    // Identifier 2's APPEND snapshot is in (snapshot 2), its COMPACT snapshot is not.
    commit_append_part_of_round_2(&setup).await;
    // The identifier reused for other new files, beside the same compaction: committing the
    // compaction alone would drop those files while reporting the identifier committed.
    let mut reused = compaction_part(&setup.round_2);
    reused.extend(worker_messages(&setup.table, &[(21, "a")]).await);
    let bound = setup.coordinator.bind_messages(reused).unwrap();
    match setup.coordinator.commit(bound, 2).await {
        Err(CoordinatorError::IdentifierReused {
            identifier: 2,
            snapshot_id: 2,
            ..
        }) => {}
        other => panic!("expected IdentifierReused, got {other:?}"),
    }
    assert_eq!(snapshot_count(&setup.table).await, 2);
}

#[tokio::test]
async fn two_payloads_compacting_one_file_are_a_merge_conflict() {
    let setup = setup().await;
    // Two writers each compact the round-1 files, into files of their own: both rewrites
    // hold the same rows, so committing both would keep every row twice.
    let ours = compaction_part(&setup.round_2);
    let rewrite = worker_messages(&setup.table, ROUND_1).await;
    let mut theirs = ours.clone();
    for message in &mut theirs {
        message.compact_after = rewritten_at(&rewrite, message, COMPACTED_LEVEL);
    }
    let merged = setup.coordinator.merge([
        setup.coordinator.bind_messages(ours.clone()).unwrap(),
        setup.coordinator.bind_messages(theirs).unwrap(),
    ]);
    match merged {
        Err(CoordinatorError::Merge(conflict)) => {
            assert_eq!(conflict.list, "compact_before", "{conflict}");
            assert_eq!((conflict.first.part, conflict.second.part), (0, 1));
        }
        other => panic!("expected a merge conflict, got {other:?}"),
    }
    // The same payload delivered twice is still one copy.
    let twice = setup
        .coordinator
        .merge([
            setup.coordinator.bind_messages(ours.clone()).unwrap(),
            setup.coordinator.bind_messages(ours).unwrap(),
        ])
        .unwrap();
    assert_eq!(
        twice.messages().len(),
        compaction_part(&setup.round_2).len()
    );
    assert_eq!(snapshot_count(&setup.table).await, 1);
}

#[tokio::test]
async fn a_compaction_and_new_files_of_one_bucket_from_two_payloads_are_two_writers() {
    let setup = setup().await;
    // Round 2 as two payloads: one writer's new files, another writer's compaction. Some
    // (partition, bucket) then has two writers, which a primary-key table refuses.
    let mut data_only = setup.round_2.clone();
    data_only.retain(|m| m.compact_before.is_empty());
    let merged = setup.coordinator.merge([
        setup.coordinator.bind_messages(data_only).unwrap(),
        setup
            .coordinator
            .bind_messages(compaction_part(&setup.round_2))
            .unwrap(),
    ]);
    match merged {
        Err(CoordinatorError::SharedBucket(shared)) => {
            assert_eq!((shared.first.part, shared.second.part), (0, 1), "{shared}");
        }
        other => panic!("expected SharedBucket, got {other:?}"),
    }
    // As one payload (one writer) the same messages merge.
    setup
        .coordinator
        .merge([setup
            .coordinator
            .bind_messages(setup.round_2.clone())
            .unwrap()])
        .unwrap();
}
