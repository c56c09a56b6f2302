//! The routing an engine runs on every row before it sends the row to a worker: the bucket of a
//! fixed-bucket table (`BucketRouter::bucket_ids`) and the assigner of a dynamic-bucket table
//! (`AssignerRouter::assigner_ids`), on one batch of 1,000,000 rows `(id INT, pt STRING, v
//! STRING)` in 8 partitions. Throughput is in rows; the time per iteration is the cost per
//! million rows.
//!
//! `cargo bench -p paimon-wire-bench --bench routing`

use std::sync::Arc;

use arrow_array::{ArrayRef, Int32Array, RecordBatch, StringArray};
use criterion::{criterion_group, criterion_main, Criterion, SamplingMode, Throughput};
use paimon_wire::coordinator::open_table;
use paimon_wire::paimon::catalog::{Catalog, Identifier};
use paimon_wire::paimon::spec::{DataType, IntType, Schema, VarCharType};
use paimon_wire::paimon::{CatalogOptions, FileSystemCatalog, Options};
use paimon_wire::{AssignerRouter, BucketRouter};

const ROWS: i32 = 1_000_000;

fn batch() -> RecordBatch {
    let ids: Vec<i32> = (0..ROWS).collect();
    let pts: Vec<String> = ids.iter().map(|i| format!("2026-12-0{}", i % 8)).collect();
    let vs: Vec<String> = ids.iter().map(|i| format!("value {i}")).collect();
    RecordBatch::try_from_iter([
        ("id", Arc::new(Int32Array::from(ids)) as ArrayRef),
        ("pt", Arc::new(StringArray::from(pts)) as ArrayRef),
        ("v", Arc::new(StringArray::from(vs)) as ArrayRef),
    ])
    .unwrap()
}

/// Creates `db.<name>` (primary key `(pt, id)`, partitioned by `pt`) with `bucket`.
async fn create(warehouse: &str, name: &str, bucket: &str) -> paimon_wire::paimon::table::Table {
    let mut options = Options::new();
    options.set(CatalogOptions::WAREHOUSE, warehouse);
    let catalog = FileSystemCatalog::new(options).unwrap();
    catalog
        .create_database("db", true, Default::default())
        .await
        .unwrap();
    let schema = Schema::builder()
        .column("id", DataType::Int(IntType::with_nullable(false)))
        .column(
            "pt",
            DataType::VarChar(VarCharType::with_nullable(false, VarCharType::MAX_LENGTH).unwrap()),
        )
        .column("v", DataType::VarChar(VarCharType::string_type()))
        .partition_keys(["pt"])
        .primary_key(["pt", "id"])
        .option("bucket", bucket)
        .build()
        .unwrap();
    catalog
        .create_table(&Identifier::new("db", name), schema, false)
        .await
        .unwrap();
    open_table(warehouse, &format!("db.{name}")).await.unwrap()
}

fn routing(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let warehouse = dir.path().to_str().unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let fixed = runtime.block_on(create(warehouse, "fixed", "16"));
    let dynamic = runtime.block_on(create(warehouse, "dynamic", "-1"));
    let bucket_router = BucketRouter::for_table(&fixed).unwrap();
    let assigner_router = AssignerRouter::for_table(&dynamic, 16).unwrap();
    let rows = batch();

    let mut group = c.benchmark_group("routing");
    group.sample_size(10);
    group.sampling_mode(SamplingMode::Flat);
    group.throughput(Throughput::Elements(ROWS as u64));
    group.bench_function("bucket_ids/fixed-16/1M-rows", |b| {
        b.iter(|| bucket_router.bucket_ids(&rows).unwrap())
    });
    group.bench_function("assigner_ids/dynamic-16-assigners/1M-rows", |b| {
        b.iter(|| assigner_router.assigner_ids(&rows).unwrap())
    });
    group.finish();
}

criterion_group!(benches, routing);
criterion_main!(benches);
