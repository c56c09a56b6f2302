//! The README's Rust example, whole: a table is created, two workers write rows with the paimon
//! crate's `TableWrite` and hand their payloads over as bytes, and a coordinator commits them
//! once; a rerun of the commit commits nothing. The README quotes the lines between the
//! `README begin` and `README end` markers, word for word
//! (`the_readme_shows_the_marked_part_of_this_file` checks it).

use std::error::Error;
use std::path::Path;
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

#[tokio::test]
async fn the_readme_example_commits_once() -> Result<(), Box<dyn Error>> {
    let temporary = tempfile::tempdir()?;
    let warehouse = temporary.path().to_string_lossy().into_owned();
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
fn the_readme_shows_the_marked_part_of_this_file() {
    let this_file = include_str!("readme_example.rs");
    let marked = this_file
        .split_once("// README begin\n")
        .and_then(|(_, rest)| rest.split_once("// README end\n"))
        .map(|(marked, _)| marked)
        .expect("this file has README begin/end markers");
    let readme_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md");
    let readme = std::fs::read_to_string(readme_path).unwrap();
    let shown = readme
        .split_once("## Rust\n")
        .and_then(|(_, rest)| rest.split_once("```rust\n"))
        .and_then(|(_, rest)| rest.split_once("```\n"))
        .map(|(block, _)| block)
        .expect("README.md has a ```rust block under ## Rust");
    assert_eq!(
        shown, marked,
        "README.md's Rust example differs from the marked part of \
         tests/coordinator/readme_example.rs: copy it over"
    );
}
