//! Rule family **hash index**: on a dynamic-bucket primary-key table (`bucket = -1`), the
//! HASH index files say which bucket each key is in, and every later writer's assigner trusts
//! them. Many assigners write such a table at once ([`crate::AssignerRouter`]), each creating
//! its own buckets, so only the coordinator sees every payload's indexes together.
//!
//! | rule | what it protects | tests (`tests/coordinator/hash_index.rs`) |
//! |---|---|---|
//! | `hash-index-keys` | one bucket per key (HASH indexes in `new_index_files` and `compact_new_index_files` alike): after the commit no key hash is in two buckets' HASH indexes of one partition (new against new, and new against the live indexes of buckets the commit does not replace); a bucket's new index keeps every key of the index it replaces (append commits); an index file holds exactly `row_count` keys | `two_assigners_giving_one_key_two_buckets_are_refused`, `a_new_bucket_holding_a_key_another_bucket_holds_is_refused`, `an_index_that_drops_keys_of_the_one_it_replaces_is_refused`, `an_index_whose_size_is_not_its_row_count_is_refused` |
//! | `hash-index-replaced` | a message that deletes a bucket's HASH index (in `deleted_index_files` or `compact_deleted_index_files`, whatever the binding's opt-ins) adds the bucket's new one (in `new_index_files` or `compact_new_index_files`): a bucket left without an index makes the next writers put its keys in other buckets, and a dynamic-bucket writer never deletes an index without writing its successor | `hostile_round_4::a_hash_index_deleted_without_a_replacement_is_refused_in_every_list` |
//! | `hash-index-coverage` | a bucket that gets new data files has a HASH index after the commit (live or new; in an overwrite commit, new), so the next writers' assigners see its keys; and a bucket that gets data files but keeps its live index (no new one in the commit) gets only keys that index lists: its new files' primary keys, and an unverified compaction's results', are read and hashed | `new_data_in_a_bucket_without_an_index_is_refused`, `a_new_key_in_a_bucket_that_keeps_its_index_is_refused`, `a_compaction_bringing_a_new_key_into_a_bucket_that_keeps_its_index_is_refused` |
//!
//! What the rules cannot see: the keys of a bucket that gets a new index. Its writer maintained
//! that index as it wrote (a dynamic-bucket writer writes one exactly when it added keys), so
//! its data files are not read: reading every new data file would make the commit cost the
//! size of the data. A HASH index that lists a key hash the bucket's data files do not hold
//! only wastes a slot. The files that are read are those of writers that only updated keys
//! the table has (they write no new index), and the results of compactions a binding does not
//! verify (a verifying binding reads them anyway): the cost is one read of those files' rows.
//!
//! Cost: the HASH index files of the partitions whose indexes the commit changes are read (4
//! bytes per key, in chunks of [`HASH_INDEX_READ_CHUNK`]); other partitions are not touched.
//! The keys are held once each, 12 bytes a key, under a budget per commit
//! ([`DEFAULT_HASH_INDEX_BUDGET`], set with
//! [`Coordinator::with_hash_index_budget`](crate::coordinator::Coordinator::with_hash_index_budget)): the
//! files' declared sizes are charged before anything is read and a commit over the budget is
//! refused (rule `bounds`, naming the budget). A file is read only after its real size
//! matches the declared one, and one larger than [`MAX_HASH_INDEX_BYTES`] is refused.

use std::collections::{HashMap, HashSet};

use paimon::io::FileRead;
use paimon::spec::{DataFileMeta, IndexFileMeta};
use paimon::table::{CommitMessage, TableCommit};

use super::shared::buckets::{bucket_key, BucketKey};
use super::shared::check::Check;
use super::shared::fields::{
    IndexFileFields, MessageFields, COMPACT_DELETED_INDEX_FILES, COMPACT_NEW_INDEX_FILES,
    DELETED_INDEX_FILES, INDEX_LISTS, NEW_INDEX_FILES,
};
use super::shared::limits::{BucketMode, HASH_INDEX_TYPE};
use super::shared::paths::index_file_path;
use super::shared::state::{refuse, TableContext, TableState};
use crate::coordinator::binding::CommitMode;
use crate::coordinator::error::{CoordinatorError, CoordinatorResult, Rule, ValidationError};

/// The largest HASH index file the coordinator reads: 128 Mi keys, 64 times Paimon's default
/// `dynamic-bucket.target-row-num` (2,000,000) per bucket.
pub const MAX_HASH_INDEX_BYTES: u64 = 512 * 1024 * 1024;

/// The default memory a coordinator gives one commit's HASH index checks: 1 GiB, the keys
/// of about 89 million rows (12 bytes a key) in the partitions whose indexes the commit
/// changes. An honest commit of 10 buckets of Paimon's default 2,000,000 keys a bucket
/// takes 240 MiB.
pub const DEFAULT_HASH_INDEX_BUDGET: u64 = 1 << 30;

/// A HASH index file named by the commit or live in the table, and where it is.
#[derive(Clone)]
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

impl IndexAt<'_> {
    /// The bucket's partition as a serialized row (a live file's partition is the normalized
    /// key: empty for an unpartitioned table) and the bucket's directory.
    fn bucket(&self, table: &paimon::table::Table) -> paimon::Result<(&[u8], String)> {
        let partition: &[u8] = if self.partition.is_empty() {
            &paimon::spec::EMPTY_SERIALIZED_ROW
        } else {
            self.partition
        };
        let path =
            TableCommit::new(table.clone(), String::new()).bucket_path(partition, self.bucket)?;
        Ok((partition, path))
    }
}

/// Rule `hash-index-replaced`, checked on each message as its payload is decoded: a HASH
/// index the message deletes, in either deleted list and whatever the binding allows, is
/// replaced by a HASH index the message adds, in either new list.
pub(crate) fn check_message<M: MessageFields>(
    check: &Check<'_>,
    message: &M,
) -> Result<(), ValidationError> {
    let is_hash = |file: &M::IndexFile<'_>| file.index_type() == HASH_INDEX_TYPE;
    let replaces = [NEW_INDEX_FILES, COMPACT_NEW_INDEX_FILES]
        .into_iter()
        .any(|list| message.index_files(list).any(|f| is_hash(&f)));
    if replaces {
        return Ok(());
    }
    for list in [DELETED_INDEX_FILES, COMPACT_DELETED_INDEX_FILES] {
        if let Some((i, file)) = message
            .index_files(list)
            .enumerate()
            .find(|(_, f)| is_hash(f))
        {
            return Err(check.fail(
                format!("{}[{i}]", INDEX_LISTS[list]),
                Rule::HashIndexReplaced,
                format!(
                    "the message deletes HASH index {:?} of bucket {} without adding the \
                     bucket's new HASH index: the next writers would not know the bucket's \
                     keys and would put them in other buckets",
                    file.file_name(),
                    message.bucket()
                ),
            ));
        }
    }
    Ok(())
}

/// Checks the rules of this family for `messages` about to be committed.
pub(crate) async fn check_against_table(
    context: TableContext<'_>,
    messages: &[CommitMessage],
    state: &TableState,
) -> CoordinatorResult<()> {
    if context.rules.bucket_mode() != BucketMode::Dynamic {
        return Ok(());
    }
    let overwrite = context.binding.mode == CommitMode::Overwrite;
    let mut new_indexes: HashMap<BucketKey, IndexAt> = HashMap::new();
    for (index, message) in messages.iter().enumerate() {
        // A HASH index in either new list (the data increment's, where writers put it, or the
        // compaction's) replaces the bucket's index: both go through the same checks.
        let added = (message
            .new_index_files
            .iter()
            .map(|f| ("new_index_files", f)))
        .chain((message.compact_new_index_files.iter()).map(|f| ("compact_new_index_files", f)));
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
    if !overwrite {
        check_known_keys(context, messages, state, &new_indexes).await?;
    }
    if new_indexes.is_empty() {
        return Ok(());
    }
    check_keys(context, state, new_indexes, overwrite).await
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

/// `hash-index-coverage`, the keys: a bucket that gets data files but no new HASH index keeps
/// its live index, which must then list every key of those files (a dynamic-bucket writer
/// that adds a key writes the bucket's new index). Otherwise the next writers' assigners
/// would put the key in another bucket, and it would read back twice.
///
/// The files are the message's `new_files` and, unless the binding verifies compactions,
/// its `compact_after` files that are not inputs upgraded in place: a verified compaction is
/// read anyway and refused (`compact-content`) if a result holds a key its inputs do not.
///
/// Reads the live index of each such bucket (its keys held in a set, charged to the HASH
/// index budget) and each of those files' key-value rows, one file at a time, batch by
/// batch: each row's trimmed primary key is hashed as the index hashes it.
async fn check_known_keys(
    context: TableContext<'_>,
    messages: &[CommitMessage],
    state: &TableState,
    new_indexes: &HashMap<BucketKey, IndexAt<'_>>,
) -> CoordinatorResult<()> {
    // Per bucket keeping its index: the live index, and the files to read with their
    // message and list.
    type Files<'m> = Vec<(usize, &'static str, &'m DataFileMeta)>;
    let mut buckets: Vec<(IndexAt, Files)> = Vec::new();
    let mut position: HashMap<BucketKey, usize> = HashMap::new();
    let read_results = !context.binding.verify_compaction;
    for (index, message) in messages.iter().enumerate() {
        let inputs: HashSet<&str> = message
            .compact_before
            .iter()
            .map(|f| f.file_name.as_str())
            .collect();
        let results = message
            .compact_after
            .iter()
            .filter(|f| read_results && !inputs.contains(f.file_name.as_str()));
        let files: Files = (message.new_files.iter().map(|f| (index, "new_files", f)))
            .chain(results.map(|f| (index, "compact_after", f)))
            .collect();
        if files.is_empty() {
            continue;
        }
        let key = bucket_key(state.partitioned, &message.partition, message.bucket);
        if new_indexes.contains_key(&key) {
            continue;
        }
        let slot = match position.get(&key) {
            Some(&slot) => slot,
            None => {
                // Coverage has seen to it that the bucket has a live HASH index.
                let Some((_, live)) = state
                    .index
                    .values()
                    .find(|(k, f)| *k == key && f.index_type == HASH_INDEX_TYPE)
                else {
                    continue;
                };
                let at = IndexAt {
                    partition: &message.partition,
                    bucket: message.bucket,
                    file: live,
                    message: None,
                    field: format!("live index {}", live.file_name),
                };
                buckets.push((at, Vec::new()));
                position.insert(key, buckets.len() - 1);
                buckets.len() - 1
            }
        };
        buckets[slot].1.extend(files);
    }
    if buckets.is_empty() {
        return Ok(());
    }
    let sources: Vec<(IndexAt, Role)> = buckets
        .iter()
        .map(|(at, _)| (at.clone(), Role::Live))
        .collect();
    charge_budget(context, &sources)?;
    let table = context.table;
    let schema = table.schema();
    let field = |name: &String| schema.fields().iter().find(|f| f.name() == name).cloned();
    let key_fields: Vec<paimon::spec::DataField> = schema
        .trimmed_primary_keys()
        .iter()
        .filter_map(field)
        .collect();
    let snapshot_id = state.snapshot.as_ref().map_or(0, |s| s.id());
    for (at, files) in &buckets {
        let mut known: HashSet<i32> = HashSet::with_capacity(declared_keys(at.file));
        read_hashes(context, at, |hash| {
            known.insert(hash);
        })
        .await?;
        for &(message, list, file) in files {
            if let Some(hash) = first_unknown_key(table, at, snapshot_id, file, &key_fields, &known)
                .await
                .map_err(|e| {
                    CoordinatorError::paimon(
                        format!(
                            "reading the keys of data file {} of message {message}",
                            file.file_name
                        ),
                        e,
                    )
                })?
            {
                return Err(refuse(
                    message,
                    format!("{list}[{}]", file.file_name),
                    Rule::HashIndexCoverage,
                    format!(
                        "bucket {} gets a key (hash {hash}) that its live HASH index {} does \
                         not list, and the commit brings no new index for the bucket: the next \
                         writers would put that key in another bucket (a dynamic-bucket writer \
                         that adds a key writes its bucket's new index)",
                        at.bucket, at.file.file_name
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// The hash of the first key of `file` (a data file the commit adds to the bucket at `at`) that `known`
/// does not hold, read from its key-value rows batch by batch; `None` if it holds them all.
async fn first_unknown_key(
    table: &paimon::table::Table,
    at: &IndexAt<'_>,
    snapshot_id: i64,
    file: &DataFileMeta,
    key_fields: &[paimon::spec::DataField],
    known: &HashSet<i32>,
) -> paimon::Result<Option<i32>> {
    use futures::TryStreamExt;
    let (partition, bucket_path) = at.bucket(table)?;
    let split = paimon::table::DataSplit::builder()
        .with_snapshot(snapshot_id)
        .with_partition(paimon::spec::BinaryRow::from_serialized_bytes(partition)?)
        .with_bucket(at.bucket)
        .with_bucket_path(bucket_path)
        .with_data_files(vec![file.clone()])
        .with_data_deletion_files(vec![None])
        .with_raw_convertible(false)
        .build()?;
    let mut batches = table
        .new_read_builder()
        .new_read()?
        .to_arrow_key_values(&[split])?;
    while let Some(batch) = batches.try_next().await? {
        let (keys, positions) = crate::routing::project(&batch, key_fields).map_err(|e| {
            paimon::Error::DataInvalid {
                message: e.to_string(),
                source: None,
            }
        })?;
        let hashes = paimon::spec::batch_hash_codes(&keys, &positions, key_fields)?;
        if let Some(hash) = hashes.into_iter().find(|hash| !known.contains(hash)) {
            return Ok(Some(hash));
        }
    }
    Ok(None)
}

/// `hash-index-keys`: one bucket per key hash in every partition whose indexes change.
///
/// Memory: every key of the files read is held once, as one [`KeyEntry`] (12 bytes; 3 per
/// byte of index file), and the files are read in chunks of [`HASH_INDEX_READ_CHUNK`]. The
/// sum over the commit is checked against the coordinator's HASH index budget
/// ([`crate::coordinator::Coordinator::with_hash_index_budget`]) from the files' declared sizes before
/// anything is read, and each file's size in storage must be the declared one.
async fn check_keys(
    context: TableContext<'_>,
    state: &TableState,
    new_indexes: HashMap<BucketKey, IndexAt<'_>>,
    overwrite: bool,
) -> CoordinatorResult<()> {
    let partitions: HashSet<Vec<u8>> = new_indexes.keys().map(|(p, _)| p.clone()).collect();
    let mut ordered: Vec<(BucketKey, IndexAt)> = new_indexes.into_iter().collect();
    ordered.sort_by_key(|(_, at)| at.message);
    // Every file to read, with its role: the new indexes in message order, then the live
    // indexes of those partitions (an overwrite commit replaces them all), each either
    // replaced by a new index of its bucket or still claiming its keys.
    let mut sources: Vec<(IndexAt, Role)> = Vec::new();
    let replaced_keys: HashSet<BucketKey> = ordered.iter().map(|(k, _)| k.clone()).collect();
    for (_, at) in ordered {
        sources.push((at, Role::New));
    }
    if !overwrite {
        for (key, file) in state.index.values() {
            if file.index_type == HASH_INDEX_TYPE && partitions.contains(&key.0) {
                let role = if replaced_keys.contains(key) {
                    Role::Replaced
                } else {
                    Role::Live
                };
                let at = IndexAt {
                    partition: &key.0,
                    bucket: key.1,
                    file,
                    message: None,
                    field: format!("live index {}", file.file_name),
                };
                sources.push((at, role));
            }
        }
    }
    charge_budget(context, &sources)?;
    for partition in &partitions {
        let in_partition: Vec<usize> = (0..sources.len())
            .filter(|&i| sources[i].0.partition == partition.as_slice())
            .collect();
        let keys: usize = in_partition
            .iter()
            .map(|&i| declared_keys(sources[i].0.file))
            .sum();
        let mut entries: Vec<KeyEntry> = Vec::with_capacity(keys);
        for &source in &in_partition {
            let at = &sources[source].0;
            read_hashes(context, at, |hash| {
                entries.push(KeyEntry {
                    hash,
                    bucket: at.bucket,
                    source: source as u32,
                })
            })
            .await?;
        }
        entries.sort_unstable_by_key(|e| (e.hash, e.source));
        for group in entries.chunk_by(|a, b| a.hash == b.hash) {
            check_key(group, &sources)?;
        }
    }
    Ok(())
}

/// What a HASH index file read for [`check_keys`] stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    /// Added by the commit: its keys are its bucket's after the commit.
    New,
    /// Live, and replaced by a new index of its bucket: each of its keys must be in that one.
    Replaced,
    /// Live, and kept: its keys stay its bucket's.
    Live,
}

/// One key hash of one HASH index file being checked.
#[derive(Debug, Clone, Copy)]
struct KeyEntry {
    hash: i32,
    bucket: i32,
    /// The file, as an index into [`check_keys`]' sources.
    source: u32,
}

/// Bytes of coordinator memory one key of a HASH index costs while [`check_keys`] runs.
const BYTES_PER_KEY: u64 = std::mem::size_of::<KeyEntry>() as u64;

/// How much of a HASH index file is read at once.
pub const HASH_INDEX_READ_CHUNK: u64 = 1 << 20;

/// The number of keys a HASH index file declares (its size was checked to be 4 per key).
fn declared_keys(file: &IndexFileMeta) -> usize {
    usize::try_from(file.file_size / 4).unwrap_or(usize::MAX)
}

/// Refuses a commit whose HASH index checks would hold more than the coordinator's budget:
/// the files' declared sizes, before anything is read (rule `bounds`).
fn charge_budget(context: TableContext<'_>, sources: &[(IndexAt, Role)]) -> CoordinatorResult<()> {
    let mut keys: u64 = 0;
    for (at, _) in sources {
        let message = at.message.unwrap_or_default();
        if at.file.row_count.checked_mul(4) != Some(at.file.file_size) {
            return Err(refuse(
                message,
                at.field.clone(),
                Rule::HashIndexKeys,
                format!(
                    "a HASH index holds 4 bytes per key, but file_size {} is not 4 x row_count {}",
                    at.file.file_size, at.file.row_count
                ),
            ));
        }
        keys = keys.saturating_add(at.file.file_size as u64 / 4);
    }
    let budget = context.hash_index_budget;
    let needed = keys
        .saturating_mul(BYTES_PER_KEY)
        .saturating_add(HASH_INDEX_READ_CHUNK);
    if needed <= budget {
        return Ok(());
    }
    let (at, _) = sources
        .iter()
        .max_by_key(|(at, _)| at.file.file_size)
        .expect("a budget is exceeded only by some file");
    Err(refuse(
        at.message.unwrap_or_default(),
        at.field.clone(),
        Rule::Bounds,
        format!(
            "checking this commit's HASH indexes means reading {} index file(s) of {keys} keys \
             (the largest {}, {} bytes), {needed} bytes of coordinator memory, above the HASH \
             index budget of {budget} bytes; raise it (Rust \
             Coordinator::with_hash_index_budget, C paimon_wire_table_options_set_hash_index_budget, \
             Python hash_index_budget=, CLI --hash-index-budget) if the table's \
             partitions really hold that many keys",
            sources.len(),
            at.file.file_name,
            at.file.file_size
        ),
    ))
}

/// One key hash across the files of one partition (`group`, ordered by source): every file
/// that claims it (new, or live and kept) puts it in one bucket, and a replaced live index's
/// key is in the new index that replaces it. Linear in the group, however often a hostile
/// index repeats one hash.
fn check_key(group: &[KeyEntry], sources: &[(IndexAt, Role)]) -> CoordinatorResult<()> {
    let hash = group[0].hash;
    let mut claimed: Option<&KeyEntry> = None;
    for entry in group {
        let (at, role) = &sources[entry.source as usize];
        if *role == Role::Replaced {
            continue;
        }
        let Some(first) = claimed else {
            claimed = Some(entry);
            continue;
        };
        if first.bucket == entry.bucket {
            continue;
        }
        let (first_at, _) = &sources[first.source as usize];
        // Blame a message of the commit: this one, or the one the live index clashes with.
        let index = at.message.or(first_at.message).unwrap_or_default();
        let this = if at.message.is_some() {
            "its new index"
        } else {
            "the live index"
        };
        let where_other = match first_at.message {
            Some(m) => format!("the new index of message {m}"),
            None => "the live index".to_string(),
        };
        return Err(refuse(
            index,
            at.field.clone(),
            Rule::HashIndexKeys,
            format!(
                "key hash {hash} is in bucket {} ({this}, {}) and in bucket {} ({where_other}) \
                 of one partition: one key in two buckets reads back twice. Route each row to \
                 the assigner of its key (paimon_wire::AssignerRouter) and give every writer \
                 its own assigner id",
                entry.bucket, at.file.file_name, first.bucket
            ),
        ));
    }
    // Every claimer is in one bucket now: the one a new index gives the key, if any.
    let new_bucket = group
        .iter()
        .find(|e| sources[e.source as usize].1 == Role::New)
        .map(|e| e.bucket);
    let dropped = group
        .iter()
        .find(|e| sources[e.source as usize].1 == Role::Replaced && new_bucket != Some(e.bucket));
    let Some(dropped) = dropped else {
        return Ok(());
    };
    let (at, _) = &sources[dropped.source as usize];
    let (new, _) = sources
        .iter()
        .find(|(new, role)| {
            *role == Role::New && new.bucket == at.bucket && new.partition == at.partition
        })
        .expect("a replaced index has its replacement among the sources");
    Err(refuse(
        new.message.unwrap_or_default(),
        new.field.clone(),
        Rule::HashIndexKeys,
        format!(
            "the new HASH index of bucket {} drops key hash {hash} that the live index {} \
             lists: the key's next version would be assigned another bucket",
            at.bucket, at.file.file_name
        ),
    ))
}

/// Reads the key hashes of one HASH index file in chunks, handing each to `key`, after
/// checking its size in storage against its metadata.
async fn read_hashes(
    context: TableContext<'_>,
    at: &IndexAt<'_>,
    mut key: impl FnMut(i32),
) -> CoordinatorResult<()> {
    let table = context.table;
    let message = at.message.unwrap_or_default();
    let (_, bucket_path) = at
        .bucket(table)
        .map_err(|e| CoordinatorError::paimon("locating a HASH index", e))?;
    let path = index_file_path(table, &bucket_path, at.file);
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
            at.field.clone(),
            Rule::HashIndexKeys,
            format!(
                "HASH index {path} is {size} bytes in storage, but its metadata says {} (and \
                 the coordinator reads at most {MAX_HASH_INDEX_BYTES})",
                at.file.file_size
            ),
        ));
    }
    let reader = input
        .reader()
        .await
        .map_err(|e| CoordinatorError::paimon(during(), e))?;
    let mut offset = 0;
    while offset < size {
        let end = size.min(offset + HASH_INDEX_READ_CHUNK);
        let bytes = reader
            .read(offset..end)
            .await
            .map_err(|e| CoordinatorError::paimon(during(), e))?;
        if bytes.len() as u64 != end - offset || bytes.len() % 4 != 0 {
            return Err(refuse(
                message,
                at.field.clone(),
                Rule::HashIndexKeys,
                format!(
                    "HASH index {path} returned {} bytes for range {offset}..{end}: it changed \
                     while it was read",
                    bytes.len()
                ),
            ));
        }
        for c in bytes.chunks_exact(4) {
            key(i32::from_be_bytes([c[0], c[1], c[2], c[3]]));
        }
        offset = end;
    }
    Ok(())
}
