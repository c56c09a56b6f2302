//! Dynamic-bucket primary-key tables written by many assigners, and the `hash-index-*` rules
//! (`src/coordinator/hash_index.rs`) that refuse payloads giving one key two buckets.

use std::collections::BTreeMap;

use arrow_array::RecordBatch;
use paimon::table::{AssignerShare, CommitMessage};
use paimon_wire::coordinator::{CommitOutcome, CoordinatorError, Rule};
use paimon_wire::AssignerRouter;

use super::support::{
    append_coordinator, batch, batch_with_values, commit_payloads, read_hash_index, read_rows,
    rule_of, send, Kind, Unchanged, Warehouse, SMALL_BUCKETS, USER,
};

// The dynamic-bucket helpers live in `support.rs`, shared with `tests/stateful_model.rs`;
// `hostile_round_4` takes these two from here.
pub use super::support::{assigner_messages, write_hash_index};

/// The batch of the rows whose assigner is `assigner`.
fn rows_of(rows: &[(i32, &str, String)], assigners: &[i32], assigner: i32) -> RecordBatch {
    let mine: Vec<(i32, &str, String)> = rows
        .iter()
        .zip(assigners)
        .filter(|(_, &a)| a == assigner)
        .map(|(row, _)| row.clone())
        .collect();
    batch_with_values(&mine)
}

fn assert_refused(result: Result<CommitOutcome, CoordinatorError>, rule: Rule, words: &str) {
    let error = result.expect_err("the payloads must be refused");
    assert_eq!(rule_of(&error), rule, "{error}");
    assert!(
        error.to_string().contains(words),
        "{words:?} not in: {error}"
    );
}

/// A key of partition `pt` whose assigner, of `router`'s, is `assigner`.
fn key_of_assigner(router: &AssignerRouter, pt: &str, assigner: i32) -> i32 {
    (0..1000)
        .find(|&id| router.assigner_ids(&batch(&[(id, pt)])).unwrap()[0] == assigner)
        .expect("some key routes to every assigner")
}

#[tokio::test]
async fn three_assigners_upsert_in_rounds_and_every_key_reads_back_once_with_its_last_value() {
    let warehouse = Warehouse::new();
    let table = warehouse
        .create_with_options("dyn", Kind::DynamicBucketPk, SMALL_BUCKETS)
        .await;
    let router = AssignerRouter::for_table(&table, 3).unwrap();
    assert_eq!(router.assigners(), 3);
    let coordinator = append_coordinator(&table).await;
    let mut latest: BTreeMap<(i32, String), String> = BTreeMap::new();
    let mut buckets_seen = std::collections::BTreeSet::new();
    for round in 0..4 {
        // Keys repeat across rounds: each round rewrites a window that overlaps the last.
        let rows: Vec<(i32, &str, String)> = (round * 6..round * 6 + 20)
            .flat_map(|id| ["a", "b"].map(|pt| (id, pt, format!("r{round}-{pt}{id}"))))
            .collect();
        for (id, pt, v) in &rows {
            latest.insert((*id, pt.to_string()), v.clone());
        }
        let all = batch_with_values(&rows);
        let assigners = router.assigner_ids(&all).unwrap();
        let mut payloads = Vec::new();
        for i in 0..3 {
            let share = router.share(i).unwrap();
            payloads.push(
                assigner_messages(&table, share, &rows_of(&rows, &assigners, i))
                    .await
                    .unwrap(),
            );
        }
        // Each assigner creates only its own buckets: bucket % 3 == assigner, for buckets new
        // in this round (keys already indexed keep theirs, which the same assigner made).
        for (i, messages) in payloads.iter().enumerate() {
            for message in messages.iter().filter(|m| !m.new_files.is_empty()) {
                assert_eq!(message.bucket % 3, i as i32, "round {round}: {message:?}");
                buckets_seen.insert(message.bucket);
            }
        }
        let outcome = commit_payloads(&coordinator, &payloads, round as i64 + 1)
            .await
            .unwrap_or_else(|e| panic!("round {round}: {e}"));
        assert!(matches!(outcome, CommitOutcome::Committed { .. }));
        let expected: Vec<(i32, String, String)> = latest
            .iter()
            .map(|((id, pt), v)| (*id, pt.clone(), v.clone()))
            .collect();
        assert_eq!(read_rows(&table).await, expected, "round {round}");
    }
    // 4 keys per bucket: every assigner filled several buckets of its own.
    assert!(buckets_seen.len() >= 9, "{buckets_seen:?}");
}

#[tokio::test]
async fn a_writer_refuses_a_row_routed_to_another_assigner() {
    let warehouse = Warehouse::new();
    let table = warehouse.create("dyn", Kind::DynamicBucketPk).await;
    let router = AssignerRouter::for_table(&table, 2).unwrap();
    let id = key_of_assigner(&router, "a", 1);
    let error = assigner_messages(&table, router.share(0).unwrap(), &batch(&[(id, "a")]))
        .await
        .expect_err("assigner 0 must refuse a row of assigner 1");
    assert!(
        error
            .to_string()
            .contains("belongs to dynamic-bucket assigner 1 of 2"),
        "{error}"
    );
}

#[tokio::test]
async fn tables_the_router_cannot_divide_are_refused_by_name() {
    let warehouse = Warehouse::new();
    let fixed = warehouse.create("fixed", Kind::FixedBucketPk).await;
    let error = AssignerRouter::for_table(&fixed, 2).unwrap_err();
    assert!(error.to_string().contains("bucket = -1"), "{error}");
    let dynamic = warehouse.create("dyn", Kind::DynamicBucketPk).await;
    assert!(AssignerRouter::for_table(&dynamic, 0).is_err());
    let capped = warehouse
        .create_with_options(
            "capped",
            Kind::DynamicBucketPk,
            &[("dynamic-bucket.initial-buckets", "2")],
        )
        .await;
    let router = AssignerRouter::for_table(&capped, 5).unwrap();
    assert_eq!(
        (router.assigners(), router.bucket_owning_assigners()),
        (5, 2)
    );
}

#[tokio::test]
async fn two_assigners_giving_one_key_two_buckets_are_refused() {
    let warehouse = Warehouse::new();
    let table = warehouse.create("dyn", Kind::DynamicBucketPk).await;
    let router = AssignerRouter::for_table(&table, 2).unwrap();
    let coordinator = append_coordinator(&table).await;
    let before = Unchanged::of(&table).await;
    // Assigner 1 of 2 puts the key in bucket 1; a writer that assigns every key itself (a
    // worker that was not told it is one of two) puts the same key in bucket 0.
    let id = key_of_assigner(&router, "a", 1);
    let one = assigner_messages(&table, router.share(1).unwrap(), &batch(&[(id, "a")]))
        .await
        .unwrap();
    let whole = assigner_messages(&table, AssignerShare::WHOLE, &batch(&[(id, "a")]))
        .await
        .unwrap();
    assert_eq!((one[0].bucket, whole[0].bucket), (1, 0));
    assert_refused(
        commit_payloads(&coordinator, &[one, whole], 1).await,
        Rule::HashIndexKeys,
        "in two buckets",
    );
    before.assert_still(&table, "one key in two buckets").await;
}

#[tokio::test]
async fn a_new_bucket_holding_a_key_another_bucket_holds_is_refused() {
    let warehouse = Warehouse::new();
    let table = warehouse.create("dyn", Kind::DynamicBucketPk).await;
    let router = AssignerRouter::for_table(&table, 2).unwrap();
    let coordinator = append_coordinator(&table).await;
    let id = key_of_assigner(&router, "a", 1);
    let first = assigner_messages(&table, AssignerShare::WHOLE, &batch(&[(id, "a")]))
        .await
        .unwrap();
    assert_eq!(first[0].bucket, 0);
    send(&coordinator, &first, 1).await.unwrap();
    let before = Unchanged::of(&table).await;
    // A stale assigner that restored the table before the key was written puts it in a new
    // bucket of its own.
    let stale = table
        .new_write_builder()
        .with_commit_user(USER)
        .unwrap()
        .with_restore_snapshot(0)
        .unwrap()
        .with_dynamic_bucket_share(router.share(1).unwrap());
    let mut write = stale.new_write().unwrap();
    write.write_arrow_batch(&batch(&[(id, "a")])).await.unwrap();
    let messages = write.prepare_commit().await.unwrap();
    assert_eq!(messages[0].bucket, 1);
    assert_refused(
        send(&coordinator, &messages, 2).await,
        Rule::HashIndexKeys,
        "the live index",
    );
    before
        .assert_still(&table, "a key moved to a new bucket")
        .await;
}

#[tokio::test]
async fn an_index_that_drops_keys_of_the_one_it_replaces_is_refused() {
    let warehouse = Warehouse::new();
    let table = warehouse.create("dyn", Kind::DynamicBucketPk).await;
    let coordinator = append_coordinator(&table).await;
    let first = assigner_messages(&table, AssignerShare::WHOLE, &batch(&[(1, "a"), (2, "a")]))
        .await
        .unwrap();
    send(&coordinator, &first, 1).await.unwrap();
    let before = Unchanged::of(&table).await;
    let mut second = assigner_messages(&table, AssignerShare::WHOLE, &batch(&[(3, "a")]))
        .await
        .unwrap();
    let honest = second[0].new_index_files[0].clone();
    let all = read_hash_index(&table, &honest.file_name);
    assert_eq!(
        all.len(),
        3,
        "the honest index lists the two old keys and the new one"
    );
    // The same message, with an index that lists only the new key.
    let only_new: Vec<i32> = all
        .iter()
        .copied()
        .filter(|h| !read_hash_index(&table, &first[0].new_index_files[0].file_name).contains(h))
        .collect();
    second[0].new_index_files = vec![write_hash_index(&table, "index-forged-0", &only_new)];
    assert_refused(
        send(&coordinator, &second, 2).await,
        Rule::HashIndexKeys,
        "drops key hash",
    );
    before
        .assert_still(&table, "an index that forgets keys")
        .await;
}

#[tokio::test]
async fn an_index_whose_size_is_not_its_row_count_is_refused() {
    let warehouse = Warehouse::new();
    let table = warehouse.create("dyn", Kind::DynamicBucketPk).await;
    let coordinator = append_coordinator(&table).await;
    let mut messages = assigner_messages(&table, AssignerShare::WHOLE, &batch(&[(1, "a")]))
        .await
        .unwrap();
    messages[0].new_index_files[0].row_count += 1;
    assert_refused(
        send(&coordinator, &messages, 1).await,
        Rule::HashIndexKeys,
        "not 4 x row_count",
    );
}

#[tokio::test]
async fn new_data_in_a_bucket_without_an_index_is_refused() {
    let warehouse = Warehouse::new();
    let table = warehouse.create("dyn", Kind::DynamicBucketPk).await;
    let coordinator = append_coordinator(&table).await;
    let mut messages = assigner_messages(&table, AssignerShare::WHOLE, &batch(&[(1, "a")]))
        .await
        .unwrap();
    messages[0].new_index_files.clear();
    assert_refused(
        send(&coordinator, &messages, 1).await,
        Rule::HashIndexCoverage,
        "no HASH index after the commit",
    );
    // With its index the same write commits, and a later write of a known key needs no new
    // index: the live one covers the bucket.
    let honest = assigner_messages(&table, AssignerShare::WHOLE, &batch(&[(1, "a")]))
        .await
        .unwrap();
    send(&coordinator, &honest, 1).await.unwrap();
    let again = assigner_messages(&table, AssignerShare::WHOLE, &batch(&[(1, "a")]))
        .await
        .unwrap();
    assert!(again[0].new_index_files.is_empty(), "{:?}", again[0]);
    assert!(matches!(
        send(&coordinator, &again, 2).await.unwrap(),
        CommitOutcome::Committed { .. }
    ));
}

/// A bucket that gets new data files and keeps its live index (the commit brings no new one)
/// must get only keys that index lists: a writer that added a key and lost its new index
/// would let the next writers put the key in another bucket. The coordinator reads those
/// files' keys; an update of known keys (no new index, honestly) still commits.
#[tokio::test]
async fn a_new_key_in_a_bucket_that_keeps_its_index_is_refused() {
    let warehouse = Warehouse::new();
    let table = warehouse.create("dyn", Kind::DynamicBucketPk).await;
    let coordinator = append_coordinator(&table).await;
    let first = assigner_messages(&table, AssignerShare::WHOLE, &batch(&[(1, "a"), (2, "a")]))
        .await
        .unwrap();
    send(&coordinator, &first, 1).await.unwrap();
    let before = Unchanged::of(&table).await;

    // Keys 2 (known) and 3 (new) into the bucket of keys 1 and 2, its new index dropped.
    let mut lost_index =
        assigner_messages(&table, AssignerShare::WHOLE, &batch(&[(2, "a"), (3, "a")]))
            .await
            .unwrap();
    assert_eq!(lost_index.len(), 1, "{lost_index:?}");
    assert_eq!(lost_index[0].bucket, first[0].bucket, "one bucket");
    assert_eq!(
        lost_index[0].new_index_files.len(),
        1,
        "the writer indexed key 3"
    );
    lost_index[0].new_index_files.clear();
    assert_refused(
        send(&coordinator, &lost_index, 2).await,
        Rule::HashIndexCoverage,
        "does not list",
    );
    before
        .assert_still(&table, "a new key without its index")
        .await;

    // Known keys only: no new index, read and accepted.
    let update = assigner_messages(&table, AssignerShare::WHOLE, &batch(&[(1, "a"), (2, "a")]))
        .await
        .unwrap();
    assert!(update[0].new_index_files.is_empty(), "{:?}", update[0]);
    assert!(matches!(
        send(&coordinator, &update, 2).await.unwrap(),
        CommitOutcome::Committed { .. }
    ));
}

/// A compaction of a dynamic bucket that keeps its live index cannot bring in a key the index
/// does not list either. The forged compaction below passes every compaction rule on
/// metadata (whole runs, key and sequence ranges within its inputs, fewer rows, a real file at
/// the highest level); an unverified binding reads its result's keys (`hash-index-coverage`),
/// a verified one compares them with the inputs' (`compact-content`).
#[tokio::test]
async fn a_compaction_bringing_a_new_key_into_a_bucket_that_keeps_its_index_is_refused() {
    use paimon_wire::coordinator::Binding;

    let warehouse = Warehouse::new();
    let table = warehouse.create("dyn", Kind::DynamicBucketPk).await;
    let coordinator = append_coordinator(&table).await;
    let mut live = Vec::new();
    for identifier in 1..=2 {
        let messages =
            assigner_messages(&table, AssignerShare::WHOLE, &batch(&[(1, "a"), (5, "a")]))
                .await
                .unwrap();
        live.extend(messages[0].new_files.iter().cloned());
        send(&coordinator, &messages, identifier).await.unwrap();
    }
    let bucket = 0;
    let before = Unchanged::of(&table).await;

    // Keys 1 and 3 at sequence numbers 0 and 1: written for a table of the same schema, and
    // put into this bucket's directory.
    let other = warehouse.create("other", Kind::DynamicBucketPk).await;
    let written = assigner_messages(&other, AssignerShare::WHOLE, &batch(&[(1, "a"), (3, "a")]))
        .await
        .unwrap();
    let mut result = written[0].new_files[0].clone();
    let source = super::support::find_files(
        std::path::Path::new(other.location().trim_start_matches("file:")),
        &result.file_name,
    );
    let live_path = super::support::find_files(
        std::path::Path::new(table.location().trim_start_matches("file:")),
        &live[0].file_name,
    );
    std::fs::copy(&source[0], live_path[0].with_file_name(&result.file_name)).unwrap();
    result.level = 5;
    let mut compaction = CommitMessage::new(written[0].partition.clone(), bucket, Vec::new());
    compaction.compact_before = live.clone();
    compaction.compact_after = vec![result];

    let unverified = super::support::bind(&table, Binding::append(USER).with_compaction()).await;
    assert_refused(
        send(&unverified, std::slice::from_ref(&compaction), 3).await,
        Rule::HashIndexCoverage,
        "does not list",
    );
    let verified =
        super::support::bind(&table, Binding::append(USER).with_verified_compaction()).await;
    let error = send(&verified, &[compaction], 3).await.unwrap_err();
    assert_eq!(rule_of(&error), Rule::CompactContent, "{error}");
    before
        .assert_still(&table, "a compaction bringing a new key")
        .await;
}

/// The compaction's index lists are checked like the data increment's: a forged HASH index
/// moved to `compact_new_index_files`, or a live one deleted by `compact_deleted_index_files`
/// without a replacement, is refused even by a coordinator that takes compactions.
#[tokio::test]
async fn hash_indexes_in_the_compaction_lists_are_checked_too() {
    let warehouse = Warehouse::new();
    let table = warehouse.create("dyn", Kind::DynamicBucketPk).await;
    let coordinator = super::support::bind(
        &table,
        paimon_wire::coordinator::Binding::append(USER).with_compaction(),
    )
    .await;
    let first = assigner_messages(&table, AssignerShare::WHOLE, &batch(&[(1, "a"), (2, "a")]))
        .await
        .unwrap();
    send(&coordinator, &first, 1).await.unwrap();
    let before = Unchanged::of(&table).await;
    let mut second = assigner_messages(&table, AssignerShare::WHOLE, &batch(&[(3, "a")]))
        .await
        .unwrap();
    let all = read_hash_index(&table, &second[0].new_index_files[0].file_name);
    let old = read_hash_index(&table, &first[0].new_index_files[0].file_name);
    let only_new: Vec<i32> = all.into_iter().filter(|h| !old.contains(h)).collect();
    // An honest-looking compaction with real inputs: the live file upgraded to level 5, as
    // Paimon's compaction does to a file it does not rewrite.
    let live = first[0].new_files[0].clone();
    let mut upgraded = live.clone();
    upgraded.level = 5;
    second[0].new_index_files.clear();
    second[0].compact_before = vec![live.clone()];
    second[0].compact_after = vec![upgraded.clone()];
    second[0].compact_new_index_files = vec![write_hash_index(&table, "index-forged-1", &only_new)];
    assert_refused(
        send(&coordinator, &second, 2).await,
        Rule::HashIndexKeys,
        "drops key hash",
    );

    let mut dropping = CommitMessage::new(first[0].partition.clone(), first[0].bucket, vec![]);
    dropping.compact_before = vec![live];
    dropping.compact_after = vec![upgraded];
    dropping.compact_deleted_index_files = vec![first[0].new_index_files[0].clone()];
    assert_refused(
        send(&coordinator, &[dropping], 2).await,
        Rule::HashIndexReplaced,
        "without adding the bucket's new HASH index",
    );
    before
        .assert_still(&table, "HASH indexes through the compaction lists")
        .await;
}
