//! One writer per bucket of a primary-key table.
//!
//! A primary-key table keeps one row per key and bucket, and the row that wins is the one
//! with the highest sequence number. Each writer numbers the rows of its bucket from the
//! bucket's state when it started, so two writers of one bucket produce level-0 files with
//! overlapping sequence ranges, and which of their rows wins for a key both wrote is
//! arbitrary (a dynamic-bucket table is worse: each writer assigns keys to buckets on its
//! own, so one key lands in two buckets and reads back twice). The coordinator cannot see
//! keys, but it can see that two payloads wrote into one (partition, bucket) — new files at
//! any level, or compaction results (two compactions of one bucket, each unaware of the
//! other, leave overlapping key ranges in one level) — and refuses that commit
//! ([`SharedBucket`]). Counting every level matters: new files outside level 0 are refused
//! by rule `new-file-level`, but this check does not rely on it.
//!
//! Exempt: tables without a primary key (append files never shadow each other) and postpone
//! tables (`bucket = -2`), which are designed for many writers: their files carry no bucket
//! until compaction assigns one. Messages of one payload may share a bucket (one writer).

use std::collections::HashMap;

use paimon::spec::{BinaryRow, DataField};
use paimon::table::CommitMessage;

use super::shared::buckets::partition_key;
use super::shared::check::has_compaction;
use super::shared::limits::BucketMode;
use super::shared::streamed::StreamedFacts;
use super::shared::table_rules::TableRules;
use crate::coordinator::error::{CoordinatorError, CoordinatorResult, MessageOrigin, SharedBucket};

/// Refuses messages in which two payloads (`origins[i].part`) write one (partition, bucket)
/// of a primary-key table: new files at any level, or compaction results.
pub(crate) fn check_one_writer_per_bucket(
    messages: &[CommitMessage],
    origins: &[MessageOrigin],
    rules: &TableRules,
) -> CoordinatorResult<()> {
    if !rules.has_primary_keys() || rules.bucket_mode() == BucketMode::Postpone {
        return Ok(());
    }
    let partitioned = !rules.partition_fields().is_empty();
    let mut writer_of: HashMap<(&[u8], i32), MessageOrigin> = HashMap::new();
    for (message, origin) in messages.iter().zip(origins) {
        let writes_bucket = !message.new_files.is_empty() || has_compaction(message);
        if !writes_bucket {
            continue;
        }
        let key = (
            partition_key(partitioned, &message.partition),
            message.bucket,
        );
        match writer_of.get(&key) {
            Some(first) if first.part != origin.part => {
                return Err(CoordinatorError::SharedBucket(SharedBucket {
                    partition: render_partition(&message.partition, rules.partition_fields()),
                    bucket: message.bucket,
                    first: *first,
                    second: *origin,
                }));
            }
            Some(_) => {}
            None => {
                writer_of.insert(key, *origin);
            }
        }
    }
    Ok(())
}

/// [`check_one_writer_per_bucket`] for one payload of a streamed commit (`payload`, its
/// messages with their origins in it), against the writer each bucket kept in `facts`.
pub(crate) fn stage_streamed_writers(
    rules: &TableRules,
    facts: &mut StreamedFacts,
    payload: u32,
    messages: &[CommitMessage],
    origins: &[MessageOrigin],
) -> CoordinatorResult<()> {
    if !rules.has_primary_keys() || rules.bucket_mode() == BucketMode::Postpone {
        return Ok(());
    }
    let partitioned = !rules.partition_fields().is_empty();
    for (message, origin) in messages.iter().zip(origins) {
        if message.new_files.is_empty() {
            continue;
        }
        let key = (
            partition_key(partitioned, &message.partition).to_vec(),
            message.bucket,
        );
        let id = facts.bucket_id(&key);
        let here = (
            payload,
            u32::try_from(origin.message_index).unwrap_or(u32::MAX),
        );
        let bucket = facts.bucket_mut(id);
        match bucket.writer {
            None => bucket.writer = Some(here),
            Some((first, _)) if first == payload => {}
            Some((first, first_message)) => {
                return Err(CoordinatorError::SharedBucket(SharedBucket {
                    partition: render_partition(&message.partition, rules.partition_fields()),
                    bucket: message.bucket,
                    first: MessageOrigin {
                        part: first as usize,
                        message_index: first_message as usize,
                    },
                    second: MessageOrigin {
                        part: payload as usize,
                        message_index: origin.message_index,
                    },
                }));
            }
        }
    }
    Ok(())
}

/// `key=value/...`; the bytes in hex if they do not decode (validation has run, so they do).
fn render_partition(bytes: &[u8], fields: &[DataField]) -> String {
    if fields.is_empty() {
        return String::new();
    }
    let decoded = BinaryRow::from_serialized_bytes(bytes)
        .ok()
        .and_then(|row| {
            fields
                .iter()
                .enumerate()
                .map(|(pos, field)| {
                    row.get_datum(pos, field.data_type()).ok().map(|value| {
                        let value = value.map_or_else(|| "null".to_string(), |v| v.to_string());
                        format!("{}={value}", field.name())
                    })
                })
                .collect::<Option<Vec<_>>>()
        });
    decoded.map_or_else(|| crate::dump::hex(bytes), |parts| parts.join("/"))
}
