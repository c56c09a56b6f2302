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

use std::collections::HashMap;

use paimon::table::CommitMessage;

use super::error::{
    CoordinatorError, CoordinatorResult, MergeConflict, MessageOrigin, Rule, ValidationError,
};
use super::validate::TableRules;
use super::WriteKind;

/// Where a file was first seen and what it looked like there.
struct FirstSeen<'a, T> {
    origin: MessageOrigin,
    partition: &'a [u8],
    bucket: i32,
    total_buckets: Option<i32>,
    file: &'a T,
    message: &'a CommitMessage,
}

/// The lists of files a message removes; see the module documentation.
const REMOVAL_LISTS: [&str; 4] = [
    "deleted_files",
    "compact_before",
    "deleted_index_files",
    "compact_deleted_index_files",
];

/// Drops identical duplicate files, refuses conflicting ones, drops messages left empty.
pub(crate) fn dedup(
    messages: Vec<CommitMessage>,
    origins: Vec<MessageOrigin>,
    rules: &TableRules,
) -> CoordinatorResult<(Vec<CommitMessage>, Vec<MessageOrigin>)> {
    if rules.write_kind() == WriteKind::PostponeFixedBucket {
        check_total_buckets_per_partition(&messages, &origins)?;
    }
    // Decide, for every file of every message, whether it is a duplicate to drop.
    let mut drop: Vec<[Vec<bool>; 10]> = Vec::with_capacity(messages.len());
    {
        let mut data_seen: HashMap<(&'static str, &str), FirstSeen<'_, _>> = HashMap::new();
        let mut index_seen: HashMap<(&'static str, &str), FirstSeen<'_, _>> = HashMap::new();
        for (message, origin) in messages.iter().zip(&origins) {
            let mut drops: [Vec<bool>; 10] = Default::default();
            for (slot, (list, files)) in [
                ("new_files", &message.new_files),
                ("deleted_files", &message.deleted_files),
                ("new_changelog_files", &message.new_changelog_files),
                ("compact_before", &message.compact_before),
                ("compact_after", &message.compact_after),
                ("compact_changelog_files", &message.compact_changelog_files),
            ]
            .into_iter()
            .enumerate()
            {
                for file in files {
                    drops[slot].push(seen_before(
                        &mut data_seen,
                        list,
                        &file.file_name,
                        file,
                        message,
                        *origin,
                    )?);
                }
            }
            for (slot, (list, files)) in [
                ("new_index_files", &message.new_index_files),
                ("deleted_index_files", &message.deleted_index_files),
                ("compact_new_index_files", &message.compact_new_index_files),
                (
                    "compact_deleted_index_files",
                    &message.compact_deleted_index_files,
                ),
            ]
            .into_iter()
            .enumerate()
            {
                for file in files {
                    drops[6 + slot].push(seen_before(
                        &mut index_seen,
                        list,
                        &file.file_name,
                        file,
                        message,
                        *origin,
                    )?);
                }
            }
            drop.push(drops);
        }
    }
    let mut kept_messages = Vec::with_capacity(messages.len());
    let mut kept_origins = Vec::with_capacity(messages.len());
    for ((mut message, origin), drops) in messages.into_iter().zip(origins).zip(drop) {
        let [new, deleted, changelog, before, after, compact_changelog, new_index, deleted_index, compact_new_index, compact_deleted_index] =
            drops;
        retain_unmarked(&mut message.new_files, &new);
        retain_unmarked(&mut message.deleted_files, &deleted);
        retain_unmarked(&mut message.new_changelog_files, &changelog);
        retain_unmarked(&mut message.compact_before, &before);
        retain_unmarked(&mut message.compact_after, &after);
        retain_unmarked(&mut message.compact_changelog_files, &compact_changelog);
        retain_unmarked(&mut message.new_index_files, &new_index);
        retain_unmarked(&mut message.deleted_index_files, &deleted_index);
        retain_unmarked(&mut message.compact_new_index_files, &compact_new_index);
        retain_unmarked(
            &mut message.compact_deleted_index_files,
            &compact_deleted_index,
        );
        let has_files = !(message.new_files.is_empty()
            && message.deleted_files.is_empty()
            && message.new_changelog_files.is_empty()
            && message.new_index_files.is_empty()
            && message.deleted_index_files.is_empty())
            || super::validate::has_compaction(&message);
        if has_files {
            kept_messages.push(message);
            kept_origins.push(origin);
        }
    }
    Ok((kept_messages, kept_origins))
}

/// `true` if this file is an identical duplicate of one seen before; records it otherwise.
fn seen_before<'a, T: PartialEq>(
    seen: &mut HashMap<(&'static str, &'a str), FirstSeen<'a, T>>,
    list: &'static str,
    file_name: &'a str,
    file: &'a T,
    message: &'a CommitMessage,
    origin: MessageOrigin,
) -> CoordinatorResult<bool> {
    let Some(first) = seen.get(&(list, file_name)) else {
        seen.insert(
            (list, file_name),
            FirstSeen {
                origin,
                partition: &message.partition,
                bucket: message.bucket,
                total_buckets: message.total_buckets,
                file,
                message,
            },
        );
        return Ok(false);
    };
    let difference = if first.partition != message.partition.as_slice() {
        "partition"
    } else if first.bucket != message.bucket {
        "bucket"
    } else if first.total_buckets != message.total_buckets {
        "total_buckets"
    } else if first.file != file {
        "file metadata"
    } else if REMOVAL_LISTS.contains(&list) && !same_files(first.message, message) {
        "the message removing it (two writers remove one file)"
    } else {
        return Ok(true);
    };
    Err(CoordinatorError::Merge(MergeConflict {
        list,
        file_name: file_name.to_string(),
        first: first.origin,
        second: origin,
        difference: difference.to_string(),
    }))
}

/// Whether two messages report the same files, by name, in every list: the same message
/// delivered twice.
fn same_files(a: &CommitMessage, b: &CommitMessage) -> bool {
    fn data(files: &[paimon::spec::DataFileMeta]) -> impl Iterator<Item = &str> {
        files.iter().map(|f| f.file_name.as_str())
    }
    fn index(files: &[paimon::spec::IndexFileMeta]) -> impl Iterator<Item = &str> {
        files.iter().map(|f| f.file_name.as_str())
    }
    std::ptr::eq(a, b)
        || (data(&a.new_files).eq(data(&b.new_files))
            && data(&a.deleted_files).eq(data(&b.deleted_files))
            && data(&a.new_changelog_files).eq(data(&b.new_changelog_files))
            && data(&a.compact_before).eq(data(&b.compact_before))
            && data(&a.compact_after).eq(data(&b.compact_after))
            && data(&a.compact_changelog_files).eq(data(&b.compact_changelog_files))
            && index(&a.new_index_files).eq(index(&b.new_index_files))
            && index(&a.deleted_index_files).eq(index(&b.deleted_index_files))
            && index(&a.compact_new_index_files).eq(index(&b.compact_new_index_files))
            && index(&a.compact_deleted_index_files).eq(index(&b.compact_deleted_index_files)))
}

fn retain_unmarked<T>(files: &mut Vec<T>, drop: &[bool]) {
    let mut marks = drop.iter();
    files.retain(|_| !marks.next().copied().unwrap_or(false));
}

fn check_total_buckets_per_partition(
    messages: &[CommitMessage],
    origins: &[MessageOrigin],
) -> CoordinatorResult<()> {
    let mut per_partition: HashMap<&[u8], (i32, MessageOrigin)> = HashMap::new();
    for (message, origin) in messages.iter().zip(origins) {
        let Some(total) = message.total_buckets else {
            continue;
        };
        match per_partition.get(message.partition.as_slice()) {
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
                per_partition.insert(&message.partition, (total, *origin));
            }
        }
    }
    Ok(())
}
