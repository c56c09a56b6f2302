//! The Rust side of the whole-table checks, with the paimon crate: create a table, be a
//! worker (write rows, prepare the commit, serialize the messages for a coordinator), and
//! read every row.
//!
//! The tables and rows are the Java harness's (`compat/java`, `TableOps`): columns
//! `id INT NOT NULL, pt STRING NOT NULL, v STRING`, partitioned by `pt`; row `i` of a write
//! is `(i, "p" + i % 3, PREFIX + i)`. Committing is the coordinator's job (`paimon-wire
//! commit`, or Java's).

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::{Array, ArrayRef, Int32Array, RecordBatch, StringArray};
use futures::TryStreamExt;
use paimon_wire::coordinator::{open_table_with_options, parse_table_name};
use paimon_wire::paimon::spec::{DataType, IntType, Schema, VarCharType};
use paimon_wire::warehouse::{open_catalog, WarehouseOptions};
use paimon_wire::{serialize_list, AssignerRouter, SerializerVersion};

/// The two table kinds of the interop checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TableKind {
    /// Append table, bucket-unaware (`bucket = -1`).
    Append,
    /// Primary key `(pt, id)`, 2 fixed buckets.
    Pk,
}

type Result<T> = std::result::Result<T, String>;

fn err(context: &str) -> impl Fn(paimon_wire::paimon::Error) -> String + '_ {
    move |e| format!("{context}: {e}")
}

/// Creates `table` (`database.table`) of `kind` in the warehouse (opened with the catalog
/// `options`, e.g. an `s3://` warehouse's endpoint and keys), and its database if needed.
pub async fn create(
    warehouse: &str,
    options: &WarehouseOptions,
    table: &str,
    kind: TableKind,
) -> Result<()> {
    let identifier = parse_table_name(table).map_err(|e| e.to_string())?;
    let catalog = open_catalog(warehouse, options)
        .await
        .map_err(|e| e.to_string())?;
    catalog
        .create_database(identifier.database(), true, HashMap::new())
        .await
        .map_err(err("creating the database"))?;
    let not_null_string = VarCharType::with_nullable(false, VarCharType::MAX_LENGTH)
        .map_err(|e| format!("string type: {e}"))?;
    let mut schema = Schema::builder()
        .column("id", DataType::Int(IntType::with_nullable(false)))
        .column("pt", DataType::VarChar(not_null_string))
        .column("v", DataType::VarChar(VarCharType::string_type()))
        .partition_keys(["pt"])
        .option("file.format", "parquet");
    schema = match kind {
        TableKind::Append => schema.option("bucket", "-1"),
        TableKind::Pk => schema.primary_key(["pt", "id"]).option("bucket", "2"),
    };
    catalog
        .create_table(
            &identifier,
            schema.build().map_err(err("building the schema"))?,
            false,
        )
        .await
        .map_err(err("creating the table"))
}

/// Row `i` of a write: `(i, "p" + i % 3, prefix + i)`.
pub fn rows(from: i32, to: i32, prefix: &str) -> RecordBatch {
    let ids: Vec<i32> = (from..to).collect();
    let pts: Vec<String> = ids
        .iter()
        .map(|i| format!("p{}", i.rem_euclid(3)))
        .collect();
    let vs: Vec<String> = ids.iter().map(|i| format!("{prefix}{i}")).collect();
    RecordBatch::try_from_iter([
        ("id", Arc::new(Int32Array::from(ids)) as ArrayRef),
        ("pt", Arc::new(StringArray::from(pts)) as ArrayRef),
        ("v", Arc::new(StringArray::from(vs)) as ArrayRef),
    ])
    .expect("three columns of equal length")
}

/// A worker: writes rows `from..to` as `commit_user`, prepares the commit and returns the
/// messages serialized at `version`, with the number of messages.
/// What a worker writes: rows `range.0..range.1` (row `i` is `(i, "p" + i % 3, prefix + i)`)
/// in `flushes` batches, a commit prepared after each.
pub struct WrittenRows<'a> {
    /// `FROM..TO`, TO exclusive.
    pub range: (i32, i32),
    /// The prefix of column `v`.
    pub value_prefix: &'a str,
    /// How many batches (at least 1).
    pub flushes: usize,
    /// On a dynamic-bucket table: this worker is assigner `.0` of `.1` and writes only the
    /// rows [`paimon_wire::AssignerRouter`] routes to it.
    pub assigner: Option<(i32, i32)>,
}

pub async fn write(
    warehouse: &str,
    options: &WarehouseOptions,
    table: &str,
    commit_user: &str,
    rows_written: WrittenRows<'_>,
    version: SerializerVersion,
) -> Result<(Vec<u8>, usize)> {
    let WrittenRows {
        range: (from, to),
        value_prefix: prefix,
        flushes,
        assigner,
    } = rows_written;
    let table = open_table_with_options(warehouse, table, options)
        .await
        .map_err(|e| e.to_string())?;
    let mut builder = table
        .new_write_builder()
        .with_commit_user(commit_user)
        .map_err(err("commit user"))?;
    let mut router = None;
    if let Some((id, n)) = assigner {
        let routing = AssignerRouter::for_table(&table, n).map_err(|e| e.to_string())?;
        builder = builder.with_dynamic_bucket_share(routing.share(id).map_err(|e| e.to_string())?);
        router = Some((routing, id));
    }
    let mut write = builder.new_write().map_err(err("new write"))?;
    // One message per (partition, bucket), in first-seen order, holding every flush's files.
    let mut messages: Vec<paimon_wire::paimon::table::CommitMessage> = Vec::new();
    let flushes = flushes.max(1) as i32;
    let step = ((to - from) + flushes - 1) / flushes;
    let mut start = from;
    while start < to {
        let end = (start + step.max(1)).min(to);
        let mut batch = rows(start, end, prefix);
        if let Some((routing, id)) = &router {
            let assigners = routing.assigner_ids(&batch).map_err(|e| e.to_string())?;
            let keep = arrow_array::BooleanArray::from(
                assigners.iter().map(|a| a == id).collect::<Vec<_>>(),
            );
            batch = arrow_select::filter::filter_record_batch(&batch, &keep)
                .map_err(|e| format!("selecting assigner {id}'s rows: {e}"))?;
        }
        write
            .write_arrow_batch(&batch)
            .await
            .map_err(err("writing rows"))?;
        for m in write
            .prepare_commit()
            .await
            .map_err(err("prepare commit"))?
        {
            match messages
                .iter_mut()
                .find(|seen| seen.partition == m.partition && seen.bucket == m.bucket)
            {
                Some(seen) => seen.new_files.extend(m.new_files),
                None => messages.push(m),
            }
        }
        start = end;
    }
    let bytes = serialize_list(&messages, version).map_err(|e| e.to_string())?;
    Ok((bytes, messages.len()))
}

/// Every row of the table's latest snapshot as `id TAB pt TAB v` (`\N` for a null `v`),
/// sorted by id, then by line (Java's `TableOps read` prints the same).
pub async fn read(warehouse: &str, options: &WarehouseOptions, table: &str) -> Result<Vec<String>> {
    let table = open_table_with_options(warehouse, table, options)
        .await
        .map_err(|e| e.to_string())?;
    let builder = table.new_read_builder();
    let plan = builder.new_scan().plan().await.map_err(err("planning"))?;
    let batches: Vec<RecordBatch> = builder
        .new_read()
        .map_err(err("new read"))?
        .to_arrow(plan.splits())
        .map_err(err("reading"))?
        .try_collect()
        .await
        .map_err(err("reading batches"))?;
    let mut rows = Vec::new();
    for batch in &batches {
        let ids = column::<Int32Array>(batch, "id")?;
        let pts = column::<StringArray>(batch, "pt")?;
        let vs = column::<StringArray>(batch, "v")?;
        for i in 0..batch.num_rows() {
            let v = if vs.is_null(i) { "\\N" } else { vs.value(i) };
            rows.push((
                ids.value(i),
                format!("{}\t{}\t{v}", ids.value(i), pts.value(i)),
            ));
        }
    }
    rows.sort();
    Ok(rows.into_iter().map(|(_, line)| line).collect())
}

fn column<'a, T: Array + 'static>(batch: &'a RecordBatch, name: &str) -> Result<&'a T> {
    batch
        .column_by_name(name)
        .and_then(|c| c.as_any().downcast_ref::<T>())
        .ok_or_else(|| format!("column {name} is missing or of another type"))
}
