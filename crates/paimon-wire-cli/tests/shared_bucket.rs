//! `paimon-wire commit` refuses payloads of two workers that wrote one bucket of a
//! primary-key table, and commits the same rows once they are routed one writer per bucket.

mod common;

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::{ArrayRef, Int32Array, RecordBatch, StringArray};
use common::{failure, path_in, run, success};
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

/// Creates `db.users (id INT, v STRING)`, primary key `id`, 4 buckets; for each id set, a
/// worker writes it and its payload (v14) is saved. Returns the warehouse and payload paths.
fn workers(dir: &tempfile::TempDir, id_sets: &[Vec<i32>]) -> (String, Vec<String>) {
    let warehouse = path_in(dir, "warehouse");
    std::fs::create_dir_all(&warehouse).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let paths = runtime.block_on(async {
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
        let table = open_table(&warehouse, "db.users").await.unwrap();
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
    });
    (warehouse, paths)
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
    // Each worker holds 50 keys over 4 buckets: both write every bucket.
    let (warehouse, unrouted) = workers(&dir, &[(0..50).collect(), (50..100).collect()]);
    let line = failure(&commit(&warehouse, "1", &unrouted), 1);
    assert!(
        line.contains("of a primary-key table is written by two writers")
            && line.contains("payload 0 message")
            && line.contains("payload 1 message")
            && line.contains("nothing was committed"),
        "{line}"
    );

    // The same 100 keys, one worker per bucket.
    let dir = tempfile::tempdir().unwrap();
    let all: Vec<i32> = (0..100).collect();
    let buckets = {
        let (warehouse, _) = workers(&dir, &[]);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let table = runtime
            .block_on(open_table(&warehouse, "db.users"))
            .unwrap();
        BucketRouter::for_table(&table)
            .unwrap()
            .bucket_ids(&batch(&all))
            .unwrap()
    };
    let dir = tempfile::tempdir().unwrap();
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
    let (warehouse, routed) = workers(&dir, &per_bucket);
    let stdout = success(&commit(&warehouse, "1", &routed));
    assert!(
        stdout
            .lines()
            .last()
            .unwrap()
            .starts_with("committed snapshot"),
        "{stdout}"
    );
}
