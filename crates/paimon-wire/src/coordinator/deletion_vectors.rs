//! Rule family **deletion vectors** (rule `deletion-vectors`): a deletion vector hides rows
//! of one data file, and dropping one brings the rows it hid back. Checked at commit time
//! against the live index files of the table.
//!
//! | what | what it protects | tests (`tests/coordinator/hostile_round_3.rs`) |
//! |---|---|---|
//! | a compaction drops (in `compact_deleted_index_files`) only deletion vectors of files it compacts, or carries them unchanged into its new deletion-vector file | rows a deletion vector hid do not come back | `compaction_deletion_vectors_cannot_resurrect_rows` |
//! | a compaction adds (in `compact_new_index_files`) deletion vectors only for its results, or carries one unchanged | rows of files the compaction did not touch are not hidden | `compaction_deletion_vectors_cannot_hide_rows` |
//! | a deletion vector a compaction carries (same file, same length and cardinality) holds the very positions of the live one it replaces, read from both files (`check_contents`) | rows a deletion vector hid do not come back, and no live row is hidden in their place | `hostile_round_4::a_carried_deletion_vector_with_other_positions_is_refused` |
//! | a deletion vector a compaction adds to one of its results hides only positions below that result's row count (`check_contents`) | a vector cannot claim rows its file does not have | `hostile_round_4::a_deletion_vector_beyond_its_result_is_refused` |
//! | every deletion vector added (data or compaction list) names a data file that is live in its bucket once the commit is applied | the paimon crate's own check cannot fail after the APPEND snapshot is published, and no deletion vector points at nothing | `a_deletion_vector_naming_a_missing_file_is_refused_before_anything_is_published` |
//!
//! Deletion vectors in the data lists (`new_index_files`, `deleted_index_files`) are a
//! binding's opt-in (rule `change-kind`, [`super::Binding::with_deletes`]); the compaction
//! lists follow the rules above once compaction is allowed.

use std::collections::{HashMap, HashSet};

use paimon::spec::IndexFileMeta;
use paimon::table::{CommitMessage, DeletionFile, TableCommit};
use paimon::{DeletionVector, DeletionVectorFactory};

use super::error::{CoordinatorError, CoordinatorResult, Rule};
use super::table_state::{bucket_key, bucket_name, refuse, BucketKey, TableState};
use super::validate::DELETION_VECTORS_INDEX_TYPE;

/// A deletion vector as the index manifest records it: its length and how many rows it
/// hides (`None` where the writer did not record it).
type VectorShape = (i32, Option<i64>);

fn deletion_vectors(file: &IndexFileMeta) -> impl Iterator<Item = (&str, VectorShape)> {
    let ranges = if file.index_type == DELETION_VECTORS_INDEX_TYPE {
        file.deletion_vectors_ranges.as_ref()
    } else {
        None
    };
    ranges
        .into_iter()
        .flatten()
        .map(|(name, range)| (name.as_str(), (range.length, range.cardinality)))
}

/// Per bucket, what the commit does to its files: the data files it compacts and writes,
/// and the deletion vectors its compaction drops and adds.
#[derive(Default)]
struct BucketChanges<'m> {
    compacted: HashSet<&'m str>,
    results: HashSet<&'m str>,
    dropped: HashMap<String, VectorShape>,
    added: HashMap<&'m str, VectorShape>,
}

/// Checks every deletion vector the messages add or drop (see the module docs).
pub(crate) fn check_against_table(
    messages: &[CommitMessage],
    state: &TableState,
) -> CoordinatorResult<()> {
    let mut buckets: HashMap<BucketKey, BucketChanges> = HashMap::new();
    for message in messages {
        let key = bucket_key(state.partitioned, &message.partition, message.bucket);
        let changes = buckets.entry(key).or_default();
        changes
            .compacted
            .extend(message.compact_before.iter().map(|f| f.file_name.as_str()));
        changes
            .results
            .extend(message.compact_after.iter().map(|f| f.file_name.as_str()));
        for file in &message.compact_deleted_index_files {
            // The live entry's ranges: what the drop really removes.
            if let Some((_, live)) = state.index.get(&file.file_name) {
                for (name, shape) in deletion_vectors(live) {
                    changes.dropped.insert(name.to_string(), shape);
                }
            }
        }
        for file in &message.compact_new_index_files {
            changes.added.extend(deletion_vectors(file));
        }
    }
    for (index, message) in messages.iter().enumerate() {
        let key = bucket_key(state.partitioned, &message.partition, message.bucket);
        let changes = &buckets[&key];
        let where_ = || bucket_name(state.partitioned, message.bucket);
        for (i, file) in message.compact_deleted_index_files.iter().enumerate() {
            let Some((_, live)) = state.index.get(&file.file_name) else {
                continue; // Added by this commit: its vectors are checked as added ones.
            };
            for (name, shape) in deletion_vectors(live) {
                let carried = changes.added.get(name) == Some(&shape);
                if !changes.compacted.contains(name) && !carried {
                    return Err(refuse(
                        index,
                        format!("compact_deleted_index_files[{i}]"),
                        Rule::DeletionVectors,
                        format!(
                            "dropping deletion-vector file {:?} drops the deletion vector of \
                             {name:?} in {}, which this compaction neither compacts nor \
                             carries into its new deletion-vector file; the rows it hides \
                             would come back",
                            file.file_name,
                            where_()
                        ),
                    ));
                }
            }
        }
        for (i, file) in message.compact_new_index_files.iter().enumerate() {
            for (name, shape) in deletion_vectors(file) {
                let carried = changes.dropped.get(name) == Some(&shape);
                if !changes.results.contains(name) && !carried {
                    return Err(refuse(
                        index,
                        format!("compact_new_index_files[{i}].deletion_vectors_ranges[{name:?}]"),
                        Rule::DeletionVectors,
                        format!(
                            "the compaction adds a deletion vector to {name:?} in {}, which is \
                             not one of its results and had no such deletion vector; it would \
                             hide rows the compaction did not rewrite",
                            where_()
                        ),
                    ));
                }
            }
        }
    }
    check_targets_live(messages, state)
}

/// Every deletion vector added names a data file live in its bucket after the commit: live
/// now or added by the commit, and neither deleted nor compacted away by it.
fn check_targets_live(messages: &[CommitMessage], state: &TableState) -> CoordinatorResult<()> {
    let adds_vectors = |m: &CommitMessage| {
        m.new_index_files
            .iter()
            .chain(&m.compact_new_index_files)
            .any(|f| deletion_vectors(f).next().is_some())
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
                for (name, _) in deletion_vectors(file) {
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

/// Reads the deletion vectors a compaction adds (`compact_new_index_files`) and checks their
/// positions: a vector of one of its results hides only positions below the result's row
/// count; a vector of any other file is carried, and must hold exactly the positions of the
/// live vector the compaction drops for that file (the shape check above matched their length
/// and cardinality only). Runs after [`check_against_table`], which guarantees every carried
/// vector has a dropped live one. Reads one range of each deletion-vector file per vector.
pub(crate) async fn check_contents(
    coordinator: &super::Coordinator,
    messages: &[CommitMessage],
    state: &TableState,
) -> CoordinatorResult<()> {
    let adds_vectors = |m: &CommitMessage| {
        m.compact_new_index_files
            .iter()
            .any(|f| deletion_vectors(f).next().is_some())
    };
    if !messages.iter().any(adds_vectors) {
        return Ok(());
    }
    let table = coordinator.table();
    let paths = TableCommit::new(table.clone(), String::new());
    // Per bucket, the live vectors the compactions drop: data file name -> (index file,
    // its bucket directory).
    let mut dropped: HashMap<(BucketKey, &str), (&IndexFileMeta, String)> = HashMap::new();
    for message in messages {
        let key = bucket_key(state.partitioned, &message.partition, message.bucket);
        for file in &message.compact_deleted_index_files {
            let Some((live_key, live)) = state.index.get(&file.file_name) else {
                continue;
            };
            let bucket_path = bucket_path(&paths, &message.partition, live_key.1)?;
            for (name, _) in deletion_vectors(live) {
                dropped.insert((key.clone(), name), (live, bucket_path.clone()));
            }
        }
    }
    for (index, message) in messages.iter().enumerate() {
        if !adds_vectors(message) {
            continue;
        }
        let key = bucket_key(state.partitioned, &message.partition, message.bucket);
        let bucket_path = bucket_path(&paths, &message.partition, message.bucket)?;
        let results: HashMap<&str, i64> = message
            .compact_after
            .iter()
            .map(|f| (f.file_name.as_str(), f.row_count))
            .collect();
        for (i, file) in message.compact_new_index_files.iter().enumerate() {
            for (name, _) in deletion_vectors(file) {
                let field =
                    || format!("compact_new_index_files[{i}].deletion_vectors_ranges[{name:?}]");
                let vector = read_vector(table, &bucket_path, file, name).await?;
                if let Some(&row_count) = results.get(name) {
                    let last = vector.last_position();
                    if last.is_some_and(|last| last >= row_count.max(0) as u64) {
                        return Err(refuse(
                            index,
                            field(),
                            Rule::DeletionVectors,
                            format!(
                                "the deletion vector the compaction adds to its result {name:?} \
                                 hides position {} of a file of {row_count} rows: a vector \
                                 hides only rows of its own file",
                                last.unwrap_or_default()
                            ),
                        ));
                    }
                    continue;
                }
                let Some((live, live_path)) = dropped.get(&(key.clone(), name)) else {
                    continue; // refused by `check_against_table`, which runs first
                };
                let live_vector = read_vector(table, live_path, live, name).await?;
                if vector != live_vector {
                    return Err(refuse(
                        index,
                        field(),
                        Rule::DeletionVectors,
                        format!(
                            "the compaction carries the deletion vector of {name:?} in {} into \
                             {:?}, but with other positions than the live vector in {:?} (the \
                             same length and {} positions): rows it hid would come back and \
                             live rows would be hidden",
                            bucket_name(state.partitioned, message.bucket),
                            file.file_name,
                            live.file_name,
                            live_vector.cardinality()
                        ),
                    ));
                }
            }
        }
    }
    Ok(())
}

/// The directory of `bucket` in `partition`.
fn bucket_path(paths: &TableCommit, partition: &[u8], bucket: i32) -> CoordinatorResult<String> {
    let partition: &[u8] = if partition.is_empty() {
        &paimon::spec::EMPTY_SERIALIZED_ROW
    } else {
        partition
    };
    paths
        .bucket_path(partition, bucket)
        .map_err(|e| CoordinatorError::paimon("computing a bucket directory", e))
}

/// The deletion vector of data file `name` in deletion-vector file `index_file` of the bucket
/// at `bucket_path`. A vector that does not decode is refused (rule `deletion-vectors`).
async fn read_vector(
    table: &paimon::table::Table,
    bucket_path: &str,
    index_file: &IndexFileMeta,
    name: &str,
) -> CoordinatorResult<DeletionVector> {
    let path = super::verify::index_file_path(table, bucket_path, index_file);
    let Some(range) = (index_file.deletion_vectors_ranges.as_ref()).and_then(|r| r.get(name))
    else {
        return Err(CoordinatorError::paimon(
            format!("reading the deletion vector of {name:?} in {path}"),
            paimon::Error::DataInvalid {
                message: "the index file has no deletion vector for that file".into(),
                source: None,
            },
        ));
    };
    let deletion_file = DeletionFile::new(
        path.clone(),
        i64::from(range.offset),
        i64::from(range.length),
        range.cardinality,
    );
    DeletionVectorFactory::read(table.file_io(), &deletion_file)
        .await
        .map_err(|e| {
            CoordinatorError::paimon(
                format!(
                    "reading the deletion vector of {name:?} in {path} (offset {}, length {})",
                    range.offset, range.length
                ),
                e,
            )
        })
}
