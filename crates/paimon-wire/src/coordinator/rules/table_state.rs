//! Rule family **table state**: checks of merged messages against the table, at commit
//! time — what per-field validation cannot see because it needs the table's manifests.
//!
//! | rule | what it protects | tests (`tests/coordinator/`) |
//! |---|---|---|
//! | `two-roles` | one file has one role (added and deleted, data and changelog), except the roles a compaction gives it | `hostile::one_file_in_two_roles_is_refused` |
//! | `bounds` | the snapshot's record count and next row id plus every added row stay within 2^62 (checked sums); a commit raises a bucket's sequence numbers by at most 2^40, so no accepted file leaves the bucket's next writers without room | `hostile::numbers_that_would_overflow_the_commit_are_refused_before_it`, `hostile_round_3::a_sequence_number_that_would_brick_the_bucket_is_refused` |
//! | `sequence-numbers` | on a primary-key table ordered by sequence number, an append commit's new files start above every live file of their bucket and an overwrite commit's start at 0 | `writer_mode::*` |
//! | `already-live` | an added data, changelog or index file is not live in the latest snapshot (data: its bucket, any level; index: anywhere in the table) and not referenced by any retained snapshot, tag or branch ([`super::shared::history`]) | `hostile::committed_files_sent_again_*`, `hostile_round_3::files_removed_by_an_earlier_snapshot_do_not_come_back`, `hostile_round_3::an_index_file_live_in_another_bucket_is_refused` |
//! | `not-live` | a deleted file (data or compaction input) is live at the level named in its bucket and identical to the live entry (identity as the paimon crate defines it, and the counts the rules rely on); a deleted index file is live in its bucket with the type named | `hostile::a_deleted_file_must_be_live_at_the_level_named`, `hostile_round_3::an_input_that_differs_from_the_live_entry_is_refused_before_anything_is_published` |
//! | `compact-rows`, `deletion-vectors` | see [`super::compaction`] and [`super::deletion_vectors`] | |
//! | `hash-index-keys`, `hash-index-coverage` | see [`super::hash_index`] | |
//! | `missing-file` | every file the commit adds (data, changelog and index files of both increments, with extra files) exists in storage, in `validate` as in `commit` | `compaction::a_compaction_result_missing_from_storage_is_refused`, `hostile_round_4::a_new_data_file_missing_from_storage_is_refused_by_validate_and_commit` |
//!
//! The latest snapshot is read only for the partitions and buckets the messages touch
//! (manifests whose bucket range misses every touched bucket are skipped), except the index
//! manifest, which is read whole: index files of every bucket share `<table>/index/`. The
//! check runs against the latest snapshot when the commit starts; a commit by another user
//! between the check and the publication is caught by the paimon crate's own conflict
//! checks, not here.

use std::collections::{HashMap, HashSet};

use paimon::spec::Snapshot;
use paimon::spec::{DataFileMeta, IndexFileMeta};
use paimon::table::CommitMessage;

use super::shared::buckets::{bucket_key, bucket_name, BucketKey};
use super::shared::check::has_compaction;
use super::shared::fields::{metadata_difference, MessageFields, DATA_LISTS, INDEX_LISTS};
use super::shared::limits::{MAX_SEQUENCE_OR_ROW_ID, MAX_SEQUENCE_STEP};
use super::shared::paths::index_file_path;
use super::shared::state::{refuse, TableContext, TableState};
use super::shared::streamed::{FileSeen, NamedNumber, StreamedFacts};
use crate::coordinator::binding::CommitMode;
use crate::coordinator::error::{CoordinatorError, CoordinatorResult, Rule};

/// Rule `already-live`: a file the messages add is new — not live in the latest snapshot
/// (a data file in its bucket at any level, an index file anywhere in the table), and not
/// referenced by any retained snapshot, tag or branch. Paimon's own "already present" check
/// keys on the level, so a committed file sent again at another level would be committed
/// twice; a committed data file sent as a changelog file would be deleted by changelog
/// expiry; a file a compaction removed would come back while older snapshots still hold it.
pub(super) fn check_added_files_are_new(
    messages: &[CommitMessage],
    state: &TableState,
) -> CoordinatorResult<()> {
    for (index, message) in messages.iter().enumerate() {
        let key = bucket_key(state.partitioned, &message.partition, message.bucket);
        let where_ = || bucket_name(state.partitioned, message.bucket);
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
                let reason = if let Some(live) = state.live_data(&key, &file.file_name) {
                    already_live_reason(
                        &format!("{:?} (sent at level {})", file.file_name, file.level),
                        &where_(),
                        live,
                    )
                } else if state.history.has_data(&key, &file.file_name) {
                    referenced_before_reason(&format!("{:?}", file.file_name), &where_())
                } else {
                    continue;
                };
                return Err(refuse(
                    index,
                    format!("{list}[{i}].file_name"),
                    Rule::AlreadyLive,
                    reason,
                ));
            }
        }
        for (list, files) in [
            ("new_index_files", &message.new_index_files),
            ("compact_new_index_files", &message.compact_new_index_files),
        ] {
            for (i, file) in files.iter().enumerate() {
                let reason = if let Some((live_key, live)) = state.index.get(&file.file_name) {
                    let place = if *live_key == key {
                        where_()
                    } else {
                        format!(
                            "{} (another bucket or partition than this message's)",
                            bucket_name(state.partitioned, live_key.1)
                        )
                    };
                    format!(
                        "index file {:?} is already live as a {} index of {place}; index files \
                          of every bucket share the table's index directory, and a file is \
                          committed once",
                        file.file_name, live.index_type
                    )
                } else if state.history.index.contains(&file.file_name) {
                    format!(
                        "index file {:?} is referenced by a retained snapshot, tag or branch; a \
                          removed index file is not added again",
                        file.file_name
                    )
                } else {
                    continue;
                };
                return Err(refuse(
                    index,
                    format!("{list}[{i}].file_name"),
                    Rule::AlreadyLive,
                    reason,
                ));
            }
        }
    }
    Ok(())
}

/// What differs between a file a message deletes (or compacts) and the live entry of that
/// name at that level, if anything: the paimon crate removes an entry only when its
/// identity (partition, bucket, level, name, extra files, embedded index, external path)
/// matches, and the compaction rules count the rows and ranges of the inputs.
fn live_entry_difference(sent: &DataFileMeta, live: &DataFileMeta) -> Option<&'static str> {
    if sent.embedded_index != live.embedded_index {
        Some("embedded_index")
    } else {
        metadata_difference(&sent, &live)
    }
}

/// What differs between an index file a message deletes and the live entry, if anything.
fn live_index_difference(sent: &IndexFileMeta, live: &IndexFileMeta) -> Option<&'static str> {
    if sent.index_type != live.index_type {
        Some("index_type")
    } else if sent.file_size != live.file_size {
        Some("file_size")
    } else if sent.row_count != live.row_count {
        Some("row_count")
    } else if sent.external_path != live.external_path {
        Some("external_path")
    } else if sent.deletion_vectors_ranges.as_ref().map(|r| {
        r.iter()
            .map(|(n, m)| (n, m.offset, m.length))
            .collect::<Vec<_>>()
    }) != live.deletion_vectors_ranges.as_ref().map(|r| {
        r.iter()
            .map(|(n, m)| (n, m.offset, m.length))
            .collect::<Vec<_>>()
    }) {
        Some("deletion_vectors_ranges")
    } else {
        None
    }
}

/// Rule `not-live`: a file the messages delete (`deleted_files`, `compact_before`) is live at
/// the level named in its bucket and identical to that live entry — or, for a compaction
/// input, added at that level by this commit's `new_files` (Java's APPEND snapshot comes
/// first). A deleted index file is live in the message's bucket, identical to the live entry
/// (or, for the compaction, added by this commit). Checking identity here means the paimon
/// crate's own delete check cannot fail after the APPEND snapshot is published.
pub(super) fn check_deleted_files_are_live(
    messages: &[CommitMessage],
    state: &TableState,
) -> CoordinatorResult<()> {
    // Files this commit adds, which its own compaction may remove.
    let mut added: HashMap<(BucketKey, &str, i32), &DataFileMeta> = HashMap::new();
    let mut added_index: HashMap<(BucketKey, &str), &IndexFileMeta> = HashMap::new();
    if messages.iter().any(has_compaction) {
        for message in messages {
            let key = bucket_key(state.partitioned, &message.partition, message.bucket);
            for file in &message.new_files {
                added.insert((key.clone(), file.file_name.as_str(), file.level), file);
            }
            for file in &message.new_index_files {
                added_index.insert((key.clone(), file.file_name.as_str()), file);
            }
        }
    }
    for (index, message) in messages.iter().enumerate() {
        let key = bucket_key(state.partitioned, &message.partition, message.bucket);
        let where_ = || bucket_name(state.partitioned, message.bucket);
        for (list, files) in [
            ("deleted_files", &message.deleted_files),
            ("compact_before", &message.compact_before),
        ] {
            for (i, file) in files.iter().enumerate() {
                let live = state.live_data(&key, &file.file_name);
                let at_level = live.and_then(|l| l.iter().find(|f| f.level == file.level));
                let same_commit = || {
                    if list == "compact_before" {
                        added
                            .get(&(key.clone(), file.file_name.as_str(), file.level))
                            .copied()
                    } else {
                        None
                    }
                };
                let Some(entry) = at_level.or_else(same_commit) else {
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
                            live.map(|l| l.iter().map(|f| f.level).collect::<Vec<_>>())
                                .unwrap_or_default()
                        ),
                    ));
                };
                if let Some(field) = live_entry_difference(file, entry) {
                    return Err(refuse(
                        index,
                        format!("{list}[{i}].{field}"),
                        Rule::NotLive,
                        format!(
                            "{:?} at level {} is live in {}, but with another {field}; the \
                              commit would remove an entry that is not the live one",
                            file.file_name,
                            file.level,
                            where_()
                        ),
                    ));
                }
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
                let live = state
                    .index
                    .get(&file.file_name)
                    .filter(|(live_key, _)| *live_key == key)
                    .map(|(_, live)| live);
                let same_commit = || {
                    if list == "compact_deleted_index_files" {
                        added_index
                            .get(&(key.clone(), file.file_name.as_str()))
                            .copied()
                    } else {
                        None
                    }
                };
                let Some(entry) = live.or_else(same_commit) else {
                    let elsewhere =
                        state
                            .index
                            .get(&file.file_name)
                            .map_or(String::new(), |(other, live)| {
                                format!(
                                    " (it is live as a {} index of {})",
                                    live.index_type,
                                    bucket_name(state.partitioned, other.1)
                                )
                            });
                    return Err(refuse(
                        index,
                        format!("{list}[{i}].file_name"),
                        Rule::NotLive,
                        format!(
                            "{} index file {:?} is not live in {}{elsewhere}; only a live index \
                              file of the message's own bucket can be deleted",
                            file.index_type,
                            file.file_name,
                            where_()
                        ),
                    ));
                };
                if let Some(field) = live_index_difference(file, entry) {
                    return Err(refuse(
                        index,
                        format!("{list}[{i}].{field}"),
                        Rule::NotLive,
                        format!(
                            "index file {:?} is live in {} as a {} index, but with another \
                              {field}; the commit would remove an entry that is not the live \
                              one",
                            file.file_name,
                            where_(),
                            entry.index_type
                        ),
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Rule `bounds` (headroom): a commit may raise a bucket's sequence numbers by at most
/// [`MAX_SEQUENCE_STEP`] above its live files, by new files or by compaction results. The next writer of the bucket continues from
/// the highest sequence number, so a file claiming the per-file bound 2^62 would leave it no
/// room and every later commit to the bucket would be refused; with the step bound an
/// attacker needs 2^22 accepted commits to get there, while an honest writer never writes
/// 2^40 rows into one bucket in one commit.
pub(super) fn check_sequence_headroom(
    messages: &[CommitMessage],
    state: &TableState,
) -> CoordinatorResult<()> {
    for (index, message) in messages.iter().enumerate() {
        let key = bucket_key(state.partitioned, &message.partition, message.bucket);
        let floor = state.max_sequence.get(&key).copied().unwrap_or(0).max(0);
        let ceiling = floor.saturating_add(MAX_SEQUENCE_STEP);
        // Compaction results too: on an append table no range rule bounds their sequence
        // numbers, and a writer restores the bucket from them as from any live file.
        let added = [
            ("new_files", &message.new_files),
            ("compact_after", &message.compact_after),
        ];
        for (list, i, file) in added
            .into_iter()
            .flat_map(|(list, files)| files.iter().enumerate().map(move |(i, f)| (list, i, f)))
        {
            if file.max_sequence_number > ceiling {
                return Err(refuse(
                    index,
                    format!("{list}[{i}].max_sequence_number"),
                    Rule::Bounds,
                    past_headroom_reason(
                        file.max_sequence_number,
                        &format!("{:?}", file.file_name),
                        &bucket_name(state.partitioned, message.bucket),
                        floor,
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// Where an added file is in the messages: the message, the list (an index into
/// [`ADDED_LISTS`]) and the position in it, and `key` the hash of its directory and name
/// ([`place_key`]), by which a missing path is placed without keeping the names. Places are
/// kept in message and list order, so the first that is missing is the one a refusal names.
struct AddedFilePlace {
    key: u64,
    message_index: u32,
    list: u8,
    position: u32,
}

/// The lists that add files, in the order the existence check reads them: data files first
/// (their extra files with them), then index files.
const ADDED_LISTS: [&str; 6] = [
    "new_files",
    "new_changelog_files",
    "compact_after",
    "compact_changelog_files",
    "new_index_files",
    "compact_new_index_files",
];

/// Every file the commit adds exists in storage (rule `missing-file`): new data and
/// changelog files and compaction results with their extra files, and new index files of
/// both lists. A snapshot that names a missing file loses rows (a compaction result replaces
/// live files) or fails every reader. `validate` and `commit` run this same check, so a
/// payload that names a file its worker never wrote (or whose write was lost) is refused by
/// both, before anything is published (the paimon crate checks the data increment again when
/// it recovers a commit). The files are checked together (`FileIO::missing_files`: one
/// listing per directory holding several of them, the rest concurrently); the refusal names
/// the first missing file in message and list order. A file upgraded in place by a
/// compaction is live and exists like any other.
///
/// The check starts on a task of its own and is returned running (`None` when the commit adds
/// no file). The check owns what it needs (the paths and where each file is
/// in the messages), so it runs while the caller goes on: `commit` starts it with the other
/// table-state rules and awaits it before the publication, while the paimon crate encodes
/// and writes the manifests ([`PendingExistenceCheck::into_publication_gate`]).
pub(super) fn start_added_files_check(
    context: TableContext<'_>,
    messages: &[CommitMessage],
) -> CoordinatorResult<Option<PendingExistenceCheck>> {
    let mut batch = ExistenceBatch::new(context);
    for message in messages {
        batch.add(message)?;
    }
    Ok(batch.start(context))
}

/// The files of messages whose existence (rule `missing-file`) is to be checked together,
/// gathered message by message: each bucket directory once with the names added directly in
/// it, the paths of the other files, and where each file is (message `i` being the `i`-th
/// added). A streamed commit gathers many payloads' messages into one batch, so that a
/// directory is listed once per batch, not once per payload.
pub(crate) struct ExistenceBatch {
    directories: BucketDirectories,
    by_directory: indexmap::IndexMap<String, Vec<String>>,
    elsewhere: Vec<String>,
    places: Vec<AddedFilePlace>,
    names_elsewhere: HashMap<u64, String>,
    messages: usize,
}

impl ExistenceBatch {
    /// An empty batch for the coordinator's table.
    pub(crate) fn new(context: TableContext<'_>) -> Self {
        Self {
            directories: BucketDirectories::of(context),
            by_directory: indexmap::IndexMap::new(),
            elsewhere: Vec::new(),
            places: Vec::new(),
            names_elsewhere: HashMap::new(),
            messages: 0,
        }
    }

    /// How many files (and extra files) the batch checks.
    pub(crate) fn file_count(&self) -> usize {
        self.places.len()
    }

    /// Adds the files `message` adds, as the batch's next message.
    pub(crate) fn add(&mut self, message: &CommitMessage) -> CoordinatorResult<()> {
        let message_index = self.messages;
        self.messages += 1;
        let bucket_path = self.directories.of_message(message)?;
        let places = &mut self.places;
        let mut place = |key: u64, list: usize, position: usize| {
            places.push(AddedFilePlace {
                key,
                message_index: u32::try_from(message_index).unwrap_or(u32::MAX),
                list: u8::try_from(list).unwrap_or(u8::MAX),
                position: u32::try_from(position).unwrap_or(u32::MAX),
            })
        };
        for (list, files) in [
            &message.new_files,
            &message.new_changelog_files,
            &message.compact_after,
            &message.compact_changelog_files,
        ]
        .into_iter()
        .enumerate()
        {
            for (position, file) in files.iter().enumerate() {
                if file.external_path.is_none() && file.extra_files.is_empty() {
                    place(place_key(&bucket_path, &file.file_name), list, position);
                    self.by_directory
                        .entry(bucket_path.clone())
                        .or_default()
                        .push(file.file_name.clone());
                } else {
                    for path in file.collect_files(&bucket_path) {
                        let key = path_key(&path);
                        place(key, list, position);
                        self.names_elsewhere.insert(key, file.file_name.clone());
                        self.elsewhere.push(path);
                    }
                }
            }
        }
        for (list, files) in [&message.new_index_files, &message.compact_new_index_files]
            .into_iter()
            .enumerate()
        {
            for (position, file) in files.iter().enumerate() {
                let path = index_file_path(self.directories.table(), &bucket_path, file);
                let key = path_key(&path);
                place(key, 4 + list, position);
                self.names_elsewhere.insert(key, file.file_name.clone());
                self.elsewhere.push(path);
            }
        }
        Ok(())
    }

    /// Starts the check of every file added, on a task of its own (`None` when no file was
    /// added). The check owns what it needs, so it runs while the caller goes on.
    pub(crate) fn start(self, context: TableContext<'_>) -> Option<PendingExistenceCheck> {
        if self.places.is_empty() {
            return None;
        }
        let by_directory: Vec<(String, Vec<String>)> = self.by_directory.into_iter().collect();
        let elsewhere = self.elsewhere;
        // A missing path is placed by its key: the names need not be kept.
        let file_io = context.table.file_io().clone();
        let task = tokio::spawn(async move {
            let mut missing = file_io.missing_files_in_directories(by_directory).await?;
            if !elsewhere.is_empty() {
                missing.extend(file_io.missing_files(elsewhere).await?);
            }
            Ok(missing)
        });
        Some(PendingExistenceCheck {
            task: Some(task),
            places: self.places,
            names_elsewhere: self.names_elsewhere,
            table_name: context.rules.table_name().to_string(),
        })
    }
}

/// Rule `missing-file` for the files of a streamed commit that are directly in their bucket
/// directories ([`super::shared::streamed::FileSeen::in_directory`]; the others are checked
/// by path as their payloads arrive, [`ExistenceBatch`]). Each directory is listed once,
/// at most 8 at a time, and the names listed are looked up among the commit's name keys: a
/// directory that shows every file of its bucket confirms them. Where a listing shows fewer,
/// the names are read back from the commit's own manifests (`manifests`) and the files not
/// shown are checked one by one (a listing only ever confirms); the refusal names the first
/// missing file in payload and message order.
pub(super) async fn check_streamed_existence(
    context: TableContext<'_>,
    facts: &StreamedFacts,
    manifests: &[String],
) -> CoordinatorResult<()> {
    use futures::{StreamExt, TryStreamExt};
    let directories = BucketDirectories::of(context);
    let file_io = context.table.file_io();
    let table_name = context.rules.table_name();
    let checking = |e| {
        CoordinatorError::paimon(
            format!(
                "checking that the {} files the commit adds to table {table_name} exist",
                facts.file_count()
            ),
            e,
        )
    };
    let mut to_list = Vec::new();
    for (id, bucket) in facts.buckets().iter().enumerate() {
        if bucket.in_directory > 0 {
            let directory = directories.of_bucket(&bucket.key.0, bucket.key.1)?;
            to_list.push((u32::try_from(id).unwrap_or(u32::MAX), directory));
        }
    }
    // Each listing keeps its keys only when it does not show every file.
    let not_all_shown: HashMap<u32, HashSet<u128>> =
        futures::stream::iter(to_list.iter().map(|(id, directory)| async move {
            let shown = keys_listed(file_io, directory, facts, *id).await?;
            let expected = facts.buckets()[*id as usize].in_directory;
            Ok::<_, paimon::Error>(((shown.len() as u64) < expected).then_some((*id, shown)))
        }))
        .buffer_unordered(8)
        .try_filter_map(|short| async move { Ok(short) })
        .try_collect()
        .await
        .map_err(checking)?;
    if not_all_shown.is_empty() {
        return Ok(());
    }
    // The files the listings did not show, by name from the manifests, checked one by one.
    let directory_of: HashMap<u32, &String> = to_list.iter().map(|(id, d)| (*id, d)).collect();
    let mut unshown = Vec::new();
    for manifest in manifests {
        let entries = paimon::spec::Manifest::read(file_io, manifest)
            .await
            .map_err(checking)?;
        for entry in entries {
            let name = &entry.file().file_name;
            let key = facts.names().key(name);
            let Some(seen) = facts.seen(key).filter(|seen| seen.in_directory) else {
                continue;
            };
            let Some(shown) = not_all_shown.get(&seen.bucket) else {
                continue;
            };
            if !shown.contains(&key) {
                let directory = directory_of[&seen.bucket].trim_end_matches('/');
                unshown.push((
                    seen.payload,
                    seen.message,
                    seen.list,
                    name.clone(),
                    format!("{directory}/{name}"),
                ));
            }
        }
    }
    unshown.sort();
    let paths: Vec<String> = unshown.iter().map(|u| u.4.clone()).collect();
    let missing: HashSet<String> = file_io
        .missing_files(paths)
        .await
        .map_err(checking)?
        .into_iter()
        .collect();
    match unshown.into_iter().find(|u| missing.contains(&u.4)) {
        None => Ok(()),
        Some((payload, message, list, name, path)) => Err(refuse(
            message as usize,
            format!("{}.file_name", DATA_LISTS[usize::from(list)]),
            Rule::MissingFile,
            format!(
                "payload {payload}: {name:?} is added by this commit, but {path} does not exist; \
                 a file must be written before it is committed"
            ),
        )),
    }
}

/// The name keys of the files directory `directory` shows that the streamed commit adds
/// directly in bucket `bucket` (a directory that does not exist shows none).
async fn keys_listed(
    file_io: &paimon::io::FileIO,
    directory: &str,
    facts: &StreamedFacts,
    bucket: u32,
) -> paimon::Result<HashSet<u128>> {
    if !file_io.exists(directory).await? {
        return Ok(HashSet::new());
    }
    let mut shown = HashSet::new();
    // Names only: on a local file system one `readdir` pass, without a `stat` per entry.
    for name in file_io.list_file_names(directory).await? {
        let key = facts.names().key(&name);
        if facts
            .seen(key)
            .is_some_and(|seen| seen.bucket == bucket && seen.in_directory)
        {
            shown.insert(key);
        }
    }
    Ok(shown)
}

/// The existence check (rule `missing-file`) running on a task of its own
/// ([`start_added_files_check`]); dropped unfinished, the task is aborted.
pub(crate) struct PendingExistenceCheck {
    /// The task: the missing paths.
    task: Option<tokio::task::JoinHandle<paimon::Result<Vec<String>>>>,
    /// Where each checked file is in the messages.
    places: Vec<AddedFilePlace>,
    /// The name of the file each path of `elsewhere` belongs to (an extra file's data file),
    /// by the path's key.
    names_elsewhere: HashMap<u64, String>,
    table_name: String,
}

impl Drop for PendingExistenceCheck {
    fn drop(&mut self) {
        if let Some(task) = &self.task {
            task.abort();
        }
    }
}

impl PendingExistenceCheck {
    /// Waits for the check: `Ok` when every file exists, the `missing-file` refusal naming
    /// the first missing file in message and list order, or the storage error that kept the
    /// check from answering.
    pub(crate) async fn finish(mut self) -> CoordinatorResult<()> {
        let count = self.places.len();
        let table_name = self.table_name.clone();
        let checking = |e| {
            CoordinatorError::paimon(
                format!(
                    "checking that the {count} files the commit adds to table {table_name} exist"
                ),
                e,
            )
        };
        let Some(task) = self.task.take() else {
            return Ok(());
        };
        let missing = match task.await {
            Ok(missing) => missing.map_err(checking)?,
            Err(join) => {
                return Err(checking(paimon::Error::UnexpectedError {
                    message: "the task checking the added files ended without an answer"
                        .to_string(),
                    source: Some(Box::new(join)),
                }))
            }
        };
        if missing.is_empty() {
            return Ok(());
        }
        // Each missing path (`"{directory}/{name}"`, the directory without a trailing `/`, as
        // the checks return it) by its key; the first missing file in message and list order.
        let missing: HashMap<u64, &str> = missing
            .iter()
            .map(|path| (path_key(path), &path[..]))
            .collect();
        let first = self
            .places
            .iter()
            .find_map(|place| missing.get(&place.key).map(|path| (place, *path)));
        match first {
            None => Err(checking(paimon::Error::DataInvalid {
                message: format!(
                    "{} of the added files are missing, and none of them is placed in the \
                     messages (first: {})",
                    missing.len(),
                    missing.values().min().copied().unwrap_or_default()
                ),
                source: None,
            })),
            Some((at, path)) => Err(refuse(
                at.message_index as usize,
                format!(
                    "{}[{}].file_name",
                    ADDED_LISTS[usize::from(at.list)],
                    at.position
                ),
                Rule::MissingFile,
                format!(
                    "{:?} is added by this commit, but {path} does not exist; a file must be \
                     written before it is committed",
                    self.names_elsewhere
                        .get(&at.key)
                        .map_or_else(|| path.rsplit('/').next().unwrap_or(path), String::as_str)
                ),
            )),
        }
    }

    /// The check as a gate of the paimon crate's commit (`TableCommit::with_publication_gate`):
    /// the commit prepares its snapshot while the check runs and publishes only if it passes.
    /// The gate answers the crate with an error when the check refuses or fails; the
    /// coordinator's own error (the refusal) is left in `outcome` for the caller, which reports
    /// it instead of the crate's.
    pub(crate) fn into_publication_gate(
        self,
        outcome: std::sync::Arc<std::sync::Mutex<Option<CoordinatorError>>>,
    ) -> paimon::table::PublicationGate {
        Box::pin(async move {
            match self.finish().await {
                Ok(()) => Ok(()),
                Err(error) => {
                    let message = error.to_string();
                    *outcome
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(error);
                    Err(paimon::Error::DataInvalid {
                        message: format!("the commit's existence check did not pass: {message}"),
                        source: None,
                    })
                }
            }
        })
    }
}

/// The bucket directory of a message, as the paimon crate computes it (Java's
/// `FileStorePathFactory#bucketPath`).
struct BucketDirectories {
    table_name: String,
    paths: paimon::table::TableCommit,
    table: paimon::table::Table,
}

impl BucketDirectories {
    fn of(context: TableContext<'_>) -> Self {
        BucketDirectories {
            table_name: context.rules.table_name().to_string(),
            paths: paimon::table::TableCommit::new(context.table.clone(), String::new()),
            table: context.table.clone(),
        }
    }

    fn table(&self) -> &paimon::table::Table {
        &self.table
    }

    /// The directory of `bucket` in `partition` (its bytes; empty on an unpartitioned table).
    fn of_bucket(&self, partition: &[u8], bucket: i32) -> CoordinatorResult<String> {
        self.paths.bucket_path(partition, bucket).map_err(|e| {
            CoordinatorError::paimon(
                format!("computing a bucket directory of table {}", self.table_name),
                e,
            )
        })
    }

    fn of_message(&self, message: &CommitMessage) -> CoordinatorResult<String> {
        self.of_bucket(&message.partition, message.bucket)
    }
}

/// The key of a checked file, by which a missing path (`"{directory}/{name}"`) is placed in
/// the messages: a hash of the directory (without a trailing `/`) and the name. Two files
/// whose keys collide (a chance of about 10^-8 among 10^6 files) could only make a refusal
/// name the other file's place.
fn place_key(directory: &str, name: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    directory.trim_end_matches('/').hash(&mut hasher);
    name.hash(&mut hasher);
    hasher.finish()
}

/// The key of a path (see [`place_key`]).
fn path_key(path: &str) -> u64 {
    let (directory, name) = path.rsplit_once('/').unwrap_or(("", path));
    place_key(directory, name)
}

/// One file name in one role only, across all messages: a data file is new, deleted or a
/// changelog file; an index file is new or deleted. A compaction adds the roles Java gives
/// a file within one commit: a new file compacted away by the same commit (`new_files` and
/// `compact_before`), a file upgraded in place (`compact_before` and `compact_after`, also
/// with `new_files`), and an index file added and replaced by the compaction
/// (`new_index_files` and `compact_deleted_index_files`).
pub(super) fn check_roles(messages: &[CommitMessage]) -> CoordinatorResult<()> {
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
    let mut data_roles = Roles::with_capacity(&DATA_LISTS, data_files);
    let mut index_roles = Roles::with_capacity(&INDEX_LISTS, 0);
    for (index, message) in messages.iter().enumerate() {
        for slot in 0..DATA_LISTS.len() {
            for (i, file) in message.data_files(slot).enumerate() {
                data_roles.claim(index, slot, i, &file.file_name);
            }
        }
        for slot in 0..INDEX_LISTS.len() {
            for (i, file) in message.index_files(slot).enumerate() {
                index_roles.claim(index, slot, i, &file.file_name);
            }
        }
    }
    data_roles.check(&DATA_ROLE_SETS)?;
    index_roles.check(&INDEX_ROLE_SETS)
}

/// The lists each file name appears in. Almost every name has one list: `first` keeps each
/// name's first claim alone (40 bytes a name, so that 10^6 names fit in 86 MB), and `more`
/// the claims of other lists, for the few names that have them, so that checking reads only
/// those.
struct Roles<'a> {
    /// The family's list names, in the order the messages are read (a claim's list is a slot
    /// in it).
    list_names: &'static [&'static str],
    first: HashMap<&'a str, Claim>,
    /// The claims after the first, one per other list, of the names claimed by more than one.
    more: HashMap<&'a str, Vec<Claim>>,
}

/// Where one list claims a file name: the message, the list's slot and the position in the
/// list. Claims order as the messages are read, so a name's first claim tells when the name
/// was first seen.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Claim {
    message_index: usize,
    slot: usize,
    position: usize,
}

impl<'a> Roles<'a> {
    fn with_capacity(list_names: &'static [&'static str], names: usize) -> Self {
        Roles {
            list_names,
            first: HashMap::with_capacity(names),
            more: HashMap::new(),
        }
    }

    fn claim(&mut self, message_index: usize, slot: usize, position: usize, name: &'a str) {
        let claim = Claim {
            message_index,
            slot,
            position,
        };
        let first = *self.first.entry(name).or_insert(claim);
        if first.slot == slot {
            return;
        }
        let more = self.more.entry(name).or_default();
        if !more.iter().any(|c| c.slot == slot) {
            more.push(claim);
        }
    }

    /// Every name is in one list, or in exactly one of the `allowed` sets of lists. The first
    /// name that is not, in the order the names were first seen, is refused.
    fn check(self, allowed: &[&[&str]]) -> CoordinatorResult<()> {
        let mut repeated: Vec<(Claim, &str, &Vec<Claim>)> = self
            .more
            .iter()
            .map(|(name, more)| (self.first[name], *name, more))
            .collect();
        repeated.sort_unstable_by_key(|(first, _, _)| *first);
        for (first, name, more) in repeated {
            let lists = std::iter::once(&first)
                .chain(more)
                .map(|claim| self.list_names[claim.slot]);
            if allowed.iter().any(|set| {
                set.len() == more.len() + 1 && lists.clone().all(|list| set.contains(&list))
            }) {
                continue;
            }
            let second = more[0];
            let list = self.list_names[second.slot];
            return Err(refuse(
                second.message_index,
                format!("{list}[{}].file_name", second.position),
                Rule::TwoRoles,
                format!(
                    "{name:?} is in {list} and also in {}; a file has one role",
                    self.list_names[first.slot]
                ),
            ));
        }
        Ok(())
    }
}

/// The snapshot's record count and next row id plus every row the messages add must stay
/// within [`MAX_SEQUENCE_OR_ROW_ID`]; every step is checked, so nothing can overflow.
pub(super) fn check_sums(
    messages: &[CommitMessage],
    snapshot: Option<&Snapshot>,
) -> CoordinatorResult<()> {
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
pub(super) fn check_sequence_numbers(
    context: TableContext<'_>,
    messages: &[CommitMessage],
    live: &TableState,
) -> CoordinatorResult<()> {
    let partitioned = live.partitioned;
    if !context.rules.orders_by_sequence_number() {
        return Ok(());
    }
    match context.binding.mode {
        CommitMode::Append => {
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
                            below_live_reason(
                                file.min_sequence_number,
                                &format!("{:?}", file.file_name),
                                &bucket_name(partitioned, message.bucket),
                                highest,
                            ),
                        ));
                    }
                }
            }
        }
        CommitMode::Overwrite => {
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

/// Rule `already-live`'s reason for `file` (its name, and where it was sent) live in
/// `bucket` at the levels of `live`.
fn already_live_reason(file: &str, bucket: &str, live: &[DataFileMeta]) -> String {
    format!(
        "{file} is already live in {bucket} at level(s) {:?}; a file is committed once",
        live.iter().map(|f| f.level).collect::<Vec<_>>()
    )
}

/// Rule `already-live`'s reason for `file`, no longer live in `bucket` but still referenced.
fn referenced_before_reason(file: &str, bucket: &str) -> String {
    format!(
        "{file} was committed to {bucket} before and is still referenced by a retained \
         snapshot, tag or branch; a file removed from the table is not added again"
    )
}

/// Rule `sequence-numbers`' reason for `file`, whose first sequence number `sequence` is not
/// above `highest`, the highest of `bucket`'s live files.
fn below_live_reason(sequence: i64, file: &str, bucket: &str, highest: i64) -> String {
    format!(
        "{sequence} for {file}, but the live files of {bucket} reach sequence number {highest}: \
         its rows would merge as older than rows already committed. It was written by an \
         overwrite writer, or by a writer made before another commit wrote this bucket; commit \
         an overwrite writer's payload with an overwrite coordinator, or write again with a new \
         writer"
    )
}

/// Rule `bounds`' reason for `file`, whose last sequence number `sequence` raises `bucket`'s
/// (`floor` now) by more than one commit may.
fn past_headroom_reason(sequence: i64, file: &str, bucket: &str, floor: i64) -> String {
    format!(
        "{sequence} for {file}: {bucket} reaches sequence number {floor}, and one commit may \
         raise it by at most {MAX_SEQUENCE_STEP} (2^40); a higher number would leave the \
         bucket's next writers no room below the bound {MAX_SEQUENCE_OR_ROW_ID}, and every \
         later commit to it would be refused"
    )
}

/// Rule `two-roles` on a streamed commit: file `file_name`, in `list` of message `message` of
/// payload `payload`, was first seen in another list (`first`). On the streamed path only the
/// two lists it admits can meet, and a data file is never a changelog file.
pub(super) fn streamed_two_roles(
    file_name: &str,
    list: &'static str,
    first: FileSeen,
    payload: u32,
    message: u32,
) -> CoordinatorError {
    refuse(
        message as usize,
        format!("{list}.file_name"),
        Rule::TwoRoles,
        format!(
            "{file_name:?} (payload {payload}, message {message}) was named before in {} (payload \
             {}, message {}); a file has one role in a commit",
            DATA_LISTS[usize::from(first.list)],
            first.payload,
            first.message
        ),
    )
}

/// Keeps, for the streamed checks of `sequence-numbers` and `bounds`, the new data file of
/// bucket `bucket` with the lowest first and the highest last sequence number.
pub(super) fn note_streamed_sequences(
    facts: &mut StreamedFacts,
    bucket: u32,
    payload: u32,
    message: u32,
    new_files: &[DataFileMeta],
) {
    let facts = facts.bucket_mut(bucket);
    let named = |file: &DataFileMeta, value: i64| NamedNumber {
        file_name: file.file_name.clone(),
        value,
        payload,
        message,
    };
    for file in new_files {
        if facts
            .lowest
            .as_ref()
            .is_none_or(|lowest| file.min_sequence_number < lowest.value)
        {
            facts.lowest = Some(named(file, file.min_sequence_number));
        }
        if facts
            .highest
            .as_ref()
            .is_none_or(|highest| file.max_sequence_number > highest.value)
        {
            facts.highest = Some(named(file, file.max_sequence_number));
        }
    }
}

/// The table-state rules a streamed commit (append mode, new data and changelog files only)
/// is checked by, on what it kept ([`StreamedFacts`]) instead of its messages: the same
/// rules, with the same refusals, as [`check_sums`], [`check_sequence_numbers`],
/// [`check_sequence_headroom`] and [`check_added_files_are_new`] give its messages.
/// A refusal names the file, its payload and its message (`message_index` is the message's
/// index in its payload).
pub(super) fn check_streamed(
    context: TableContext<'_>,
    facts: &StreamedFacts,
    state: &TableState,
) -> CoordinatorResult<()> {
    let partitioned = state.partitioned;
    let over = |what: &str, base: i64| {
        refuse(
            0,
            "new_files.row_count".into(),
            Rule::Bounds,
            format!(
                "the commit would bring the table's {what} ({base} now) past the coordinator's \
                 bound {MAX_SEQUENCE_OR_ROW_ID}"
            ),
        )
    };
    let added = facts
        .added_rows()
        .filter(|rows| *rows <= MAX_SEQUENCE_OR_ROW_ID)
        .ok_or_else(|| over("added rows", 0))?;
    let snapshot = state.snapshot.as_ref();
    let base_records = snapshot.and_then(Snapshot::total_record_count).unwrap_or(0);
    let base_row_id = snapshot.and_then(Snapshot::next_row_id).unwrap_or(0);
    for (what, base) in [("record count", base_records), ("next row id", base_row_id)] {
        base.checked_add(added)
            .filter(|sum| *sum <= MAX_SEQUENCE_OR_ROW_ID)
            .ok_or_else(|| over(what, base))?;
    }
    let orders =
        context.rules.orders_by_sequence_number() && context.binding.mode == CommitMode::Append;
    for bucket in facts.buckets() {
        let live_highest = state.max_sequence.get(&bucket.key).copied();
        if let (true, Some(highest), Some(lowest)) = (orders, live_highest, &bucket.lowest) {
            if lowest.value <= highest {
                return Err(refuse(
                    lowest.message as usize,
                    "new_files.min_sequence_number".into(),
                    Rule::SequenceNumbers,
                    below_live_reason(
                        lowest.value,
                        &format!("{:?} (payload {})", lowest.file_name, lowest.payload),
                        &bucket_name(partitioned, bucket.key.1),
                        highest,
                    ),
                ));
            }
        }
        let floor = live_highest.unwrap_or(0).max(0);
        let ceiling = floor.saturating_add(MAX_SEQUENCE_STEP);
        if let Some(highest) = bucket.highest.as_ref().filter(|h| h.value > ceiling) {
            return Err(refuse(
                highest.message as usize,
                "new_files.max_sequence_number".into(),
                Rule::Bounds,
                past_headroom_reason(
                    highest.value,
                    &format!("{:?} (payload {})", highest.file_name, highest.payload),
                    &bucket_name(partitioned, bucket.key.1),
                    floor,
                ),
            ));
        }
    }
    // Rule `already-live`: the table's names in the touched buckets, live or referenced,
    // looked up among the commit's name keys.
    let live = state.data.iter().flat_map(|(key, files)| {
        files
            .iter()
            .map(move |(name, entries)| (key, name.as_str(), Some(entries)))
    });
    let referenced = state
        .history
        .data_names()
        .map(|(key, name)| (key, name, None));
    for (key, name, live_entries) in live.chain(referenced) {
        let Some(bucket) = facts.known_bucket(key) else {
            continue;
        };
        let Some(seen) = facts
            .seen(facts.names().key(name))
            .filter(|seen| seen.bucket == bucket)
        else {
            continue;
        };
        let list = DATA_LISTS[usize::from(seen.list)];
        let where_ = bucket_name(partitioned, key.1);
        let file = format!(
            "{name:?} (payload {}, message {})",
            seen.payload, seen.message
        );
        let reason = match live_entries {
            Some(entries) => already_live_reason(&file, &where_, entries),
            None => referenced_before_reason(&file, &where_),
        };
        return Err(refuse(
            seen.message as usize,
            format!("{list}.file_name"),
            Rule::AlreadyLive,
            reason,
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use paimon::spec::IndexFileMeta;
    use paimon::table::CommitMessage;

    use super::check_roles;
    use crate::coordinator::error::{CoordinatorError, Rule};
    use crate::test_support::data_file;

    fn message(new_files: &[&str]) -> CommitMessage {
        CommitMessage::new(
            vec![],
            0,
            new_files.iter().map(|name| data_file(name, 1)).collect(),
        )
    }

    fn index_file(name: &str) -> IndexFileMeta {
        IndexFileMeta {
            index_type: "HASH".into(),
            file_name: name.into(),
            file_size: 8,
            row_count: 2,
            deletion_vectors_ranges: None,
            external_path: None,
            global_index_meta: None,
        }
    }

    /// The message, field and reason of a two-roles refusal.
    fn refusal(messages: &[CommitMessage]) -> (usize, String, String) {
        match check_roles(messages) {
            Err(CoordinatorError::Validation(error)) => {
                assert_eq!(error.rule, Rule::TwoRoles, "{error}");
                (error.message_index, error.field, error.reason)
            }
            other => panic!("expected a two-roles refusal, got {other:?}"),
        }
    }

    #[test]
    fn the_allowed_role_sets_pass() {
        // An in-place upgrade: new_files, compact_before and compact_after name one file.
        let mut upgrade = message(&["a"]);
        upgrade.compact_before = vec![data_file("a", 1)];
        upgrade.compact_after = vec![data_file("a", 1)];
        // Written and compacted away in one commit.
        let mut transient = message(&["b"]);
        transient.compact_before = vec![data_file("b", 1)];
        // A hash index replaced by its compaction.
        let mut index = message(&[]);
        index.new_index_files = vec![index_file("i")];
        index.compact_deleted_index_files = vec![index_file("i")];
        // One name twice in one list is the merge's business, not a second role.
        let twice = message(&["c", "c"]);
        check_roles(&[upgrade, transient, index, twice]).unwrap();
    }

    #[test]
    fn the_first_name_seen_is_refused_whatever_order_the_second_lists_come_in() {
        // "x" is seen first (message 0, position 0) but gets its second list last.
        let first = message(&["x", "y"]);
        let mut second = message(&[]);
        second.new_changelog_files = vec![data_file("y", 1)];
        let mut third = message(&[]);
        third.deleted_files = vec![data_file("x", 1)];
        let (message_index, field, reason) = refusal(&[first, second, third]);
        assert_eq!(message_index, 2);
        assert_eq!(field, "deleted_files[0].file_name");
        assert!(
            reason.contains("\"x\" is in deleted_files and also in new_files"),
            "{reason}"
        );
    }

    #[test]
    fn a_third_list_outside_every_allowed_set_is_refused() {
        // new_files + compact_before is allowed; adding new_changelog_files is not.
        let mut message = message(&["z"]);
        message.compact_before = vec![data_file("z", 1)];
        message.new_changelog_files = vec![data_file("z", 1)];
        let (message_index, field, _) = refusal(&[message]);
        assert_eq!(message_index, 0);
        assert_eq!(field, "new_changelog_files[0].file_name");
    }

    #[test]
    fn an_index_file_added_and_deleted_is_refused() {
        let mut message = message(&[]);
        message.new_index_files = vec![index_file("i")];
        message.deleted_index_files = vec![index_file("i")];
        let (_, field, reason) = refusal(&[message]);
        assert_eq!(field, "deleted_index_files[0].file_name");
        assert!(reason.contains("also in new_index_files"), "{reason}");
    }
}
