//! The staged commit (`Coordinator::begin`): payloads added one at a time, on the streamed
//! path when they only add files, committed once. Every suite that commits through
//! `support::commit_payloads` or `support::send` also runs it against the materialized path
//! on a copy of the table; these tests cover what only the staged commit has: its manifests
//! written ahead (deleted when nothing publishes them), its switch to the materialized path,
//! and its refusal of anything after a refused payload.

use std::path::Path;

use paimon::table::Table;
use paimon_wire::coordinator::{Binding, CommitOutcome, CoordinatorError, Rule, StagedPath};
use paimon_wire::{serialize_list, SerializerVersion};

use super::support::{
    append_coordinator, bind, commit_payloads, expected, find_files, read_rows, rule_of,
    worker_messages, worker_payload, Kind, Warehouse, USER,
};

const V: SerializerVersion = SerializerVersion::CURRENT;

/// The files in the table's manifest directory.
fn manifests(table: &Table) -> Vec<String> {
    let dir = Path::new(table.location().trim_start_matches("file:")).join("manifest");
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

#[tokio::test]
async fn a_staged_append_streams_commits_every_row_and_a_rerun_finds_it_committed() {
    let warehouse = Warehouse::new();
    let table = warehouse.create("events", Kind::PartitionedAppend).await;
    let coordinator = append_coordinator(&table).await;
    let batches: [&[(i32, &str)]; 3] = [&[(1, "a"), (2, "b")], &[(3, "a")], &[(4, "c"), (5, "b")]];
    let mut payloads = Vec::new();
    for rows in batches {
        payloads.push(worker_payload(&table, rows).await);
    }

    let mut staged = coordinator.begin(7);
    for payload in &payloads {
        staged.add_payload(V, payload).await.unwrap();
    }
    assert_eq!(staged.path(), StagedPath::Streamed);
    assert_eq!(staged.payload_count(), 3);
    let outcome = staged.commit().await.unwrap();
    let CommitOutcome::Committed { snapshot_id } = outcome else {
        panic!("expected a commit, got {outcome:?}");
    };
    let all: Vec<(i32, &str)> = batches
        .iter()
        .flat_map(|rows| rows.iter().copied())
        .collect();
    assert_eq!(read_rows(&table).await, expected(&all));
    let after_commit = manifests(&table);

    // A coordinator that lost the answer stages the same payloads again under the same
    // identifier: the snapshot holds this very commit, and the rerun's own manifests, which
    // nothing publishes, are deleted.
    let rerun = append_coordinator(&table).await;
    let mut staged = rerun.begin(7);
    for payload in &payloads {
        staged.add_payload(V, payload).await.unwrap();
    }
    assert_eq!(
        staged.commit().await.unwrap(),
        CommitOutcome::AlreadyCommitted {
            snapshot_id: Some(snapshot_id)
        }
    );
    assert_eq!(manifests(&table), after_commit);
    assert_eq!(read_rows(&table).await, expected(&all));
}

#[tokio::test]
async fn a_streamed_commit_refused_at_commit_leaves_no_manifest_behind() {
    let warehouse = Warehouse::new();
    let table = warehouse.create("events", Kind::PartitionedAppend).await;
    let coordinator = append_coordinator(&table).await;
    let payload = worker_payload(&table, &[(1, "a"), (2, "b")]).await;
    let mut staged = coordinator.begin(1);
    staged.add_payload(V, &payload).await.unwrap();
    staged.commit().await.unwrap();
    let before = manifests(&table);

    // The same files again under a new identifier: already live, refused at commit, after
    // the staged commit wrote its manifests.
    let fresh = worker_payload(&table, &[(3, "a")]).await;
    let mut staged = coordinator.begin(2);
    staged.add_payload(V, &fresh).await.unwrap();
    staged.add_payload(V, &payload).await.unwrap();
    assert_eq!(staged.path(), StagedPath::Streamed);
    let error = staged.commit().await.unwrap_err();
    assert_eq!(rule_of(&error), Rule::AlreadyLive, "{error}");
    assert!(error.to_string().contains("payload 1"), "{error}");
    assert_eq!(manifests(&table), before);
    assert_eq!(read_rows(&table).await, expected(&[(1, "a"), (2, "b")]));
}

#[tokio::test]
async fn an_aborted_staged_commit_deletes_its_manifests() {
    let warehouse = Warehouse::new();
    // Manifests of 1 KB, rolled every 1,000 entries (Paimon's rolling check): a payload of
    // 2,500 files fills two before the commit. The files need not exist: the existence
    // check answers at commit, which never comes.
    let table = warehouse
        .create_with_options(
            "events",
            Kind::PartitionedAppend,
            &[("manifest.target-file-size", "1 kb")],
        )
        .await;
    let coordinator = append_coordinator(&table).await;
    let before = manifests(&table);
    let mut messages = worker_messages(&table, &[(1, "a")]).await;
    let template = messages[0].new_files[0].clone();
    messages[0].new_files = (0..2_500)
        .map(|i| {
            let mut file = template.clone();
            file.file_name = format!("data-staged-{i}.parquet");
            file
        })
        .collect();
    let mut staged = coordinator.begin(1);
    staged
        .add_payload(V, &serialize_list(&messages, V).unwrap())
        .await
        .unwrap();
    // The writer encodes on a thread of its own and writes the full files it handed back
    // at the next payload that adds a file.
    let mut waited = 0;
    while manifests(&table).len() <= before.len() && waited < 50 {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        let payload = worker_payload(&table, &[(10 + waited, "a")]).await;
        staged.add_payload(V, &payload).await.unwrap();
        waited += 1;
    }
    assert!(
        manifests(&table).len() > before.len(),
        "no manifest was written while staging"
    );
    // And one payload of a worker's real files.
    let payload = worker_payload(&table, &[(1, "b")]).await;
    staged.add_payload(V, &payload).await.unwrap();
    let report = staged.abort().await.unwrap();
    assert_eq!(manifests(&table), before);
    assert!(read_rows(&table).await.is_empty());
    // The payloads' files too, read back from the manifests: the 2,500 named ones and the
    // workers' real files, which are gone from storage.
    assert!(
        report.deleted.len() > 2_500,
        "{} deleted",
        report.deleted.len()
    );
    assert!(report.skipped.is_empty(), "{:?}", report.skipped);
    let real = report
        .deleted
        .iter()
        .find(|name| !name.starts_with("data-staged-"))
        .expect("a worker's file");
    assert!(
        find_files(warehouse.dir.path(), real).is_empty(),
        "{real} is still in storage"
    );
}

#[tokio::test]
async fn a_payload_refused_while_staging_refuses_the_commit() {
    let warehouse = Warehouse::new();
    let table = warehouse.create("events", Kind::PartitionedAppend).await;
    let coordinator = append_coordinator(&table).await;
    let good = worker_payload(&table, &[(1, "a")]).await;
    let mut messages = worker_messages(&table, &[(2, "a")]).await;
    messages[0].new_files[0].file_name = "../escape.parquet".into();
    let bad = serialize_list(&messages, V).unwrap();

    let mut staged = coordinator.begin(1);
    staged.add_payload(V, &good).await.unwrap();
    let error = staged.add_payload(V, &bad).await.unwrap_err();
    assert_eq!(rule_of(&error), Rule::PlainFileName, "{error}");
    // Nothing is taken after a refusal, and the commit is refused.
    let after = staged.add_payload(V, &good).await.unwrap_err();
    assert!(
        matches!(after, CoordinatorError::Unsupported { .. }),
        "{after}"
    );
    let commit = staged.commit().await.unwrap_err();
    assert!(
        matches!(commit, CoordinatorError::Unsupported { .. }),
        "{commit}"
    );
    assert!(commit.to_string().contains("refused"), "{commit}");
    assert!(read_rows(&table).await.is_empty());
}

/// A payload that deletes a file cannot stream: the staged commit reads the files it
/// streamed back from its manifests and commits the materialized way, with the snapshot the
/// materialized path makes (`commit_payloads` compares them on a copy of the table).
#[tokio::test]
async fn a_payload_that_cannot_stream_turns_the_commit_materialized() {
    let warehouse = Warehouse::new();
    let table = warehouse.create("events", Kind::PartitionedAppend).await;
    let coordinator = bind(&table, Binding::append(USER).with_deletes()).await;
    let first = worker_messages(&table, &[(1, "a"), (2, "b")]).await;
    assert!(matches!(
        commit_payloads(&coordinator, std::slice::from_ref(&first), 1)
            .await
            .unwrap(),
        CommitOutcome::Committed { .. }
    ));

    let added = worker_messages(&table, &[(3, "a"), (4, "c")]).await;
    let more = worker_messages(&table, &[(5, "b")]).await;
    let mut deleting = first.clone();
    for message in &mut deleting {
        message.deleted_files = std::mem::take(&mut message.new_files);
    }
    let payloads = [added.clone(), more.clone(), deleting.clone()];
    let outcome = commit_payloads(&coordinator, &payloads, 2).await.unwrap();
    assert!(
        matches!(outcome, CommitOutcome::Committed { .. }),
        "{outcome:?}"
    );
    assert_eq!(
        read_rows(&table).await,
        expected(&[(3, "a"), (4, "c"), (5, "b")])
    );

    // The same switch, watched on the staged commit itself.
    let warehouse = Warehouse::new();
    let table = warehouse.create("events", Kind::PartitionedAppend).await;
    let coordinator = bind(&table, Binding::append(USER).with_deletes()).await;
    let first = worker_messages(&table, &[(1, "a")]).await;
    let mut staged = coordinator.begin(1);
    staged
        .add_payload(V, &serialize_list(&first, V).unwrap())
        .await
        .unwrap();
    staged.commit().await.unwrap();
    let mut deleting = first.clone();
    for message in &mut deleting {
        message.deleted_files = std::mem::take(&mut message.new_files);
    }
    let mut staged = coordinator.begin(2);
    let added = worker_payload(&table, &[(2, "b")]).await;
    staged.add_payload(V, &added).await.unwrap();
    assert_eq!(staged.path(), StagedPath::Streamed);
    staged
        .add_payload(V, &serialize_list(&deleting, V).unwrap())
        .await
        .unwrap();
    assert_eq!(staged.path(), StagedPath::Materialized);
    staged.commit().await.unwrap();
    assert_eq!(read_rows(&table).await, expected(&[(2, "b")]));
}

/// Two payloads writing one bucket of a primary-key table: refused on both paths
/// (`commit_payloads` runs both), naming the payloads.
#[tokio::test]
async fn two_writers_of_one_bucket_are_refused_on_the_streamed_path() {
    let warehouse = Warehouse::new();
    let table = warehouse.create("orders", Kind::FixedBucketPk).await;
    let coordinator = append_coordinator(&table).await;
    let one = worker_messages(&table, &[(1, "a")]).await;
    let two = worker_messages(&table, &[(1, "a")]).await;
    let error = commit_payloads(&coordinator, &[one, two], 1)
        .await
        .unwrap_err();
    assert!(
        matches!(error, CoordinatorError::SharedBucket(_)),
        "{error}"
    );
}

/// A worker's payload delivered twice: its files are committed once on both paths.
#[tokio::test]
async fn a_payload_delivered_twice_is_committed_once_on_the_streamed_path() {
    let warehouse = Warehouse::new();
    let table = warehouse.create("events", Kind::PartitionedAppend).await;
    let coordinator = append_coordinator(&table).await;
    let messages = worker_messages(&table, &[(1, "a"), (2, "b")]).await;
    let other = worker_messages(&table, &[(3, "c")]).await;
    commit_payloads(&coordinator, &[messages.clone(), other, messages], 1)
        .await
        .unwrap();
    assert_eq!(
        read_rows(&table).await,
        expected(&[(1, "a"), (2, "b"), (3, "c")])
    );
}

/// A file missing from storage is refused at commit, by the existence check of the batch of
/// payloads it came in, naming its payload and message.
#[tokio::test]
async fn a_missing_file_is_refused_naming_its_payload() {
    let warehouse = Warehouse::new();
    let table = warehouse.create("events", Kind::PartitionedAppend).await;
    let coordinator = append_coordinator(&table).await;
    let before = manifests(&table);
    let mut staged = coordinator.begin(1);
    for rows in [&[(1, "a")][..], &[(2, "b")][..]] {
        let payload = worker_payload(&table, rows).await;
        staged.add_payload(V, &payload).await.unwrap();
    }
    let mut messages = worker_messages(&table, &[(3, "a"), (4, "c")]).await;
    let last = messages.len() - 1;
    messages[last].new_files[0].file_name = "data-never-written.parquet".into();
    staged
        .add_payload(V, &serialize_list(&messages, V).unwrap())
        .await
        .unwrap();
    let error = staged.commit().await.unwrap_err();
    assert_eq!(rule_of(&error), Rule::MissingFile, "{error}");
    let refusal = error.as_validation().unwrap();
    assert_eq!(refusal.message_index, last, "{error}");
    assert!(refusal.reason.starts_with("payload 2: "), "{error}");
    assert!(
        error.to_string().contains("data-never-written.parquet"),
        "{error}"
    );
    assert_eq!(manifests(&table), before);
    assert!(read_rows(&table).await.is_empty());
}
