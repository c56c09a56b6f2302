//! The coordinator's rules: everything it checks before it publishes, one family per module,
//! catalogued in [`registry::REGISTRY`] (name, stage, module, what each rule protects, the
//! lists it reads, its tests) and run through the two entry points here, which `validate` and
//! `commit` share: `TableRules::validate` for each message, `check_against_table` for a
//! merged commit against the table.
//!
//! ```text
//! coordinator API (mod.rs, commit.rs)
//!     │ calls
//!     ▼
//! rules (this module): the stages' entry points, running the families in registry order
//!     │
//!     ▼
//! families: validate · table_state · compaction · sorted_runs · deletion_vectors
//!           · hash_index · verify · merge · one_writer
//!           (each imports shared/ only: never a sibling, never anything above)
//!     │
//!     ▼
//! shared/: buckets · fields · keys · limits · paths · table_rules · check · state · history
//!     │
//!     ▼
//! leaf types: coordinator::error, coordinator::binding, rules::registry (the catalogue)
//! ```
//!
//! The stages ([`registry::Stage`]):
//! - **message**, on each message as its payload is decoded: `TableRules::validate` runs
//!   the per-message rules of [`validate`], then those of `hash_index` and `compaction`
//!   that need one message only;
//! - **table state**, against the latest snapshot, its history and storage, before anything
//!   is published: `check_against_table` reads the state once (`shared::state`) and runs
//!   `table_state`, `compaction`, `sorted_runs`, `deletion_vectors`, `hash_index` and, with
//!   verification, `verify`;
//! - **merge**, across payloads (`Coordinator::merge`): `merge` (one file, one entry) and
//!   `one_writer` (one writer per primary-key bucket);
//! - **publication**, when `commit` reports its outcome: rule `identifier-owner`, judged by
//!   the publication itself (`coordinator::commit`), the only code that sees the snapshot the
//!   commit's identifier landed in.
//!
//! `tests/coordinator/registry.rs` keeps this layering: a family imports nothing from another
//! family or from above the rules, and every module the registry names is a file here.

pub(crate) mod compaction;
pub(crate) mod deletion_vectors;
pub(crate) mod hash_index;
pub(crate) mod merge;
pub(crate) mod one_writer;
pub mod registry;
pub(crate) mod shared;
pub(crate) mod sorted_runs;
pub(crate) mod superseded_rows;
pub(crate) mod table_state;
pub mod validate;
pub(crate) mod verify;

use paimon::table::CommitMessage;

use crate::coordinator::binding::{CommitMode, WriteKind};
use crate::coordinator::error::{CoordinatorResult, MessageOrigin, Rule, ValidationError};
use shared::check::{compaction_lists, has_compaction, Check, ListElement};
use shared::fields::{MessageFields, DATA_LISTS, INDEX_LISTS, NEW_CHANGELOG_FILES, NEW_FILES};
use shared::state::{read_state, read_state_of, TableContext};
use shared::streamed::{FileSeen, StreamedFacts};
use shared::table_rules::TableRules;

impl TableRules {
    /// Checks message `index` against every rule, then applies the binding (see
    /// [`Self::apply`]).
    pub(crate) fn validate_and_apply(
        &self,
        index: usize,
        mut message: CommitMessage,
        mode: CommitMode,
    ) -> Result<CommitMessage, ValidationError> {
        self.validate(index, &message, mode)?;
        self.apply(&mut message, mode);
        Ok(message)
    }

    /// Checks message `index` (owned, or a view over payload bytes) against every rule.
    pub(crate) fn validate<M: MessageFields>(
        &self,
        index: usize,
        message: &M,
        mode: CommitMode,
    ) -> Result<(), ValidationError> {
        let check = Check::new(self, index, message.partition(), message.bucket());
        check.partition(message.partition())?;
        check.bucket(message.bucket(), message.total_buckets())?;
        if let Some(snapshot) = message.check_from_snapshot() {
            check.non_negative(|| "check_from_snapshot".into(), snapshot)?;
        }
        if let Some((list, files)) = compaction_lists(message).find(|(_, n)| *n > 0) {
            let refusal = if !self.allow_compaction {
                Some(
                    "compaction is opt-in: a compaction replaces rows with rows the coordinator \
                     cannot read, so the binding refuses it unless the job's writers compact \
                     (Binding::with_compaction, C paimon_wire_table_commit_new_with_compaction, \
                     CLI --allow-compaction, Python allow_compaction=True)",
                )
            } else if mode == CommitMode::Overwrite {
                Some("an overwrite commit does not take compaction results; commit them in append mode")
            } else {
                None
            };
            if let Some(refusal) = refusal {
                return Err(check.fail(
                    list.to_string(),
                    Rule::CompactIncrement,
                    format!("{files} compaction file(s): {refusal}"),
                ));
            }
        }
        for (slot, list) in DATA_LISTS.into_iter().enumerate() {
            for (i, file) in message.data_files(slot).enumerate() {
                check.data_file(&ListElement(list, i), file)?;
                if slot == NEW_FILES {
                    check.new_file_level(&ListElement(list, i), file)?;
                }
            }
        }
        for (slot, list) in INDEX_LISTS.into_iter().enumerate() {
            for (i, file) in message.index_files(slot).enumerate() {
                check.index_file(&ListElement(list, i), file)?;
            }
        }
        hash_index::check_message(&check, message)?;
        check.change_kinds(message)?;
        compaction::check_message(&check, message)?;
        Ok(())
    }

    /// Applies the binding to a validated message: the table-level `total_buckets` of a
    /// standard message is dropped (the commit fills in the table's own), and a postpone
    /// fixed-bucket message is marked for the overwrite path in overwrite mode.
    pub(crate) fn apply(&self, message: &mut CommitMessage, mode: CommitMode) {
        match self.write_kind {
            WriteKind::Standard => message.total_buckets = None,
            WriteKind::PostponeFixedBucket => {
                if mode == CommitMode::Overwrite {
                    message.mark_fixed_bucket_overwrite();
                }
            }
        }
    }
}

/// Checks `messages` (merged, about to be committed) against the latest snapshot of the
/// coordinator's table and its retained history. `message_index` in an error is the
/// message's position in the merged set; the field names the list, position and file.
pub(crate) async fn check_against_table(
    context: TableContext<'_>,
    messages: &[CommitMessage],
) -> CoordinatorResult<()> {
    match check_against_table_but_existence(context, messages).await? {
        Some(existence) => existence.finish().await,
        None => Ok(()),
    }
}

/// [`check_against_table`] with the existence check (rule `missing-file`) started but not
/// awaited: it runs on a task of its own from the start, beside the reading of the table
/// and the other rules, and is returned for the caller to await (`None` when nothing is
/// left to await). `commit` hands it to the paimon crate, which awaits it before publishing,
/// so the check runs while the manifests are encoded and written. Every other rule has
/// answered when this returns `Ok`. With compaction verification the check is awaited here,
/// before the results are read.
pub(crate) async fn check_against_table_but_existence(
    context: TableContext<'_>,
    messages: &[CommitMessage],
) -> CoordinatorResult<Option<table_state::PendingExistenceCheck>> {
    table_state::check_roles(messages)?;
    let existence = table_state::start_added_files_check(context, messages)?;
    let state = read_state(context, messages).await?;
    table_state::check_sums(messages, state.snapshot.as_ref())?;
    table_state::check_sequence_numbers(context, messages, &state)?;
    table_state::check_sequence_headroom(messages, &state)?;
    table_state::check_added_files_are_new(messages, &state)?;
    table_state::check_deleted_files_are_live(messages, &state)?;
    compaction::check_against_table(context.rules, messages, &state)?;
    sorted_runs::check_against_table(context.rules, messages, &state)?;
    let grown = deletion_vectors::check_against_table(context, messages, &state).await?;
    superseded_rows::check_against_table(context, messages, &state, &grown).await?;
    hash_index::check_against_table(context, messages, &state).await?;
    if context.binding.verify_compaction && messages.iter().any(has_compaction) {
        // Verification reads the results: they exist first.
        if let Some(existence) = existence {
            existence.finish().await?;
        }
        verify::verify_compactions(
            context.table,
            context.rules.table_name(),
            context.rules.has_primary_keys(),
            messages,
            &state,
        )
        .await?;
        return Ok(None);
    }
    Ok(existence)
}

/// Whether a bound message can take the streamed path: it carries files only in
/// [`registry::STREAMED_LISTS`] and no `check_from_snapshot` (a check that depends on the
/// snapshot the commit builds on).
pub(crate) fn streamable(message: &CommitMessage) -> bool {
    message.check_from_snapshot.is_none()
        && (0..DATA_LISTS.len())
            .filter(|slot| !registry::STREAMED_LISTS.contains(&DATA_LISTS[*slot]))
            .all(|slot| message.data_file_count(slot) == 0)
        && (0..INDEX_LISTS.len()).all(|slot| message.index_file_count(slot) == 0)
}

/// The merge-stage rules of a streamed commit, for the messages of payload `payload` (bound,
/// each with its origin in the payload), against what `facts` kept of the payloads before:
/// a file named again in its list with the same partition, bucket and metadata is dropped
/// (a worker's retry, as [`merge::dedup`] drops it), named with others is a
/// [`crate::coordinator::MergeConflict`], named in the other list breaks rule `two-roles`;
/// then one writer per bucket ([`one_writer`]). Every file left is kept in `facts`.
/// On a refusal `facts` may hold part of the payload: the commit is refused whole.
pub(crate) fn stage_streamed(
    rules: &TableRules,
    facts: &mut StreamedFacts,
    payload: u32,
    messages: &mut [CommitMessage],
    origins: &[MessageOrigin],
) -> CoordinatorResult<()> {
    use crate::coordinator::digest::{added_file_fingerprint, LeafPlace};
    let partitioned = !rules.partition_fields().is_empty();
    for (message, origin) in messages.iter_mut().zip(origins) {
        let message_index = u32::try_from(origin.message_index).unwrap_or(u32::MAX);
        let key = shared::buckets::bucket_key(partitioned, &message.partition, message.bucket);
        let bucket = facts.bucket_id(&key);
        let partition = key.0;
        for slot in [NEW_FILES, NEW_CHANGELOG_FILES] {
            let list = DATA_LISTS[slot];
            let place = LeafPlace::new(list, &partition, message.bucket);
            let files = if slot == NEW_FILES {
                &mut message.new_files
            } else {
                &mut message.new_changelog_files
            };
            let mut kept = Vec::with_capacity(files.len());
            for file in files.drain(..) {
                let key = facts.names().key(&file.file_name);
                let leaf = place.leaf(&file);
                match facts.seen(key) {
                    None => {
                        let here = FileSeen {
                            bucket,
                            list: slot as u8,
                            leaf: 0,
                            payload,
                            message: message_index,
                            in_directory: file.external_path.is_none()
                                && file.extra_files.is_empty(),
                        };
                        let fingerprint = added_file_fingerprint(&partition, message.bucket, &file);
                        facts.keep(key, here, leaf, fingerprint, &file);
                        kept.push(file);
                    }
                    Some(first) if usize::from(first.list) != slot => {
                        return Err(table_state::streamed_two_roles(
                            &file.file_name,
                            list,
                            first,
                            payload,
                            message_index,
                        ));
                    }
                    // The same file reported again: one copy is kept.
                    Some(first) if facts.leaf_is(first.leaf, &leaf) => {}
                    Some(first) => {
                        let origin_of = |payload: u32, message: u32| MessageOrigin {
                            part: payload as usize,
                            message_index: message as usize,
                        };
                        return Err(merge::streamed_conflict(
                            list,
                            &file.file_name,
                            origin_of(first.payload, first.message),
                            origin_of(payload, message_index),
                        ));
                    }
                }
            }
            *files = kept;
        }
        table_state::note_streamed_sequences(
            facts,
            bucket,
            payload,
            message_index,
            &message.new_files,
        );
    }
    one_writer::stage_streamed_writers(rules, facts, payload, messages, origins)
}

/// [`check_against_table`] for a streamed commit, on what it kept: reads the table's state in
/// the buckets it writes and runs the table-state rules that read name keys and per-bucket
/// state ([`registry::Reads`]). Rule `missing-file` is checked on batches of payloads
/// ([`table_state::ExistenceBatch`]).
pub(crate) async fn check_streamed_against_table(
    context: TableContext<'_>,
    facts: &StreamedFacts,
) -> CoordinatorResult<()> {
    let touched = facts.buckets().iter().map(|b| b.key.clone()).collect();
    let state = read_state_of(context, &touched).await?;
    table_state::check_streamed(context, facts, &state)
}

/// Rule `missing-file` for a streamed commit's files directly in their bucket directories:
/// each directory listed once ([`table_state::check_streamed_existence`]). `manifests` are
/// the commit's written delta and changelog manifests, read back only to name a file the
/// listings do not show.
pub(crate) async fn check_streamed_existence(
    context: TableContext<'_>,
    facts: &StreamedFacts,
    manifests: &[String],
) -> CoordinatorResult<()> {
    table_state::check_streamed_existence(context, facts, manifests).await
}
