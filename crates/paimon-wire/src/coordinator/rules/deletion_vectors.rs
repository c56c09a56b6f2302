//! Rule family **deletion vectors** (rule `deletion-vectors`): a deletion vector hides rows
//! of one data file, and dropping or shrinking it brings the rows it hid back. Checked at
//! commit time against the live index files of the table, by content.
//!
//! One invariant covers both increments of a commit. The commit is checked as the two steps
//! it publishes — the data increment (`new_index_files`, `deleted_index_files`, the opt-in of
//! [`crate::coordinator::Binding::with_deletes`]) applied to the live table, then the compaction
//! (`compact_new_index_files`, `compact_deleted_index_files`) applied to the result — and at
//! each step, for every data file live before and after it:
//!
//! | what | what it protects | tests (`tests/coordinator/`) |
//! |---|---|---|
//! | its deletion vector after the step holds every position of its vector before (read from both index files): a vector is dropped only with its file | rows a deletion vector hid do not come back, whichever list drops it | `hostile_round_3::compaction_deletion_vectors_cannot_resurrect_rows`, `hostile_round_4::a_data_increment_cannot_shrink_or_drop_a_live_deletion_vector` |
//! | in a compaction, a file that is not one of its results keeps exactly the vector it had (none, or the very positions of the live one it carries) | rows of files the compaction did not rewrite are not hidden, and no live row is hidden in place of a hidden one | `hostile_round_3::compaction_deletion_vectors_cannot_hide_rows`, `hostile_round_4::a_carried_deletion_vector_with_other_positions_is_refused` |
//! | a vector either step adds hides only positions below its file's row count | a vector cannot claim rows its file does not have (and hide them once the file is rewritten) | `hostile_round_4::a_deletion_vector_beyond_its_result_is_refused`, `hostile_round_4::a_data_increment_cannot_shrink_or_drop_a_live_deletion_vector` |
//! | a data file has at most one deletion vector after each step | which vector a reader applies is not a matter of chance | `hostile_round_4::a_data_increment_cannot_shrink_or_drop_a_live_deletion_vector` |
//! | every deletion vector added (data or compaction list) names a data file that is live in its bucket once the commit is applied | the paimon crate's own check cannot fail after the APPEND snapshot is published, and no deletion vector points at nothing | `a_deletion_vector_naming_a_missing_file_is_refused_before_anything_is_published` |
//!
//! Vectors of files that are not live after a step (deleted or compacted by it) are not
//! constrained: their rows are gone with the file. A vector whose index file stays live is
//! not read again.

use std::collections::{HashMap, HashSet};

use paimon::spec::IndexFileMeta;
use paimon::table::{CommitMessage, TableCommit};
use paimon::{DeletionVector, DeletionVectorFactory};

use super::shared::buckets::{bucket_key, bucket_name, BucketKey};
use super::shared::limits::DELETION_VECTORS_INDEX_TYPE;
use super::shared::paths::{bucket_path, deletion_file, index_file_path};
use super::shared::state::{refuse, TableContext, TableState};
use super::shared::vectors::GrownVector;
use crate::coordinator::error::{CoordinatorError, CoordinatorResult, Rule};

fn is_deletion_vectors(file: &IndexFileMeta) -> bool {
    file.index_type == DELETION_VECTORS_INDEX_TYPE
}

/// The data files whose deletion vectors `file` holds (none unless it is a deletion-vector
/// index file).
fn vector_targets(file: &IndexFileMeta) -> impl Iterator<Item = &str> {
    let ranges = if is_deletion_vectors(file) {
        file.deletion_vectors_ranges.as_ref()
    } else {
        None
    };
    ranges.into_iter().flatten().map(|(name, _)| name.as_str())
}

/// Where a message's list entry sits, for error messages: message index and field.
type Place = (usize, String);

/// One deletion vector of one data file: the index file that holds it, the directory of its
/// bucket, and where the commit names it (`None` for a vector live before the commit).
#[derive(Clone)]
struct Vector<'a> {
    file: &'a IndexFileMeta,
    bucket_path: String,
    added_at: Option<Place>,
}

/// A data file of one bucket.
type FileKey<'a> = (BucketKey, &'a str);

/// The deletion vectors and data files of the touched buckets at one point of the commit.
#[derive(Clone, Default)]
struct Point<'a> {
    vectors: HashMap<FileKey<'a>, Vector<'a>>,
    /// Row counts of the data files live at this point that the commit adds; files live in
    /// the latest snapshot are looked up there.
    added_files: HashMap<FileKey<'a>, i64>,
    /// Data files live in the latest snapshot that the commit has removed by this point.
    removed_files: HashSet<FileKey<'a>>,
}

impl<'a> Point<'a> {
    /// The row count of data file `key` if it is live at this point.
    fn live_rows(&self, state: &TableState, key: &FileKey<'a>) -> Option<i64> {
        if let Some(rows) = self.added_files.get(key) {
            return Some(*rows);
        }
        if self.removed_files.contains(key) {
            return None;
        }
        state
            .live_data(&key.0, key.1)
            .and_then(|entries| entries.first())
            .map(|entry| entry.row_count)
    }
}

/// Which of a message's lists one step of the commit applies.
#[derive(Clone, Copy, PartialEq)]
enum Step {
    /// The data increment: vectors may only grow.
    Data,
    /// The compaction: vectors of files it does not rewrite stay exactly as they are.
    Compaction,
}

impl Step {
    fn lists(self, m: &CommitMessage) -> StepLists<'_> {
        match self {
            Step::Data => StepLists {
                new_index: ("new_index_files", &m.new_index_files),
                deleted_index: ("deleted_index_files", &m.deleted_index_files),
                added: &m.new_files,
                removed: &m.deleted_files,
                results: &[],
            },
            Step::Compaction => StepLists {
                new_index: ("compact_new_index_files", &m.compact_new_index_files),
                deleted_index: (
                    "compact_deleted_index_files",
                    &m.compact_deleted_index_files,
                ),
                added: &m.compact_after,
                removed: &m.compact_before,
                results: &m.compact_after,
            },
        }
    }
}

/// The lists of one message that one step applies.
struct StepLists<'m> {
    new_index: (&'static str, &'m [IndexFileMeta]),
    deleted_index: (&'static str, &'m [IndexFileMeta]),
    added: &'m [paimon::spec::DataFileMeta],
    removed: &'m [paimon::spec::DataFileMeta],
    results: &'m [paimon::spec::DataFileMeta],
}

/// Checks every deletion vector the messages add or drop against the vectors live in the
/// table, by content (see the module docs). Reads each vector the commit changes, and the
/// live vector it replaces, once. Returns the positions a compaction adds to vectors of
/// files it does not rewrite, on tables that admit it, for rule `superseded-rows` to check.
pub(crate) async fn check_against_table(
    context: TableContext<'_>,
    messages: &[CommitMessage],
    state: &TableState,
) -> CoordinatorResult<Vec<GrownVector>> {
    let touches_vectors = |m: &CommitMessage| {
        [
            &m.new_index_files,
            &m.deleted_index_files,
            &m.compact_new_index_files,
            &m.compact_deleted_index_files,
        ]
        .into_iter()
        .flatten()
        .any(is_deletion_vectors)
    };
    if !messages.iter().any(touches_vectors) {
        return Ok(Vec::new());
    }
    let table = context.table;
    let paths = TableCommit::new(table.clone(), String::new());
    let mut live = Point::default();
    let touched: HashSet<BucketKey> = messages
        .iter()
        .map(|m| bucket_key(state.partitioned, &m.partition, m.bucket))
        .collect();
    for (key, file) in state.index.values() {
        if !touched.contains(key) {
            continue;
        }
        let bucket_path = bucket_path(&paths, &key.0, key.1)?;
        for name in vector_targets(file) {
            let vector = Vector {
                file,
                bucket_path: bucket_path.clone(),
                added_at: None,
            };
            live.vectors.insert((key.clone(), name), vector);
        }
    }
    let mut reader = VectorReader {
        table,
        read: HashMap::new(),
    };
    let after_data = apply_step(Step::Data, &paths, messages, state, &live)?;
    check_step(
        Step::Data,
        messages,
        state,
        &live,
        &after_data,
        &mut reader,
        false,
    )
    .await?;
    let after_compaction = apply_step(Step::Compaction, &paths, messages, state, &after_data)?;
    let grown = check_step(
        Step::Compaction,
        messages,
        state,
        &after_data,
        &after_compaction,
        &mut reader,
        admits_superseded_rows(table, context.rules.orders_by_sequence_number()),
    )
    .await?;
    check_targets_live(messages, state)?;
    Ok(grown)
}

/// Whether a compaction of `table` may hide rows of files it does not rewrite, for rule
/// `superseded-rows` to check by reading them: a primary-key table whose rows of one key are
/// ordered by sequence number and whose newest row wins or merges (not `first-row`, whose
/// oldest row wins).
fn admits_superseded_rows(table: &paimon::table::Table, orders_by_sequence_number: bool) -> bool {
    orders_by_sequence_number
        && !matches!(
            paimon::spec::CoreOptions::new(table.schema().options()).merge_engine(),
            Ok(paimon::spec::MergeEngine::FirstRow) | Err(_)
        )
}

/// The point after `step` applies the messages' lists to `before`. Refuses a data file with
/// two deletion vectors.
fn apply_step<'a>(
    step: Step,
    paths: &TableCommit,
    messages: &'a [CommitMessage],
    state: &TableState,
    before: &Point<'a>,
) -> CoordinatorResult<Point<'a>> {
    let mut after = before.clone();
    let dropped: HashSet<&str> = messages
        .iter()
        .flat_map(|m| step.lists(m).deleted_index.1)
        .filter(|f| is_deletion_vectors(f))
        .map(|f| f.file_name.as_str())
        .collect();
    after
        .vectors
        .retain(|_, vector| !dropped.contains(vector.file.file_name.as_str()));
    for (index, message) in messages.iter().enumerate() {
        let key = bucket_key(state.partitioned, &message.partition, message.bucket);
        let lists = step.lists(message);
        let upgraded: HashSet<&str> = lists.added.iter().map(|f| f.file_name.as_str()).collect();
        for file in lists.removed {
            if !upgraded.contains(file.file_name.as_str()) {
                let file_key = (key.clone(), file.file_name.as_str());
                after.added_files.remove(&file_key);
                after.removed_files.insert(file_key);
            }
        }
        for file in lists.added {
            after
                .added_files
                .insert((key.clone(), file.file_name.as_str()), file.row_count);
        }
        let (list, files) = lists.new_index;
        let bucket_path = bucket_path(paths, &message.partition, message.bucket)?;
        for (i, file) in files.iter().enumerate() {
            for name in vector_targets(file) {
                let field = format!("{list}[{i}].deletion_vectors_ranges[{name:?}]");
                let vector = Vector {
                    file,
                    bucket_path: bucket_path.clone(),
                    added_at: Some((index, field.clone())),
                };
                if let Some(other) = after.vectors.insert((key.clone(), name), vector) {
                    return Err(refuse(
                        index,
                        field,
                        Rule::DeletionVectors,
                        format!(
                            "data file {name:?} in {} would have two deletion vectors, in {:?} \
                             and in {:?}: a data file has one, and which one a reader applies \
                             would be a matter of chance",
                            bucket_name(state.partitioned, message.bucket),
                            other.file.file_name,
                            file.file_name
                        ),
                    ));
                }
            }
        }
    }
    Ok(after)
}

/// Checks the invariant of the module docs for one step, from `before` to `after`. With
/// `admit_grown`, a compaction may add positions to the vector of a file it does not rewrite;
/// they are returned for rule `superseded-rows`.
async fn check_step<'a>(
    step: Step,
    messages: &'a [CommitMessage],
    state: &TableState,
    before: &Point<'a>,
    after: &Point<'a>,
    reader: &mut VectorReader<'_>,
    admit_grown: bool,
) -> CoordinatorResult<Vec<GrownVector>> {
    let mut grown = Vec::new();
    // Where each index file the step drops is named, for errors.
    let mut dropped_at: HashMap<&str, Place> = HashMap::new();
    let mut results: HashSet<FileKey<'a>> = HashSet::new();
    for (index, message) in messages.iter().enumerate() {
        let key = bucket_key(state.partitioned, &message.partition, message.bucket);
        let lists = step.lists(message);
        let (list, files) = lists.deleted_index;
        for (i, file) in files.iter().enumerate() {
            dropped_at.insert(file.file_name.as_str(), (index, format!("{list}[{i}]")));
        }
        results.extend(
            lists
                .results
                .iter()
                .map(|f| (key.clone(), f.file_name.as_str())),
        );
    }
    let mut keys: Vec<&FileKey<'a>> = before.vectors.keys().chain(after.vectors.keys()).collect();
    keys.sort();
    keys.dedup();
    for file_key in keys {
        let (bucket, name) = file_key;
        let Some(row_count) = after.live_rows(state, file_key) else {
            // Removed by this step (its rows go with it), or not a file of the table at all
            // (`check_targets_live` refuses a vector naming it).
            continue;
        };
        let old = before.vectors.get(file_key);
        let new = after.vectors.get(file_key);
        let where_ = || bucket_name(state.partitioned, bucket.1);
        let (old, new) = match (old, new) {
            (Some(old), Some(new)) if old.file.file_name == new.file.file_name => continue,
            (None, None) => continue,
            (Some(old), None) => {
                let (index, field) = dropped_at
                    .get(old.file.file_name.as_str())
                    .cloned()
                    .unwrap_or_default();
                let how = match step {
                    Step::Data => "this commit neither deletes",
                    Step::Compaction => "this compaction neither compacts",
                };
                return Err(refuse(
                    index,
                    field,
                    Rule::DeletionVectors,
                    format!(
                        "dropping deletion-vector file {:?} drops the deletion vector of \
                         {name:?} in {}, which {how} nor carries into a new deletion-vector \
                         file; the rows it hides would come back",
                        old.file.file_name,
                        where_()
                    ),
                ));
            }
            (old, Some(new)) => (old, new),
        };
        let (index, field) = new.added_at.clone().unwrap_or_default();
        let exact = step == Step::Compaction && !results.contains(file_key);
        if exact && old.is_none() && !admit_grown {
            return Err(refuse(
                index,
                field,
                Rule::DeletionVectors,
                format!(
                    "the compaction adds a deletion vector to {name:?} in {}, which is not one \
                     of its results and had no such deletion vector; it would hide rows the \
                     compaction did not rewrite",
                    where_()
                ),
            ));
        }
        let new_vector = reader.read(new, name).await?;
        if let Some(last) = new_vector.last_position() {
            if last >= row_count.max(0) as u64 {
                return Err(refuse(
                    index,
                    field,
                    Rule::DeletionVectors,
                    format!(
                        "the deletion vector added to {name:?} in {} hides position {last} of a \
                         file of {row_count} rows: a vector hides only rows of its own file",
                        where_()
                    ),
                ));
            }
        }
        let grow = |added_positions: Vec<u64>| GrownVector {
            bucket: bucket.clone(),
            file_name: name.to_string(),
            added_positions,
            message_index: index,
            field: field.clone(),
        };
        let Some(old) = old else {
            if exact {
                grown.push(grow(new_vector.iter().collect()));
            }
            continue;
        };
        let old_vector = reader.read(old, name).await?;
        if exact && admit_grown {
            let added: Vec<u64> = new_vector
                .iter()
                .filter(|p| !old_vector.is_deleted(*p))
                .collect();
            if !added.is_empty() {
                grown.push(grow(added));
            }
        } else if exact && new_vector != old_vector {
            return Err(refuse(
                index,
                field,
                Rule::DeletionVectors,
                format!(
                    "the compaction carries the deletion vector of {name:?} in {} into {:?}, \
                     but with other positions than the live vector in {:?} ({} positions, now \
                     {}): rows it hid would come back or live rows would be hidden",
                    where_(),
                    new.file.file_name,
                    old.file.file_name,
                    old_vector.cardinality(),
                    new_vector.cardinality()
                ),
            ));
        }
        if let Some(position) = old_vector.iter().find(|p| !new_vector.is_deleted(*p)) {
            return Err(refuse(
                index,
                field,
                Rule::DeletionVectors,
                format!(
                    "the deletion vector of {name:?} in {} replaces the live vector in {:?} but \
                     no longer hides position {position}: the rows a deletion vector hid would \
                     come back (a vector only grows while its file lives)",
                    where_(),
                    old.file.file_name
                ),
            ));
        }
    }
    Ok(grown)
}

/// Reads deletion vectors, each (index file, data file) once per commit.
struct VectorReader<'t> {
    table: &'t paimon::table::Table,
    read: HashMap<(String, String), DeletionVector>,
}

impl VectorReader<'_> {
    async fn read(&mut self, vector: &Vector<'_>, name: &str) -> CoordinatorResult<DeletionVector> {
        let key = (vector.file.file_name.clone(), name.to_string());
        if let Some(read) = self.read.get(&key) {
            return Ok(read.clone());
        }
        let read = read_vector(self.table, &vector.bucket_path, vector.file, name).await?;
        self.read.insert(key, read.clone());
        Ok(read)
    }
}

/// Every deletion vector added names a data file live in its bucket after the commit: live
/// now or added by the commit, and neither deleted nor compacted away by it.
fn check_targets_live(messages: &[CommitMessage], state: &TableState) -> CoordinatorResult<()> {
    let adds_vectors = |m: &CommitMessage| {
        m.new_index_files
            .iter()
            .chain(&m.compact_new_index_files)
            .any(|f| vector_targets(f).next().is_some())
    };
    if !messages.iter().any(adds_vectors) {
        return Ok(());
    }
    let mut added: HashSet<(BucketKey, &str)> = HashSet::new();
    let mut removed: HashSet<(BucketKey, &str)> = HashSet::new();
    for message in messages {
        let key = bucket_key(state.partitioned, &message.partition, message.bucket);
        for file in message.new_files.iter().chain(&message.compact_after) {
            added.insert((key.clone(), file.file_name.as_str()));
        }
        let upgraded: HashSet<&str> = message
            .compact_after
            .iter()
            .map(|f| f.file_name.as_str())
            .collect();
        for file in message.deleted_files.iter().chain(&message.compact_before) {
            if !upgraded.contains(file.file_name.as_str()) {
                removed.insert((key.clone(), file.file_name.as_str()));
            }
        }
    }
    for (index, message) in messages.iter().enumerate() {
        let key = bucket_key(state.partitioned, &message.partition, message.bucket);
        for (list, files) in [
            ("new_index_files", &message.new_index_files),
            ("compact_new_index_files", &message.compact_new_index_files),
        ] {
            for (i, file) in files.iter().enumerate() {
                for name in vector_targets(file) {
                    let target = (key.clone(), name);
                    let live_now = state.live_data(&key, name).is_some();
                    if (live_now || added.contains(&target)) && !removed.contains(&target) {
                        continue;
                    }
                    return Err(refuse(
                        index,
                        format!("{list}[{i}].deletion_vectors_ranges[{name:?}]"),
                        Rule::DeletionVectors,
                        format!(
                            "deletion-vector file {:?} names data file {name:?}, which is not \
                             live in {} once this commit is applied; a deletion vector belongs \
                             to a live file of its own bucket",
                            file.file_name,
                            bucket_name(state.partitioned, message.bucket)
                        ),
                    ));
                }
            }
        }
    }
    Ok(())
}

/// The deletion vector of data file `name` in deletion-vector file `index_file` of the bucket
/// at `bucket_path`. A vector that does not decode is refused (rule `deletion-vectors`).
async fn read_vector(
    table: &paimon::table::Table,
    bucket_path: &str,
    index_file: &IndexFileMeta,
    name: &str,
) -> CoordinatorResult<DeletionVector> {
    let Some(deletion_file) = deletion_file(table, bucket_path, index_file, name) else {
        return Err(CoordinatorError::paimon(
            format!(
                "reading the deletion vector of {name:?} in {}",
                index_file_path(table, bucket_path, index_file)
            ),
            paimon::Error::DataInvalid {
                message: "the index file has no deletion vector for that file".into(),
                source: None,
            },
        ));
    };
    DeletionVectorFactory::read(table.file_io(), &deletion_file)
        .await
        .map_err(|e| {
            CoordinatorError::paimon(
                format!(
                    "reading the deletion vector of {name:?} in {} (offset {}, length {})",
                    deletion_file.path(),
                    deletion_file.offset(),
                    deletion_file.length()
                ),
                e,
            )
        })
}
