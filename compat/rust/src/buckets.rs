//! The Rust side of the bucket-routing check: Paimon Java 2.0 wrote the tables of database
//! `buckets` (`compat/java` `BucketTables`: one fixed-bucket table per key type, a
//! primary-key table bucketed by its trimmed primary key, and the `mod` and `hive` bucket
//! functions), each row into the bucket Java's `FixedBucketRowKeyExtractor` chose. This
//! reads every split with the paimon crate, recomputes each row's bucket with paimon-wire's
//! [`BucketRouter`], and fails on the first row whose bucket differs from the split's, and
//! on a table whose rows are in fewer than 2 buckets (nothing there tells buckets apart).

use futures::TryStreamExt;
use paimon_wire::coordinator::open_table;
use paimon_wire::paimon::catalog::Catalog;
use paimon_wire::paimon::{CatalogOptions, FileSystemCatalog, Options};
use paimon_wire::{AssignerRouter, BucketRouter};

type Result<T> = std::result::Result<T, String>;

/// One table's result: name, rows read, distinct buckets seen.
pub struct Checked {
    /// `buckets.<table>`.
    pub table: String,
    /// Rows read (and routed).
    pub rows: usize,
    /// Number of distinct buckets the rows are in.
    pub buckets: usize,
}

/// Checks every table of database `buckets` in `warehouse`; each must hold `rows` rows.
pub async fn check(warehouse: &str, rows: usize) -> Result<Vec<Checked>> {
    let mut options = Options::new();
    options.set(CatalogOptions::WAREHOUSE, warehouse);
    let catalog = FileSystemCatalog::new(options).map_err(|e| format!("catalog: {e}"))?;
    let mut names = catalog
        .list_tables("buckets")
        .await
        .map_err(|e| format!("listing database buckets: {e}"))?;
    names.sort();
    if names.is_empty() {
        return Err("database buckets has no tables".into());
    }
    let mut out = Vec::new();
    for name in names {
        let full = format!("buckets.{name}");
        let table = open_table(warehouse, &full)
            .await
            .map_err(|e| e.to_string())?;
        let router = BucketRouter::for_table(&table).map_err(|e| format!("{full}: {e}"))?;
        let mut seen_rows = 0;
        let mut buckets = std::collections::BTreeSet::new();
        for (bucket, batches) in batches_by_bucket(&table, &full).await? {
            for batch in &batches {
                let computed = router
                    .bucket_ids(batch)
                    .map_err(|e| format!("{full}: {e}"))?;
                if let Some(row) = computed.iter().position(|&b| b != bucket) {
                    return Err(format!(
                        "{full}: Java wrote row {row} of a batch ({:?}) into bucket {bucket}, \
                         BucketRouter says {}",
                        batch.slice(row, 1),
                        computed[row]
                    ));
                }
                seen_rows += batch.num_rows();
            }
            buckets.insert(bucket);
        }
        if seen_rows != rows {
            return Err(format!("{full}: read {seen_rows} rows, Java wrote {rows}"));
        }
        // A table whose rows all sit in one bucket would pass the comparison above without
        // the hashing telling buckets apart.
        if buckets.len() < 2 {
            return Err(format!(
                "{full}: Java wrote all {seen_rows} rows into {} bucket(s); the check needs \
                 rows in at least 2 buckets to exercise the bucket hashing",
                buckets.len()
            ));
        }
        out.push(Checked {
            table: full,
            rows: seen_rows,
            buckets: buckets.len(),
        });
    }
    Ok(out)
}

/// The dynamic-bucket routing check: `n` Paimon Java assigners (`HashBucketAssigner`, assigner
/// `i` of `n`, fed by Java's `BucketAssigner.computeAssigner`) wrote `table` from empty, so
/// every bucket `b` holds only rows Java routed to assigner `b % n`. This reads every split and
/// fails on the first row [`AssignerRouter`] routes elsewhere, and when the rows are in fewer
/// than `n` distinct owners' buckets (nothing would tell the assigners apart). Returns the
/// rows and buckets seen.
pub async fn check_assigners(warehouse: &str, full: &str, n: i32) -> Result<(usize, usize)> {
    let table = open_table(warehouse, full)
        .await
        .map_err(|e| e.to_string())?;
    let router = AssignerRouter::for_table(&table, n).map_err(|e| format!("{full}: {e}"))?;
    let mut seen_rows = 0;
    let mut buckets = std::collections::BTreeSet::new();
    for (bucket, batches) in batches_by_bucket(&table, full).await? {
        let owner = bucket % n;
        for batch in &batches {
            let computed = router
                .assigner_ids(batch)
                .map_err(|e| format!("{full}: {e}"))?;
            if let Some(row) = computed.iter().position(|&a| a != owner) {
                return Err(format!(
                    "{full}: Java's assigner {owner} of {n} wrote row {row} of a batch ({:?}) \
                     into bucket {bucket}, AssignerRouter routes it to assigner {}",
                    batch.slice(row, 1),
                    computed[row]
                ));
            }
            seen_rows += batch.num_rows();
        }
        buckets.insert(bucket);
    }
    let owners: std::collections::BTreeSet<i32> = buckets.iter().map(|b| b % n).collect();
    if owners.len() < n as usize {
        return Err(format!(
            "{full}: {seen_rows} rows in buckets {buckets:?}, owned by only {} of {n} assigners; \
             the check needs every assigner's buckets",
            owners.len()
        ));
    }
    Ok((seen_rows, buckets.len()))
}

/// Every batch of every split of `table`'s latest snapshot, with the split's bucket.
async fn batches_by_bucket(
    table: &paimon_wire::paimon::table::Table,
    full: &str,
) -> Result<Vec<(i32, Vec<arrow_array::RecordBatch>)>> {
    let builder = table.new_read_builder();
    let plan = builder
        .new_scan()
        .plan()
        .await
        .map_err(|e| format!("{full}: planning: {e}"))?;
    let mut out = Vec::new();
    for split in plan.splits() {
        let batches: Vec<_> = builder
            .new_read()
            .map_err(|e| format!("{full}: {e}"))?
            .to_arrow(std::slice::from_ref(split))
            .map_err(|e| format!("{full}: reading: {e}"))?
            .try_collect()
            .await
            .map_err(|e| format!("{full}: reading: {e}"))?;
        out.push((split.bucket(), batches));
    }
    Ok(out)
}
