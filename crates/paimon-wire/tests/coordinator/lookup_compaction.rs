//! Rule `superseded-rows`: a compaction that hides rows of a file it leaves alone, as Java's
//! lookup compaction does on primary-key tables with deletion vectors, is taken only when its
//! results hold a newer version of every row it hides. (`scripts/java-interop` commits Java
//! 2.0's own lookup compactions through the CLI.)

use paimon::spec::DataFileMeta;
use paimon::table::{CommitMessage, Table};
use paimon_wire::compaction::plan_compaction;
use paimon_wire::coordinator::{Binding, CommitOutcome, Rule};

use super::hostile_round_3::compacting;
use super::support::{bind, read_rows, rule_of, send, Kind, Unchanged, Warehouse};

/// A primary-key table with deletion vectors: X, one file at the highest level holding ids
/// 0..10 of partition `a` (`old<id>`), and Y, a level-0 file of a later job holding ids 0..3
/// (`new<id>`), both committed. Ids sort by position in X.
struct Lookup {
    _warehouse: Warehouse,
    table: Table,
    x: DataFileMeta,
    y: CommitMessage,
}

/// A paimon-crate job writing `ids` of partition `a` valued `<prefix><id>`, committed.
async fn job(
    table: &Table,
    identifier: i64,
    ids: std::ops::Range<i32>,
    prefix: &str,
) -> Vec<CommitMessage> {
    let rows: Vec<(i32, &str, String)> = ids.map(|id| (id, "a", format!("{prefix}{id}"))).collect();
    super::native_compaction::job(table, identifier, &rows).await
}

async fn lookup_table(options: &[(&str, &str)]) -> Lookup {
    let warehouse = Warehouse::new();
    let mut all = vec![("deletion-vectors.enabled", "true"), ("bucket", "1")];
    all.extend_from_slice(options);
    let table = warehouse
        .create_with_options("lookup", Kind::FixedBucketPk, &all)
        .await;
    job(&table, 1, 0..10, "old").await;
    let plan = plan_compaction(&table, true).await.unwrap();
    let compacted = plan.tasks()[0].run(&table).await.unwrap();
    let x = compacted.compact_after[0].clone();
    let compactor = bind(
        &table,
        Binding::append("compactor").with_verified_compaction(),
    )
    .await;
    send(&compactor, &[compacted], plan.snapshot_id().unwrap())
        .await
        .unwrap();
    let y = job(&table, 2, 0..3, "new").await.remove(0);
    Lookup {
        _warehouse: warehouse,
        table,
        x,
        y,
    }
}

/// Java's lookup compaction of Y: Y upgraded in place to level 4, and a deletion vector on X
/// hiding `positions`.
fn lookup_compaction(setup: &Lookup, positions: &[u32]) -> CommitMessage {
    let y = setup.y.new_files[0].clone();
    let mut upgraded = y.clone();
    upgraded.level = 4;
    let mut message = CommitMessage::new(setup.y.partition.clone(), setup.y.bucket, vec![]);
    message.compact_before = vec![y];
    message.compact_after = vec![upgraded];
    message.compact_new_index_files = vec![super::support::write_deletion_vectors(
        &setup.table,
        &[(setup.x.file_name.as_str(), positions)],
    )];
    message
}

fn values(rows: &[(i32, String, String)]) -> Vec<String> {
    rows.iter().map(|r| r.2.clone()).collect()
}

#[tokio::test]
async fn a_lookup_compaction_hides_only_rows_it_replaced() {
    let setup = lookup_table(&[]).await;
    // Before: level 0 is not read on a deletion-vector table, so Y's rows are not seen yet.
    assert_eq!(
        values(&read_rows(&setup.table).await)[..3],
        ["old0", "old1", "old2"]
    );
    let outcome = send(
        &bind(&setup.table, compacting()).await,
        &[lookup_compaction(&setup, &[0, 1, 2])],
        3,
    )
    .await
    .unwrap();
    assert!(
        matches!(outcome, CommitOutcome::Committed { .. }),
        "{outcome:?}"
    );
    let mut expected: Vec<String> = (0..3).map(|id| format!("new{id}")).collect();
    expected.extend((3..10).map(|id| format!("old{id}")));
    assert_eq!(values(&read_rows(&setup.table).await), expected);
}

#[tokio::test]
async fn a_hidden_row_without_a_newer_version_in_the_results_is_refused() {
    let setup = lookup_table(&[]).await;
    let before = Unchanged::of(&setup.table).await;
    // Position 5 is id 5, which Y does not hold: hiding it would lose the key.
    let error = send(
        &bind(&setup.table, compacting()).await,
        &[lookup_compaction(&setup, &[0, 1, 5])],
        3,
    )
    .await
    .unwrap_err();
    assert_eq!(rule_of(&error), Rule::SupersededRows, "{error}");
    assert!(error.to_string().contains("hides row 5"), "{error}");
    before
        .assert_still(&setup.table, "refused lookup compaction")
        .await;

    // Where a column, not the sequence number, orders a key's versions, a row with a higher
    // sequence number need not be newer: a compaction may not hide rows of files it leaves
    // alone at all (rule deletion-vectors, as before the lookup rule).
    let first = lookup_table(&[("sequence.field", "v")]).await;
    let error = send(
        &bind(&first.table, compacting()).await,
        &[lookup_compaction(&first, &[0, 1, 2])],
        3,
    )
    .await
    .unwrap_err();
    assert_eq!(rule_of(&error), Rule::DeletionVectors, "{error}");
}
