//! Merging the messages of many workers into one set.
//!
//! Decision: a file is identified by its list (`new_files`, `deleted_files`,
//! `new_changelog_files`, `new_index_files`, `deleted_index_files`, and the five lists of the
//! compact increment) and its name. Paimon file
//! names carry a random UUID, so the same name twice is the same file reported twice — a
//! worker retried, or the engine delivered a payload twice:
//!
//! - same partition, bucket and metadata → one copy is kept (the first), the others dropped;
//! - anything different → [`MergeConflict`]: two writers claim one file, and the coordinator
//!   cannot know which claim is true, so nothing is committed.
//!
//! A file a message *removes* (`deleted_files`, `compact_before`, and the two lists of
//! deleted index files) is named by whoever removes it, not created with a fresh name, so the
//! same name twice is a duplicate only when the whole message is (it reports the same files in
//! every list). Two different messages removing one file — two writers compacting the same
//! input, each into files of its own — are a [`MergeConflict`]: committing both would keep
//! both rewrites of the same rows.
//!
//! A message left with no file after that is dropped. For postpone fixed-bucket writes,
//! every message of one partition must carry the same `total_buckets`.

use std::collections::{HashMap, HashSet};

use paimon::table::CommitMessage;

use super::shared::check::has_compaction;
use super::shared::fields::{
    DataFileFields, IndexFileFields, MessageFields, DATA_LISTS, DELETED_FILES, DELETED_INDEX_FILES,
    INDEX_LISTS, NEW_CHANGELOG_FILES, NEW_FILES, NEW_INDEX_FILES,
};
use super::shared::table_rules::TableRules;
use crate::coordinator::binding::WriteKind;
use crate::coordinator::error::{
    CoordinatorError, CoordinatorResult, MergeConflict, MessageOrigin, Rule, ValidationError,
};

/// Where a file was first seen (the message's index in the merge input) and what it looked
/// like there. The message, its origin and its bucket count are looked up by the index, so
/// that an entry of the map of one list is a name, an index and a file reference: for owned
/// messages, a list of 10^6 files keys a map of 2^21 slots in 69 MB.
struct FirstSeen<F> {
    at: usize,
    file: F,
}

/// The messages being merged, with what [`seen_before`] compares besides the files.
struct MergeInput<'a, M> {
    messages: &'a [M],
    origins: &'a [MessageOrigin],
    /// A standard binding drops `total_buckets`, so it is not compared.
    standard: bool,
}

impl<M: MessageFields> MergeInput<'_, M> {
    /// The bucket count of message `at` as the binding sees it.
    fn total_buckets(&self, at: usize) -> Option<i32> {
        if self.standard {
            None
        } else {
            self.messages[at].total_buckets()
        }
    }
}

/// The lists of files a message removes; see the module documentation.
const REMOVAL_LISTS: [&str; 4] = [
    "deleted_files",
    "compact_before",
    "deleted_index_files",
    "compact_deleted_index_files",
];

/// One file of one message: message index, list slot (`0..6` the data lists of
/// [`DATA_LISTS`], `6..10` the index lists of [`INDEX_LISTS`]) and position in the list.
pub(crate) type FileAt = (usize, usize, usize);

/// The identical duplicates among `messages` (owned or views over a payload), each a file
/// seen before under the same list and name with the same partition, bucket, bucket count and
/// metadata, to be dropped; refuses a name seen twice with anything different (see the module
/// documentation). The binding's view of `total_buckets` is compared: a standard binding
/// drops it, so it cannot tell two copies apart.
pub(crate) fn find_duplicates<M: MessageFields>(
    messages: &[M],
    origins: &[MessageOrigin],
    rules: &TableRules,
) -> CoordinatorResult<HashSet<FileAt>> {
    let standard = rules.write_kind() == WriteKind::Standard;
    if !standard {
        check_total_buckets_per_partition(messages, origins)?;
    }
    let input = MergeInput {
        messages,
        origins,
        standard,
    };
    let mut duplicates = HashSet::new();
    // One map per list, each sized for its files up front: growing a map would hash every
    // name again.
    let mut data_seen: Vec<HashMap<&str, FirstSeen<_>>> = (0..DATA_LISTS.len())
        .map(|slot| HashMap::with_capacity(messages.iter().map(|m| m.data_file_count(slot)).sum()))
        .collect();
    let mut index_seen: Vec<HashMap<&str, FirstSeen<_>>> = (0..INDEX_LISTS.len())
        .map(|slot| HashMap::with_capacity(messages.iter().map(|m| m.index_file_count(slot)).sum()))
        .collect();
    for (at, message) in messages.iter().enumerate() {
        for (slot, seen) in data_seen.iter_mut().enumerate() {
            for (i, file) in message.data_files(slot).enumerate() {
                let named = (DATA_LISTS[slot], file.file_name());
                if seen_before(&input, seen, named, FirstSeen { at, file }, |a, b| {
                    a.same_metadata(b)
                })? {
                    duplicates.insert((at, slot, i));
                }
            }
        }
        for (slot, seen) in index_seen.iter_mut().enumerate() {
            for (i, file) in message.index_files(slot).enumerate() {
                let named = (INDEX_LISTS[slot], file.file_name());
                if seen_before(&input, seen, named, FirstSeen { at, file }, |a, b| {
                    a.same_metadata(b)
                })? {
                    duplicates.insert((at, DATA_LISTS.len() + slot, i));
                }
            }
        }
    }
    Ok(duplicates)
}

/// Drops identical duplicate files, refuses conflicting ones, drops messages left empty.
pub(crate) fn dedup(
    mut messages: Vec<CommitMessage>,
    origins: Vec<MessageOrigin>,
    rules: &TableRules,
) -> CoordinatorResult<(Vec<CommitMessage>, Vec<MessageOrigin>)> {
    let duplicates = find_duplicates(&messages, &origins, rules)?;
    if !duplicates.is_empty() {
        for (at, message) in messages.iter_mut().enumerate() {
            remove_duplicates(message, at, &duplicates);
        }
    }
    Ok(drop_empty(messages, origins))
}

/// Removes from `message` (message `at`) the files `duplicates` names.
fn remove_duplicates(message: &mut CommitMessage, at: usize, duplicates: &HashSet<FileAt>) {
    fn retain_kept<T>(files: &mut Vec<T>, duplicates: &HashSet<FileAt>, at: usize, slot: usize) {
        let mut i = 0;
        files.retain(|_| {
            i += 1;
            !duplicates.contains(&(at, slot, i - 1))
        });
    }
    let d = duplicates;
    retain_kept(&mut message.new_files, d, at, 0);
    retain_kept(&mut message.deleted_files, d, at, 1);
    retain_kept(&mut message.new_changelog_files, d, at, 2);
    retain_kept(&mut message.compact_before, d, at, 3);
    retain_kept(&mut message.compact_after, d, at, 4);
    retain_kept(&mut message.compact_changelog_files, d, at, 5);
    retain_kept(&mut message.new_index_files, d, at, 6);
    retain_kept(&mut message.deleted_index_files, d, at, 7);
    retain_kept(&mut message.compact_new_index_files, d, at, 8);
    retain_kept(&mut message.compact_deleted_index_files, d, at, 9);
}

/// The owned message of view `view` (message `at` of its payload) without the files
/// `duplicates` names. Duplicates are rare: they are built with the rest and removed.
pub(crate) fn materialize_kept(
    view: &crate::view::MessageView<'_>,
    at: usize,
    duplicates: &HashSet<FileAt>,
) -> CommitMessage {
    let mut message = view.to_message();
    if !duplicates.is_empty() {
        remove_duplicates(&mut message, at, duplicates);
    }
    message
}

/// The refusal of a streamed commit's file named before in the same list with another
/// partition, bucket or metadata: the streamed commit keeps a hash of the first (its digest
/// leaf), not the file, so it says that they differ, not where.
pub(crate) fn streamed_conflict(
    list: &'static str,
    file_name: &str,
    first: MessageOrigin,
    second: MessageOrigin,
) -> CoordinatorError {
    CoordinatorError::Merge(MergeConflict {
        list,
        file_name: file_name.to_string(),
        first,
        second,
        difference: "partition, bucket or file metadata (the streamed commit compares a hash of \
                     the first)"
            .into(),
    })
}

/// Drops the messages that hold no file (none to add, delete or compact).
pub(crate) fn drop_empty(
    messages: Vec<CommitMessage>,
    origins: Vec<MessageOrigin>,
) -> (Vec<CommitMessage>, Vec<MessageOrigin>) {
    messages
        .into_iter()
        .zip(origins)
        .filter(|(message, _)| {
            [NEW_FILES, DELETED_FILES, NEW_CHANGELOG_FILES]
                .into_iter()
                .any(|slot| message.data_file_count(slot) > 0)
                || [NEW_INDEX_FILES, DELETED_INDEX_FILES]
                    .into_iter()
                    .any(|slot| message.index_file_count(slot) > 0)
                || has_compaction(message)
        })
        .unzip()
}

/// `true` if this file is an identical duplicate of one seen before in its list (`same`
/// compares metadata); records it otherwise. `seen` is the map of the list named `list`, keyed
/// by file name; each file is looked up once.
fn seen_before<'a, M: MessageFields, F>(
    input: &MergeInput<'_, M>,
    seen: &mut HashMap<&'a str, FirstSeen<F>>,
    (list, file_name): (&'static str, &'a str),
    now: FirstSeen<F>,
    same: impl Fn(&F, &F) -> bool,
) -> CoordinatorResult<bool> {
    let first = match seen.entry(file_name) {
        std::collections::hash_map::Entry::Vacant(vacant) => {
            vacant.insert(now);
            return Ok(false);
        }
        std::collections::hash_map::Entry::Occupied(occupied) => occupied.into_mut(),
    };
    let (first_message, now_message) = (&input.messages[first.at], &input.messages[now.at]);
    let difference = if first_message.partition() != now_message.partition() {
        "partition"
    } else if first_message.bucket() != now_message.bucket() {
        "bucket"
    } else if input.total_buckets(first.at) != input.total_buckets(now.at) {
        "total_buckets"
    } else if !same(&first.file, &now.file) {
        "file metadata"
    } else if REMOVAL_LISTS.contains(&list) && !same_files(first_message, now_message) {
        "the message removing it (two writers remove one file)"
    } else {
        return Ok(true);
    };
    Err(CoordinatorError::Merge(MergeConflict {
        list,
        file_name: file_name.to_string(),
        first: input.origins[first.at],
        second: input.origins[now.at],
        difference: difference.to_string(),
    }))
}

/// Whether two messages report the same files, by name, in every list: the same message
/// delivered twice.
fn same_files<M: MessageFields>(a: &M, b: &M) -> bool {
    std::ptr::eq(a, b)
        || ((0..DATA_LISTS.len()).all(|slot| {
            a.data_files(slot)
                .map(|f| f.file_name())
                .eq(b.data_files(slot).map(|f| f.file_name()))
        }) && (0..INDEX_LISTS.len()).all(|slot| {
            a.index_files(slot)
                .map(|f| f.file_name())
                .eq(b.index_files(slot).map(|f| f.file_name()))
        }))
}

fn check_total_buckets_per_partition<M: MessageFields>(
    messages: &[M],
    origins: &[MessageOrigin],
) -> CoordinatorResult<()> {
    let mut per_partition: HashMap<&[u8], (i32, MessageOrigin)> = HashMap::new();
    for (message, origin) in messages.iter().zip(origins) {
        let Some(total) = message.total_buckets() else {
            continue;
        };
        match per_partition.get(message.partition()) {
            Some((first_total, first_origin)) if *first_total != total => {
                return Err(CoordinatorError::Validation(ValidationError {
                    message_index: origin.message_index,
                    field: "total_buckets".into(),
                    rule: Rule::TotalBuckets,
                    reason: format!(
                        "{total} in {origin}, but {first_origin} gives the same partition \
                         total_buckets = {first_total}; all writers of one partition must use \
                         the same bucket plan"
                    ),
                }))
            }
            Some(_) => {}
            None => {
                per_partition.insert(message.partition(), (total, *origin));
            }
        }
    }
    Ok(())
}
