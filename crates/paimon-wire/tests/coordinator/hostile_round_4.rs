//! Hostile payloads, round four (issue 40): the invariants behind the paths earlier rounds
//! covered one at a time. Each test is one case of the issue; every refusal names its rule,
//! is given by `check_against_table` (what `paimon-wire validate` runs) exactly as by
//! `commit`, and leaves the table's snapshots and rows as they were. Honest counterparts
//! commit, so the rules refuse only what they should.

use std::sync::Arc;

use paimon::spec::DataFileMeta;
use paimon::table::{AssignerShare, CommitMessage, Table};
use paimon_wire::coordinator::validate::MAX_DYNAMIC_BUCKETS;
use paimon_wire::coordinator::{
    Binding, CommitOutcome, Coordinator, CoordinatorError, Rule, DEFAULT_HASH_INDEX_BUDGET,
};
use paimon_wire::{serialize_list, SerializerVersion};

use super::hash_index::{assigner_messages, write_hash_index};
use super::hostile_round_3::{
    compacting, compaction, files, rows_in_a, with_deletion_vector, WithDeletionVector,
};
use super::support::{
    append_coordinator, batch, batch_with_values, bind, expected, read_rows, rule_of, send,
    worker_messages, write_deletion_vectors, Kind, Unchanged, Warehouse, USER,
};

const V: SerializerVersion = SerializerVersion::CURRENT;

/// Asserts that `messages` are refused under `rule`, with `words` in the error, by
/// `check_against_table` (the `validate` path) and by `commit` alike: one rule set, so the two
/// cannot disagree. A refusal at decoding (a per-message rule) counts for both.
async fn assert_refused_by_validate_and_commit(
    coordinator: &Coordinator,
    messages: &[CommitMessage],
    identifier: i64,
    rule: Rule,
    words: &str,
) {
    let check = |error: CoordinatorError, path: &str| {
        assert_eq!(rule_of(&error), rule, "{path}: {error}");
        assert!(
            error.to_string().contains(words),
            "{path}: {words:?} not in: {error}"
        );
    };
    let bound = match coordinator.deserialize(V, &serialize_list(messages, V).unwrap()) {
        Ok(bound) => bound,
        Err(error) => return check(error, "deserialize"),
    };
    let validated = coordinator.check_against_table(&bound).await;
    check(validated.expect_err("validate must refuse"), "validate");
    let committed = coordinator.commit(bound, identifier).await;
    check(committed.expect_err("commit must refuse"), "commit");
}

// ---- 1. Two coordinators, one commit user and identifier, other payloads -------------------

/// Commits each payload through its own coordinator (one commit user), all at once, under
/// one identifier; returns each outcome.
async fn race(
    table: &Table,
    payloads: &[Vec<CommitMessage>],
    identifier: i64,
) -> Vec<Result<CommitOutcome, CoordinatorError>> {
    let mut coordinators = Vec::new();
    let mut bound = Vec::new();
    for messages in payloads {
        let coordinator = append_coordinator(table).await;
        bound.push(
            coordinator
                .deserialize(V, &serialize_list(messages, V).unwrap())
                .unwrap(),
        );
        coordinators.push(Arc::new(coordinator));
    }
    let start = Arc::new(tokio::sync::Barrier::new(payloads.len()));
    let tasks: Vec<_> = coordinators
        .into_iter()
        .zip(bound)
        .map(|(coordinator, messages)| {
            let start = start.clone();
            tokio::spawn(async move {
                start.wait().await;
                coordinator.commit(messages, identifier).await
            })
        })
        .collect();
    let mut outcomes = Vec::new();
    for task in tasks {
        outcomes.push(task.await.unwrap());
    }
    outcomes
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn racing_coordinators_with_one_identifier_and_other_payloads_report_one_success() {
    const RACERS: usize = 4;
    let rounds: i64 =
        std::env::var("PAIMON_WIRE_LONG_TESTS").map_or(8, |v| if v == "1" { 50 } else { 8 });
    let warehouse = Warehouse::new();
    let table = warehouse.create("race", Kind::PartitionedAppend).await;
    let mut expected_rows = Vec::new();
    for round in 0..rounds {
        let mut payloads = Vec::new();
        for racer in 0..RACERS as i32 {
            let id = (round as i32) * 100 + racer;
            payloads.push(worker_messages(&table, &[(id, "a"), (id + 50, "b")]).await);
        }
        let outcomes = race(&table, &payloads, round + 1).await;
        let mut winners = Vec::new();
        for (racer, outcome) in outcomes.into_iter().enumerate() {
            match outcome {
                Ok(CommitOutcome::Committed { .. } | CommitOutcome::AlreadyCommitted { .. }) => {
                    winners.push(racer)
                }
                Ok(other) => panic!("round {round}: racer {racer}: {other:?}"),
                Err(CoordinatorError::IdentifierReused { .. }) => {}
                // Lost every retry: nothing committed, as reported.
                Err(CoordinatorError::CommitConflict { .. }) => {}
                Err(error) => panic!("round {round}: racer {racer}: {error}"),
            }
        }
        assert_eq!(
            winners.len(),
            1,
            "round {round}: exactly one of {RACERS} coordinators with one identifier and \
             other payloads may report success: {winners:?}"
        );
        let id = (round as i32) * 100 + winners[0] as i32;
        expected_rows.extend([(id, "a"), (id + 50, "b")]);
        assert_eq!(
            read_rows(&table).await,
            expected(&expected_rows),
            "round {round}: the table holds the reported winner's rows, and only those"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn racing_coordinators_with_one_identifier_and_the_same_payload_all_succeed_once() {
    let warehouse = Warehouse::new();
    let table = warehouse.create("same", Kind::PartitionedAppend).await;
    let payload = worker_messages(&table, &[(1, "a"), (2, "b")]).await;
    let outcomes = race(&table, &vec![payload; 4], 7).await;
    for outcome in outcomes {
        assert!(
            matches!(
                outcome,
                Ok(CommitOutcome::Committed { snapshot_id: 1 }
                    | CommitOutcome::AlreadyCommitted {
                        snapshot_id: Some(1)
                    })
                    | Err(CoordinatorError::CommitConflict { .. })
            ),
            "{outcome:?}"
        );
    }
    assert_eq!(read_rows(&table).await, expected(&[(1, "a"), (2, "b")]));
}

/// The same case without a race: what the loser of a race meets after the paimon crate's
/// identifier filter published nothing for it is the winner's snapshot, and a rerun meets it
/// before committing; both are refused.
#[tokio::test]
async fn a_rerun_of_an_identifier_with_other_payloads_is_refused_and_deletes_nothing() {
    let warehouse = Warehouse::new();
    let table = warehouse.create("rerun", Kind::PartitionedAppend).await;
    let first = worker_messages(&table, &[(1, "a")]).await;
    send(&append_coordinator(&table).await, &first, 1)
        .await
        .unwrap();
    let before = Unchanged::of(&table).await;
    // Other rows under the same identifier, and the same rows with other metadata (a file of
    // the first payload, with another row count): neither is the commit snapshot 1 holds.
    let other = worker_messages(&table, &[(2, "a")]).await;
    let mut altered = first.clone();
    altered[0].new_files[0].row_count += 1;
    for payload in [other.clone(), altered] {
        let error = send(&append_coordinator(&table).await, &payload, 1)
            .await
            .unwrap_err();
        assert!(
            matches!(
                error,
                CoordinatorError::IdentifierReused { snapshot_id: 1, .. }
            ),
            "{error}"
        );
    }
    before.assert_still(&table, "identifier reused").await;
    // The refused payload's files are still there: the coordinator deleted nothing.
    let path = table.location().trim_start_matches("file:").to_string();
    let name = &other[0].new_files[0].file_name;
    assert_eq!(
        super::support::find_files(std::path::Path::new(&path), name).len(),
        1,
        "{name}"
    );
    // The same payload again is the crash-recovery rerun.
    assert_eq!(
        send(&append_coordinator(&table).await, &first, 1)
            .await
            .unwrap(),
        CommitOutcome::AlreadyCommitted {
            snapshot_id: Some(1)
        }
    );
}

// ---- 2. Deletion vectors by content ---------------------------------------------------------

#[tokio::test]
async fn a_carried_deletion_vector_with_other_positions_is_refused() {
    let WithDeletionVector {
        table,
        x,
        y,
        live_vector,
        _warehouse,
    } = with_deletion_vector().await;
    let before = Unchanged::of(&table).await;
    let coordinator = bind(&table, compacting()).await;
    let x_name = x.new_files[0].file_name.as_str();
    // Compact Y, drop the deletion-vector file holding X's vector, and carry X's vector into
    // a new file: the same length and cardinality (5), other positions. Rows 0..5 of X would
    // come back and rows 5..10 would vanish.
    for positions in [&[5u32, 6, 7, 8, 9][..], &[0, 1, 2, 3, 9]] {
        let rewrite = files(&worker_messages(&table, &rows_in_a(10..20)).await);
        let mut swap = compaction(&y, y.new_files.clone(), rewrite);
        swap.compact_deleted_index_files = vec![live_vector.clone()];
        swap.compact_new_index_files = vec![write_deletion_vectors(&table, &[(x_name, positions)])];
        assert_refused_by_validate_and_commit(
            &coordinator,
            &[swap],
            3,
            Rule::DeletionVectors,
            "with other positions than the live vector",
        )
        .await;
    }
    before.assert_still(&table, "carried vector swapped").await;

    // The honest carry: the very positions. Commits, and X still hides ids 0..5.
    let rewrite = files(&worker_messages(&table, &rows_in_a(10..20)).await);
    let mut carry = compaction(&y, y.new_files.clone(), rewrite);
    carry.compact_deleted_index_files = vec![live_vector.clone()];
    carry.compact_new_index_files = vec![write_deletion_vectors(
        &table,
        &[(x_name, &[4, 3, 2, 1, 0])],
    )];
    assert!(matches!(
        send(&coordinator, &[carry], 3).await.unwrap(),
        CommitOutcome::Committed { .. }
    ));
    assert_eq!(read_rows(&table).await, expected(&rows_in_a(5..20)));
}

#[tokio::test]
async fn a_deletion_vector_beyond_its_result_is_refused() {
    let WithDeletionVector {
        table,
        x,
        live_vector,
        _warehouse,
        ..
    } = with_deletion_vector().await;
    let before = Unchanged::of(&table).await;
    let coordinator = bind(&table, compacting()).await;
    // X (10 rows, 5 of them hidden) rewritten whole into a result of 10 rows with a new
    // vector of 5 positions: the row counts add up, but position 10 is not a row of the
    // result, so row 4 would show again.
    let compact_x = |positions: &'static [u32]| {
        let table = table.clone();
        let x = x.clone();
        let live_vector = live_vector.clone();
        async move {
            let rewrite = files(&worker_messages(&table, &rows_in_a(0..10)).await);
            let result = rewrite[0].file_name.clone();
            let mut message = compaction(&x, x.new_files.clone(), rewrite);
            message.compact_deleted_index_files = vec![live_vector];
            message.compact_new_index_files =
                vec![write_deletion_vectors(&table, &[(&result, positions)])];
            message
        }
    };
    assert_refused_by_validate_and_commit(
        &coordinator,
        &[compact_x(&[0, 1, 2, 3, 10]).await],
        3,
        Rule::DeletionVectors,
        "hides position 10 of a file of 10 rows",
    )
    .await;
    before.assert_still(&table, "vector beyond its file").await;
    // The same compaction hiding positions 0..5 of its result commits and reads the same.
    assert!(matches!(
        send(&coordinator, &[compact_x(&[0, 1, 2, 3, 4]).await], 3)
            .await
            .unwrap(),
        CommitOutcome::Committed { .. }
    ));
    assert_eq!(read_rows(&table).await, expected(&rows_in_a(5..20)));
}

/// The same invariant in the data increment (a binding with deletes, as Spark's `DELETE` on
/// a deletion-vector table commits): the new vector of a live file must hold every position
/// of the one it replaces, hide only rows of its file, and be the file's only vector.
#[tokio::test]
async fn a_data_increment_cannot_shrink_or_drop_a_live_deletion_vector() {
    let WithDeletionVector {
        table,
        x,
        live_vector,
        _warehouse,
        ..
    } = with_deletion_vector().await;
    let before = Unchanged::of(&table).await;
    let deleting = bind(&table, Binding::append(USER).with_deletes()).await;
    let x_name = x.new_files[0].file_name.as_str();
    // X's live vector hides positions 0..5. Each case replaces (or keeps) it in the data lists.
    let message = |drop_live: bool, vectors: &[(&str, &[u32])]| {
        let mut message = CommitMessage::new(x.partition.clone(), x.bucket, vec![]);
        if drop_live {
            message.deleted_index_files = vec![live_vector.clone()];
        }
        if !vectors.is_empty() {
            message.new_index_files = vec![write_deletion_vectors(&table, vectors)];
        }
        message
    };
    let cases: [(&str, CommitMessage, &str); 4] = [
        (
            "a smaller vector: rows 2..5 of X would come back",
            message(true, &[(x_name, &[0, 1])]),
            "no longer hides position 2",
        ),
        (
            "other positions of the same count",
            message(true, &[(x_name, &[5, 6, 7, 8, 9])]),
            "no longer hides position 0",
        ),
        (
            "the live vector dropped with no replacement",
            message(true, &[]),
            "neither deletes nor carries",
        ),
        (
            "a position past X's 10 rows",
            message(true, &[(x_name, &[0, 1, 2, 3, 4, 10])]),
            "hides position 10 of a file of 10 rows",
        ),
    ];
    for (case, bad, words) in cases {
        let payload = [bad];
        assert_refused_by_validate_and_commit(&deleting, &payload, 3, Rule::DeletionVectors, words)
            .await;
        before.assert_still(&table, case).await;
    }
    // A second vector for X beside the live one.
    assert_refused_by_validate_and_commit(
        &deleting,
        &[message(false, &[(x_name, &[5])])],
        3,
        Rule::DeletionVectors,
        "would have two deletion vectors",
    )
    .await;
    before.assert_still(&table, "two vectors").await;

    // The honest delete: X's vector grows by positions 5 and 7 (ids 5 and 7).
    assert!(matches!(
        send(
            &deleting,
            &[message(true, &[(x_name, &[0, 1, 2, 3, 4, 5, 7])])],
            3
        )
        .await
        .unwrap(),
        CommitOutcome::Committed { .. }
    ));
    let mut rows = rows_in_a(6..20);
    rows.retain(|row| row.0 != 7);
    assert_eq!(read_rows(&table).await, expected(&rows));
}

// ---- 3. A primary-key compaction picks whole sorted runs from the newest down --------------

/// Writes ids `ids` of partition `a`, each with `value`, through a new writer of `table`, and
/// returns its prepared messages (not committed).
async fn write_pk_rows(table: &Table, ids: &[i32], value: &str) -> Vec<CommitMessage> {
    let rows: Vec<(i32, &str, String)> = ids.iter().map(|id| (*id, "a", value.into())).collect();
    let mut write = table
        .new_write_builder()
        .with_commit_user(USER)
        .unwrap()
        .new_write()
        .unwrap();
    write
        .write_arrow_batch(&batch_with_values(&rows))
        .await
        .unwrap();
    write.prepare_commit().await.unwrap()
}

/// Writes ids `ids` of partition `a` (value `value` for each) through a new writer and
/// commits them; returns the message of the bucket of id 0.
async fn commit_pk_rows(table: &Table, ids: &[i32], value: &str, identifier: i64) -> CommitMessage {
    let messages = write_pk_rows(table, ids, value).await;
    send(&append_coordinator(table).await, &messages, identifier)
        .await
        .unwrap();
    let bucket_of_zero = bucket_of(table, 0).await;
    messages
        .into_iter()
        .find(|m| m.bucket == bucket_of_zero)
        .expect("id 0's bucket is written")
}

/// The bucket id 0 of partition `a` is written to.
async fn bucket_of(table: &Table, id: i32) -> i32 {
    let router = paimon_wire::BucketRouter::for_table(table).unwrap();
    router.bucket_ids(&batch(&[(id, "a")])).unwrap()[0]
}

/// A compaction result for `inputs` holding `rows`: a real file, at `level`, whose metadata
/// claims the inputs' sequence and key ranges.
async fn pk_result(
    table: &Table,
    inputs: &[&DataFileMeta],
    ids: &[i32],
    level: i32,
) -> DataFileMeta {
    let bucket = inputs[0];
    let mut result = write_pk_rows(table, ids, "merged")
        .await
        .into_iter()
        .flat_map(|m| m.new_files)
        .find(|f| f.row_count > 0 && bucket.schema_id == f.schema_id)
        .unwrap();
    result.level = level;
    result.min_sequence_number = inputs.iter().map(|f| f.min_sequence_number).min().unwrap();
    result.max_sequence_number = inputs.iter().map(|f| f.max_sequence_number).max().unwrap();
    result.min_key = inputs.iter().map(|f| f.min_key.clone()).min().unwrap();
    result.max_key = inputs.iter().map(|f| f.max_key.clone()).max().unwrap();
    result.row_count = result
        .row_count
        .min(inputs.iter().map(|f| f.row_count).sum());
    result
}

#[tokio::test]
async fn a_compaction_that_skips_a_sorted_run_is_refused() {
    let warehouse = Warehouse::new();
    let table = warehouse
        .create_with_options("runs", Kind::FixedBucketPk, &[("bucket", "1")])
        .await;
    let ids: Vec<i32> = (0..10).collect();
    // B (oldest), A, X (newest): three level-0 runs of one bucket.
    let b = commit_pk_rows(&table, &ids, "old", 1).await;
    let a = commit_pk_rows(&table, &ids, "new", 2).await;
    let x = commit_pk_rows(&table, &[20, 21], "x", 3).await;
    let before = Unchanged::of(&table).await;
    assert!(before.rows.iter().all(|(id, _, v)| *id >= 20 || v == "new"));
    let coordinator = bind(&table, compacting()).await;
    let (b_file, a_file, x_file) = (&b.new_files[0], &a.new_files[0], &x.new_files[0]);

    // X and B compacted, A between them left.
    let inputs = [x_file, b_file];
    let result = pk_result(&table, &inputs, &[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 20, 21], 5).await;
    let skip = compaction(&x, vec![x_file.clone(), b_file.clone()], vec![result]);
    assert_refused_by_validate_and_commit(
        &coordinator,
        &[skip],
        4,
        Rule::CompactRuns,
        "must be newer than everything it takes",
    )
    .await;
    before.assert_still(&table, "a skipped run").await;

    // The honest compaction takes every run; its result reads as the merged rows.
    let all = [x_file, a_file, b_file];
    let result = pk_result(&table, &all, &[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 20, 21], 5).await;
    let whole = compaction(
        &x,
        vec![x_file.clone(), a_file.clone(), b_file.clone()],
        vec![result.clone()],
    );
    assert!(matches!(
        send(&coordinator, &[whole], 4).await.unwrap(),
        CommitOutcome::Committed { .. }
    ));

    // Now one run at level 5. A new level-0 file, then a compaction that upgrades it to a
    // level at or above the run it leaves: refused, the result would sit above older rows.
    let y = commit_pk_rows(&table, &[30], "y", 5).await;
    let before = Unchanged::of(&table).await;
    let mut upgraded = y.new_files[0].clone();
    upgraded.level = 5;
    let above = compaction(&y, vec![y.new_files[0].clone()], vec![upgraded]);
    assert_refused_by_validate_and_commit(
        &coordinator,
        &[above],
        6,
        Rule::CompactRuns,
        "results go below every run the compaction leaves",
    )
    .await;
    before
        .assert_still(&table, "a result above a run left")
        .await;
    let mut upgraded = y.new_files[0].clone();
    upgraded.level = 4;
    let below = compaction(&y, vec![y.new_files[0].clone()], vec![upgraded]);
    assert!(matches!(
        send(&coordinator, &[below], 6).await.unwrap(),
        CommitOutcome::Committed { .. }
    ));
}

// ---- 5, 6, 7. HASH indexes ------------------------------------------------------------------

#[tokio::test]
async fn a_hash_index_in_a_bucket_beyond_javas_range_is_refused() {
    let warehouse = Warehouse::new();
    let table = warehouse.create("dyn", Kind::DynamicBucketPk).await;
    let coordinator = append_coordinator(&table).await;
    let before = Unchanged::of(&table).await;
    for bucket in [MAX_DYNAMIC_BUCKETS, 40_000, i32::MAX] {
        let mut messages = assigner_messages(&table, AssignerShare::WHOLE, &batch(&[(1, "a")]))
            .await
            .unwrap();
        messages[0].bucket = bucket;
        assert_refused_by_validate_and_commit(
            &coordinator,
            &messages,
            1,
            Rule::Bucket,
            "takes buckets 0..32767",
        )
        .await;
    }
    before.assert_still(&table, "bucket beyond 32767").await;
    // The last bucket Java allows is a bucket like any other.
    let mut messages = assigner_messages(&table, AssignerShare::WHOLE, &batch(&[(1, "a")]))
        .await
        .unwrap();
    messages[0].bucket = MAX_DYNAMIC_BUCKETS - 1;
    assert!(coordinator
        .deserialize(V, &serialize_list(&messages, V).unwrap())
        .is_ok());
}

#[tokio::test]
async fn hash_indexes_are_read_under_the_coordinators_budget() {
    let warehouse = Warehouse::new();
    let table = warehouse.create("dyn", Kind::DynamicBucketPk).await;
    let first = assigner_messages(&table, AssignerShare::WHOLE, &batch(&[(1, "a"), (2, "a")]))
        .await
        .unwrap();
    send(&append_coordinator(&table).await, &first, 1)
        .await
        .unwrap();
    let before = Unchanged::of(&table).await;
    // A payload of a few hundred bytes naming a HASH index of 4 MiB (a million keys, each
    // hashed once: honest in form) in the bucket: 12 MiB of keys to check against the live
    // index, more than a coordinator with an 8 MiB budget gives.
    let mut second = assigner_messages(&table, AssignerShare::WHOLE, &batch(&[(3, "a")]))
        .await
        .unwrap();
    let mut hashes: Vec<i32> = (0..1 << 20).collect();
    let live = &first[0].new_index_files[0];
    let live_hashes: Vec<i32> = std::fs::read(format!(
        "{}/index/{}",
        table
            .location()
            .trim_start_matches("file:")
            .trim_end_matches('/'),
        live.file_name
    ))
    .unwrap()
    .chunks_exact(4)
    .map(|c| i32::from_be_bytes([c[0], c[1], c[2], c[3]]))
    .collect();
    hashes.retain(|h| !live_hashes.contains(h));
    hashes.extend(&live_hashes);
    second[0].new_index_files = vec![write_hash_index(&table, "index-large-1", &hashes)];
    let payload = serialize_list(&second, V).unwrap();
    assert!(payload.len() < 2048, "{}", payload.len());
    let small = append_coordinator(&table)
        .await
        .with_hash_index_budget(8 << 20);
    assert_eq!(small.hash_index_budget(), 8 << 20);
    assert_refused_by_validate_and_commit(
        &small,
        &second,
        2,
        Rule::Bounds,
        "above the HASH index budget of 8388608 bytes",
    )
    .await;
    before
        .assert_still(&table, "over the HASH index budget")
        .await;
    // Within the default budget the same commit is checked in full, and it is honest.
    let default = append_coordinator(&table).await;
    assert_eq!(default.hash_index_budget(), DEFAULT_HASH_INDEX_BUDGET);
    assert!(matches!(
        send(&default, &second, 2).await.unwrap(),
        CommitOutcome::Committed { .. }
    ));
}

#[tokio::test]
async fn a_hash_index_deleted_without_a_replacement_is_refused_in_every_list() {
    let warehouse = Warehouse::new();
    let table = warehouse.create("dyn", Kind::DynamicBucketPk).await;
    let first = assigner_messages(&table, AssignerShare::WHOLE, &batch(&[(1, "a"), (2, "a")]))
        .await
        .unwrap();
    send(&append_coordinator(&table).await, &first, 1)
        .await
        .unwrap();
    let before = Unchanged::of(&table).await;
    let live = first[0].new_index_files[0].clone();
    // Whatever the binding allows: deletes, compaction, both.
    for binding in [
        Binding::append(USER),
        Binding::append(USER).with_deletes(),
        Binding::append(USER).with_compaction(),
        Binding::append(USER).with_deletes().with_compaction(),
    ] {
        let takes_compaction = binding.allow_compaction;
        let coordinator = bind(&table, binding).await;
        let mut in_data_list =
            CommitMessage::new(first[0].partition.clone(), first[0].bucket, vec![]);
        in_data_list.deleted_index_files = vec![live.clone()];
        let mut in_compaction_list = in_data_list.clone();
        in_compaction_list.deleted_index_files.clear();
        in_compaction_list.compact_deleted_index_files = vec![live.clone()];
        assert_refused_by_validate_and_commit(
            &coordinator,
            &[in_data_list],
            2,
            Rule::HashIndexReplaced,
            "without adding the bucket's new HASH index",
        )
        .await;
        // A binding that takes no compaction refuses any compaction list first.
        let (rule, words) = if takes_compaction {
            (
                Rule::HashIndexReplaced,
                "without adding the bucket's new HASH index",
            )
        } else {
            (Rule::CompactIncrement, "compaction is opt-in")
        };
        assert_refused_by_validate_and_commit(&coordinator, &[in_compaction_list], 2, rule, words)
            .await;
    }
    before.assert_still(&table, "a HASH index deleted").await;
    // The later writers of the partition still restore it.
    let next = assigner_messages(&table, AssignerShare::WHOLE, &batch(&[(3, "a")]))
        .await
        .unwrap();
    assert!(matches!(
        send(&append_coordinator(&table).await, &next, 2)
            .await
            .unwrap(),
        CommitOutcome::Committed { .. }
    ));
}

// ---- 9. validate runs the storage checks commit runs ---------------------------------------

#[tokio::test]
async fn a_new_data_file_missing_from_storage_is_refused_by_validate_and_commit() {
    let warehouse = Warehouse::new();
    let table = warehouse.create("missing", Kind::PartitionedAppend).await;
    let coordinator = append_coordinator(&table).await;
    let messages = worker_messages(&table, &[(1, "a"), (2, "b")]).await;
    let name = &messages[1].new_files[0].file_name;
    let root = std::path::PathBuf::from(table.location().trim_start_matches("file:"));
    for path in super::support::find_files(&root, name) {
        std::fs::remove_file(path).unwrap();
    }
    let before = Unchanged::of(&table).await;
    assert_refused_by_validate_and_commit(
        &coordinator,
        &messages,
        1,
        Rule::MissingFile,
        "is added by this commit, but",
    )
    .await;
    before.assert_still(&table, "a missing data file").await;
}

/// `commit` runs the existence check beside the manifests' encoding and awaits it before the
/// publication (the paimon crate's publication gate). When it refuses, the refusal names the
/// first missing file in message order (not the first the listings found), nothing is
/// published, the manifest files and lists the commit had written are deleted, and the same
/// files commit once they exist.
#[tokio::test]
async fn a_commit_refused_by_the_existence_check_leaves_no_manifest_behind() {
    let warehouse = Warehouse::new();
    let table = warehouse
        .create("missing_late", Kind::PartitionedAppend)
        .await;
    let coordinator = append_coordinator(&table).await;
    // Three partitions: three messages, each in a bucket directory of its own.
    let messages = worker_messages(&table, &[(1, "a"), (2, "b"), (3, "c")]).await;
    assert_eq!(messages.len(), 3);
    let root = std::path::PathBuf::from(table.location().trim_start_matches("file:"));
    let manifest_dir = root.join("manifest");
    let manifests = |dir: &std::path::Path| -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .map(|entries| {
                entries
                    .flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        names
    };
    let manifests_before = manifests(&manifest_dir);
    let before = Unchanged::of(&table).await;
    // The files of the last and the second message are moved away.
    let mut moved = Vec::new();
    for index in [2, 1] {
        let name = &messages[index].new_files[0].file_name;
        for path in super::support::find_files(&root, name) {
            let aside = path.with_extension("aside");
            std::fs::rename(&path, &aside).unwrap();
            moved.push((aside, path));
        }
    }
    assert_eq!(moved.len(), 2);

    let error = send(&coordinator, &messages, 1)
        .await
        .expect_err("a commit of missing files is refused");
    let refusal = error
        .as_validation()
        .unwrap_or_else(|| panic!("expected a refusal, got {error}"));
    assert_eq!(refusal.rule, Rule::MissingFile, "{error}");
    assert_eq!(
        refusal.message_index, 1,
        "the first missing file in message order: {error}"
    );
    assert_eq!(refusal.field, "new_files[0].file_name", "{error}");
    assert!(
        error
            .to_string()
            .contains(&messages[1].new_files[0].file_name),
        "{error}"
    );
    before
        .assert_still(&table, "a commit refused by the existence check")
        .await;
    assert_eq!(
        manifests(&manifest_dir),
        manifests_before,
        "the manifests the refused commit wrote are deleted"
    );

    // Once the files are back, the same commit goes in whole.
    for (aside, path) in moved {
        std::fs::rename(aside, path).unwrap();
    }
    assert!(matches!(
        send(&coordinator, &messages, 1).await.unwrap(),
        CommitOutcome::Committed { .. }
    ));
    assert_eq!(read_rows(&table).await.len(), before.rows.len() + 3);
}

/// Case 3 with verification: a compaction that takes every run (a legal pick) and writes each
/// key's newest values, but from a writer whose sequence numbers start at 0 — below the
/// inputs', inside the metadata's claimed range. The user columns read the same; the winners'
/// sequence numbers do not, and a later older write would win again. Verification compares
/// every key's winner with its sequence number and row kind.
#[tokio::test]
async fn verified_compaction_keeps_every_keys_winner_with_its_sequence_number() {
    let warehouse = Warehouse::new();
    let table = warehouse
        .create_with_options("winners", Kind::FixedBucketPk, &[("bucket", "1")])
        .await;
    let ids: Vec<i32> = (0..10).collect();
    let b = commit_pk_rows(&table, &ids, "old", 1).await;
    let a = commit_pk_rows(&table, &ids, "new", 2).await;
    let before = Unchanged::of(&table).await;
    let inputs = [&a.new_files[0], &b.new_files[0]];
    let coordinator = bind(&table, Binding::append(USER).with_verified_compaction()).await;

    // The newest values, written by a writer of an empty twin table (sequence numbers from
    // 0), and placed in this bucket's directory.
    let twin = warehouse
        .create_with_options("twin", Kind::FixedBucketPk, &[("bucket", "1")])
        .await;
    let mut result = write_pk_rows(&twin, &ids, "new").await[0].new_files[0].clone();
    let local = |t: &Table| std::path::PathBuf::from(t.location().trim_start_matches("file:"));
    let from = super::support::find_files(&local(&twin), &result.file_name).remove(0);
    let bucket_dir = super::support::find_files(&local(&table), &a.new_files[0].file_name)
        .remove(0)
        .parent()
        .unwrap()
        .to_path_buf();
    std::fs::copy(&from, bucket_dir.join(&result.file_name)).unwrap();
    result.level = 5;
    result.min_sequence_number = inputs.iter().map(|f| f.min_sequence_number).min().unwrap();
    result.max_sequence_number = inputs.iter().map(|f| f.max_sequence_number).max().unwrap();
    let lowered = compaction(
        &a,
        vec![a.new_files[0].clone(), b.new_files[0].clone()],
        vec![result],
    );
    assert_refused_by_validate_and_commit(
        &coordinator,
        &[lowered],
        3,
        Rule::CompactContent,
        "changes which row wins a key",
    )
    .await;
    before
        .assert_still(&table, "winners with lower sequence numbers")
        .await;

    // Both runs upgraded in place onto one level: two files of one key range at one level
    // are no sorted run (a reader shows the older values), refused.
    let (mut a_up, mut b_up) = (a.new_files[0].clone(), b.new_files[0].clone());
    a_up.level = 5;
    b_up.level = 5;
    let one_level = compaction(
        &a,
        vec![a.new_files[0].clone(), b.new_files[0].clone()],
        vec![a_up.clone(), b_up.clone()],
    );
    assert_refused_by_validate_and_commit(
        &coordinator,
        &[one_level],
        3,
        Rule::CompactRuns,
        "a level above 0 is one sorted run",
    )
    .await;
    before.assert_still(&table, "two runs at one level").await;
    // The honest counterpart keeps every row and its sequence number: A (newer) upgraded to
    // level 4, B (older) to level 5, as levels order runs by age.
    a_up.level = 4;
    let upgrade = compaction(
        &a,
        vec![a.new_files[0].clone(), b.new_files[0].clone()],
        vec![a_up, b_up],
    );
    assert!(matches!(
        send(&coordinator, &[upgrade], 3).await.unwrap(),
        CommitOutcome::Committed { .. }
    ));
    assert!(read_rows(&table).await.iter().all(|(_, _, v)| v == "new"));
}
