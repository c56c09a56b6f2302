//! Native compaction (issue 41, first part: append tables): plan which files of each bucket to
//! compact, rewrite one bucket's files in a worker, and commit the results through the
//! coordinator like any other payload.
//!
//! 1. [`plan_compaction`] reads the table's latest snapshot and picks, per partition and
//!    bucket, the small files (below `target-file-size`) to rewrite, with Paimon's own option
//!    `compaction.min.file-num` (default 5, as Java's append compaction): a bucket is compacted
//!    when it has at least that many small files, or, for a full compaction, at least two. A
//!    table that needs nothing yields an empty plan. The plan is data: each
//!    [`CompactionTask`] serializes to bytes ([`CompactionTask::to_bytes`]) for a worker.
//! 2. [`CompactionTask::run`] rewrites the task's files with the paimon crate's
//!    `rewrite_append_files` (vendor patch 30): their live rows, in order, in the table's file
//!    format and compression, rolled at `target-file-size`, in bounded memory (the reader's
//!    batches and the writer's buffer). It returns an ordinary commit message carrying a
//!    compact increment (`compact_before` the inputs, `compact_after` the results).
//! 3. The coordinator commits the messages under a binding with verified compaction
//!    ([`crate::coordinator::Binding::with_verified_compaction`]): it checks the inputs are
//!    live and reads inputs and results to compare their rows. A compaction that lost a race
//!    (another commit removed an input) is refused, and its result files are deleted by
//!    `abort`.
//!
//! Refused at plan time, naming why: primary-key tables (their compaction merges keys; not
//! built yet), tables with deletion vectors (`deletion-vectors.enabled`: compacting their
//! files must also rewrite the bucket's deletion-vector index), data-evolution and format
//! tables, and tables with BLOB columns.

use std::collections::BTreeMap;
use std::fmt;

use paimon::spec::{CoreOptions, DataFileMeta};
use paimon::table::{CommitMessage, DataSplit, Table};

/// Paimon's option naming how many small files a bucket needs before it is compacted.
pub const MIN_FILE_NUM_OPTION: &str = "compaction.min.file-num";

/// Its default, as in Paimon Java.
pub const DEFAULT_MIN_FILE_NUM: usize = 5;

/// Why a table cannot be compacted, or a compaction failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum CompactionError {
    /// The table is one this library does not compact (yet); the reason names the option or
    /// the table kind.
    Unsupported {
        /// The table, `database.table`.
        table: String,
        /// Why, and what to do instead.
        reason: String,
    },
    /// A task's bytes do not describe a task.
    BadTask {
        /// What is wrong with them.
        reason: String,
    },
    /// The paimon crate failed while planning or rewriting.
    Paimon {
        /// What the compaction was doing.
        during: String,
        /// The paimon crate's error.
        source: paimon::Error,
    },
}

impl fmt::Display for CompactionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CompactionError::Unsupported { table, reason } => {
                write!(
                    f,
                    "table {table} cannot be compacted by paimon-wire: {reason}"
                )
            }
            CompactionError::BadTask { reason } => {
                write!(f, "not a compaction task: {reason}")
            }
            CompactionError::Paimon { during, source } => write!(
                f,
                "paimon failed while {during}: {}",
                crate::coordinator::PlainPaimonError(source)
            ),
        }
    }
}

impl std::error::Error for CompactionError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            CompactionError::Paimon { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// What to compact in a table, as of one snapshot.
#[derive(Debug, Clone)]
pub struct CompactionPlan {
    snapshot_id: Option<i64>,
    tasks: Vec<CompactionTask>,
}

impl CompactionPlan {
    /// The snapshot the plan read; `None` for an empty table.
    pub fn snapshot_id(&self) -> Option<i64> {
        self.snapshot_id
    }

    /// One task per bucket to compact, in partition and bucket order.
    pub fn tasks(&self) -> &[CompactionTask] {
        &self.tasks
    }

    /// Whether nothing needs compacting.
    pub fn is_empty(&self) -> bool {
        self.tasks.is_empty()
    }
}

/// The files of one partition and bucket to rewrite into fewer files.
#[derive(Debug, Clone)]
pub struct CompactionTask {
    split: DataSplit,
}

impl CompactionTask {
    /// The partition, as a serialized binary row.
    pub fn partition(&self) -> Vec<u8> {
        self.split.partition().to_serialized_bytes()
    }

    /// The bucket.
    pub fn bucket(&self) -> i32 {
        self.split.bucket()
    }

    /// The files to rewrite.
    pub fn input_files(&self) -> &[DataFileMeta] {
        self.split.data_files()
    }

    /// The bytes of the files to rewrite.
    pub fn input_bytes(&self) -> i64 {
        self.input_files().iter().map(|f| f.file_size).sum()
    }

    /// The task as bytes a worker can be sent (JSON of the paimon crate's `DataSplit`).
    pub fn to_bytes(&self) -> Vec<u8> {
        // A DataSplit holds strings, numbers and byte arrays only: it always serializes.
        serde_json::to_vec(&self.split).unwrap_or_default()
    }

    /// A task from [`Self::to_bytes`].
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, CompactionError> {
        let split = serde_json::from_slice(bytes).map_err(|e| CompactionError::BadTask {
            reason: e.to_string(),
        })?;
        Ok(Self { split })
    }

    /// Rewrites the task's files and returns the commit message of the compaction: the
    /// inputs in `compact_before`, the new files in `compact_after` (none if no row is live).
    /// The new files are written but not committed: commit the message through a coordinator
    /// that takes compactions, or `abort` it.
    pub async fn run(&self, table: &Table) -> Result<CommitMessage, CompactionError> {
        let results = paimon::table::rewrite_append_files(table, &self.split)
            .await
            .map_err(|source| CompactionError::Paimon {
                during: format!(
                    "rewriting {} file(s) of bucket {} of table {}",
                    self.input_files().len(),
                    self.bucket(),
                    table.identifier().full_name()
                ),
                source,
            })?;
        let mut message = CommitMessage::new(self.partition(), self.bucket(), Vec::new());
        message.compact_before = self.input_files().to_vec();
        message.compact_after = results;
        Ok(message)
    }
}

/// Why `table` cannot be compacted by this library, or `None` if it can.
fn unsupported(table: &Table) -> Option<String> {
    let schema = table.schema();
    let options = CoreOptions::new(schema.options());
    if !schema.primary_keys().is_empty() {
        return Some(
            "it is a primary-key table, and paimon-wire compacts append tables only so far \
             (compact it with Paimon Java's compaction job)"
                .into(),
        );
    }
    if options.deletion_vectors_enabled() {
        return Some(
            "it has deletion vectors (deletion-vectors.enabled = true), whose index a \
             compaction must rewrite; not built yet"
                .into(),
        );
    }
    if options.data_evolution_enabled() {
        return Some("it is a data-evolution table".into());
    }
    if options.is_format_table() {
        return Some("it is a format table (it has no snapshots to compact)".into());
    }
    if schema.fields().iter().any(|f| f.data_type().is_blob_type()) {
        return Some("it has BLOB columns".into());
    }
    None
}

/// The small files of a bucket to compact, or none: the files below `target_file_size`, in
/// the order the table lists them, when there are at least `min_files` of them.
fn pick(files: &[DataFileMeta], target_file_size: i64, min_files: usize) -> Vec<DataFileMeta> {
    let small: Vec<DataFileMeta> = files
        .iter()
        .filter(|f| f.file_size < target_file_size)
        .cloned()
        .collect();
    if small.len() >= min_files.max(2) {
        small
    } else {
        Vec::new()
    }
}

/// Plans the compaction of `table`'s latest snapshot: a task for every bucket with at least
/// `compaction.min.file-num` files below `target-file-size` (with `full`, at least two).
pub async fn plan_compaction(table: &Table, full: bool) -> Result<CompactionPlan, CompactionError> {
    let name = table.identifier().full_name();
    if let Some(reason) = unsupported(table) {
        return Err(CompactionError::Unsupported {
            table: name,
            reason,
        });
    }
    let options = CoreOptions::new(table.schema().options());
    let min_files = match table.schema().options().get(MIN_FILE_NUM_OPTION) {
        None => DEFAULT_MIN_FILE_NUM,
        Some(raw) => raw
            .trim()
            .parse::<usize>()
            .map_err(|_| CompactionError::Unsupported {
                table: name.clone(),
                reason: format!("{MIN_FILE_NUM_OPTION} = {raw:?} is not a file count"),
            })?,
    };
    let min_files = if full { 2 } else { min_files };
    let paimon_error = |during: &str| {
        let during = format!("{during} of table {name}");
        move |source| CompactionError::Paimon { during, source }
    };
    let plan = table
        .new_read_builder()
        .new_scan()
        .plan()
        .await
        .map_err(paimon_error("planning the scan"))?;
    // A scan may cut one bucket into several splits: gather every file of a bucket.
    let mut buckets: BTreeMap<(Vec<u8>, i32), (DataSplit, Vec<DataFileMeta>)> = BTreeMap::new();
    let mut snapshot_id = None;
    for split in plan.splits() {
        snapshot_id = Some(split.snapshot_id());
        let key = (split.partition().to_serialized_bytes(), split.bucket());
        let entry = buckets
            .entry(key)
            .or_insert_with(|| (split.clone(), Vec::new()));
        entry.1.extend(split.data_files().iter().cloned());
    }
    let mut tasks = Vec::new();
    for (template, files) in buckets.into_values() {
        let chosen = pick(&files, options.target_file_size(), min_files);
        if chosen.is_empty() {
            continue;
        }
        let count = chosen.len();
        let split = DataSplit::builder()
            .with_snapshot(template.snapshot_id())
            .with_partition(template.partition().clone())
            .with_bucket(template.bucket())
            .with_bucket_path(template.bucket_path().to_string())
            .with_total_buckets(template.total_buckets())
            .with_data_files(chosen)
            .with_data_deletion_files(vec![None; count])
            .with_raw_convertible(true)
            .build()
            .map_err(paimon_error("describing a compaction task"))?;
        tasks.push(CompactionTask { split });
    }
    Ok(CompactionPlan { snapshot_id, tasks })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(name: &str, size: i64) -> DataFileMeta {
        let stats = || paimon::spec::BinaryTableStats::new(Vec::new(), Vec::new(), Vec::new());
        DataFileMeta {
            file_name: name.into(),
            file_size: size,
            row_count: 1,
            min_key: Vec::new(),
            max_key: Vec::new(),
            key_stats: stats(),
            value_stats: stats(),
            min_sequence_number: 0,
            max_sequence_number: 0,
            schema_id: 0,
            level: 0,
            extra_files: vec![],
            creation_time: None,
            delete_row_count: None,
            embedded_index: None,
            file_source: Some(0),
            value_stats_cols: None,
            external_path: None,
            first_row_id: None,
            write_cols: None,
            column_max_sequence_numbers: None,
        }
    }

    #[test]
    fn a_bucket_is_compacted_from_min_file_num_small_files_on() {
        let big = file("big", 200);
        let smalls: Vec<DataFileMeta> = (0..5).map(|i| file(&format!("s{i}"), 10)).collect();
        let mut files = vec![big];
        files.extend(smalls.iter().take(4).cloned());
        assert!(pick(&files, 100, 5).is_empty(), "four small files");
        files.push(smalls[4].clone());
        let chosen: Vec<String> = pick(&files, 100, 5)
            .into_iter()
            .map(|f| f.file_name)
            .collect();
        assert_eq!(chosen, ["s0", "s1", "s2", "s3", "s4"], "the big file stays");
        // A full compaction takes two; one file alone is never rewritten.
        assert_eq!(pick(&files[..3], 100, 2).len(), 2);
        assert!(pick(&files[..2], 100, 2).is_empty());
        assert!(pick(&files[..2], 100, 0).is_empty());
    }
}
