//! Rule family **compaction**: what a payload's compaction results (`compact_before`,
//! `compact_after`, compact changelog and index files) must satisfy before they are
//! committed as a COMPACT snapshot.
//!
//! A compaction replaces rows with rows the coordinator does not read, so a payload that
//! carries one could erase, hide or bring back rows. Compaction is therefore **opt-in**
//! ([`crate::coordinator::Binding::with_compaction`]); with it, every rule below holds, each checkable
//! from metadata and the table's state alone.
//!
//! | rule | what it protects | where | tests (`tests/coordinator/`) |
//! |---|---|---|---|
//! | `compact-increment` | a binding that did not opt in takes no compaction, and an overwrite takes none | [`super::validate`] | `compaction::compaction_is_refused_unless_the_binding_opts_in`, `hostile_round_3::*` |
//! | `compact-inputs` | a compaction has inputs: outputs with nothing compacted would add rows unchecked (a stale writer's files as level-1 "results") | [`check_message`] | `hostile_round_3::a_compaction_without_inputs_is_refused` |
//! | `compact-levels` | an in-place upgrade moves a file up a level and changes nothing else; a primary-key table's results are above level 0; no result above the table's `num-levels` | [`check_message`] | `compaction::*levels*`, `hostile_round_3::levels_beyond_num_levels_are_refused` |
//! | `compact-ranges` | on a primary-key table every result's key range and sequence range lie within its inputs' (a result cannot claim keys or win merges its inputs did not have) | [`check_message`] | `hostile_round_3::results_outside_their_inputs_ranges_are_refused` |
//! | `not-live` | every input is live at its level in its bucket and identical to the live entry (so the COMPACT snapshot cannot fail after the APPEND snapshot is published) | [`super::table_state`] | `hostile_round_3::an_input_that_differs_from_the_live_entry_is_refused_before_anything_is_published` |
//! | `compact-runs` | a primary-key table's compaction takes whole sorted runs from the newest down and writes below every run it leaves, as Java's strategies do: no skipped run between its inputs | [`super::sorted_runs`] | `hostile_round_4::a_compaction_that_skips_a_sorted_run_is_refused` |
//! | `compact-rows` | on an append table the rows out equal the rows in minus those the dropped deletion vectors removed; on a primary-key table rows out never exceed rows in | [`check_against_table`] | `hostile_round_3::a_compaction_that_drops_rows_is_refused` |
//! | `deletion-vectors` | a compaction drops only the deletion vectors of files it compacts and adds them only for its results (or carries one unchanged) | [`super::deletion_vectors`] | `hostile_round_3::compaction_deletion_vectors_*` |
//!
//! Postpone tables (`bucket = -2`) compact across buckets (inputs in bucket -2, results in
//! the real buckets), so for them `compact-inputs` and `compact-rows` count the whole commit
//! and `compact-ranges` does not apply.

use std::collections::HashMap;

use paimon::spec::DataFileMeta;
use paimon::table::CommitMessage;

use super::shared::buckets::{bucket_key, BucketKey};
use super::shared::check::{compaction_lists, Check};
use super::shared::fields::{
    metadata_difference, DataFileFields, MessageFields, COMPACT_AFTER, COMPACT_BEFORE,
};
use super::shared::keys::{compare, Key};
use super::shared::limits::BucketMode;
use super::shared::state::{refuse, TableState};
use super::shared::table_rules::TableRules;
use crate::coordinator::error::{CoordinatorResult, Rule, ValidationError};

/// Checks the compaction lists of one message against themselves and the table's options
/// (`compact-inputs`, `compact-levels`, `compact-ranges`). Runs at deserialization, on views
/// and owned messages alike.
pub(crate) fn check_message<M: MessageFields>(
    check: &Check<'_>,
    message: &M,
) -> Result<(), ValidationError> {
    let rules = check.rules();
    let Some((first_list, _)) = compaction_lists(message).find(|(_, n)| *n > 0) else {
        return Ok(());
    };
    let postpone = rules.bucket_mode() == BucketMode::Postpone;
    if !postpone && message.data_file_count(COMPACT_BEFORE) == 0 {
        return Err(check.fail(
            format!("{first_list}[0]"),
            Rule::CompactInputs,
            format!(
                "the message carries compaction results ({first_list}) but no compaction \
                 inputs (compact_before is empty); a compaction rewrites files it names, so \
                 results without inputs would add rows no rule has seen"
            ),
        ));
    }
    let before: HashMap<&str, M::DataFile<'_>> = message
        .data_files(COMPACT_BEFORE)
        .map(|f| (f.file_name(), f))
        .collect();
    let max_level = rules.num_levels() - 1;
    for (i, file) in message.data_files(COMPACT_AFTER).enumerate() {
        let level = file.level();
        let at = |field: &str| format!("compact_after[{i}].{field}");
        if let Some(from) = before.get(file.file_name()) {
            if level <= from.level() {
                return Err(check.fail(
                    at("level"),
                    Rule::CompactLevels,
                    format!(
                        "{:?} is upgraded in place from level {} to level {level}; an \
                         upgrade moves a file to a higher level",
                        file.file_name(),
                        from.level()
                    ),
                ));
            }
            if let Some(field) = metadata_difference(from, &file) {
                return Err(check.fail(
                    at(field),
                    Rule::CompactLevels,
                    format!(
                        "{:?} is upgraded in place (named in compact_before and \
                         compact_after) but its {field} changed; an upgrade changes only the \
                         level",
                        file.file_name()
                    ),
                ));
            }
        }
        if rules.has_primary_keys() && !postpone && level == 0 {
            return Err(check.fail(
                at("level"),
                Rule::CompactLevels,
                format!(
                    "{:?} is a compaction result at level 0; a primary-key table's \
                     compaction writes level 1 or above",
                    file.file_name()
                ),
            ));
        }
        if level > max_level {
            return Err(check.fail(
                at("level"),
                Rule::CompactLevels,
                format!(
                    "{:?} is a compaction result at level {level}, above the table's highest \
                     level {max_level} (num-levels = {}); a writer restoring the bucket would \
                     make a sorted run for every level up to it",
                    file.file_name(),
                    rules.num_levels()
                ),
            ));
        }
    }
    if rules.has_primary_keys() && !postpone {
        check_ranges(check, message)?;
    }
    Ok(())
}

/// Rule `compact-ranges`: every result's keys and sequence numbers lie within the union of
/// the inputs' (the inputs are checked at commit to be the live entries, so their ranges
/// are the table's).
fn check_ranges<M: MessageFields>(check: &Check<'_>, message: &M) -> Result<(), ValidationError> {
    let keys = check.rules().key_type();
    let decode = |bytes: &[u8]| keys.decode(bytes).ok();
    let mut min_sequence = i64::MAX;
    let mut max_sequence = i64::MIN;
    let mut min_key: Option<Key> = None;
    let mut max_key: Option<Key> = None;
    for file in message.data_files(COMPACT_BEFORE) {
        min_sequence = min_sequence.min(file.min_sequence_number());
        max_sequence = max_sequence.max(file.max_sequence_number());
        // Key rows were checked to decode (rule key-range) before this runs.
        if let (Some(lo), Some(hi)) = (decode(file.min_key()), decode(file.max_key())) {
            if min_key
                .as_ref()
                .is_none_or(|m| compare(&lo, m) == Some(std::cmp::Ordering::Less))
            {
                min_key = Some(lo);
            }
            if max_key
                .as_ref()
                .is_none_or(|m| compare(&hi, m) == Some(std::cmp::Ordering::Greater))
            {
                max_key = Some(hi);
            }
        }
    }
    for (i, file) in message.data_files(COMPACT_AFTER).enumerate() {
        let (lo, hi) = (file.min_sequence_number(), file.max_sequence_number());
        if lo < min_sequence || hi > max_sequence {
            return Err(check.fail(
                format!("compact_after[{i}].sequence_numbers"),
                Rule::CompactRanges,
                format!(
                    "{:?} holds sequence numbers {lo}..={hi}, outside its inputs' \
                     {min_sequence}..={max_sequence}; a compaction keeps the sequence numbers \
                     of the rows it rewrites, so these rows did not come from its inputs",
                    file.file_name()
                ),
            ));
        }
        let (Some(file_lo), Some(file_hi), Some(union_lo), Some(union_hi)) = (
            decode(file.min_key()),
            decode(file.max_key()),
            min_key.as_ref(),
            max_key.as_ref(),
        ) else {
            continue;
        };
        if compare(&file_lo, union_lo) == Some(std::cmp::Ordering::Less)
            || compare(&file_hi, union_hi) == Some(std::cmp::Ordering::Greater)
        {
            return Err(check.fail(
                format!("compact_after[{i}].keys"),
                Rule::CompactRanges,
                format!(
                    "{:?} claims keys outside its inputs' key range; a compaction's results \
                     hold only keys its inputs held",
                    file.file_name()
                ),
            ));
        }
    }
    Ok(())
}

/// The rows a data file shows readers: its rows less those its deletion vector hides.
/// `None` when the deletion vector does not record how many rows it hides.
fn visible_rows(file: &DataFileMeta, deletion_vector: Option<Option<i64>>) -> Option<i64> {
    match deletion_vector {
        None => Some(file.row_count),
        Some(cardinality) => cardinality.map(|hidden| file.row_count - hidden),
    }
}

/// Rule `compact-rows`, at commit time: per bucket (the whole commit on a postpone table),
/// the rows a compaction's results show must equal the rows its inputs showed on an append
/// table, and may not exceed them on a primary-key table (merging drops older rows of a
/// key). Inputs count with their live deletion vectors, results with the deletion vectors
/// the compaction adds for them.
pub(crate) fn check_against_table(
    rules: &TableRules,
    messages: &[CommitMessage],
    state: &TableState,
) -> CoordinatorResult<()> {
    let postpone = rules.bucket_mode() == BucketMode::Postpone;
    // (bucket) → (rows in, rows out, first message with results).
    let mut rows: HashMap<BucketKey, (i64, i64, usize)> = HashMap::new();
    let new_deletion_vectors = state.new_compact_deletion_vectors(messages);
    let live_deletion_vectors = state.live_deletion_vectors();
    for (index, message) in messages.iter().enumerate() {
        if message.compact_before.is_empty() && message.compact_after.is_empty() {
            continue;
        }
        let key = if postpone {
            (Vec::new(), i32::MIN)
        } else {
            bucket_key(state.partitioned, &message.partition, message.bucket)
        };
        let message_key = bucket_key(state.partitioned, &message.partition, message.bucket);
        let entry = rows.entry(key).or_insert((0, 0, index));
        for (i, file) in message.compact_before.iter().enumerate() {
            let dv = live_deletion_vectors
                .get(&(&message_key, file.file_name.as_str()))
                .copied();
            let visible = visible_rows(file, dv).ok_or_else(|| {
                refuse(
                    index,
                    format!("compact_before[{i}]"),
                    Rule::CompactRows,
                    format!(
                        "{:?} has a live deletion vector that does not record how many rows \
                         it hides (written before Paimon 1.0), so the rows this compaction \
                         removes cannot be counted",
                        file.file_name
                    ),
                )
            })?;
            entry.0 = entry.0.saturating_add(visible);
        }
        for (i, file) in message.compact_after.iter().enumerate() {
            let dv = new_deletion_vectors
                .get(&(message_key.clone(), file.file_name.as_str()))
                .copied();
            let visible = visible_rows(file, dv).ok_or_else(|| {
                refuse(
                    index,
                    format!("compact_after[{i}]"),
                    Rule::CompactRows,
                    format!(
                        "the compaction adds a deletion vector to {:?} that does not record \
                         how many rows it hides",
                        file.file_name
                    ),
                )
            })?;
            entry.1 = entry.1.saturating_add(visible);
        }
    }
    let append = !rules.has_primary_keys();
    let mut buckets: Vec<_> = rows.into_iter().collect();
    buckets.sort_by_key(|(_, (_, _, index))| *index);
    for (_, (rows_in, rows_out, index)) in buckets {
        let wrong = if append {
            rows_out != rows_in
        } else {
            rows_out > rows_in
        };
        if wrong {
            let rule = if append {
                "on an append table a compaction keeps every row its inputs show"
            } else {
                "a compaction of a primary-key table merges rows; it never adds any"
            };
            return Err(refuse(
                index,
                "compact_after".into(),
                Rule::CompactRows,
                format!(
                    "the compaction's results show {rows_out} row(s), its inputs showed \
                     {rows_in} (deletion vectors counted); {rule}"
                ),
            ));
        }
    }
    Ok(())
}
