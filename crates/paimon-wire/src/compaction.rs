//! Native compaction (issue 41): plan which files of each bucket to compact, rewrite one
//! bucket's files in a worker, and commit the results through the coordinator like any other
//! payload.
//!
//! 1. [`plan_compaction`] reads the table's latest snapshot and picks, per partition and
//!    bucket, what to rewrite with Paimon's own options:
//!    - append tables: the small files (below `target-file-size`), once there are
//!      `compaction.min.file-num` of them (default 5, as Java's append compaction); with a
//!      full compaction, two;
//!    - primary-key tables: every sorted run of the bucket (each level-0 file is a run, each
//!      other level one), once there are `num-sorted-run.compaction-trigger` runs (default 5);
//!      with a full compaction, any bucket not already one file at the highest level. The
//!      runs are merged into one at the highest level (`num-levels - 1`). Java's universal
//!      compaction may pick fewer runs; merging them all is what its full compaction does,
//!      and always leaves each level one sorted run.
//!
//!    A table that needs nothing yields an empty plan. The plan is data: each
//!    [`CompactionTask`] serializes to bytes ([`CompactionTask::to_bytes`]) for a worker.
//! 2. [`CompactionTask::run`] rewrites the task's files with the paimon crate (vendor patches
//!    30 and 31): an append bucket's live rows, in order; a primary-key bucket's files merged
//!    by the table's merge engine, each key's winner kept with its sequence number and row
//!    kind (a key whose winner deletes it is dropped at the highest level). Both write the
//!    table's file format and compression, rolled at `target-file-size`, in bounded memory:
//!    the readers' batches (one per input file when merging) and one output file's rows. It
//!    returns an ordinary commit message carrying a compact increment (`compact_before` the
//!    inputs, `compact_after` the results).
//! 3. The coordinator commits the messages under a binding with verified compaction
//!    ([`crate::coordinator::Binding::with_verified_compaction`]): it checks the inputs are
//!    live and reads inputs and results to compare their rows. A compaction that lost a race
//!    (another commit removed an input) is refused, and its result files are deleted by
//!    `abort`.
//!
//! Refused at plan time, naming why: tables with deletion vectors (`deletion-vectors.enabled`:
//! compacting their files must also rewrite the bucket's deletion-vector index),
//! primary-key tables whose merge engine is not `deduplicate` or `first-row`, or with
//! `sequence.field` or a changelog producer, postpone tables, data-evolution and format
//! tables, and tables with BLOB columns.

use std::collections::BTreeMap;
use std::fmt;

use paimon::spec::{CoreOptions, DataFileMeta};
use paimon::table::{CommitMessage, DataSplit, Table};

/// Paimon's option naming how many small files a bucket needs before it is compacted.
pub const MIN_FILE_NUM_OPTION: &str = "compaction.min.file-num";

/// Its default, as in Paimon Java.
pub const DEFAULT_MIN_FILE_NUM: usize = 5;

/// Paimon's option naming how many sorted runs a primary-key bucket needs before it is
/// compacted.
pub const SORTED_RUN_TRIGGER_OPTION: &str = "num-sorted-run.compaction-trigger";

/// Its default, as in Paimon Java.
pub const DEFAULT_SORTED_RUN_TRIGGER: usize = 5;

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
    /// The level the results go to: 0 for an append table, the highest level for a
    /// primary-key table.
    output_level: i32,
    /// Whether the table has a primary key (its files are merged, not concatenated).
    merges_keys: bool,
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

    /// The snapshot the task was planned from (commit its result with it as the identifier).
    pub fn snapshot_id(&self) -> i64 {
        self.split.snapshot_id()
    }

    /// The level the results are written to.
    pub fn output_level(&self) -> i32 {
        self.output_level
    }

    /// The task as bytes a worker can be sent: JSON holding the paimon crate's `DataSplit`.
    pub fn to_bytes(&self) -> Vec<u8> {
        // A DataSplit holds strings, numbers and byte arrays only: it always serializes.
        serde_json::to_vec(&serde_json::json!({
            "output_level": self.output_level,
            "merges_keys": self.merges_keys,
            "split": self.split,
        }))
        .unwrap_or_default()
    }

    /// A task from [`Self::to_bytes`].
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, CompactionError> {
        let bad = |reason: String| CompactionError::BadTask { reason };
        let mut value: serde_json::Value =
            serde_json::from_slice(bytes).map_err(|e| bad(e.to_string()))?;
        let output_level = value["output_level"]
            .as_i64()
            .and_then(|level| i32::try_from(level).ok())
            .ok_or_else(|| bad("output_level is not a level".into()))?;
        let merges_keys = value["merges_keys"]
            .as_bool()
            .ok_or_else(|| bad("merges_keys is not a boolean".into()))?;
        let split =
            serde_json::from_value(value["split"].take()).map_err(|e| bad(e.to_string()))?;
        Ok(Self {
            split,
            output_level,
            merges_keys,
        })
    }

    /// Rewrites the task's files and returns the commit message of the compaction: the
    /// inputs in `compact_before`, the new files in `compact_after` (none if no row is live).
    /// The new files are written but not committed: commit the message through a coordinator
    /// that takes compactions, or `abort` it.
    pub async fn run(&self, table: &Table) -> Result<CommitMessage, CompactionError> {
        let rewritten = if self.merges_keys {
            paimon::table::rewrite_key_value_files(table, &self.split, self.output_level).await
        } else {
            paimon::table::rewrite_append_files(table, &self.split).await
        };
        let results = rewritten.map_err(|source| CompactionError::Paimon {
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
        return paimon::table::key_value_rewrite_unsupported(table);
    }
    if options.deletion_vectors_enabled() {
        return Some(
            "it has deletion vectors (deletion-vectors.enabled = true), whose index a \
             compaction must rewrite; not built yet"
                .into(),
        );
    }
    paimon::table::append_rewrite_unsupported(table)
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

/// Every file of a primary-key bucket, when it has `trigger` sorted runs or more (a level-0
/// file is a run, and so is each other level), or, with `full`, unless it is one file at
/// `max_level` already.
fn pick_runs(
    files: &[DataFileMeta],
    max_level: i32,
    trigger: usize,
    full: bool,
) -> Vec<DataFileMeta> {
    let level_zero = files.iter().filter(|f| f.level == 0).count();
    let mut levels: Vec<i32> = files
        .iter()
        .filter(|f| f.level > 0)
        .map(|f| f.level)
        .collect();
    levels.sort_unstable();
    levels.dedup();
    let runs = level_zero + levels.len();
    let compacted = files.len() == 1 && files[0].level == max_level;
    if (full && !files.is_empty() && !compacted) || (runs >= trigger.max(2)) {
        files.to_vec()
    } else {
        Vec::new()
    }
}

/// Plans the compaction of `table`'s latest snapshot (see the module documentation).
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
    let merges_keys = !table.schema().primary_keys().is_empty();
    let trigger = match table.schema().options().get(SORTED_RUN_TRIGGER_OPTION) {
        None => DEFAULT_SORTED_RUN_TRIGGER,
        Some(raw) => raw
            .trim()
            .parse::<usize>()
            .map_err(|_| CompactionError::Unsupported {
                table: name.clone(),
                reason: format!("{SORTED_RUN_TRIGGER_OPTION} = {raw:?} is not a run count"),
            })?,
    };
    let max_level =
        crate::coordinator::rules::shared::table_rules::num_levels(table.schema().options()) - 1;
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
        let chosen = if merges_keys {
            pick_runs(&files, max_level, trigger, full)
        } else {
            pick(&files, options.target_file_size(), min_files)
        };
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
            .with_raw_convertible(!merges_keys)
            .build()
            .map_err(paimon_error("describing a compaction task"))?;
        tasks.push(CompactionTask {
            split,
            output_level: if merges_keys { max_level } else { 0 },
            merges_keys,
        });
    }
    Ok(CompactionPlan { snapshot_id, tasks })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(name: &str, size: i64) -> DataFileMeta {
        let mut file = crate::test_support::data_file(name, 1);
        file.file_size = size;
        file
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

    #[test]
    fn a_primary_key_bucket_is_compacted_from_the_trigger_s_sorted_runs_on() {
        let at = |name: &str, level: i32| {
            let mut f = file(name, 10);
            f.level = level;
            f
        };
        // Three level-0 files and two files of level 3: four runs.
        let files = vec![at("a", 0), at("b", 0), at("c", 0), at("d", 3), at("e", 3)];
        assert!(
            pick_runs(&files, 5, 5, false).is_empty(),
            "four runs, trigger 5"
        );
        assert_eq!(
            pick_runs(&files, 5, 4, false).len(),
            5,
            "every file of the bucket"
        );
        // Full: anything but one file at the highest level.
        assert_eq!(pick_runs(&files[..1], 5, 5, true).len(), 1);
        assert!(pick_runs(&[at("z", 5)], 5, 5, true).is_empty());
        assert_eq!(pick_runs(&[at("y", 5), at("z", 5)], 5, 5, true).len(), 2);
        assert!(pick_runs(&[], 5, 5, true).is_empty());
    }
}
