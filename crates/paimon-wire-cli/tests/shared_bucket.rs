//! `paimon-wire commit` refuses payloads of two workers that wrote one bucket of a
//! primary-key table, and commits the same rows once they are routed one writer per bucket.

mod common;

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::{ArrayRef, Int32Array, RecordBatch, StringArray};
use common::{block_on, failure, path_in, read_table, run, success};
use paimon_wire::coordinator::open_table;
use paimon_wire::paimon::catalog::{Catalog, Identifier};
use paimon_wire::paimon::spec::{DataType, IntType, Schema, VarCharType};
use paimon_wire::paimon::{CatalogOptions, FileSystemCatalog, Options};
use paimon_wire::{serialize_list, BucketRouter, SerializerVersion};

const USER: &str = "cli-pk-job";

fn batch(ids: &[i32]) -> RecordBatch {
    RecordBatch::try_from_iter([
        ("id", Arc::new(Int32Array::from(ids.to_vec())) as ArrayRef),
        (
            "v",
            Arc::new(StringArray::from(
                ids.iter().map(|i| format!("v{i}")).collect::<Vec<_>>(),
            )) as ArrayRef,
        ),
    ])
    .unwrap()
}

/// Creates `db.users (id INT, v STRING)`, primary key `id`, 4 buckets, in a warehouse in
/// `dir`, and returns the warehouse path.
fn create_table(dir: &tempfile::TempDir) -> String {
    let warehouse = path_in(dir, "warehouse");
    std::fs::create_dir_all(&warehouse).unwrap();
    block_on(async {
        let mut options = Options::new();
        options.set(CatalogOptions::WAREHOUSE, &warehouse);
        let catalog = FileSystemCatalog::new(options).unwrap();
        catalog
            .create_database("db", true, HashMap::new())
            .await
            .unwrap();
        let schema = Schema::builder()
            .column("id", DataType::Int(IntType::new()))
            .column("v", DataType::VarChar(VarCharType::string_type()))
            .primary_key(["id"])
            .option("bucket", "4")
            .build()
            .unwrap();
        catalog
            .create_table(&Identifier::new("db", "users"), schema, false)
            .await
            .unwrap();
    });
    warehouse
}

/// For each id set, a worker writes it to `db.users` in `warehouse` and its payload (v14) is
/// saved in `dir`. Returns the payload paths.
fn workers(dir: &tempfile::TempDir, warehouse: &str, id_sets: &[Vec<i32>]) -> Vec<String> {
    block_on(async {
        let table = open_table(warehouse, "db.users").await.unwrap();
        let mut paths = Vec::new();
        for (w, ids) in id_sets.iter().enumerate() {
            let builder = table.new_write_builder().with_commit_user(USER).unwrap();
            let mut write = builder.new_write().unwrap();
            write.write_arrow_batch(&batch(ids)).await.unwrap();
            let messages = write.prepare_commit().await.unwrap();
            let path = path_in(dir, &format!("worker-{w}.bin"));
            std::fs::write(
                &path,
                serialize_list(&messages, SerializerVersion::V14).unwrap(),
            )
            .unwrap();
            paths.push(path);
        }
        paths
    })
}

/// The snapshot ids of `db.users` in `warehouse`.
fn snapshot_ids(warehouse: &str) -> Vec<i64> {
    block_on(async {
        let table = open_table(warehouse, "db.users").await.unwrap();
        table.snapshot_manager().list_all_ids().await.unwrap()
    })
}

fn commit(warehouse: &str, identifier: &str, payloads: &[String]) -> std::process::Output {
    let mut args = vec!["commit", "--warehouse", warehouse, "--table", "db.users"];
    args.extend(["--commit-user", USER, "--identifier", identifier]);
    args.extend(["--version", "14"]);
    args.extend(payloads.iter().map(String::as_str));
    run(&args, None)
}

#[test]
fn two_workers_of_one_bucket_are_refused_and_routed_workers_commit() {
    let dir = tempfile::tempdir().unwrap();
    let warehouse = create_table(&dir);
    // Each worker holds 50 keys over 4 buckets: both write every bucket.
    let unrouted = workers(&dir, &warehouse, &[(0..50).collect(), (50..100).collect()]);
    let line = failure(&commit(&warehouse, "1", &unrouted), 1);
    assert!(
        line.contains("of a primary-key table is written by two writers")
            && line.contains("payload 0 message")
            && line.contains("payload 1 message")
            && line.contains("nothing was committed"),
        "{line}"
    );
    assert_eq!(snapshot_ids(&warehouse), Vec::<i64>::new());

    // The same 100 keys, one worker per bucket, in a fresh table.
    let dir = tempfile::tempdir().unwrap();
    let warehouse = create_table(&dir);
    let all: Vec<i32> = (0..100).collect();
    let table = block_on(open_table(&warehouse, "db.users")).unwrap();
    let buckets = BucketRouter::for_table(&table)
        .unwrap()
        .bucket_ids(&batch(&all))
        .unwrap();
    let per_bucket: Vec<Vec<i32>> = (0..4)
        .map(|b| {
            all.iter()
                .zip(&buckets)
                .filter(|(_, bucket)| **bucket == b)
                .map(|(id, _)| *id)
                .collect()
        })
        .collect();
    assert!(per_bucket.iter().all(|ids| !ids.is_empty()));
    let routed = workers(&dir, &warehouse, &per_bucket);
    let stdout = success(&commit(&warehouse, "1", &routed));
    assert!(
        stdout
            .lines()
            .last()
            .unwrap()
            .starts_with("committed snapshot"),
        "{stdout}"
    );
    assert_eq!(snapshot_ids(&warehouse), [1]);
    let (_, batches) = read_table(&warehouse, "db.users");
    let mut rows: Vec<(i32, String)> = Vec::new();
    for batch in &batches {
        let ids = batch
            .column_by_name("id")
            .unwrap()
            .as_any()
            .downcast_ref::<Int32Array>()
            .unwrap();
        let values = batch
            .column_by_name("v")
            .unwrap()
            .as_any()
            .downcast_ref::<StringArray>()
            .unwrap();
        for row in 0..batch.num_rows() {
            rows.push((ids.value(row), values.value(row).to_string()));
        }
    }
    rows.sort();
    let expected: Vec<(i32, String)> = all.iter().map(|i| (*i, format!("v{i}"))).collect();
    assert_eq!(rows, expected);
}
