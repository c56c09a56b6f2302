//! Rule `compact-content` (opt-in, [`crate::coordinator::Binding::with_verified_compaction`]): the
//! coordinator reads each compaction's inputs and results and compares what a reader sees.
//!
//! The metadata rules ([`super::compaction`]) cannot tell that a compaction kept the table's
//! content: a result with the right row count and key range may hold other rows. With
//! verification the coordinator reads, per bucket, the compaction inputs (with their live
//! deletion vectors) and the results (with the deletion vectors the compaction adds) through
//! the paimon crate's reader and compares:
//!
//! - append tables: the multiset of rows;
//! - primary-key tables with the `deduplicate` or `first-row` merge engine: every key's
//!   winner, read from the files' key-value rows (the paimon crate's
//!   `TableRead::to_arrow_key_values`, vendor patch 26): the row with the highest sequence
//!   number (`deduplicate`) or the lowest (`first-row`), **its sequence number and row kind
//!   included**. A result that keeps every row but gives some lower sequence numbers would
//!   let older rows outside the compaction win again; comparing user columns alone cannot see
//!   it. A key whose winner in the inputs is a retraction (`-D`, `-U`) may be dropped by the
//!   results (a compaction into the bottom level drops deletes); every other key keeps its
//!   winner exactly. Tables ordered by `sequence.field` compare the merged rows instead.
//!
//! - primary-key tables with the `partial-update` or `aggregation` merge engine: the merged
//!   rows, and only for a compaction of every live file of its bucket. A field-by-field merge
//!   of some files is not what a reader of the bucket sees (a retraction or an aggregate's
//!   state may sit in the files left out), so a compaction of part of a bucket is refused.
//!
//! Postpone tables compact across buckets and are refused at bind when verification is asked
//! for. The cost is one read of every
//! compacted byte, twice (inputs and results); BENCHMARKS.md gives it per GB.

use std::collections::HashMap;

use arrow_row::{RowConverter, SortField};
use futures::TryStreamExt;
use paimon::spec::{BinaryRow, DataFileMeta, IndexFileMeta, MergeEngine};
use paimon::table::{CommitMessage, DataSplit, DeletionFile, Table, TableCommit};

use super::shared::buckets::{bucket_key, BucketKey};
use super::shared::limits::BucketMode;
use super::shared::paths::deletion_file;
use super::shared::state::{refuse, TableState};
use super::shared::table_rules::TableRules;
use crate::coordinator::error::{CoordinatorError, CoordinatorResult, Rule};

/// Why a table's compactions cannot be verified, or `None` if they can.
pub(crate) fn unverifiable(table: &Table, rules: &TableRules) -> Option<String> {
    if rules.bucket_mode() == BucketMode::Postpone {
        return Some(
            "a postpone table (bucket = -2) compacts across buckets; its compactions cannot be \
             verified bucket by bucket"
                .into(),
        );
    }
    if !rules.has_primary_keys() {
        return None;
    }
    let options = paimon::spec::CoreOptions::new(table.schema().options());
    match options.merge_engine() {
        Ok(_) => None,
        Err(e) => Some(format!("the merge engine cannot be read: {e}")),
    }
}

/// Whether `table`'s merge engine merges a key's rows field by field (`partial-update`,
/// `aggregation`) rather than keeping one of them.
fn merges_values(table: &Table) -> bool {
    matches!(
        paimon::spec::CoreOptions::new(table.schema().options()).merge_engine(),
        Ok(MergeEngine::PartialUpdate | MergeEngine::Aggregation)
    )
}

/// One side of a compaction: its files and each file's deletion vector.
#[derive(Default)]
struct Side<'m> {
    files: Vec<&'m DataFileMeta>,
    vectors: Vec<Option<DeletionFile>>,
}

/// Where one compaction's files are: the table, the snapshot the split reads against, and the
/// bucket.
struct BucketLocation<'a> {
    table: &'a Table,
    snapshot_id: i64,
    partition: &'a [u8],
    bucket: i32,
    bucket_path: &'a str,
}

/// A split that reads exactly `side`'s files, with their deletion vectors, from the bucket at
/// `at`; `raw_convertible` reads them as they are, without merging keys.
fn split_of(
    at: &BucketLocation<'_>,
    side: &Side<'_>,
    raw_convertible: bool,
) -> paimon::Result<DataSplit> {
    DataSplit::builder()
        .with_snapshot(at.snapshot_id)
        .with_partition(BinaryRow::from_serialized_bytes(at.partition)?)
        .with_bucket(at.bucket)
        .with_bucket_path(at.bucket_path.to_string())
        .with_data_files(side.files.iter().map(|f| (*f).clone()).collect())
        .with_data_deletion_files(side.vectors.clone())
        .with_raw_convertible(raw_convertible)
        .build()
}

/// One key's winner among a side's key-value rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Winner {
    /// Its `_SEQUENCE_NUMBER`.
    sequence: i64,
    /// A hash of the whole row: row kind, sequence number and every column.
    row: u64,
    /// Whether it retracts the key (`-D` or `-U`).
    retracts: bool,
}

/// Reads the key-value rows of `side` and returns every key's winner, keyed by a hash of the
/// primary key's columns: the highest sequence number, or the lowest for `first_row`.
async fn read_winners(
    at: &BucketLocation<'_>,
    side: &Side<'_>,
    first_row: bool,
    hasher: &std::collections::hash_map::RandomState,
) -> paimon::Result<HashMap<u64, Winner>> {
    use arrow_array::{Int64Array, StringArray};
    use std::hash::BuildHasher;
    let mut winners: HashMap<u64, Winner> = HashMap::new();
    if side.files.is_empty() {
        return Ok(winners);
    }
    let table = at.table;
    // Batch by batch, as the reader yields them: memory is the winners, not the side's rows.
    let mut batches = table
        .new_read_builder()
        .new_read()?
        .to_arrow_key_values(&[split_of(at, side, false)?])?;
    let Some(first) = batches.try_next().await? else {
        return Ok(winners);
    };
    let schema = first.schema();
    let key_columns: Vec<usize> = table
        .schema()
        .primary_keys()
        .iter()
        .map(|key| schema.index_of(key).map_err(arrow_error))
        .collect::<paimon::Result<_>>()?;
    let sort_fields = |columns: &[usize]| -> Vec<SortField> {
        columns
            .iter()
            .map(|&c| SortField::new(schema.field(c).data_type().clone()))
            .collect()
    };
    let all_columns: Vec<usize> = (0..schema.fields().len()).collect();
    let keys = RowConverter::new(sort_fields(&key_columns)).map_err(arrow_error)?;
    let rows = RowConverter::new(sort_fields(&all_columns)).map_err(arrow_error)?;
    let missing = |name: &str| paimon::Error::DataInvalid {
        message: format!("a key-value read lacks its {name} column"),
        source: None,
    };
    let mut next = Some(first);
    while let Some(batch) = &next {
        let kinds = batch
            .column(0)
            .as_any()
            .downcast_ref::<StringArray>()
            .ok_or_else(|| missing("rowkind"))?;
        let sequences = batch
            .column(1)
            .as_any()
            .downcast_ref::<Int64Array>()
            .ok_or_else(|| missing("_SEQUENCE_NUMBER"))?;
        let key_rows = keys
            .convert_columns(
                &key_columns
                    .iter()
                    .map(|&c| batch.column(c).clone())
                    .collect::<Vec<_>>(),
            )
            .map_err(arrow_error)?;
        let whole_rows = rows.convert_columns(batch.columns()).map_err(arrow_error)?;
        for i in 0..batch.num_rows() {
            let candidate = Winner {
                sequence: sequences.value(i),
                row: hasher.hash_one(whole_rows.row(i).as_ref()),
                retracts: matches!(kinds.value(i), "-D" | "-U"),
            };
            let key = hasher.hash_one(key_rows.row(i).as_ref());
            match winners.entry(key) {
                std::collections::hash_map::Entry::Vacant(slot) => {
                    slot.insert(candidate);
                }
                std::collections::hash_map::Entry::Occupied(mut slot) => {
                    let current = slot.get().sequence;
                    let wins = if first_row {
                        candidate.sequence < current
                    } else {
                        candidate.sequence >= current
                    };
                    if wins {
                        slot.insert(candidate);
                    }
                }
            }
        }
        next = batches.try_next().await?;
    }
    Ok(winners)
}

/// The first key whose winner the results change: a result's winner that is not the inputs',
/// or a live (not retracting) winner of the inputs the results lost.
fn changed_winner(inputs: &HashMap<u64, Winner>, results: &HashMap<u64, Winner>) -> Option<String> {
    for (key, result) in results {
        match inputs.get(key) {
            Some(input) if input == result => {}
            Some(input) => {
                return Some(format!(
                    "a key's winner is the row of sequence number {} in the inputs and of \
                     sequence number {} in the results (or another row at it)",
                    input.sequence, result.sequence
                ))
            }
            None => return Some("a key the inputs do not have is in the results".into()),
        }
    }
    inputs
        .iter()
        .find(|(key, input)| !input.retracts && !results.contains_key(*key))
        .map(|(_, input)| {
            format!(
                "a key whose winner in the inputs (sequence number {}) is live is not in the \
                 results",
                input.sequence
            )
        })
}

/// Reads `side` of the bucket at `at` as a reader of just those files sees it, and returns its
/// rows as a sorted list of 64-bit hashes of their canonical (arrow row format) bytes, keyed
/// by `hasher` (SipHash with this process's random key, so a writer cannot aim a collision):
/// eight bytes a row instead of the row, for compactions of millions of rows.
async fn read_rows(
    at: &BucketLocation<'_>,
    side: &Side<'_>,
    merge: bool,
    hasher: &std::collections::hash_map::RandomState,
) -> paimon::Result<Vec<u64>> {
    if side.files.is_empty() {
        return Ok(Vec::new());
    }
    // Batch by batch, as the reader yields them: memory is eight bytes a row.
    let mut batches = at
        .table
        .new_read_builder()
        .new_read()?
        .to_arrow(&[split_of(at, side, !merge)?])?;
    let mut rows = Vec::new();
    let mut converter: Option<RowConverter> = None;
    while let Some(batch) = batches.try_next().await? {
        let converter = match &mut converter {
            Some(converter) => converter,
            None => converter.insert(
                RowConverter::new(
                    batch
                        .schema()
                        .fields()
                        .iter()
                        .map(|f| SortField::new(f.data_type().clone()))
                        .collect(),
                )
                .map_err(arrow_error)?,
            ),
        };
        let converted = converter
            .convert_columns(batch.columns())
            .map_err(arrow_error)?;
        rows.extend(converted.iter().map(|row| {
            use std::hash::BuildHasher;
            hasher.hash_one(row.as_ref())
        }));
    }
    rows.sort_unstable();
    Ok(rows)
}

fn arrow_error(e: arrow_schema::ArrowError) -> paimon::Error {
    paimon::Error::UnexpectedError {
        message: format!("comparing compaction rows: {e}"),
        source: Some(Box::new(e)),
    }
}

/// Reads every compaction's inputs and results and refuses one whose results do not show
/// the rows its inputs showed.
pub(crate) async fn verify_compactions(
    table: &Table,
    table_name: &str,
    has_primary_keys: bool,
    messages: &[CommitMessage],
    state: &TableState,
) -> CoordinatorResult<()> {
    // On an empty table the only inputs a compaction may have are files its own commit adds:
    // they are read all the same (a split needs some snapshot id; the reader does not use it).
    let snapshot_id = state.snapshot.as_ref().map_or(0, |s| s.id());
    // Primary-key tables ordered by sequence number compare every key's winner from the
    // key-value rows (`Some(first_row)`); others the rows a reader sees.
    let options = paimon::spec::CoreOptions::new(table.schema().options());
    let value_merge = has_primary_keys && merges_values(table);
    let key_values = (has_primary_keys && !value_merge && options.sequence_fields().is_empty())
        .then(|| matches!(options.merge_engine(), Ok(MergeEngine::FirstRow)));
    let paths = TableCommit::new(table.clone(), String::new());
    let hasher = std::collections::hash_map::RandomState::new();
    // Per bucket: (first message, partition, bucket, inputs, results).
    let mut buckets: HashMap<BucketKey, (usize, &[u8], i32, Side, Side)> = HashMap::new();
    for (index, message) in messages.iter().enumerate() {
        if message.compact_before.is_empty() && message.compact_after.is_empty() {
            continue;
        }
        let key = bucket_key(state.partitioned, &message.partition, message.bucket);
        let entry = buckets.entry(key).or_insert_with(|| {
            (
                index,
                &message.partition,
                message.bucket,
                Side::default(),
                Side::default(),
            )
        });
        entry.3.files.extend(&message.compact_before);
        entry.4.files.extend(&message.compact_after);
    }
    let mut ordered: Vec<_> = buckets.into_iter().collect();
    ordered.sort_by_key(|(_, (index, ..))| *index);
    for (key, (index, partition, bucket, mut inputs, mut results)) in ordered {
        let during = || format!("reading the compaction of message {index} of table {table_name}");
        let bucket_path = paths
            .bucket_path(partition, bucket)
            .map_err(|e| CoordinatorError::paimon(during(), e))?;
        let live_vectors: Vec<&IndexFileMeta> = state
            .index
            .values()
            .filter(|(k, _)| *k == key)
            .map(|(_, file)| file)
            .collect();
        inputs.vectors = inputs
            .files
            .iter()
            .map(|f| {
                live_vectors
                    .iter()
                    .find_map(|v| deletion_file(table, &bucket_path, v, &f.file_name))
            })
            .collect();
        let new_vectors: Vec<&IndexFileMeta> = messages
            .iter()
            .filter(|m| bucket_key(state.partitioned, &m.partition, m.bucket) == key)
            .flat_map(|m| &m.compact_new_index_files)
            .collect();
        results.vectors = results
            .files
            .iter()
            .map(|f| {
                new_vectors
                    .iter()
                    .find_map(|v| deletion_file(table, &bucket_path, v, &f.file_name))
            })
            .collect();
        if value_merge {
            // A field-by-field merge of some of a bucket's files is not the merge of the
            // bucket: only a compaction of every live file compares as a reader sees it.
            let input_names: std::collections::HashSet<&str> =
                inputs.files.iter().map(|f| f.file_name.as_str()).collect();
            if let Some(left_out) = state.data.get(&key).and_then(|live| {
                live.keys()
                    .find(|name| !input_names.contains(name.as_str()))
            }) {
                return Err(refuse(
                    index,
                    "compact_before".into(),
                    Rule::CompactContent,
                    format!(
                        "the table merges a key's rows field by field (partial-update or \
                         aggregation), so a verified compaction rewrites every live file of its \
                         bucket; live file {left_out} is not among its inputs"
                    ),
                ));
            }
        }
        let at = BucketLocation {
            table,
            snapshot_id,
            partition,
            bucket,
            bucket_path: &bucket_path,
        };
        if let Some(first_row) = key_values {
            let read = |side| read_winners(&at, side, first_row, &hasher);
            let winners_in = read(&inputs)
                .await
                .map_err(|e| CoordinatorError::paimon(during(), e))?;
            let winners_out = read(&results)
                .await
                .map_err(|e| CoordinatorError::paimon(during(), e))?;
            if let Some(change) = changed_winner(&winners_in, &winners_out) {
                return Err(refuse(
                    index,
                    "compact_after".into(),
                    Rule::CompactContent,
                    format!(
                        "the compaction changes which row wins a key: {change} ({} keys in the \
                         inputs, {} in the results); a compaction keeps every key's winner, its \
                         sequence number and row kind included",
                        winners_in.len(),
                        winners_out.len()
                    ),
                ));
            }
            continue;
        }
        let read = |side| read_rows(&at, side, has_primary_keys, &hasher);
        let rows_in = read(&inputs)
            .await
            .map_err(|e| CoordinatorError::paimon(during(), e))?;
        let rows_out = read(&results)
            .await
            .map_err(|e| CoordinatorError::paimon(during(), e))?;
        if rows_in != rows_out {
            let what = if has_primary_keys {
                "merged rows (one per key)"
            } else {
                "rows"
            };
            return Err(refuse(
                index,
                "compact_after".into(),
                Rule::CompactContent,
                format!(
                    "the compaction's results hold other {what} than its inputs ({} read from \
                     the results, {} from the inputs{}); a compaction rewrites rows, it does \
                     not change them",
                    rows_out.len(),
                    rows_in.len(),
                    first_difference(&rows_in, &rows_out)
                ),
            ));
        }
    }
    Ok(())
}

/// `, first differing row at position N` for two sorted row hash lists.
fn first_difference(a: &[u64], b: &[u64]) -> String {
    a.iter()
        .zip(b)
        .position(|(x, y)| x != y)
        .map_or(String::new(), |at| {
            format!(", the first differing row at sorted position {at}")
        })
}
