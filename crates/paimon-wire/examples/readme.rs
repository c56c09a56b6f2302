//! The README's Rust example, whole: a table is created, two workers write rows with the paimon
//! crate's `TableWrite` and hand their payloads over as bytes, and a coordinator commits them
//! once; a rerun of the commit commits nothing.
//!
//! `cargo run -p paimon-wire --example readme [WAREHOUSE]` (default: a new temporary
//! directory). The README quotes the lines between the `README begin` and `README end`
//! markers; `tests/readme_example.rs` checks that it still does, word for word, and `cargo
//! test` runs this program (`test = true` in Cargo.toml, the test below).

use std::error::Error;
use std::sync::Arc;

use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use paimon_wire::coordinator::{create_table_with_options, TableDefinition};
use paimon_wire::warehouse::WarehouseOptions;
// README begin
use paimon_wire::coordinator::{open_table, Binding, Coordinator};
use paimon_wire::{serialize_list, CommitOutcome, SerializerVersion};

/// A worker: rows through the paimon crate's `TableWrite`, its commit messages to bytes.
async fn worker(warehouse: &str, rows: &RecordBatch) -> Result<Vec<u8>, Box<dyn Error>> {
    let table = open_table(warehouse, "db.orders").await?;
    let mut write = table
        .new_write_builder()
        .with_commit_user("job-42")?
        .new_write()?;
    write.write_arrow_batch(rows).await?;
    let prepared = write.prepare_commit().await?;
    Ok(serialize_list(&prepared, SerializerVersion::CURRENT)?) // or V3 for a Paimon 0.9 coordinator
}

/// The coordinator: bind to the table, decode + validate each payload, merge, commit once.
async fn coordinator(
    warehouse: &str,
    payloads: &[Vec<u8>],
) -> Result<CommitOutcome, Box<dyn Error>> {
    let table = open_table(warehouse, "db.orders").await?;
    let coordinator = Coordinator::bind(table, Binding::append("job-42")).await?;
    let parts = payloads
        .iter()
        .map(|payload| coordinator.deserialize(SerializerVersion::CURRENT, payload))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(coordinator.commit(coordinator.merge(parts)?, 42).await?) // rerun with 42: AlreadyCommitted
}
// README end

/// `id BIGINT NOT NULL, region STRING`, partitioned by region.
fn columns() -> Arc<Schema> {
    Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("region", DataType::Utf8, true),
    ]))
}

/// Rows with ids `ids`, each in region `eu` or `us`.
fn rows(ids: std::ops::Range<i64>) -> Result<RecordBatch, Box<dyn Error>> {
    let regions: Vec<&str> = ids
        .clone()
        .map(|id| if id % 2 == 0 { "eu" } else { "us" })
        .collect();
    let arrays: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from_iter_values(ids)),
        Arc::new(StringArray::from(regions)),
    ];
    Ok(RecordBatch::try_new(columns(), arrays)?)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    let temporary = tempfile::tempdir()?;
    let warehouse = match std::env::args().nth(1) {
        Some(warehouse) => warehouse,
        None => temporary.path().to_string_lossy().into_owned(),
    };
    let definition = TableDefinition {
        columns: columns().as_ref().clone(),
        partition_keys: vec!["region".into()],
        primary_keys: Vec::new(),
        options: [("bucket".to_string(), "-1".to_string())].into(),
    };
    create_table_with_options(
        &warehouse,
        "db.orders",
        &definition,
        false,
        &WarehouseOptions::new(),
    )
    .await?;

    // Two workers (in production: two processes, the payloads sent over the engine's RPC).
    let payloads = vec![
        worker(&warehouse, &rows(0..600)?).await?,
        worker(&warehouse, &rows(600..1000)?).await?,
    ];
    let first = coordinator(&warehouse, &payloads).await?;
    let rerun = coordinator(&warehouse, &payloads).await?;
    println!("commit: {first:?}; the same commit again: {rerun:?}");
    assert_eq!(first, CommitOutcome::Committed { snapshot_id: 1 });
    assert_eq!(
        rerun,
        CommitOutcome::AlreadyCommitted {
            snapshot_id: Some(1)
        }
    );
    Ok(())
}

#[test]
fn the_example_commits_once() {
    main().unwrap();
}
