//! Native compaction (issue 41): plan which files of each bucket to compact, rewrite one
//! bucket's files in a worker, and commit the results through the coordinator like any other
//! payload.
//!
//! 1. [`plan_compaction`] reads the table's latest snapshot and picks, per partition and
//!    bucket, what to rewrite with Paimon's own options:
//!    - append tables: the small files (below `target-file-size`) and the files with a
//!      deletion vector, once there are `compaction.min.file-num` of them (default 5, as
//!      Java's append compaction); with a full compaction, two, or one with a vector;
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
//!    by the table's merge engine and `sequence.field` (`deduplicate` and `first-row` keep
//!    each key's winner with its sequence number and row kind; `partial-update` and
//!    `aggregation` write the merged row with the latest sequence number that added to it; a
//!    key whose result deletes it is dropped at the highest level). Both write the
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
//! Deletion vectors: every file with a live deletion vector is among a task's inputs (on an
//! append table a file with one counts as small; a primary-key task takes the whole bucket),
//! so the task reads the inputs with their vectors applied and deletes the bucket's
//! deletion-vector index files with them (`compact_deleted_index_files`); the results need
//! none. The planner reads every live file, level 0 included, which readers of first-row and
//! deletion-vector tables skip.
//!
//! Refused at plan time, naming why: primary-key tables with a changelog producer (their
//! compactions must write changelog files), postpone tables, data-evolution and format
//! tables, and tables with BLOB columns.

use std::collections::BTreeMap;
use std::fmt;

use paimon::spec::{CoreOptions, DataFileMeta, FileKind, IndexFileMeta, IndexManifest};
use paimon::table::{CommitMessage, DataSplit, DeletionFile, Table};

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
    /// The bucket's deletion-vector index files: every vector they hold is of an input
    /// file, so the compaction deletes them.
    deleted_index_files: Vec<IndexFileMeta>,
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
            "deleted_index_files": self.deleted_index_files,
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
        let split: DataSplit =
            serde_json::from_value(value["split"].take()).map_err(|e| bad(e.to_string()))?;
        let deleted_index_files = serde_json::from_value(value["deleted_index_files"].take())
            .map_err(|e| bad(format!("deleted_index_files: {e}")))?;
        if let Some(vectors) = split.data_deletion_files() {
            if vectors.len() != split.data_files().len() {
                return Err(bad(format!(
                    "split: {} deletion file entries for {} data files",
                    vectors.len(),
                    split.data_files().len()
                )));
            }
        }
        Ok(Self {
            split,
            output_level,
            merges_keys,
            deleted_index_files,
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
        message.compact_deleted_index_files = self.deleted_index_files.clone();
        Ok(message)
    }
}

/// Why `table` cannot be compacted by this library, or `None` if it can.
fn unsupported(table: &Table) -> Option<String> {
    if !table.schema().primary_keys().is_empty() {
        return paimon::table::key_value_rewrite_unsupported(table);
    }
    paimon::table::append_rewrite_unsupported(table)
}

/// One live file of a bucket and its deletion vector.
#[derive(Clone)]
struct LiveFile {
    file: DataFileMeta,
    vector: Option<DeletionFile>,
}

/// The files of an append bucket to compact, or none: the files below `target_file_size` and
/// every file with a deletion vector (its deleted rows are dropped), in the order the table
/// lists them, when there are at least `min_files` of them (two at least), or, with `full`,
/// when one of them has a deletion vector.
fn pick(files: &[LiveFile], target_file_size: i64, min_files: usize, full: bool) -> Vec<LiveFile> {
    let chosen: Vec<LiveFile> = files
        .iter()
        .filter(|f| f.file.file_size < target_file_size || f.vector.is_some())
        .cloned()
        .collect();
    let with_vector = chosen.iter().any(|f| f.vector.is_some());
    if chosen.len() >= min_files.max(2) || (full && with_vector) {
        chosen
    } else {
        Vec::new()
    }
}

/// Every file of a primary-key bucket, when it has `trigger` sorted runs or more (a level-0
/// file is a run, and so is each other level), or, with `full`, unless it is one file at
/// `max_level` already, with no deletion vector.
fn pick_runs(files: &[LiveFile], max_level: i32, trigger: usize, full: bool) -> Vec<LiveFile> {
    let level_zero = files.iter().filter(|f| f.file.level == 0).count();
    let mut levels: Vec<i32> = files
        .iter()
        .filter(|f| f.file.level > 0)
        .map(|f| f.file.level)
        .collect();
    levels.sort_unstable();
    levels.dedup();
    let runs = level_zero + levels.len();
    let compacted =
        files.len() == 1 && files[0].file.level == max_level && files[0].vector.is_none();
    if (full && !files.is_empty() && !compacted) || (runs >= trigger.max(2)) {
        files.to_vec()
    } else {
        Vec::new()
    }
}

/// The live deletion-vector index files of snapshot `snapshot_id`, per partition and bucket.
async fn deletion_vector_indexes(
    table: &Table,
    snapshot_id: i64,
) -> paimon::Result<BTreeMap<(Vec<u8>, i32), Vec<IndexFileMeta>>> {
    let manager = table.snapshot_manager();
    let snapshot = manager.get_snapshot(snapshot_id).await?;
    let mut indexes: BTreeMap<(Vec<u8>, i32), Vec<IndexFileMeta>> = BTreeMap::new();
    if let Some(name) = snapshot.index_manifest() {
        let path = manager.manifest_path(name);
        for entry in IndexManifest::read(table.file_io(), &path).await? {
            if entry.kind == FileKind::Add
                && entry.index_file.index_type
                    == crate::coordinator::rules::shared::limits::DELETION_VECTORS_INDEX_TYPE
            {
                indexes
                    .entry((entry.partition, entry.bucket))
                    .or_default()
                    .push(entry.index_file);
            }
        }
    }
    Ok(indexes)
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
    // Every live file, level 0 included (a reader of a first-row or deletion-vector table
    // skips level 0; a compaction must not).
    let plan = table
        .new_read_builder()
        .new_scan()
        .with_scan_all_files()
        .plan()
        .await
        .map_err(paimon_error("planning the scan"))?;
    // A scan may cut one bucket into several splits: gather every file of a bucket.
    let mut buckets: BTreeMap<(Vec<u8>, i32), (DataSplit, Vec<LiveFile>)> = BTreeMap::new();
    let mut snapshot_id = None;
    for split in plan.splits() {
        snapshot_id = Some(split.snapshot_id());
        let key = (split.partition().to_serialized_bytes(), split.bucket());
        let entry = buckets
            .entry(key)
            .or_insert_with(|| (split.clone(), Vec::new()));
        let vectors = split.data_deletion_files();
        for (index, file) in split.data_files().iter().enumerate() {
            entry.1.push(LiveFile {
                file: file.clone(),
                vector: vectors.and_then(|v| v.get(index).cloned().flatten()),
            });
        }
    }
    let mut vector_indexes = match snapshot_id {
        Some(id) if options.deletion_vectors_enabled() => deletion_vector_indexes(table, id)
            .await
            .map_err(paimon_error("reading the deletion-vector indexes"))?,
        _ => BTreeMap::new(),
    };
    let mut tasks = Vec::new();
    for (key, (template, files)) in buckets {
        let chosen = if merges_keys {
            pick_runs(&files, max_level, trigger, full)
        } else {
            pick(&files, options.target_file_size(), min_files, full)
        };
        if chosen.is_empty() {
            continue;
        }
        // Every file with a deletion vector is among the chosen ones, so the bucket's
        // deletion-vector index goes with them.
        let deleted_index_files = vector_indexes.remove(&key).unwrap_or_default();
        let split = DataSplit::builder()
            .with_snapshot(template.snapshot_id())
            .with_partition(template.partition().clone())
            .with_bucket(template.bucket())
            .with_bucket_path(template.bucket_path().to_string())
            .with_total_buckets(template.total_buckets())
            .with_data_deletion_files(chosen.iter().map(|f| f.vector.clone()).collect())
            .with_data_files(chosen.into_iter().map(|f| f.file).collect())
            .with_raw_convertible(!merges_keys)
            .build()
            .map_err(paimon_error("describing a compaction task"))?;
        tasks.push(CompactionTask {
            split,
            output_level: if merges_keys { max_level } else { 0 },
            merges_keys,
            deleted_index_files,
        });
    }
    Ok(CompactionPlan { snapshot_id, tasks })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(name: &str, size: i64) -> LiveFile {
        let mut file = crate::test_support::data_file(name, 1);
        file.file_size = size;
        LiveFile { file, vector: None }
    }

    fn with_vector(mut file: LiveFile) -> LiveFile {
        file.vector = Some(DeletionFile::new(
            format!("index-{}", file.file.file_name),
            0,
            8,
            Some(1),
        ));
        file
    }

    #[test]
    fn a_bucket_is_compacted_from_min_file_num_small_files_on() {
        let big = file("big", 200);
        let smalls: Vec<LiveFile> = (0..5).map(|i| file(&format!("s{i}"), 10)).collect();
        let mut files = vec![big];
        files.extend(smalls.iter().take(4).cloned());
        assert!(pick(&files, 100, 5, false).is_empty(), "four small files");
        files.push(smalls[4].clone());
        let chosen: Vec<String> = pick(&files, 100, 5, false)
            .into_iter()
            .map(|f| f.file.file_name)
            .collect();
        assert_eq!(chosen, ["s0", "s1", "s2", "s3", "s4"], "the big file stays");
        // A full compaction takes two; one file alone is never rewritten.
        assert_eq!(pick(&files[..3], 100, 2, true).len(), 2);
        assert!(pick(&files[..2], 100, 2, true).is_empty());
        assert!(pick(&files[..2], 100, 0, false).is_empty());
    }

    #[test]
    fn a_file_with_a_deletion_vector_is_always_among_the_chosen() {
        let big_with_vector = with_vector(file("big", 200));
        let files = vec![big_with_vector.clone(), file("s0", 10), file("s1", 10)];
        let chosen: Vec<String> = pick(&files, 100, 3, false)
            .into_iter()
            .map(|f| f.file.file_name)
            .collect();
        assert_eq!(chosen, ["big", "s0", "s1"], "its deleted rows are dropped");
        assert!(pick(&files, 100, 4, false).is_empty(), "three of four");
        // A full compaction rewrites one file for its vector; a file without one, never.
        assert!(pick(std::slice::from_ref(&big_with_vector), 100, 2, false).is_empty());
        assert_eq!(
            pick(std::slice::from_ref(&big_with_vector), 100, 2, true).len(),
            1
        );
        assert!(pick(&[file("s", 10)], 100, 2, true).is_empty());
        // A primary-key bucket of one file at the highest level is rewritten for its vector.
        let mut top = with_vector(file("top", 10));
        top.file.level = 5;
        assert_eq!(pick_runs(std::slice::from_ref(&top), 5, 5, true).len(), 1);
        top.vector = None;
        assert!(pick_runs(&[top], 5, 5, true).is_empty());
    }

    #[test]
    fn a_primary_key_bucket_is_compacted_from_the_trigger_s_sorted_runs_on() {
        let at = |name: &str, level: i32| {
            let mut f = file(name, 10);
            f.file.level = level;
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
