//! Hostile payloads, round three (issue 25): compaction lists, deletion vectors in them,
//! index files shared across buckets and reruns of committed identifiers. Each test is one
//! attack class of the issue, first against the default binding (compaction refused), then
//! against a binding that opted in to compaction; every refusal leaves the table's snapshots
//! unchanged and every row readable. Honest counterparts (a compaction that keeps the rows, a
//! deletion vector carried by the compaction of its file) commit, so the rules refuse only
//! what they should.

use paimon::spec::DataFileMeta;
use paimon::table::{CommitMessage, Table, TagManager};
use paimon_wire::coordinator::validate::MAX_SEQUENCE_OR_ROW_ID;
use paimon_wire::coordinator::{Binding, CommitOutcome, CoordinatorError, Rule};

use super::hostile::committed;
use super::support::{
    append_coordinator, bind, expected, find_files, read_rows, rule_of, send, snapshot_count,
    worker_messages, write_deletion_vectors, Kind, Unchanged, Warehouse, USER,
};

/// The binding of a job whose writers compact.
pub fn compacting() -> Binding {
    Binding::append(USER).with_compaction()
}

/// `(id, "a")` for `ids`.
pub fn rows_in_a(ids: std::ops::Range<i32>) -> Vec<(i32, &'static str)> {
    ids.map(|id| (id, "a")).collect()
}

/// A message of `like`'s partition and bucket carrying a compaction of `before` into `after`.
pub fn compaction(
    like: &CommitMessage,
    before: Vec<DataFileMeta>,
    after: Vec<DataFileMeta>,
) -> CommitMessage {
    let mut message = CommitMessage::new(like.partition.clone(), like.bucket, vec![]);
    message.compact_before = before;
    message.compact_after = after;
    message
}

/// The new files of the first message of `messages`.
pub fn files(messages: &[CommitMessage]) -> Vec<DataFileMeta> {
    messages[0].new_files.clone()
}

/// Asserts `result` is a refusal under `rule` whose text contains `words`.
fn assert_refused(result: Result<CommitOutcome, CoordinatorError>, rule: Rule, words: &str) {
    let error = result.expect_err("the payload must be refused");
    assert_eq!(rule_of(&error), rule, "{error}");
    assert!(
        error.to_string().contains(words),
        "{words:?} not in: {error}"
    );
}

// ---- 1. Erase: a compaction that drops rows ------------------------------------------------

#[tokio::test]
async fn a_compaction_that_drops_rows_is_refused() {
    let warehouse = Warehouse::new();
    let rows = rows_in_a(0..30);
    let (table, messages) = committed(&warehouse, "erase", Kind::PartitionedAppend, &rows).await;
    let before = Unchanged::of(&table).await;
    let erase = compaction(&messages[0], files(&messages), vec![]);
    let mut three_rows: Vec<DataFileMeta> = Vec::new();
    for id in 100..103 {
        three_rows.extend(files(&worker_messages(&table, &[(id, "a")]).await));
    }
    let shrink = compaction(&messages[0], files(&messages), three_rows);

    // The default binding refuses any compaction.
    let default = append_coordinator(&table).await;
    for payload in [&erase, &shrink] {
        assert_refused(
            send(&default, std::slice::from_ref(payload), 2).await,
            Rule::CompactIncrement,
            "compaction is opt-in",
        );
    }
    before.assert_still(&table, "default binding").await;

    // Opted in, the rows must add up; beside an honest payload, nothing commits.
    let opted = bind(&table, compacting()).await;
    let honest = worker_messages(&table, &[(50, "b")]).await;
    assert_refused(
        send(&opted, &[honest.clone(), vec![erase]].concat(), 2).await,
        Rule::CompactRows,
        "show 0 row(s), its inputs showed 30",
    );
    assert_refused(
        send(&opted, &[honest.clone(), vec![shrink]].concat(), 2).await,
        Rule::CompactRows,
        "show 3 row(s), its inputs showed 30",
    );
    before.assert_still(&table, "opted in").await;

    // An honest compaction (the same 30 rows rewritten into one file) commits, and the
    // table reads back whole.
    let rewrite = files(&worker_messages(&table, &rows).await);
    let honest_compaction = compaction(&messages[0], files(&messages), rewrite);
    assert!(matches!(
        send(&opted, &[honest, vec![honest_compaction]].concat(), 2)
            .await
            .unwrap(),
        CommitOutcome::Committed { .. }
    ));
    let mut all = rows.clone();
    all.push((50, "b"));
    assert_eq!(read_rows(&table).await, expected(&all));
}

// ---- 2. Hide and resurrect: deletion vectors in the compaction lists ----------------------

/// A deletion-vector append table with two committed files in partition `a` — X (ids 0..10)
/// and Y (ids 10..20) — and a live deletion vector hiding ids 0..5 of X (snapshot 2).
pub struct WithDeletionVector {
    pub _warehouse: Warehouse,
    pub table: Table,
    pub x: CommitMessage,
    pub y: CommitMessage,
    pub live_vector: paimon::spec::IndexFileMeta,
}

pub async fn with_deletion_vector() -> WithDeletionVector {
    let warehouse = Warehouse::new();
    let table = warehouse.create("dv", Kind::DeletionVectorAppend).await;
    let x = worker_messages(&table, &rows_in_a(0..10)).await.remove(0);
    let y = worker_messages(&table, &rows_in_a(10..20)).await.remove(0);
    let coordinator = append_coordinator(&table).await;
    send(&coordinator, &[x.clone(), y.clone()], 1)
        .await
        .unwrap();
    let live_vector = write_deletion_vectors(
        &table,
        &[(x.new_files[0].file_name.as_str(), &[0, 1, 2, 3, 4])],
    );
    let mut deletes = CommitMessage::new(x.partition.clone(), x.bucket, vec![]);
    deletes.new_index_files = vec![live_vector.clone()];
    let deleting = bind(&table, Binding::append(USER).with_deletes()).await;
    assert!(matches!(
        send(&deleting, &[deletes], 2).await.unwrap(),
        CommitOutcome::Committed { snapshot_id: 2 }
    ));
    assert_eq!(read_rows(&table).await, expected(&rows_in_a(5..20)));
    WithDeletionVector {
        _warehouse: warehouse,
        table,
        x,
        y,
        live_vector,
    }
}

#[tokio::test]
async fn compaction_deletion_vectors_cannot_hide_rows() {
    let setup = with_deletion_vector().await;
    let table = &setup.table;
    let before = Unchanged::of(table).await;
    // Compact Y into a rewrite of itself, and slip in a deletion vector on X.
    let rewrite = files(&worker_messages(table, &rows_in_a(10..20)).await);
    let mut hide = compaction(&setup.y, setup.y.new_files.clone(), rewrite);
    hide.compact_new_index_files = vec![write_deletion_vectors(
        table,
        &[(setup.x.new_files[0].file_name.as_str(), &[5, 6, 7])],
    )];
    assert_refused(
        send(&append_coordinator(table).await, &[hide.clone()], 3).await,
        Rule::CompactIncrement,
        "opt-in",
    );
    // X keeps its live vector, so the slipped one would be X's second.
    assert_refused(
        send(&bind(table, compacting()).await, &[hide], 3).await,
        Rule::DeletionVectors,
        "would have two deletion vectors",
    );
    before.assert_still(table, "hide").await;

    // Compact X (dropping its vector with it) and slip a first vector onto Y, which has none
    // and is not compacted.
    let rewrite_x = files(&worker_messages(table, &rows_in_a(5..10)).await);
    let mut hide_y = compaction(&setup.x, setup.x.new_files.clone(), rewrite_x);
    hide_y.compact_deleted_index_files = vec![setup.live_vector.clone()];
    hide_y.compact_new_index_files = vec![write_deletion_vectors(
        table,
        &[(setup.y.new_files[0].file_name.as_str(), &[0, 1])],
    )];
    assert_refused(
        send(&bind(table, compacting()).await, &[hide_y], 3).await,
        Rule::DeletionVectors,
        "not one of its results",
    );
    before.assert_still(table, "hide Y").await;
}

#[tokio::test]
async fn compaction_deletion_vectors_cannot_resurrect_rows() {
    let setup = with_deletion_vector().await;
    let table = &setup.table;
    let before = Unchanged::of(table).await;
    let rewrite = files(&worker_messages(table, &rows_in_a(10..20)).await);
    let mut resurrect = compaction(&setup.y, setup.y.new_files.clone(), rewrite);
    resurrect.compact_deleted_index_files = vec![setup.live_vector.clone()];
    assert_refused(
        send(&bind(table, compacting()).await, &[resurrect], 3).await,
        Rule::DeletionVectors,
        "neither compacts nor carries",
    );
    before.assert_still(table, "resurrect").await;

    // The honest counterpart: compact X itself (its 5 visible rows rewritten), dropping its
    // deletion vector with it. Commits, and the table reads back the same rows.
    let rewrite_x = files(&worker_messages(table, &rows_in_a(5..10)).await);
    let mut honest = compaction(&setup.x, setup.x.new_files.clone(), rewrite_x);
    honest.compact_deleted_index_files = vec![setup.live_vector.clone()];
    assert!(matches!(
        send(&bind(table, compacting()).await, &[honest], 3)
            .await
            .unwrap(),
        CommitOutcome::Committed { .. }
    ));
    assert_eq!(read_rows(table).await, expected(&rows_in_a(5..20)));
}

// ---- 3. A rerun of a committed identifier commits nothing new ------------------------------

#[tokio::test]
async fn a_rerun_that_adds_a_compaction_commits_nothing() {
    let warehouse = Warehouse::new();
    let rows = rows_in_a(0..30);
    let (table, first) = committed(&warehouse, "rerun", Kind::PartitionedAppend, &rows).await;
    let coordinator = bind(&table, compacting()).await;
    let second = worker_messages(&table, &[(40, "a")]).await;
    assert_eq!(
        send(&coordinator, &second, 2).await.unwrap(),
        CommitOutcome::Committed { snapshot_id: 2 }
    );
    let before = Unchanged::of(&table).await;
    // Identifier 2 again, now also carrying a compaction that erases round one's rows.
    let erase = compaction(&first[0], files(&first), vec![]);
    let outcome = send(&coordinator, &[second.clone(), vec![erase]].concat(), 2)
        .await
        .unwrap();
    assert_eq!(
        outcome,
        CommitOutcome::AlreadyCommitted {
            snapshot_id: Some(2)
        }
    );
    before.assert_still(&table, "rerun with a compaction").await;

    // An identifier whose commit carried a compaction (recorded in its snapshots) rerun with
    // another compaction is refused, not reported as done.
    let rewrite = files(&worker_messages(&table, &rows).await);
    let honest = compaction(&first[0], files(&first), rewrite.clone());
    assert!(matches!(
        send(&coordinator, std::slice::from_ref(&honest), 3)
            .await
            .unwrap(),
        CommitOutcome::Committed { .. }
    ));
    let before = Unchanged::of(&table).await;
    assert_eq!(
        send(&coordinator, std::slice::from_ref(&honest), 3)
            .await
            .unwrap(),
        CommitOutcome::AlreadyCommitted {
            snapshot_id: Some(before.snapshots as i64)
        }
    );
    let other_rewrite = files(&worker_messages(&table, &rows).await);
    let other = compaction(&first[0], rewrite, other_rewrite);
    let error = send(&coordinator, &[other], 3).await.unwrap_err();
    assert!(
        matches!(error, CoordinatorError::IdentifierReused { .. }),
        "{error}"
    );
    before
        .assert_still(&table, "rerun with another compaction")
        .await;
}

// ---- 4. An error means nothing was committed ------------------------------------------------

#[tokio::test]
async fn an_input_that_differs_from_the_live_entry_is_refused_before_anything_is_published() {
    let warehouse = Warehouse::new();
    let rows = rows_in_a(0..10);
    let (table, first) = committed(&warehouse, "identity", Kind::PartitionedAppend, &rows).await;
    let before = Unchanged::of(&table).await;
    let coordinator = bind(&table, compacting()).await;
    let honest = worker_messages(&table, &[(20, "b")]).await;
    let rewrite = files(&worker_messages(&table, &rows).await);
    for field in ["extra_files", "external_path", "row_count"] {
        let mut input = files(&first);
        match field {
            "extra_files" => input[0].extra_files.push("data-x.index".into()),
            "external_path" => input[0].external_path = Some("file:/elsewhere/x".into()),
            _ => input[0].row_count += 1,
        }
        let forged = compaction(&first[0], input, rewrite.clone());
        let error = send(&coordinator, &[honest.clone(), vec![forged]].concat(), 2)
            .await
            .unwrap_err();
        let rule = rule_of(&error);
        // A foreign external path is refused already at deserialization.
        assert!(
            rule == Rule::NotLive || (field == "external_path" && rule == Rule::ExternalPath),
            "{field}: {error}"
        );
        before.assert_still(&table, field).await;
    }
}

#[tokio::test]
async fn a_deletion_vector_naming_a_missing_file_is_refused_before_anything_is_published() {
    let setup = with_deletion_vector().await;
    let table = &setup.table;
    let before = Unchanged::of(table).await;
    let honest = worker_messages(table, &[(90, "b")]).await;
    // In a compaction: a deletion vector for a file that does not exist.
    let rewrite = files(&worker_messages(table, &rows_in_a(10..20)).await);
    let mut bad = compaction(&setup.y, setup.y.new_files.clone(), rewrite);
    bad.compact_new_index_files = vec![write_deletion_vectors(
        table,
        &[("data-never-written.parquet", &[1])],
    )];
    assert_refused(
        send(
            &bind(table, compacting()).await,
            &[honest.clone(), vec![bad]].concat(),
            3,
        )
        .await,
        Rule::DeletionVectors,
        "data-never-written.parquet",
    );
    // In the data lists (a binding with deletes): a deletion vector for a file that is not
    // live in its bucket.
    let mut deletes = CommitMessage::new(setup.y.partition.clone(), setup.y.bucket, vec![]);
    deletes.new_index_files = vec![write_deletion_vectors(
        table,
        &[("data-never-written.parquet", &[1])],
    )];
    assert_refused(
        send(
            &bind(table, Binding::append(USER).with_deletes()).await,
            &[honest, vec![deletes]].concat(),
            3,
        )
        .await,
        Rule::DeletionVectors,
        "not live in",
    );
    before.assert_still(table, "vector on a missing file").await;
}

// ---- 5. Index files are table-wide ----------------------------------------------------------

#[tokio::test]
async fn an_index_file_live_in_another_bucket_is_refused_and_abort_keeps_it() {
    let warehouse = Warehouse::new();
    let table = warehouse.create("dyn", Kind::DynamicBucketPk).await;
    let coordinator = append_coordinator(&table).await;
    let first = worker_messages(&table, &[(1, "a"), (2, "b")]).await;
    send(&coordinator, &first, 1).await.unwrap();
    let in_b = first
        .iter()
        .find(|m| !m.new_index_files.is_empty() && m.partition != first[0].partition)
        .or_else(|| first.iter().rev().find(|m| !m.new_index_files.is_empty()))
        .expect("a dynamic-bucket writer writes a HASH index");
    let hash_index = in_b.new_index_files[0].clone();
    let a = first
        .iter()
        .find(|m| m.partition != in_b.partition)
        .expect("two partitions");
    let before = Unchanged::of(&table).await;
    let mut claim = CommitMessage::new(a.partition.clone(), 7, vec![]);
    claim.new_index_files = vec![hash_index.clone()];
    assert_refused(
        send(&coordinator, &[claim.clone()], 2).await,
        Rule::AlreadyLive,
        "another bucket or partition",
    );
    before
        .assert_still(&table, "index claimed by another bucket")
        .await;

    // abort of that message deletes nothing: the file is referenced by the table.
    let bound = coordinator
        .deserialize(
            paimon_wire::SerializerVersion::CURRENT,
            &paimon_wire::serialize_list(&[claim], paimon_wire::SerializerVersion::CURRENT)
                .unwrap(),
        )
        .unwrap();
    let report = coordinator.abort(&bound).await.unwrap();
    assert!(report.deleted.is_empty(), "{report:?}");
    assert_eq!(
        find_files(warehouse.dir.path(), &hash_index.file_name).len(),
        1,
        "the index file is still there"
    );
    // The next honest write of the other partition commits.
    let next = worker_messages(&table, &[(3, "b")]).await;
    assert!(matches!(
        send(&coordinator, &next, 2).await.unwrap(),
        CommitOutcome::Committed { .. }
    ));
}

// ---- 6. External roots must name their table ------------------------------------------------

#[tokio::test]
async fn a_table_whose_external_root_another_table_could_share_is_refused_at_bind() {
    use paimon::catalog::{Catalog, Identifier};
    use paimon::spec::{DataType, IntType, Schema, VarCharType};
    let warehouse = Warehouse::new();
    warehouse.create("seed", Kind::PartitionedAppend).await; // creates database db
    let shared = warehouse.external_root().join("shared");
    std::fs::create_dir_all(&shared).unwrap();
    let mut options = paimon::Options::new();
    options.set(paimon::CatalogOptions::WAREHOUSE, warehouse.path());
    let catalog = paimon::FileSystemCatalog::new(options).unwrap();
    let schema = Schema::builder()
        .column("id", DataType::Int(IntType::new()))
        .column("v", DataType::VarChar(VarCharType::string_type()))
        .option(
            "data-file.external-paths",
            format!("file://{}", shared.to_str().unwrap()),
        )
        .build()
        .unwrap();
    catalog
        .create_table(&Identifier::new("db", "a"), schema, false)
        .await
        .unwrap();
    let table = paimon_wire::coordinator::open_table(warehouse.path(), "db.a")
        .await
        .unwrap();
    let error = paimon_wire::coordinator::Coordinator::bind(table, Binding::append(USER))
        .await
        .unwrap_err();
    assert!(
        error.to_string().contains("does not name the table"),
        "{error}"
    );
}

// ---- 7 and 8. One writer per bucket; compaction results need inputs ------------------------

#[tokio::test]
async fn new_files_above_level_0_are_refused() {
    let warehouse = Warehouse::new();
    let (table, _) = committed(&warehouse, "lvl", Kind::FixedBucketPk, &[(1, "a")]).await;
    let before = Unchanged::of(&table).await;
    let coordinator = bind(&table, compacting()).await;
    let mut one = worker_messages(&table, &[(1, "a"), (2, "a")]).await;
    for message in &mut one {
        for file in &mut message.new_files {
            file.level = 1;
        }
    }
    assert_refused(
        send(&coordinator, &one, 2).await,
        Rule::NewFileLevel,
        "only a compaction",
    );
    before.assert_still(&table, "level-1 new files").await;
}

#[tokio::test]
async fn a_compaction_without_inputs_is_refused() {
    let warehouse = Warehouse::new();
    let (table, first) = committed(&warehouse, "stale", Kind::FixedBucketPk, &[(1, "a")]).await;
    // A stale writer's files (sequence numbers at or below the live ones), refused as new
    // files by rule sequence-numbers, sent as level-1 compaction results without inputs.
    let stale = worker_messages(&table, &[(1, "a")]).await;
    let coordinator = bind(&table, compacting()).await;
    send(&coordinator, &worker_messages(&table, &[(1, "a")]).await, 2)
        .await
        .unwrap();
    let before = Unchanged::of(&table).await;
    let mut results = files(&stale);
    for file in &mut results {
        file.level = 1;
    }
    let smuggled = compaction(&first[0], vec![], results);
    assert_refused(
        send(&coordinator, &[smuggled], 3).await,
        Rule::CompactInputs,
        "no compaction inputs",
    );
    before.assert_still(&table, "results without inputs").await;
}

#[tokio::test]
async fn results_outside_their_inputs_ranges_and_levels_are_refused() {
    let warehouse = Warehouse::new();
    let (table, first) = committed(
        &warehouse,
        "ranges",
        Kind::FixedBucketPk,
        &[(1, "a"), (2, "a"), (3, "a")],
    )
    .await;
    let coordinator = bind(&table, compacting()).await;
    let before = Unchanged::of(&table).await;
    let message = &first[0];
    let rewrite = worker_messages(&table, &[(1, "a"), (2, "a"), (3, "a")]).await;
    let mut results: Vec<DataFileMeta> = rewrite
        .iter()
        .find(|m| m.bucket == message.bucket)
        .unwrap()
        .new_files
        .clone();
    for file in &mut results {
        file.level = 1;
    }
    let inputs = message.new_files.clone();
    let (lo, hi) = (
        inputs.iter().map(|f| f.min_sequence_number).min().unwrap(),
        inputs.iter().map(|f| f.max_sequence_number).max().unwrap(),
    );
    // The rewrite's sequence numbers are above the inputs': a writer's newer rows dressed up
    // as a compaction would win every merge.
    assert_refused(
        send(
            &coordinator,
            &[compaction(message, inputs.clone(), results.clone())],
            2,
        )
        .await,
        Rule::CompactRanges,
        "outside its inputs'",
    );
    for file in &mut results {
        file.min_sequence_number = lo;
        file.max_sequence_number = hi;
    }
    // A key range beyond the inputs'.
    let mut wide = results.clone();
    wide[0].max_key = worker_messages(&table, &[(99, "a")])
        .await
        .iter()
        .find(|m| m.bucket == message.bucket)
        .map(|m| m.new_files[0].max_key.clone())
        .unwrap_or_else(|| wide[0].max_key.clone());
    if wide[0].max_key != results[0].max_key {
        assert_refused(
            send(
                &coordinator,
                &[compaction(message, inputs.clone(), wide)],
                2,
            )
            .await,
            Rule::CompactRanges,
            "outside its inputs' key range",
        );
    }
    // A level far above num-levels.
    let mut deep = results.clone();
    deep[0].level = 1 << 30;
    assert_refused(
        send(
            &coordinator,
            &[compaction(message, inputs.clone(), deep)],
            2,
        )
        .await,
        Rule::CompactLevels,
        "above the table's highest level",
    );
    before.assert_still(&table, "ranges").await;
    // Within every range, the compaction commits.
    assert!(matches!(
        send(&coordinator, &[compaction(message, inputs, results)], 2)
            .await
            .unwrap(),
        CommitOutcome::Committed { .. }
    ));
    assert_eq!(
        read_rows(&table).await,
        expected(&[(1, "a"), (2, "a"), (3, "a")])
    );
}

// ---- 9. Key ranges --------------------------------------------------------------------------

#[tokio::test]
async fn key_rows_must_be_keys_of_the_table_in_order() {
    let warehouse = Warehouse::new();
    let table = warehouse.create("keys", Kind::FixedBucketPk).await;
    let coordinator = append_coordinator(&table).await;
    let messages = worker_messages(&table, &[(1, "a"), (2, "a"), (3, "a"), (4, "a")]).await;
    let message = messages
        .iter()
        .find(|m| m.new_files[0].min_key != m.new_files[0].max_key)
        .expect("a bucket with two keys")
        .clone();
    let mut swapped = message.clone();
    let file = &mut swapped.new_files[0];
    std::mem::swap(&mut file.min_key, &mut file.max_key);
    assert_refused(
        send(&coordinator, &[swapped], 1).await,
        Rule::KeyRange,
        "smallest key above its largest",
    );
    let mut wrong_arity = message.clone();
    wrong_arity.new_files[0].min_key = message.partition.clone();
    let error = send(&coordinator, &[wrong_arity], 1).await.unwrap_err();
    assert_eq!(rule_of(&error), Rule::KeyRange, "{error}");
    assert_eq!(snapshot_count(&table).await, 0);
}

// ---- 10. Files removed by an earlier snapshot do not come back -----------------------------

#[tokio::test]
async fn files_removed_by_an_earlier_snapshot_do_not_come_back() {
    let warehouse = Warehouse::new();
    let rows = rows_in_a(0..10);
    let (table, first) = committed(&warehouse, "back", Kind::PartitionedAppend, &rows).await;
    let coordinator = bind(&table, compacting()).await;
    let rewrite = files(&worker_messages(&table, &rows).await);
    send(
        &coordinator,
        &[compaction(&first[0], files(&first), rewrite)],
        2,
    )
    .await
    .unwrap();
    // Keep snapshot 1 only through a tag, as if it had expired.
    let snapshot_1 = table.snapshot_manager().get_snapshot(1).await.unwrap();
    TagManager::new(table.file_io().clone(), table.location().to_string())
        .create("before-compaction", &snapshot_1)
        .await
        .unwrap();
    let before = Unchanged::of(&table).await;
    assert_refused(
        send(&coordinator, &first, 3).await,
        Rule::AlreadyLive,
        "retained snapshot, tag or branch",
    );
    before.assert_still(&table, "files compacted away").await;
    // abort of them keeps them: the tag (and snapshot 1) still read them.
    let bound = coordinator
        .deserialize(
            paimon_wire::SerializerVersion::CURRENT,
            &paimon_wire::serialize_list(&first, paimon_wire::SerializerVersion::CURRENT).unwrap(),
        )
        .unwrap();
    assert!(coordinator.abort(&bound).await.unwrap().deleted.is_empty());
    let name = &first[0].new_files[0].file_name;
    assert_eq!(find_files(warehouse.dir.path(), name).len(), 1);
}

#[tokio::test]
async fn files_a_separately_kept_changelog_references_do_not_come_back() {
    let warehouse = Warehouse::new();
    let table = warehouse.create("kept", Kind::PartitionedAppend).await;
    let coordinator = append_coordinator(&table).await;
    // Snapshot 1 adds a data file and a changelog file (only its changelog manifest names
    // the changelog file); snapshot 2 writes more.
    let mut first = worker_messages(&table, &[(1, "a")]).await;
    let changelog = files(&worker_messages(&table, &[(2, "a")]).await);
    first[0].new_changelog_files = changelog.clone();
    send(&coordinator, &first, 1).await.unwrap();
    send(&coordinator, &worker_messages(&table, &[(3, "a")]).await, 2)
        .await
        .unwrap();
    // Snapshot 1 expired, its changelog kept apart (as Java's ChangelogManager keeps it when
    // changelog.num-retained outlives the snapshots).
    let root = std::path::Path::new(table.location().trim_start_matches("file:"));
    std::fs::create_dir_all(root.join("changelog")).unwrap();
    std::fs::rename(
        root.join("snapshot/snapshot-1"),
        root.join("changelog/changelog-1"),
    )
    .unwrap();
    std::fs::write(root.join("snapshot/EARLIEST"), "2").unwrap();
    // The changelog file sent again as a new data file.
    let mut again = CommitMessage::new(first[0].partition.clone(), first[0].bucket, changelog);
    again.new_files[0].level = 0;
    let error = check_only(&coordinator, &[again.clone()])
        .await
        .unwrap_err();
    assert_eq!(rule_of(&error), Rule::AlreadyLive, "{error}");
    // Only the kept changelog still references it: without it, it would pass.
    std::fs::remove_file(root.join("changelog/changelog-1")).unwrap();
    check_only(&coordinator, &[again]).await.unwrap();
}

// ---- 11. A sequence number that would brick its bucket --------------------------------------

#[tokio::test]
async fn a_sequence_number_that_would_brick_the_bucket_is_refused() {
    let warehouse = Warehouse::new();
    let (table, _) = committed(&warehouse, "seq", Kind::FixedBucketPk, &[(1, "a")]).await;
    let coordinator = append_coordinator(&table).await;
    let before = Unchanged::of(&table).await;
    let mut bricking = worker_messages(&table, &[(1, "a")]).await;
    bricking[0].new_files[0].max_sequence_number = MAX_SEQUENCE_OR_ROW_ID;
    assert_refused(
        send(&coordinator, &bricking, 2).await,
        Rule::Bounds,
        "no room",
    );
    before
        .assert_still(&table, "bricking sequence number")
        .await;
    // Nor through a compaction: on an append table no range rule bounds a result's sequence
    // numbers, so the headroom rule covers compaction results too.
    let (append, first) = committed(
        &warehouse,
        "seq_append",
        Kind::PartitionedAppend,
        &rows_in_a(0..3),
    )
    .await;
    let mut rewrite = files(&worker_messages(&append, &rows_in_a(0..3)).await);
    rewrite[0].max_sequence_number = MAX_SEQUENCE_OR_ROW_ID;
    let appended = Unchanged::of(&append).await;
    assert_refused(
        send(
            &bind(&append, compacting()).await,
            &[compaction(&first[0], files(&first), rewrite)],
            2,
        )
        .await,
        Rule::Bounds,
        "no room",
    );
    appended
        .assert_still(&append, "bricking compaction result")
        .await;
    // The bucket's next honest writer commits.
    let next = worker_messages(&table, &[(1, "a")]).await;
    assert!(matches!(
        send(&coordinator, &next, 2).await.unwrap(),
        CommitOutcome::Committed { .. }
    ));
}

// ---- Verified compaction: what the metadata cannot show -------------------------------------

/// Deserializes `messages` through `coordinator` and runs the commit-time checks only.
async fn check_only(
    coordinator: &paimon_wire::coordinator::Coordinator,
    messages: &[CommitMessage],
) -> Result<(), CoordinatorError> {
    const V: paimon_wire::SerializerVersion = paimon_wire::SerializerVersion::CURRENT;
    let bound = coordinator.deserialize(V, &paimon_wire::serialize_list(messages, V)?)?;
    coordinator.check_against_table(&bound).await
}

#[tokio::test]
async fn verified_compaction_refuses_results_that_hold_other_rows() {
    let warehouse = Warehouse::new();
    let rows = rows_in_a(0..10);
    let (table, first) = committed(&warehouse, "verify", Kind::PartitionedAppend, &rows).await;
    let before = Unchanged::of(&table).await;
    // Ten other rows in place of the ten compacted: every metadata rule holds.
    let swapped = compaction(
        &first[0],
        files(&first),
        files(&worker_messages(&table, &rows_in_a(100..110)).await),
    );
    check_only(
        &bind(&table, compacting()).await,
        std::slice::from_ref(&swapped),
    )
    .await
    .expect("the metadata cannot show it");
    let verifying = bind(&table, Binding::append(USER).with_verified_compaction()).await;
    assert_refused(
        send(&verifying, &[swapped], 2).await,
        Rule::CompactContent,
        "other rows than its inputs",
    );
    before.assert_still(&table, "swapped rows").await;
    // The same rows rewritten: verified and committed.
    let honest = compaction(
        &first[0],
        files(&first),
        files(&worker_messages(&table, &rows).await),
    );
    assert!(matches!(
        send(&verifying, &[honest], 2).await.unwrap(),
        CommitOutcome::Committed { .. }
    ));
    assert_eq!(read_rows(&table).await, expected(&rows));
}

#[tokio::test]
async fn verified_compaction_reads_inputs_the_same_commit_adds_to_an_empty_table() {
    let warehouse = Warehouse::new();
    let table = warehouse
        .create("verify_fresh", Kind::PartitionedAppend)
        .await;
    let rows = rows_in_a(0..10);
    let added = worker_messages(&table, &rows).await;
    // The commit adds files and compacts them into files holding other rows.
    let swapped = compaction(
        &added[0],
        files(&added),
        files(&worker_messages(&table, &rows_in_a(100..110)).await),
    );
    let verifying = bind(&table, Binding::append(USER).with_verified_compaction()).await;
    assert_refused(
        send(&verifying, &[added.clone(), vec![swapped]].concat(), 1).await,
        Rule::CompactContent,
        "other rows than its inputs",
    );
    assert_eq!(snapshot_count(&table).await, 0);
}

#[tokio::test]
async fn verified_compaction_refuses_a_primary_key_erase_the_metadata_allows() {
    let warehouse = Warehouse::new();
    let rows = [(1, "a"), (2, "a"), (3, "a"), (4, "a")];
    let (table, first) = committed(&warehouse, "verify_pk", Kind::FixedBucketPk, &rows).await;
    let before = Unchanged::of(&table).await;
    // Merging may drop rows of a primary-key table, so no results at all pass the row
    // count; only reading shows the keys are gone.
    let erase = compaction(&first[0], first[0].new_files.clone(), vec![]);
    check_only(
        &bind(&table, compacting()).await,
        std::slice::from_ref(&erase),
    )
    .await
    .expect("the metadata cannot show it");
    let verifying = bind(&table, Binding::append(USER).with_verified_compaction()).await;
    assert_refused(
        send(&verifying, &[erase], 2).await,
        Rule::CompactContent,
        "changes which row wins a key",
    );
    before.assert_still(&table, "primary-key erase").await;
    // An in-place upgrade keeps the rows: verified and committed.
    let file = first[0].new_files[0].clone();
    let mut upgraded = file.clone();
    upgraded.level = 3;
    assert!(matches!(
        send(
            &verifying,
            &[compaction(&first[0], vec![file], vec![upgraded])],
            2
        )
        .await
        .unwrap(),
        CommitOutcome::Committed { .. }
    ));
    assert_eq!(read_rows(&table).await, expected(&rows));
}

#[tokio::test]
async fn tables_whose_compactions_cannot_be_verified_are_refused_at_bind() {
    let warehouse = Warehouse::new();
    let table = warehouse.create("postponed", Kind::Postpone).await;
    let error = paimon_wire::coordinator::Coordinator::bind(
        table,
        Binding::append(USER).with_verified_compaction(),
    )
    .await
    .unwrap_err();
    assert!(error.to_string().contains("cannot be verified"), "{error}");
}
