//! What the table-state rules know of the table when a commit starts ([`TableState`], read by
//! [`read_state`]), what they read of the coordinator ([`TableContext`]), and the bucket keys
//! and refusals they share.

use std::collections::{HashMap, HashSet};

use paimon::spec::{DataFileMeta, IndexFileMeta};
use paimon::spec::{FileKind, Snapshot};
use paimon::table::{CommitMessage, Table};

use super::buckets::{bucket_key, BucketKey};
use super::history::Referenced;
use super::limits::DELETION_VECTORS_INDEX_TYPE;
use super::table_rules::TableRules;
use crate::coordinator::binding::Binding;
use crate::coordinator::error::{CoordinatorError, CoordinatorResult, Rule, ValidationError};

/// What a table-state rule reads of the coordinator that checks a commit: its table, the
/// table's rules, its binding and its memory budget for HASH index checks. The rules never
/// see the coordinator itself.
#[derive(Clone, Copy)]
pub(crate) struct TableContext<'a> {
    /// The bound table.
    pub(crate) table: &'a Table,
    /// What the coordinator read of the table at bind time.
    pub(crate) rules: &'a TableRules,
    /// What the coordinator commits as.
    pub(crate) binding: &'a Binding,
    /// The bytes one commit's HASH index checks may hold.
    pub(crate) hash_index_budget: u64,
}

/// What the checks know of the table when a commit starts.
pub(crate) struct TableState {
    /// The latest snapshot, if any.
    pub(crate) snapshot: Option<Snapshot>,
    /// Whether the table is partitioned.
    pub(crate) partitioned: bool,
    /// Data files live in the latest snapshot, in the touched buckets: bucket → file name →
    /// the live entries, one per level, sorted by level.
    pub(crate) data: HashMap<BucketKey, HashMap<String, Vec<DataFileMeta>>>,
    /// Index files live in the latest snapshot, anywhere in the table: file name → bucket
    /// and entry.
    pub(crate) index: HashMap<String, (BucketKey, IndexFileMeta)>,
    /// The highest sequence number of a live data file, per touched bucket.
    pub(crate) max_sequence: HashMap<BucketKey, i64>,
    /// What every retained snapshot, tag and branch references.
    pub(crate) history: Referenced,
}

impl TableState {
    /// The live entries of data file `name` in `bucket` (one per level), if it is live.
    pub(crate) fn live_data(&self, bucket: &BucketKey, name: &str) -> Option<&[DataFileMeta]> {
        self.data
            .get(bucket)
            .and_then(|files| files.get(name))
            .map(Vec::as_slice)
    }

    /// The live deletion vectors of the table: (bucket, data file name) → how many rows each
    /// hides (`None` where its writer did not record it).
    pub(crate) fn live_deletion_vectors(&self) -> HashMap<(&BucketKey, &str), Option<i64>> {
        let mut vectors = HashMap::new();
        for (key, file) in self.index.values() {
            if file.index_type != DELETION_VECTORS_INDEX_TYPE {
                continue;
            }
            for (name, range) in file.deletion_vectors_ranges.iter().flatten() {
                vectors.insert((key, name.as_str()), range.cardinality);
            }
        }
        vectors
    }

    /// The deletion vectors the messages' compactions add (compact_new_index_files), per
    /// (bucket, data file name): their cardinality.
    pub(crate) fn new_compact_deletion_vectors<'m>(
        &self,
        messages: &'m [CommitMessage],
    ) -> HashMap<(BucketKey, &'m str), Option<i64>> {
        let mut vectors = HashMap::new();
        for message in messages {
            let key = bucket_key(self.partitioned, &message.partition, message.bucket);
            for file in &message.compact_new_index_files {
                if file.index_type != DELETION_VECTORS_INDEX_TYPE {
                    continue;
                }
                for (name, range) in file.deletion_vectors_ranges.iter().flatten() {
                    vectors.insert((key.clone(), name.as_str()), range.cardinality);
                }
            }
        }
        vectors
    }
}

pub(crate) fn refuse(
    message_index: usize,
    field: String,
    rule: Rule,
    reason: String,
) -> CoordinatorError {
    CoordinatorError::Validation(ValidationError {
        message_index,
        field,
        rule,
        reason,
    })
}

/// Reads the latest snapshot's live files of the touched buckets, its index files and what
/// the retained history references.
pub(crate) async fn read_state(
    context: TableContext<'_>,
    messages: &[CommitMessage],
) -> CoordinatorResult<TableState> {
    let partitioned = !context.table.schema().partition_keys().is_empty();
    let touched: HashSet<BucketKey> = messages
        .iter()
        .map(|m| bucket_key(partitioned, &m.partition, m.bucket))
        .collect();
    read_state_of(context, &touched).await
}

/// [`read_state`] for the buckets `touched`, as a streamed commit knows them.
pub(crate) async fn read_state_of(
    context: TableContext<'_>,
    touched: &HashSet<BucketKey>,
) -> CoordinatorResult<TableState> {
    let table = context.table;
    let table_name = context.rules.table_name();
    let partitioned = !table.schema().partition_keys().is_empty();
    let reading = || format!("reading the manifests of table {table_name} to check the commit");
    let snapshot = table
        .snapshot_manager()
        .get_latest_snapshot()
        .await
        .map_err(|e| CoordinatorError::paimon(reading(), e))?;
    let (history, latest) = super::history::scan(table, touched, snapshot.as_ref())
        .await
        .map_err(|e| CoordinatorError::paimon(reading(), e))?;
    let mut state = TableState {
        snapshot: None,
        partitioned,
        data: HashMap::new(),
        index: HashMap::new(),
        max_sequence: HashMap::new(),
        history,
    };
    live_files(latest, &mut state);
    state.snapshot = snapshot;
    Ok(state)
}

/// Computes from the latest snapshot's entries the live data files of the touched buckets,
/// the highest sequence number per bucket, and every live index file of the table.
fn live_files(latest: super::history::LatestEntries, state: &mut TableState) {
    let partitioned = state.partitioned;
    let net = latest.data;
    for ((key, _, name), (count, file)) in net {
        let Some(file) = file.filter(|_| count > 0) else {
            // Named by the latest snapshot's manifests but not live (added and deleted in
            // manifests not merged yet): still a reference.
            state.history.add_data(key, name);
            continue;
        };
        let highest = state
            .max_sequence
            .entry(key.clone())
            .or_insert(file.max_sequence_number);
        *highest = (*highest).max(file.max_sequence_number);
        state
            .data
            .entry(key)
            .or_default()
            .entry(name)
            .or_default()
            .push(file);
    }
    for files in state.data.values_mut().flat_map(HashMap::values_mut) {
        files.sort_unstable_by_key(|f| f.level);
    }
    for entry in latest.index {
        if entry.kind == FileKind::Add {
            let key = bucket_key(partitioned, &entry.partition, entry.bucket);
            state
                .index
                .insert(entry.index_file.file_name.clone(), (key, entry.index_file));
        }
    }
}

/// What abort may not delete: every file any retained snapshot, tag or branch references
/// (data files in the messages' buckets, index files anywhere in the table).
pub(crate) async fn referenced_files(
    context: TableContext<'_>,
    messages: &[CommitMessage],
) -> CoordinatorResult<Referenced> {
    let table = context.table;
    let table_name = context.rules.table_name();
    let partitioned = !table.schema().partition_keys().is_empty();
    let touched: HashSet<BucketKey> = messages
        .iter()
        .map(|m| bucket_key(partitioned, &m.partition, m.bucket))
        .collect();
    super::history::scan(table, &touched, None)
        .await
        .map(|(referenced, _)| referenced)
        .map_err(|e| {
            CoordinatorError::paimon(
                format!(
                    "reading the snapshots, tags and branches of table {table_name} to check \
                     what abort may delete"
                ),
                e,
            )
        })
}

/// The bucket key of a message, for looking up [`referenced_files`].
pub(crate) fn message_bucket_key(context: TableContext<'_>, message: &CommitMessage) -> BucketKey {
    let partitioned = !context.table.schema().partition_keys().is_empty();
    bucket_key(partitioned, &message.partition, message.bucket)
}
