//! Rule family **superseded rows** (rule `superseded-rows`): what a compaction may hide in
//! files it does not rewrite.
//!
//! Java's lookup compaction (primary-key tables with deletion vectors, or a lookup changelog)
//! compacts level-0 files into a higher level and, for every key it finds again in a level it
//! leaves alone, adds the older row's position to that file's deletion vector: a reader of a
//! deletion-vector table reads each level without merging, so the older version must be
//! hidden. Rule `deletion-vectors` hands on such positions ([`GrownVector`]) only for tables
//! where the newest version of a key wins or merges, ordered by sequence number; this rule
//! reads them:
//!
//! | what | what it protects | tests (`tests/coordinator/`) |
//! |---|---|---|
//! | every row a compaction newly hides in a file it does not rewrite has a newer version of its key (a higher sequence number) among the compaction's results in the same bucket | a compaction hides only rows it replaced: no live row of another file disappears | `lookup_compaction::a_hidden_row_without_a_newer_version_in_the_results_is_refused`, `lookup_compaction::java_lookup_compaction_hides_only_rows_it_replaced` |
//!
//! The hidden rows are read from the file by position (without its vector), the results'
//! rows with the vectors the commit gives them; keys compare as the arrow row format of the
//! table's trimmed primary key. The cost is a read of each file whose vector grows and of the
//! bucket's results.

use std::collections::HashMap;

use arrow_array::{Array, Int64Array, RecordBatch};
use arrow_row::{RowConverter, SortField};
use futures::TryStreamExt;
use paimon::spec::{BinaryRow, DataFileMeta};
use paimon::table::{CommitMessage, DataSplit, DeletionFile, TableCommit};

use super::shared::buckets::{bucket_key, bucket_name, BucketKey};
use super::shared::paths::{bucket_path, deletion_file};
use super::shared::state::{refuse, TableContext, TableState};
use super::shared::vectors::GrownVector;
use crate::coordinator::error::{CoordinatorError, CoordinatorResult, Rule};

/// Refuses a compaction that hides a row of a file it does not rewrite unless its results
/// hold a newer version of the row's key (see the module docs).
pub(crate) async fn check_against_table(
    context: TableContext<'_>,
    messages: &[CommitMessage],
    state: &TableState,
    grown: &[GrownVector],
) -> CoordinatorResult<()> {
    if grown.is_empty() {
        return Ok(());
    }
    let table = context.table;
    let paths = TableCommit::new(table.clone(), String::new());
    let keys = KeyReader::new(table);
    // The newest sequence number of each key among a bucket's results, read once a bucket.
    let mut newest_by_bucket: HashMap<BucketKey, HashMap<Vec<u8>, i64>> = HashMap::new();
    for vector in grown {
        let bucket = &vector.bucket;
        let where_ = || bucket_name(state.partitioned, bucket.1);
        let during = || {
            format!(
                "reading the rows the compaction of message {} hides in {:?} in {}",
                vector.message_index,
                vector.file_name,
                where_()
            )
        };
        let Some((partition, bucket_number)) = messages
            .iter()
            .map(|m| (m, bucket_key(state.partitioned, &m.partition, m.bucket)))
            .find(|(_, key)| key == bucket)
            .map(|(m, _)| (m.partition.as_slice(), m.bucket))
        else {
            continue;
        };
        let bucket_dir = bucket_path(&paths, partition, bucket_number)?;
        let Some(file) = live_or_added(state, messages, bucket, &vector.file_name) else {
            // Not live once the commit applies: rule deletion-vectors refuses a vector of it.
            continue;
        };
        let hidden = keys
            .read(
                table,
                partition,
                bucket_number,
                &bucket_dir,
                &[(file, None)],
            )
            .await
            .map_err(|e| CoordinatorError::paimon(during(), e))?;
        if !newest_by_bucket.contains_key(bucket) {
            let mut results: Vec<(&DataFileMeta, Option<DeletionFile>)> = Vec::new();
            for message in messages
                .iter()
                .filter(|m| bucket_key(state.partitioned, &m.partition, m.bucket) == *bucket)
            {
                for result in &message.compact_after {
                    let vector = messages
                        .iter()
                        .flat_map(|m| &m.compact_new_index_files)
                        .find_map(|index| {
                            deletion_file(table, &bucket_dir, index, &result.file_name)
                        });
                    results.push((result, vector));
                }
            }
            let rows = keys
                .read(table, partition, bucket_number, &bucket_dir, &results)
                .await
                .map_err(|e| CoordinatorError::paimon(during(), e))?;
            let mut newest: HashMap<Vec<u8>, i64> = HashMap::new();
            for (key, sequence) in rows {
                let slot = newest.entry(key).or_insert(sequence);
                *slot = (*slot).max(sequence);
            }
            newest_by_bucket.insert(bucket.clone(), newest);
        }
        let newest = &newest_by_bucket[bucket];
        for &position in &vector.added_positions {
            let Some((key, sequence)) = usize::try_from(position).ok().and_then(|p| hidden.get(p))
            else {
                // Beyond the file: rule deletion-vectors refuses it first.
                continue;
            };
            let replaced = newest.get(key).is_some_and(|newer| newer > sequence);
            if !replaced {
                return Err(refuse(
                    vector.message_index,
                    vector.field.clone(),
                    Rule::SupersededRows,
                    format!(
                        "the compaction hides row {position} (sequence number {sequence}) of \
                         {:?} in {}, a file it does not rewrite, but its results hold no newer \
                         version of that row's key: a compaction hides only rows its results \
                         replace, or a live row would disappear",
                        vector.file_name,
                        where_()
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// Data file `name` of `bucket`, live in the latest snapshot or added by the commit.
fn live_or_added<'a>(
    state: &'a TableState,
    messages: &'a [CommitMessage],
    bucket: &BucketKey,
    name: &str,
) -> Option<&'a DataFileMeta> {
    if let Some(entries) = state.live_data(bucket, name) {
        return entries.first();
    }
    messages
        .iter()
        .filter(|m| bucket_key(state.partitioned, &m.partition, m.bucket) == *bucket)
        .flat_map(|m| m.new_files.iter().chain(&m.compact_after))
        .find(|f| f.file_name == name)
}

/// Reads `(key, sequence number)` of every row of data files, keys in the arrow row format of
/// the table's trimmed primary key.
struct KeyReader {
    key_names: Vec<String>,
}

impl KeyReader {
    fn new(table: &paimon::table::Table) -> Self {
        Self {
            key_names: table.schema().trimmed_primary_keys(),
        }
    }

    /// The rows of `files` (each with its deletion vector, if any), file after file, each in
    /// the order of its positions.
    async fn read(
        &self,
        table: &paimon::table::Table,
        partition: &[u8],
        bucket: i32,
        bucket_path: &str,
        files: &[(&DataFileMeta, Option<DeletionFile>)],
    ) -> paimon::Result<Vec<(Vec<u8>, i64)>> {
        let mut rows = Vec::new();
        if files.is_empty() {
            return Ok(rows);
        }
        let split = DataSplit::builder()
            .with_snapshot(0)
            .with_partition(BinaryRow::from_serialized_bytes(partition)?)
            .with_bucket(bucket)
            .with_bucket_path(bucket_path.to_string())
            .with_data_files(files.iter().map(|(f, _)| (*f).clone()).collect())
            .with_data_deletion_files(files.iter().map(|(_, v)| v.clone()).collect())
            .with_raw_convertible(false)
            .build()?;
        let batches: Vec<RecordBatch> = table
            .new_read_builder()
            .new_read()?
            .to_arrow_key_values(&[split])?
            .try_collect()
            .await?;
        let invalid = |message: String| paimon::Error::DataInvalid {
            message,
            source: None,
        };
        let mut converter: Option<RowConverter> = None;
        for batch in &batches {
            let schema = batch.schema();
            let key_columns = self
                .key_names
                .iter()
                .map(|name| {
                    schema
                        .index_of(name)
                        .map_err(|e| invalid(format!("a key-value read lacks key {name}: {e}")))
                })
                .collect::<paimon::Result<Vec<usize>>>()?;
            let converter = match &mut converter {
                Some(converter) => converter,
                None => converter.insert(
                    RowConverter::new(
                        key_columns
                            .iter()
                            .map(|&c| SortField::new(schema.field(c).data_type().clone()))
                            .collect(),
                    )
                    .map_err(|e| invalid(format!("comparing keys: {e}")))?,
                ),
            };
            let sequences = batch
                .column(1)
                .as_any()
                .downcast_ref::<Int64Array>()
                .ok_or_else(|| invalid("a key-value read lacks _SEQUENCE_NUMBER".into()))?;
            let keys = converter
                .convert_columns(
                    &key_columns
                        .iter()
                        .map(|&c| batch.column(c).clone())
                        .collect::<Vec<_>>(),
                )
                .map_err(|e| invalid(format!("comparing keys: {e}")))?;
            for i in 0..batch.num_rows() {
                let sequence = if sequences.is_null(i) {
                    i64::MIN
                } else {
                    sequences.value(i)
                };
                rows.push((keys.row(i).as_ref().to_vec(), sequence));
            }
        }
        Ok(rows)
    }
}
