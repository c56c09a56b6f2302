//! Native compaction (issue 41) of tables whose compaction merges more than one row a key or
//! rewrites deletion vectors, planned with `plan_compaction`, run with `CompactionTask::run`
//! and committed by a coordinator that verifies compactions (rule `compact-content`).

use paimon::table::Table;
use paimon_wire::compaction::{plan_compaction, CompactionTask};
use paimon_wire::coordinator::{Binding, CommitOutcome, Rule};

use super::hostile_round_3::with_deletion_vector;
use super::support::{
    append_coordinator, batch_with_values, bind, expected, read_rows, rule_of, send, Kind,
    Warehouse, USER,
};

/// The commit user of the compactions (the CLI's `compact` commits as its own user, with the
/// planned snapshot as the identifier).
const COMPACTOR: &str = "compactor";

/// Writes `rows` as one job and commits it.
async fn job(table: &Table, identifier: i64, rows: &[(i32, &str, String)]) {
    let builder = table.new_write_builder().with_commit_user(USER).unwrap();
    let mut write = builder.new_write().unwrap();
    write
        .write_arrow_batch(&batch_with_values(rows))
        .await
        .unwrap();
    let messages = write.prepare_commit().await.unwrap();
    let outcome = send(&append_coordinator(table).await, &messages, identifier)
        .await
        .unwrap();
    assert!(
        matches!(outcome, CommitOutcome::Committed { .. }),
        "{outcome:?}"
    );
}

/// Plans a full compaction, runs every task and commits them under a verifying binding.
async fn compact_fully(table: &Table) -> usize {
    let plan = plan_compaction(table, true).await.unwrap();
    let mut messages = Vec::new();
    for task in plan.tasks() {
        messages.push(task.run(table).await.unwrap());
    }
    let compacted = messages.iter().map(|m| m.compact_before.len()).sum();
    let coordinator = bind(table, Binding::append(COMPACTOR).with_verified_compaction()).await;
    let outcome = send(&coordinator, &messages, plan.snapshot_id().unwrap())
        .await
        .unwrap();
    assert!(
        matches!(outcome, CommitOutcome::Committed { .. }),
        "{outcome:?}"
    );
    compacted
}

/// Live index files of the latest snapshot, by type.
async fn live_index_types(table: &Table) -> Vec<String> {
    let snapshot = table
        .snapshot_manager()
        .get_latest_snapshot()
        .await
        .unwrap()
        .unwrap();
    let Some(name) = snapshot.index_manifest() else {
        return Vec::new();
    };
    let path = table.snapshot_manager().manifest_path(name);
    paimon::spec::IndexManifest::read(table.file_io(), &path)
        .await
        .unwrap()
        .into_iter()
        .map(|entry| entry.index_file.index_type)
        .collect()
}

#[tokio::test]
async fn a_deletion_vector_table_compacts_its_live_rows_and_drops_the_vectors() {
    // X (ids 0..10, ids 0..5 hidden by a live vector) and Y (ids 10..20).
    let setup = with_deletion_vector().await;
    let table = &setup.table;
    assert_eq!(live_index_types(table).await, ["DELETION_VECTORS"]);
    let plan = plan_compaction(table, true).await.unwrap();
    assert_eq!(plan.tasks().len(), 1);
    let message = plan.tasks()[0].run(table).await.unwrap();
    assert_eq!(message.compact_before.len(), 2, "X and Y");
    assert_eq!(
        message
            .compact_after
            .iter()
            .map(|f| f.row_count)
            .sum::<i64>(),
        15,
        "the hidden rows are not rewritten"
    );
    assert_eq!(
        message.compact_deleted_index_files,
        vec![setup.live_vector.clone()],
        "the vector goes with its file"
    );
    let coordinator = bind(table, Binding::append(COMPACTOR).with_verified_compaction()).await;
    let outcome = send(&coordinator, &[message], plan.snapshot_id().unwrap())
        .await
        .unwrap();
    assert!(
        matches!(outcome, CommitOutcome::Committed { .. }),
        "{outcome:?}"
    );
    let rows: Vec<(i32, &str)> = (5..20).map(|id| (id, "a")).collect();
    assert_eq!(read_rows(table).await, expected(&rows));
    assert!(live_index_types(table).await.is_empty());
}

#[tokio::test]
async fn merge_engines_and_sequence_fields_compact_to_what_a_reader_saw() {
    let warehouse = Warehouse::new();
    // Three jobs over ids 0..6: each job's `v` is `j<job>-<id>`, except that with a
    // sequence field the values are written out of order (job 2's are the highest).
    let values = |job: u32, id: i32, sequenced: bool| -> String {
        let rank = if sequenced {
            [0, 1, 3, 2][job as usize]
        } else {
            job
        };
        format!("j{rank}-{id}")
    };
    for (name, options, sequenced, reads) in [
        (
            "aggregate",
            vec![
                ("merge-engine", "aggregation"),
                ("fields.v.aggregate-function", "listagg"),
            ],
            false,
            "j1-0,j2-0,j3-0",
        ),
        (
            "partial",
            vec![("merge-engine", "partial-update")],
            false,
            "j3-0",
        ),
        ("first", vec![("merge-engine", "first-row")], false, "j1-0"),
        ("sequenced", vec![("sequence.field", "v")], true, "j3-0"),
    ] {
        let table = warehouse
            .create_with_options(name, Kind::FixedBucketPk, &options)
            .await;
        for job_number in 1..=3u32 {
            let rows: Vec<(i32, &str, String)> = (0..6)
                .map(|id| (id, "a", values(job_number, id, sequenced)))
                .collect();
            job(&table, i64::from(job_number), &rows).await;
        }
        let before = read_rows(&table).await;
        let compacted = compact_fully(&table).await;
        assert!(compacted >= 3, "{name}: {compacted} file(s)");
        let after = read_rows(&table).await;
        assert_eq!(after.len(), 6, "{name}: each key once");
        assert_eq!(after[0].2, reads, "{name}: key 0");
        if name == "first" {
            // A first-row table's reader skips level 0, where the jobs wrote: it saw nothing
            // before the compaction.
            assert!(before.is_empty(), "{name}: level 0 unread");
        } else {
            assert_eq!(after, before, "{name}");
        }
    }
}

#[tokio::test]
async fn a_verified_compaction_of_part_of_a_value_merging_bucket_is_refused() {
    let warehouse = Warehouse::new();
    let table = warehouse
        .create_with_options(
            "aggregate",
            Kind::FixedBucketPk,
            &[
                ("merge-engine", "aggregation"),
                ("fields.v.aggregate-function", "listagg"),
            ],
        )
        .await;
    for job_number in 1..=2 {
        job(&table, job_number, &[(0, "a", format!("j{job_number}"))]).await;
    }
    let plan = plan_compaction(&table, true).await.unwrap();
    let task = &plan.tasks()[0];
    assert_eq!(task.input_files().len(), 2);
    // A task of the first job's file alone (sequence number 0): its result (`j1` at the
    // highest level) passes every metadata rule, the second job's level-0 file staying newer
    // than everything it takes. Whether such a result keeps what a reader of the bucket sees
    // depends on the file left out, so a verifying coordinator refuses it.
    let mut bytes: serde_json::Value = serde_json::from_slice(&task.to_bytes()).unwrap();
    let older = task
        .input_files()
        .iter()
        .position(|f| f.min_sequence_number == 0)
        .unwrap();
    let split = &mut bytes["split"];
    split["data_files"] = serde_json::json!([split["data_files"][older].clone()]);
    split["data_deletion_files"] = serde_json::json!([null]);
    let part_task = CompactionTask::from_bytes(&serde_json::to_vec(&bytes).unwrap()).unwrap();
    let part = part_task.run(&table).await.unwrap();
    assert_eq!(part.compact_before.len(), 1);
    let coordinator = bind(
        &table,
        Binding::append(COMPACTOR).with_verified_compaction(),
    )
    .await;
    let error = send(
        &coordinator,
        std::slice::from_ref(&part),
        plan.snapshot_id().unwrap(),
    )
    .await
    .unwrap_err();
    assert_eq!(rule_of(&error), Rule::CompactContent, "{error}");
    assert!(
        error.to_string().contains("is not among its inputs"),
        "{error}"
    );
    // Without verification the metadata rules take it: the refusal is verification's.
    let unverified = bind(&table, Binding::append(COMPACTOR).with_compaction()).await;
    let checked = unverified
        .deserialize(
            paimon_wire::SerializerVersion::CURRENT,
            &paimon_wire::serialize_list(&[part], paimon_wire::SerializerVersion::CURRENT).unwrap(),
        )
        .unwrap();
    unverified.check_against_table(&checked).await.unwrap();
    // The whole bucket commits.
    let whole = task.run(&table).await.unwrap();
    let outcome = send(&coordinator, &[whole], plan.snapshot_id().unwrap())
        .await
        .unwrap();
    assert!(
        matches!(outcome, CommitOutcome::Committed { .. }),
        "{outcome:?}"
    );
    assert_eq!(read_rows(&table).await[0].2, "j1,j2");
}
