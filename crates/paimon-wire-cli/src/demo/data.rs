//! The demo's table and the rows its workers generate.
//!
//! `id BIGINT NOT NULL, region STRING (partition key), amount DOUBLE, note STRING`, an append
//! table without buckets (`bucket = -1`), so any worker may write any partition. Row `id`
//! goes to partition `region-<id mod P>`; ids `0..R` are split into one contiguous range per
//! worker, so reading the table back can check that every id arrived exactly once.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

use arrow_array::{ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray};
use paimon_wire::paimon::catalog::Identifier;
use paimon_wire::paimon::spec::{BigIntType, DataType, DoubleType, Schema, VarCharType};
use paimon_wire::warehouse::{open_catalog, redact_secrets, WarehouseOptions};

use crate::error::{CliError, CliResult};

/// The partition key column.
pub const PARTITION_COLUMN: &str = "region";

/// The ids worker `index` of `workers` writes, out of `0..rows`.
pub fn worker_ids(rows: u64, workers: u32, index: u32) -> Range<u64> {
    let share = |i: u32| {
        let scaled = u128::from(rows) * u128::from(i) / u128::from(workers.max(1));
        u64::try_from(scaled).unwrap_or(rows)
    };
    share(index)..share(index + 1)
}

/// The partition value of row `id`.
pub fn region_of(id: u64, partitions: u32) -> String {
    format!("region-{}", id % u64::from(partitions.max(1)))
}

/// The rows with ids `ids` as one Arrow batch in the table's column order.
pub fn batch(ids: Range<u64>, partitions: u32, worker: u32) -> CliResult<RecordBatch> {
    let ids: Vec<i64> = ids
        .map(|id| i64::try_from(id).map_err(|_| CliError::input(format!("row id {id} too large"))))
        .collect::<CliResult<_>>()?;
    let regions: Vec<String> = ids
        .iter()
        .map(|id| region_of(id.unsigned_abs(), partitions))
        .collect();
    let amounts: Vec<f64> = ids.iter().map(|id| (*id % 10_000) as f64 * 0.25).collect();
    let notes: Vec<String> = ids
        .iter()
        .map(|id| format!("row {id} from worker {worker}"))
        .collect();
    RecordBatch::try_from_iter([
        ("id", Arc::new(Int64Array::from(ids)) as ArrayRef),
        (
            PARTITION_COLUMN,
            Arc::new(StringArray::from(regions)) as ArrayRef,
        ),
        ("amount", Arc::new(Float64Array::from(amounts)) as ArrayRef),
        ("note", Arc::new(StringArray::from(notes)) as ArrayRef),
    ])
    .map_err(|e| CliError::input(format!("cannot build a row batch: {e}")))
}

/// Creates the demo table `name` (`database.table`) in `warehouse`, with its database if
/// needed. Fails if the table exists: the demo checks the rows it reads back against the
/// rows it wrote, so it wants a table of its own.
pub async fn create_table(
    warehouse: &str,
    name: &str,
    options: &WarehouseOptions,
) -> CliResult<()> {
    let identifier = paimon_wire::coordinator::parse_table_name(name)?;
    let catalog = open_catalog(warehouse, options).await?;
    catalog
        .create_database(identifier.database(), true, HashMap::new())
        .await
        .map_err(|e| {
            CliError::input(format!(
                "cannot create database: {}",
                redact_secrets(&e.to_string(), options)
            ))
        })?;
    let schema = Schema::builder()
        .column("id", DataType::BigInt(BigIntType::with_nullable(false)))
        .column(
            PARTITION_COLUMN,
            DataType::VarChar(VarCharType::string_type()),
        )
        .column("amount", DataType::Double(DoubleType::new()))
        .column("note", DataType::VarChar(VarCharType::string_type()))
        .partition_keys([PARTITION_COLUMN])
        .option("bucket", "-1")
        .build()
        .map_err(|e| CliError::input(format!("cannot build the demo schema: {e}")))?;
    catalog
        .create_table(
            &Identifier::new(identifier.database(), identifier.object()),
            schema,
            false,
        )
        .await
        .map_err(|e| {
            CliError::input(format!(
                "cannot create table {name} in {warehouse}: {} (the demo needs a new table: \
                 pick another --table or an empty --warehouse)",
                redact_secrets(&e.to_string(), options)
            ))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worker_ranges_cover_every_id_once() {
        for (rows, workers) in [(100_000, 4), (10, 3), (2, 8), (0, 5), (7, 1)] {
            let mut next = 0;
            for index in 0..workers {
                let range = worker_ids(rows, workers, index);
                assert_eq!(range.start, next, "{rows} rows, {workers} workers");
                next = range.end;
            }
            assert_eq!(next, rows);
        }
    }

    #[test]
    fn batch_has_the_table_columns() {
        let batch = batch(10..14, 3, 2).unwrap();
        assert_eq!(batch.num_rows(), 4);
        let regions = batch
            .column(1)
            .as_any()
            .downcast_ref::<StringArray>()
            .unwrap();
        assert_eq!(regions.value(0), "region-1");
        assert_eq!(regions.value(2), "region-0");
    }
}
