//! Rule family **hash index**: on a dynamic-bucket primary-key table (`bucket = -1`), the
//! HASH index files say which bucket each key is in, and every later writer's assigner trusts
//! them. Many assigners write such a table at once ([`crate::AssignerRouter`]), each creating
//! its own buckets, so only the coordinator sees every payload's indexes together.
//!
//! | rule | what it protects | tests (`tests/coordinator/hash_index.rs`) |
//! |---|---|---|
//! | `hash-index-keys` | one bucket per key (HASH indexes in `new_index_files` and `compact_new_index_files` alike; a compaction may not delete one without a replacement): after the commit no key hash is in two buckets' HASH indexes of one partition (new against new, and new against the live indexes of buckets the commit does not replace); a bucket's new index keeps every key of the index it replaces (append commits); an index file holds exactly `row_count` keys | `two_assigners_giving_one_key_two_buckets_are_refused`, `a_new_bucket_holding_a_key_another_bucket_holds_is_refused`, `an_index_that_drops_keys_of_the_one_it_replaces_is_refused`, `an_index_whose_size_is_not_its_row_count_is_refused` |
//! | `hash-index-coverage` | a bucket that gets new data files has a HASH index after the commit (live or new; in an overwrite commit, new), so the next writers' assigners see its keys | `new_data_in_a_bucket_without_an_index_is_refused` |
//!
//! What the rules cannot see: keys themselves. A HASH index that lists a key hash the bucket's
//! data files do not hold only wastes a slot; data files holding a key the index does not list
//! are caught only when the key hash is listed elsewhere. Reading every new data file's keys
//! would make the commit cost the size of the data.
//!
//! Cost: the HASH index files of the partitions whose indexes the commit changes are read (4
//! bytes per key); other partitions are not touched. A file is read only after its real size
//! matches the declared one, and one larger than [`MAX_HASH_INDEX_BYTES`] is refused.

use std::collections::{HashMap, HashSet};

use paimon::spec::IndexFileMeta;
use paimon::table::{CommitMessage, TableCommit};

use super::error::{CoordinatorError, CoordinatorResult, Rule};
use super::table_state::{bucket_key, refuse, BucketKey, TableState};
use super::validate::{BucketMode, HASH_INDEX_TYPE};
use super::{CommitMode, Coordinator};

/// The largest HASH index file the coordinator reads: 128 Mi keys, 64 times Paimon's default
/// `dynamic-bucket.target-row-num` (2,000,000) per bucket.
pub const MAX_HASH_INDEX_BYTES: u64 = 512 * 1024 * 1024;

/// A HASH index file named by the commit or live in the table, and where it is.
struct IndexAt<'a> {
    partition: &'a [u8],
    bucket: i32,
    file: &'a IndexFileMeta,
    /// The message that adds it, `None` for a live file.
    message: Option<usize>,
    /// Where it is named: `new_index_files[name]`, `compact_new_index_files[name]`, or
    /// `live index name` for a live file.
    field: String,
}

/// Checks the rules of this family for `messages` about to be committed.
pub(crate) async fn check_against_table(
    coordinator: &Coordinator,
    messages: &[CommitMessage],
    state: &TableState,
) -> CoordinatorResult<()> {
    if coordinator.rules.bucket_mode() != BucketMode::Dynamic {
        return Ok(());
    }
    let overwrite = coordinator.binding.mode == CommitMode::Overwrite;
    let mut new_indexes: HashMap<BucketKey, IndexAt> = HashMap::new();
    for (index, message) in messages.iter().enumerate() {
        // A HASH index in either new list (the data increment's, where writers put it, or the
        // compaction's) replaces the bucket's index: both go through the same checks.
        let added = (message
            .new_index_files
            .iter()
            .map(|f| ("new_index_files", f)))
        .chain((message.compact_new_index_files.iter()).map(|f| ("compact_new_index_files", f)));
        let replaces = added.clone().any(|(_, f)| f.index_type == HASH_INDEX_TYPE);
        if let Some(dropped) = message
            .compact_deleted_index_files
            .iter()
            .find(|f| f.index_type == HASH_INDEX_TYPE && !replaces)
        {
            return Err(refuse(
                index,
                format!("compact_deleted_index_files[{}]", dropped.file_name),
                Rule::HashIndexKeys,
                format!(
                    "the compaction deletes HASH index {} of bucket {} without a new one: the \
                     bucket's keys would be assigned other buckets",
                    dropped.file_name, message.bucket
                ),
            ));
        }
        for (list, file) in added {
            if file.index_type != HASH_INDEX_TYPE {
                continue;
            }
            let key = bucket_key(state.partitioned, &message.partition, message.bucket);
            let field = format!("{list}[{}]", file.file_name);
            let at = IndexAt {
                partition: &message.partition,
                bucket: message.bucket,
                file,
                message: Some(index),
                field: field.clone(),
            };
            if let Some(first) = new_indexes.insert(key, at) {
                return Err(refuse(
                    index,
                    field,
                    Rule::HashIndexKeys,
                    format!(
                        "bucket {} gets two new HASH indexes ({} from message {} and {}): one \
                         would hide the other's keys",
                        message.bucket,
                        first.file.file_name,
                        first.message.unwrap_or_default(),
                        file.file_name
                    ),
                ));
            }
        }
    }
    let live_hash = |key: &BucketKey| {
        !overwrite
            && state
                .index
                .values()
                .any(|(k, f)| k == key && f.index_type == HASH_INDEX_TYPE)
    };
    check_coverage(messages, state, &new_indexes, live_hash)?;
    if new_indexes.is_empty() {
        return Ok(());
    }
    check_keys(coordinator, state, new_indexes, overwrite).await
}

/// `hash-index-coverage`: every bucket with new data files has an index after the commit.
fn check_coverage(
    messages: &[CommitMessage],
    state: &TableState,
    new_indexes: &HashMap<BucketKey, IndexAt>,
    live_hash: impl Fn(&BucketKey) -> bool,
) -> CoordinatorResult<()> {
    for (index, message) in messages.iter().enumerate() {
        if message.new_files.is_empty() {
            continue;
        }
        let key = bucket_key(state.partitioned, &message.partition, message.bucket);
        if new_indexes.contains_key(&key) || live_hash(&key) {
            continue;
        }
        return Err(refuse(
            index,
            "new_files".into(),
            Rule::HashIndexCoverage,
            format!(
                "bucket {} of this dynamic-bucket table gets {} new data files but has no HASH \
                 index after the commit{}: the next writers would not know its keys and would \
                 put them in other buckets",
                message.bucket,
                message.new_files.len(),
                if live_hash(&key) {
                    ""
                } else {
                    " (none live, none in the commit)"
                }
            ),
        ));
    }
    Ok(())
}

/// `hash-index-keys`: one bucket per key hash in every partition whose indexes change.
async fn check_keys(
    coordinator: &Coordinator,
    state: &TableState,
    new_indexes: HashMap<BucketKey, IndexAt<'_>>,
    overwrite: bool,
) -> CoordinatorResult<()> {
    let partitions: HashSet<Vec<u8>> = new_indexes.keys().map(|(p, _)| p.clone()).collect();
    // The live HASH indexes of those partitions (an overwrite commit replaces them all).
    let mut live: HashMap<BucketKey, IndexAt> = HashMap::new();
    if !overwrite {
        for (key, file) in state.index.values() {
            if file.index_type == HASH_INDEX_TYPE && partitions.contains(&key.0) {
                live.insert(
                    key.clone(),
                    IndexAt {
                        partition: &key.0,
                        bucket: key.1,
                        file,
                        message: None,
                        field: format!("live index {}", file.file_name),
                    },
                );
            }
        }
    }
    let mut ordered: Vec<_> = new_indexes.into_iter().collect();
    ordered.sort_by_key(|(_, at)| at.message);
    for partition in &partitions {
        // key hash -> (bucket, the message whose index lists it, or None when live)
        let mut owner: HashMap<i32, (i32, Option<usize>)> = HashMap::new();
        for (key, at) in ordered.iter().filter(|(k, _)| &k.0 == partition) {
            let hashes = read_hashes(coordinator, at).await?;
            let message = at.message.unwrap_or_default();
            if let Some(replaced) = live.get(key) {
                let kept: HashSet<i32> = hashes.iter().copied().collect();
                let old = read_hashes(coordinator, replaced).await?;
                if let Some(dropped) = old.iter().find(|h| !kept.contains(h)) {
                    return Err(refuse(
                        message,
                        at.field.clone(),
                        Rule::HashIndexKeys,
                        format!(
                            "the new HASH index of bucket {} drops key hash {dropped} that the \
                             live index {} lists: the key's next version would be assigned \
                             another bucket",
                            at.bucket, replaced.file.file_name
                        ),
                    ));
                }
            }
            claim(&mut owner, &hashes, at)?;
        }
        for (key, at) in live.iter().filter(|(k, _)| &k.0 == partition) {
            if ordered.iter().any(|(k, _)| k == key) {
                continue; // replaced by a new index, checked above
            }
            let hashes = read_hashes(coordinator, at).await?;
            claim(&mut owner, &hashes, at)?;
        }
    }
    Ok(())
}

/// Records that the bucket of `at` holds `hashes`; refuses a hash another bucket already holds.
fn claim(
    owner: &mut HashMap<i32, (i32, Option<usize>)>,
    hashes: &[i32],
    at: &IndexAt<'_>,
) -> CoordinatorResult<()> {
    let (bucket, message, file_name) = (at.bucket, at.message, &at.file.file_name);
    for &hash in hashes {
        match owner.get(&hash) {
            Some(&(other, _)) if other == bucket => {}
            Some(&(other, other_message)) => {
                // Blame a message of the commit: this one, or the one the live index clashes with.
                let index = message.or(other_message).unwrap_or_default();
                let this = if message.is_some() {
                    "its new index"
                } else {
                    "the live index"
                };
                let where_other = match other_message {
                    Some(m) => format!("the new index of message {m}"),
                    None => "the live index".to_string(),
                };
                return Err(refuse(
                    index,
                    at.field.clone(),
                    Rule::HashIndexKeys,
                    format!(
                        "key hash {hash} is in bucket {bucket} ({this}, {file_name}) and in \
                         bucket {other} ({where_other}) of one partition: one key in two \
                         buckets reads back twice. Route each row to the assigner of its key \
                         (paimon_wire::AssignerRouter) and give every writer its own assigner id"
                    ),
                ));
            }
            None => {
                owner.insert(hash, (bucket, message));
            }
        }
    }
    Ok(())
}

/// The key hashes of one HASH index file, after checking its size against its metadata.
async fn read_hashes(coordinator: &Coordinator, at: &IndexAt<'_>) -> CoordinatorResult<Vec<i32>> {
    let table = coordinator.table();
    let message = at.message.unwrap_or_default();
    let field = || at.field.clone();
    let declared = at.file.row_count.checked_mul(4);
    if declared != Some(at.file.file_size) {
        return Err(refuse(
            message,
            field(),
            Rule::HashIndexKeys,
            format!(
                "a HASH index holds 4 bytes per key, but file_size {} is not 4 x row_count {}",
                at.file.file_size, at.file.row_count
            ),
        ));
    }
    // A live file's partition is the normalized key: empty for an unpartitioned table.
    let partition: &[u8] = if at.partition.is_empty() {
        &paimon::spec::EMPTY_SERIALIZED_ROW
    } else {
        at.partition
    };
    let bucket_path = TableCommit::new(table.clone(), String::new())
        .bucket_path(partition, at.bucket)
        .map_err(|e| CoordinatorError::paimon("locating a HASH index", e))?;
    let path = super::verify::index_file_path(table, &bucket_path, at.file);
    let during = || format!("reading HASH index {path}");
    let input = table
        .file_io()
        .new_input(&path)
        .map_err(|e| CoordinatorError::paimon(during(), e))?;
    let size = input
        .metadata()
        .await
        .map_err(|e| CoordinatorError::paimon(during(), e))?
        .size;
    if size != at.file.file_size as u64 || size > MAX_HASH_INDEX_BYTES {
        return Err(refuse(
            message,
            field(),
            Rule::HashIndexKeys,
            format!(
                "HASH index {path} is {size} bytes in storage, but its metadata says {} (and \
                 the coordinator reads at most {MAX_HASH_INDEX_BYTES})",
                at.file.file_size
            ),
        ));
    }
    let bytes = input
        .read()
        .await
        .map_err(|e| CoordinatorError::paimon(during(), e))?;
    Ok(bytes
        .chunks_exact(4)
        .map(|c| i32::from_be_bytes([c[0], c[1], c[2], c[3]]))
        .collect())
}
