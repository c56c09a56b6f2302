//! Checks of merged messages against the table's state, at commit time: what per-field
//! validation cannot see because it needs the table's manifests.
//!
//! - a file the messages add (data, changelog or index file) must not already be live in its
//!   partition and bucket, at any level: Paimon's own "already present" check keys on the
//!   level, so a committed file sent again at another level would be committed twice, and a
//!   committed data file sent as a changelog file would be deleted by changelog expiry;
//! - a file the messages delete must be live (a data file at the level named, an index file
//!   of the type named);
//! - one file must not appear in two roles (added and deleted, data and changelog), except
//!   the roles a compaction gives it: a file this commit adds may be compacted away by the
//!   same commit (`new_files` and `compact_before`), and a file upgraded in place is in
//!   `compact_before` and `compact_after` (at a higher level);
//! - a compaction result: each `compact_before` file is live at the level named, or added
//!   at that level by this commit's `new_files` (Java's APPEND snapshot comes first); each
//!   `compact_after` and compact changelog file is new (not live, unless it is an in-place
//!   upgrade of a `compact_before` file) and exists in storage, with its extra files; compact
//!   index files are checked like the other index files (a deleted one is live, or added by
//!   this commit);
//! - the sums the commit computes (the snapshot's record count plus every added row, the
//!   next row id plus every added row) must fit the coordinator's bounds, so the paimon
//!   crate's arithmetic never overflows.
//!
//! Only the partitions and buckets the messages touch are read: manifests whose bucket
//! range misses every touched bucket are skipped, and entries of other partitions and
//! buckets are dropped as they are read. The check runs against the latest snapshot when the
//! commit starts; a commit by another user between the check and the publication is caught
//! by the paimon crate's own conflict checks, not here.

use std::collections::{HashMap, HashSet};

use paimon::spec::Manifest;
use paimon::spec::{FileKind, IndexManifest, ManifestList, Snapshot};
use paimon::table::CommitMessage;

use super::error::{CoordinatorError, CoordinatorResult, Rule, ValidationError};
use super::fields::{MessageFields, DATA_LISTS};
use super::validate::{has_compaction, MAX_SEQUENCE_OR_ROW_ID};
use super::Coordinator;

/// A partition and bucket, with every spelling of the empty partition as one key.
pub(crate) type BucketKey = (Vec<u8>, i32);

/// The live files of the touched buckets in the latest snapshot.
#[derive(Default)]
struct LiveFiles {
    /// Data files: (bucket, file name) → the levels the file is live at.
    data: HashMap<(BucketKey, String), Vec<i32>>,
    /// Index files: (bucket, file name) → the index type.
    index: HashMap<(BucketKey, String), String>,
    /// The highest sequence number of a live data file, per bucket.
    max_sequence: HashMap<BucketKey, i64>,
}

fn bucket_key(partitioned: bool, partition: &[u8], bucket: i32) -> BucketKey {
    (partition_key(partitioned, partition).to_vec(), bucket)
}

/// The partition bytes that identify a message's partition: an unpartitioned table's
/// partition is written as empty bytes by some writers and as the empty binary row by
/// others; both are the one partition (empty).
pub(crate) fn partition_key(partitioned: bool, partition: &[u8]) -> &[u8] {
    if partitioned {
        partition
    } else {
        &[]
    }
}

/// `bucket B of its partition` (or `of the table`), for error messages.
fn bucket_name(partitioned: bool, bucket: i32) -> String {
    if partitioned {
        format!("bucket {bucket} of its partition")
    } else {
        format!("bucket {bucket} of the table")
    }
}

fn refuse(message_index: usize, field: String, rule: Rule, reason: String) -> CoordinatorError {
    CoordinatorError::Validation(ValidationError {
        message_index,
        field,
        rule,
        reason,
    })
}

/// Checks `messages` (merged, about to be committed) against the latest snapshot of the
/// coordinator's table. `message_index` in an error is the message's position in the
/// merged set; the field names the list, position and file.
pub(crate) async fn check(
    coordinator: &Coordinator,
    messages: &[CommitMessage],
) -> CoordinatorResult<()> {
    check_roles(messages)?;
    let table = coordinator.table();
    let table_name = coordinator.rules.table_name();
    let partitioned = !table.schema().partition_keys().is_empty();
    let reading = || format!("reading the manifests of table {table_name} to check the commit");
    let snapshot = table
        .snapshot_manager()
        .get_latest_snapshot()
        .await
        .map_err(|e| CoordinatorError::paimon(reading(), e))?;
    check_sums(messages, snapshot.as_ref())?;
    let touched: HashSet<BucketKey> = messages
        .iter()
        .map(|m| bucket_key(partitioned, &m.partition, m.bucket))
        .collect();
    let live = match &snapshot {
        Some(snapshot) => read_live_files(coordinator, snapshot, partitioned, &touched)
            .await
            .map_err(|e| CoordinatorError::paimon(reading(), e))?,
        None => LiveFiles::default(),
    };
    check_sequence_numbers(coordinator, messages, &live, partitioned)?;
    // Files this commit adds, which its own compaction may remove (Java commits the APPEND
    // snapshot first); only a commit with compaction results needs them.
    let mut added: HashSet<(BucketKey, &str, i32)> = HashSet::new();
    let mut added_index: HashSet<(BucketKey, &str, &str)> = HashSet::new();
    if messages.iter().any(has_compaction) {
        for message in messages {
            let key = bucket_key(partitioned, &message.partition, message.bucket);
            for file in &message.new_files {
                added.insert((key.clone(), file.file_name.as_str(), file.level));
            }
            for file in &message.new_index_files {
                added_index.insert((
                    key.clone(),
                    file.file_name.as_str(),
                    file.index_type.as_str(),
                ));
            }
        }
    }
    for (index, message) in messages.iter().enumerate() {
        let key = bucket_key(partitioned, &message.partition, message.bucket);
        let where_ = || bucket_name(partitioned, message.bucket);
        let upgraded: HashSet<&str> = message
            .compact_before
            .iter()
            .map(|f| f.file_name.as_str())
            .collect();
        for (list, files) in [
            ("new_files", &message.new_files),
            ("new_changelog_files", &message.new_changelog_files),
            ("compact_after", &message.compact_after),
            ("compact_changelog_files", &message.compact_changelog_files),
        ] {
            for (i, file) in files.iter().enumerate() {
                if list == "compact_after" && upgraded.contains(file.file_name.as_str()) {
                    // An in-place upgrade: live (or new) at the level compact_before names.
                    continue;
                }
                if let Some(levels) = live.data.get(&(key.clone(), file.file_name.clone())) {
                    return Err(refuse(
                        index,
                        format!("{list}[{i}].file_name"),
                        Rule::AlreadyLive,
                        format!(
                            "{:?} (sent at level {}) is already live in {} at level(s) {:?}; \
                             a file is committed once",
                            file.file_name,
                            file.level,
                            where_(),
                            levels
                        ),
                    ));
                }
            }
        }
        for (list, files) in [
            ("deleted_files", &message.deleted_files),
            ("compact_before", &message.compact_before),
        ] {
            for (i, file) in files.iter().enumerate() {
                let levels = live.data.get(&(key.clone(), file.file_name.clone()));
                if levels.is_some_and(|levels| levels.contains(&file.level)) {
                    continue;
                }
                // A file this commit adds may be compacted away by the same commit.
                if list == "compact_before"
                    && added.contains(&(key.clone(), file.file_name.as_str(), file.level))
                {
                    continue;
                }
                return Err(refuse(
                    index,
                    format!("{list}[{i}].file_name"),
                    Rule::NotLive,
                    format!(
                        "{:?} at level {} is not live in {} (live at level(s) {:?}); only a \
                         live file can be deleted",
                        file.file_name,
                        file.level,
                        where_(),
                        levels.map(Vec::as_slice).unwrap_or_default()
                    ),
                ));
            }
        }
        for (list, files) in [
            ("new_index_files", &message.new_index_files),
            ("compact_new_index_files", &message.compact_new_index_files),
        ] {
            for (i, file) in files.iter().enumerate() {
                if !live
                    .index
                    .contains_key(&(key.clone(), file.file_name.clone()))
                {
                    continue;
                }
                return Err(refuse(
                    index,
                    format!("{list}[{i}].file_name"),
                    Rule::AlreadyLive,
                    format!(
                        "index file {:?} is already live in {}",
                        file.file_name,
                        where_()
                    ),
                ));
            }
        }
        for (list, files) in [
            ("deleted_index_files", &message.deleted_index_files),
            (
                "compact_deleted_index_files",
                &message.compact_deleted_index_files,
            ),
        ] {
            for (i, file) in files.iter().enumerate() {
                let live_type = live.index.get(&(key.clone(), file.file_name.clone()));
                if live_type == Some(&file.index_type) {
                    continue;
                }
                // An index file this commit adds may be replaced by its compaction.
                if list == "compact_deleted_index_files"
                    && added_index.contains(&(
                        key.clone(),
                        file.file_name.as_str(),
                        file.index_type.as_str(),
                    ))
                {
                    continue;
                }
                return Err(refuse(
                    index,
                    format!("{list}[{i}].file_name"),
                    Rule::NotLive,
                    format!(
                        "{} index file {:?} is not live in {}{}; only a live index file can \
                         be deleted",
                        file.index_type,
                        file.file_name,
                        where_(),
                        live_type.map_or(String::new(), |t| format!(" (live as {t})"))
                    ),
                ));
            }
        }
    }
    check_compaction_results_exist(coordinator, messages).await
}

/// Where a compaction result file is in the messages: the message, the list, the position in
/// it, and the file's name.
struct ResultFile<'m> {
    message_index: usize,
    list: &'static str,
    position: usize,
    file_name: &'m str,
}

/// Every `compact_after` and compact changelog file, with its extra files, exists in
/// storage (rule `missing-file`): the COMPACT snapshot replaces live files with them, so a
/// missing one would lose rows. The files are checked together (`FileIO::missing_files`: one
/// listing per bucket directory holding many of them, the rest concurrently); the refusal
/// names the first missing file in message and list order.
async fn check_compaction_results_exist(
    coordinator: &Coordinator,
    messages: &[CommitMessage],
) -> CoordinatorResult<()> {
    let table = coordinator.table();
    let table_name = coordinator.rules.table_name();
    let paths = paimon::table::TableCommit::new(table.clone(), String::new());
    let mut results: Vec<(String, ResultFile)> = Vec::new();
    for (index, message) in messages.iter().enumerate() {
        if message.compact_after.is_empty() && message.compact_changelog_files.is_empty() {
            continue;
        }
        let bucket_path = paths
            .bucket_path(&message.partition, message.bucket)
            .map_err(|e| {
                CoordinatorError::paimon(
                    format!("computing a bucket directory of table {table_name}"),
                    e,
                )
            })?;
        for (list, files) in [
            ("compact_after", &message.compact_after),
            ("compact_changelog_files", &message.compact_changelog_files),
        ] {
            for (i, file) in files.iter().enumerate() {
                for path in file.collect_files(&bucket_path) {
                    let at = ResultFile {
                        message_index: index,
                        list,
                        position: i,
                        file_name: &file.file_name,
                    };
                    results.push((path, at));
                }
            }
        }
    }
    if results.is_empty() {
        return Ok(());
    }
    let missing = table
        .file_io()
        .missing_files(results.iter().map(|(path, _)| path.clone()))
        .await
        .map_err(|e| {
            CoordinatorError::paimon(
                format!(
                    "checking that the {} compaction result files of table {table_name} exist",
                    results.len()
                ),
                e,
            )
        })?;
    let missing: HashSet<&str> = missing.iter().map(String::as_str).collect();
    match results
        .iter()
        .find(|(path, _)| missing.contains(path.as_str()))
    {
        None => Ok(()),
        Some((path, at)) => Err(refuse(
            at.message_index,
            format!("{}[{}].file_name", at.list, at.position),
            Rule::MissingFile,
            format!(
                "{:?} is a compaction result, but {path} does not exist; a compaction \
                 result must be written before it is committed",
                at.file_name
            ),
        )),
    }
}

/// One file name in one role only, across all messages: a data file is new, deleted or a
/// changelog file; an index file is new or deleted. A compaction adds the roles Java gives
/// a file within one commit: a new file compacted away by the same commit (`new_files` and
/// `compact_before`), a file upgraded in place (`compact_before` and `compact_after`, also
/// with `new_files`), and an index file added and replaced by the compaction
/// (`new_index_files` and `compact_deleted_index_files`).
fn check_roles(messages: &[CommitMessage]) -> CoordinatorResult<()> {
    const DATA_ROLE_SETS: [&[&str]; 3] = [
        &["new_files", "compact_before"],
        &["compact_before", "compact_after"],
        &["new_files", "compact_before", "compact_after"],
    ];
    const INDEX_ROLE_SETS: [&[&str]; 1] = [&["new_index_files", "compact_deleted_index_files"]];
    let data_files = messages
        .iter()
        .map(|m| {
            (0..DATA_LISTS.len())
                .map(|list| m.data_file_count(list))
                .sum::<usize>()
        })
        .sum();
    let mut data_roles = Roles::with_capacity(data_files);
    let mut index_roles = Roles::default();
    for (index, message) in messages.iter().enumerate() {
        for (list, files) in [
            ("new_files", &message.new_files),
            ("deleted_files", &message.deleted_files),
            ("new_changelog_files", &message.new_changelog_files),
            ("compact_before", &message.compact_before),
            ("compact_after", &message.compact_after),
            ("compact_changelog_files", &message.compact_changelog_files),
        ] {
            for (i, file) in files.iter().enumerate() {
                data_roles.claim(index, list, i, &file.file_name);
            }
        }
        for (list, files) in [
            ("new_index_files", &message.new_index_files),
            ("deleted_index_files", &message.deleted_index_files),
            ("compact_new_index_files", &message.compact_new_index_files),
            (
                "compact_deleted_index_files",
                &message.compact_deleted_index_files,
            ),
        ] {
            for (i, file) in files.iter().enumerate() {
                index_roles.claim(index, list, i, &file.file_name);
            }
        }
    }
    data_roles.check(&DATA_ROLE_SETS)?;
    index_roles.check(&INDEX_ROLE_SETS)
}

/// The lists each file name appears in, with where it first appears in each, in the order
/// the names were first seen.
#[derive(Default)]
struct Roles<'a> {
    order: Vec<&'a str>,
    lists: HashMap<&'a str, Claims>,
}

/// Where one list claims a file name: the list, the message and the position in the list.
type Claim = (&'static str, usize, usize);

/// The lists claiming one file name: the first inline (a name almost always has one role, so
/// checking costs no allocation per file), any other in `more`.
struct Claims {
    first: Claim,
    more: Vec<Claim>,
}

impl Claims {
    fn iter(&self) -> impl Iterator<Item = &Claim> {
        std::iter::once(&self.first).chain(&self.more)
    }
}

impl<'a> Roles<'a> {
    fn with_capacity(names: usize) -> Self {
        Roles {
            order: Vec::with_capacity(names),
            lists: HashMap::with_capacity(names),
        }
    }

    fn claim(&mut self, message_index: usize, list: &'static str, position: usize, name: &'a str) {
        let claim = (list, message_index, position);
        match self.lists.entry(name) {
            std::collections::hash_map::Entry::Vacant(vacant) => {
                self.order.push(name);
                vacant.insert(Claims {
                    first: claim,
                    more: Vec::new(),
                });
            }
            std::collections::hash_map::Entry::Occupied(mut occupied) => {
                let claims = occupied.get_mut();
                if !claims.iter().any(|(l, _, _)| *l == list) {
                    claims.more.push(claim);
                }
            }
        }
    }

    /// Every name is in one list, or in exactly one of the `allowed` sets of lists.
    fn check(&self, allowed: &[&[&str]]) -> CoordinatorResult<()> {
        for name in &self.order {
            let claims = &self.lists[name];
            if claims.more.is_empty()
                || allowed.iter().any(|set| {
                    set.len() == claims.more.len() + 1
                        && claims.iter().all(|(l, _, _)| set.contains(l))
                })
            {
                continue;
            }
            let (first, _, _) = claims.first;
            let (list, message_index, position) = claims.more[0];
            return Err(refuse(
                message_index,
                format!("{list}[{position}].file_name"),
                Rule::TwoRoles,
                format!("{name:?} is in {list} and also in {first}; a file has one role"),
            ));
        }
        Ok(())
    }
}

/// The snapshot's record count and next row id plus every row the messages add must stay
/// within [`MAX_SEQUENCE_OR_ROW_ID`]; every step is checked, so nothing can overflow.
fn check_sums(messages: &[CommitMessage], snapshot: Option<&Snapshot>) -> CoordinatorResult<()> {
    let base_records = snapshot.and_then(Snapshot::total_record_count).unwrap_or(0);
    let base_row_id = snapshot.and_then(Snapshot::next_row_id).unwrap_or(0);
    let mut added: i64 = 0;
    for (index, message) in messages.iter().enumerate() {
        for (list, files) in [
            ("new_files", &message.new_files),
            ("new_changelog_files", &message.new_changelog_files),
            ("compact_after", &message.compact_after),
            ("compact_changelog_files", &message.compact_changelog_files),
        ] {
            for (i, file) in files.iter().enumerate() {
                let over = |what: &str, base: i64| {
                    refuse(
                        index,
                        format!("{list}[{i}].row_count"),
                        Rule::Bounds,
                        format!(
                            "the commit would bring the table's {what} ({base} now) past the \
                             coordinator's bound {MAX_SEQUENCE_OR_ROW_ID}"
                        ),
                    )
                };
                added = added
                    .checked_add(file.row_count)
                    .filter(|sum| *sum <= MAX_SEQUENCE_OR_ROW_ID)
                    .ok_or_else(|| over("added rows", 0))?;
                base_records
                    .checked_add(added)
                    .filter(|sum| *sum <= MAX_SEQUENCE_OR_ROW_ID)
                    .ok_or_else(|| over("record count", base_records))?;
                base_row_id
                    .checked_add(added)
                    .filter(|sum| *sum <= MAX_SEQUENCE_OR_ROW_ID)
                    .ok_or_else(|| over("next row id", base_row_id))?;
            }
        }
    }
    Ok(())
}

/// Rule `sequence-numbers`: on a table that orders a key's rows by sequence number, the
/// new files of an append commit start above every live file of their bucket, and those of
/// an overwrite commit start at 0 (see [`Rule::SequenceNumbers`]). The payload does not say
/// how its writer was made; the sequence numbers do.
fn check_sequence_numbers(
    coordinator: &Coordinator,
    messages: &[CommitMessage],
    live: &LiveFiles,
    partitioned: bool,
) -> CoordinatorResult<()> {
    if !coordinator.rules.orders_by_sequence_number() {
        return Ok(());
    }
    match coordinator.binding.mode {
        super::CommitMode::Append => {
            for (index, message) in messages.iter().enumerate() {
                let key = bucket_key(partitioned, &message.partition, message.bucket);
                let Some(&highest) = live.max_sequence.get(&key) else {
                    continue;
                };
                for (i, file) in message.new_files.iter().enumerate() {
                    if file.min_sequence_number <= highest {
                        return Err(refuse(
                            index,
                            format!("new_files[{i}].min_sequence_number"),
                            Rule::SequenceNumbers,
                            format!(
                                "{} for {:?}, but the live files of {} reach sequence number \
                                 {highest}: its rows would merge as older than rows already \
                                 committed. It was written by an overwrite writer, or by a \
                                 writer made before another commit wrote this bucket; commit \
                                 an overwrite writer's payload with an overwrite coordinator, \
                                 or write again with a new writer",
                                file.min_sequence_number,
                                file.file_name,
                                bucket_name(partitioned, message.bucket)
                            ),
                        ));
                    }
                }
            }
        }
        super::CommitMode::Overwrite => {
            // An overwrite writer's files start each bucket at 0: refuse the first file that
            // is the lowest of its bucket and starts above 0.
            let mut lowest: HashMap<BucketKey, i64> = HashMap::new();
            for message in messages {
                let key = bucket_key(partitioned, &message.partition, message.bucket);
                for file in &message.new_files {
                    let sequence = lowest.entry(key.clone()).or_insert(i64::MAX);
                    *sequence = (*sequence).min(file.min_sequence_number);
                }
            }
            for (index, message) in messages.iter().enumerate() {
                let key = bucket_key(partitioned, &message.partition, message.bucket);
                for (i, file) in message.new_files.iter().enumerate() {
                    let sequence = file.min_sequence_number;
                    if sequence > 0 && lowest.get(&key) == Some(&sequence) {
                        return Err(refuse(
                            index,
                            format!("new_files[{i}].min_sequence_number"),
                            Rule::SequenceNumbers,
                            format!(
                                "{sequence} for {:?}, the lowest of {}'s new files: an \
                                 overwrite writer starts every bucket at 0, so these files were \
                                 written by an append writer, whose rows were meant to merge \
                                 with the rows this overwrite would delete (or by an overwrite \
                                 writer reused after a payload). Commit an append writer's \
                                 payload with an append coordinator, or write again with a new \
                                 overwrite writer",
                                file.file_name,
                                bucket_name(partitioned, message.bucket)
                            ),
                        ));
                    }
                }
            }
        }
    }
    Ok(())
}

/// Reads the live data and index files of the `touched` buckets in `snapshot`.
async fn read_live_files(
    coordinator: &Coordinator,
    snapshot: &Snapshot,
    partitioned: bool,
    touched: &HashSet<BucketKey>,
) -> paimon::Result<LiveFiles> {
    let table = coordinator.table();
    let snapshots = table.snapshot_manager();
    let file_io = table.file_io();
    let touched_buckets: HashSet<i32> = touched.iter().map(|(_, bucket)| *bucket).collect();
    let (min_bucket, max_bucket) = (
        touched_buckets.iter().copied().min().unwrap_or(0),
        touched_buckets.iter().copied().max().unwrap_or(0),
    );
    // Net count per (bucket, level, name): an ADD counts +1, a DELETE -1, in manifest order;
    // with the file's highest sequence number.
    let mut net: HashMap<(BucketKey, i32, String), (i32, i64)> = HashMap::new();
    for list in [
        snapshot.base_manifest_list(),
        snapshot.delta_manifest_list(),
    ] {
        let metas = ManifestList::read(file_io, &snapshots.manifest_path(list)).await?;
        for meta in metas {
            if let (Some(lo), Some(hi)) = (meta.min_bucket(), meta.max_bucket()) {
                if hi < min_bucket || lo > max_bucket {
                    continue;
                }
            }
            let entries =
                Manifest::read(file_io, &snapshots.manifest_path(meta.file_name())).await?;
            for entry in entries {
                let key = bucket_key(partitioned, entry.partition(), entry.bucket());
                if !touched.contains(&key) {
                    continue;
                }
                let delta = match entry.kind() {
                    FileKind::Add => 1,
                    FileKind::Delete => -1,
                };
                let file = entry.file();
                net.entry((key, file.level, file.file_name.clone()))
                    .or_insert((0, file.max_sequence_number))
                    .0 += delta;
            }
        }
    }
    let mut live = LiveFiles::default();
    for ((key, level, name), (count, max_sequence)) in net {
        if count > 0 {
            let highest = live.max_sequence.entry(key.clone()).or_insert(max_sequence);
            *highest = (*highest).max(max_sequence);
            live.data.entry((key, name)).or_default().push(level);
        }
    }
    for levels in live.data.values_mut() {
        levels.sort_unstable();
    }
    if let Some(index_manifest) = snapshot.index_manifest() {
        let entries =
            IndexManifest::read(file_io, &snapshots.manifest_path(index_manifest)).await?;
        for entry in entries {
            let key = bucket_key(partitioned, &entry.partition, entry.bucket);
            if entry.kind == FileKind::Add && touched.contains(&key) {
                live.index.insert(
                    (key, entry.index_file.file_name.clone()),
                    entry.index_file.index_type.clone(),
                );
            }
        }
    }
    Ok(live)
}

/// Every file (data, changelog or index) that an ADD entry of any snapshot still on disk
/// lists in one of the `touched` buckets, keyed by bucket and file name. Manifests shared by
/// several snapshots are read once.
pub(crate) async fn referenced_files(
    coordinator: &Coordinator,
    messages: &[CommitMessage],
) -> CoordinatorResult<HashSet<(BucketKey, String)>> {
    let table = coordinator.table();
    let table_name = coordinator.rules.table_name();
    let partitioned = !table.schema().partition_keys().is_empty();
    let touched: HashSet<BucketKey> = messages
        .iter()
        .map(|m| bucket_key(partitioned, &m.partition, m.bucket))
        .collect();
    read_referenced(coordinator, partitioned, &touched)
        .await
        .map_err(|e| {
            CoordinatorError::paimon(
                format!(
                    "reading the snapshots of table {table_name} to check what abort may delete"
                ),
                e,
            )
        })
}

async fn read_referenced(
    coordinator: &Coordinator,
    partitioned: bool,
    touched: &HashSet<BucketKey>,
) -> paimon::Result<HashSet<(BucketKey, String)>> {
    let table = coordinator.table();
    let snapshots = table.snapshot_manager();
    let file_io = table.file_io();
    let mut referenced = HashSet::new();
    let mut lists_read = HashSet::new();
    let mut manifests_read = HashSet::new();
    let mut index_manifests_read = HashSet::new();
    for snapshot in snapshots.list_all().await? {
        let lists = [
            Some(snapshot.base_manifest_list()),
            Some(snapshot.delta_manifest_list()),
            snapshot.changelog_manifest_list(),
        ];
        for list in lists.into_iter().flatten() {
            if !lists_read.insert(list.to_string()) {
                continue;
            }
            for meta in ManifestList::read(file_io, &snapshots.manifest_path(list)).await? {
                if !manifests_read.insert(meta.file_name().to_string()) {
                    continue;
                }
                let path = snapshots.manifest_path(meta.file_name());
                for entry in Manifest::read(file_io, &path).await? {
                    let key = bucket_key(partitioned, entry.partition(), entry.bucket());
                    if *entry.kind() == FileKind::Add && touched.contains(&key) {
                        referenced.insert((key, entry.file().file_name.clone()));
                    }
                }
            }
        }
        if let Some(index_manifest) = snapshot.index_manifest() {
            if index_manifests_read.insert(index_manifest.to_string()) {
                let path = snapshots.manifest_path(index_manifest);
                for entry in IndexManifest::read(file_io, &path).await? {
                    let key = bucket_key(partitioned, &entry.partition, entry.bucket);
                    if entry.kind == FileKind::Add && touched.contains(&key) {
                        referenced.insert((key, entry.index_file.file_name.clone()));
                    }
                }
            }
        }
    }
    Ok(referenced)
}

/// The bucket key of a message, for looking up [`referenced_files`].
pub(crate) fn message_bucket_key(coordinator: &Coordinator, message: &CommitMessage) -> BucketKey {
    let partitioned = !coordinator.table().schema().partition_keys().is_empty();
    bucket_key(partitioned, &message.partition, message.bucket)
}
