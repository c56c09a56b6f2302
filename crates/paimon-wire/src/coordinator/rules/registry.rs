//! The rule catalogue: every rule the coordinator enforces, in the order it applies them, with
//! what it protects, the lists of a message it reads, where it is checked and the tests that
//! show it refusing. One table, read by [`Rule::name`], [`Rule::needs_table_state`],
//! [`Rule::ALL`], `paimon-wire validate`'s "rules checked" line and the tests that keep the
//! catalogue, SECURITY.md, the test sources and the families of [`super`] in step
//! (`tests/coordinator/registry.rs`).
//!
//! `validate` (`Coordinator::deserialize` + `Coordinator::check_against_table`) and `commit`
//! run the same stages: [`Stage::Message`] rules on every message as its payload is decoded,
//! [`Stage::TableState`] rules in the one table-state check both call; [`Stage::Publication`]
//! rules judge the outcome of publishing, so only `commit` meets them.

use super::shared::fields::{DATA_LISTS, INDEX_LISTS};
use crate::coordinator::error::Rule;

/// When a rule is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// On each message, from the message and the bound table's schema and options alone, as
    /// its payload is decoded (`deserialize`, `deserialize_parts`, `bind_messages`).
    Message,
    /// Against the table's latest snapshot, history and storage, before anything is published
    /// (`check_against_table`, which `validate` runs, and `commit`).
    TableState,
    /// Against the snapshot that carries the commit's user and identifier, when `commit`
    /// reports its outcome.
    Publication,
}

/// The form of the commit a rule reads. It decides which commits the streamed commit of
/// `docs/SCALE.md` (which keeps about 100 bytes per file instead of every decoded message) can
/// check without holding the commit's entries: a rule that reads [`Reads::WholeEntries`] must
/// be kept off that path by one of its admission limits ([`KeptOff`]).
///
/// The streamed path admits commits whose messages carry only `new_files` and
/// `new_changelog_files` ([`STREAMED_LISTS`]), in append mode, on a table without row tracking
/// and without dynamic buckets: a staged commit ([`crate::coordinator::StagedCommit`]) of such
/// payloads. Every other commit takes the materialized path, which reads every form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reads {
    /// One message, with the bound table's schema and options: checked per payload as it is
    /// decoded, on either path.
    OneMessage,
    /// File-name keys (a keyed hash of each file's bucket and name) of the commit, against
    /// the table's names in the buckets the commit touches.
    NameKeys,
    /// Running state per commit and per bucket: checked sums, sequence ranges, owners.
    BucketState,
    /// The added files' paths, checked against storage per payload and then dropped.
    AddedPaths,
    /// The commit digest's leaves (one hash per added file), sorted and hashed at the end.
    DigestLeaves,
    /// Whole manifest entries, or the files' content: the materialized path only.
    WholeEntries(KeptOff),
}

/// Which admission limit of the streamed path keeps a [`Reads::WholeEntries`] rule off it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeptOff {
    /// The rule reads only lists the streamed path admits empty: none of
    /// [`STREAMED_LISTS`].
    ListsEmpty,
    /// The rule reads an admitted list only when the message's index lists carry files,
    /// which the streamed path admits empty.
    IndexListsEmpty,
    /// The rule reads an admitted list only on dynamic-bucket tables, which the streamed
    /// path does not take.
    DynamicBuckets,
}

/// The lists a commit on the streamed path may carry files in; every other list of its
/// messages is empty.
pub const STREAMED_LISTS: &[&str] = &["new_files", "new_changelog_files"];

/// One rule of the catalogue.
#[derive(Debug, Clone, Copy)]
pub struct RuleEntry {
    /// The rule.
    pub rule: Rule,
    /// Its stable name, the one errors print.
    pub name: &'static str,
    /// The module of `paimon_wire::coordinator` that enforces it.
    pub module: &'static str,
    /// When it is checked.
    pub stage: Stage,
    /// What it protects, in one sentence.
    pub protects: &'static str,
    /// The lists of a commit message it reads (`partition`, `bucket`, `total_buckets` for the
    /// message's own fields).
    pub lists: &'static [&'static str],
    /// The form of the commit it reads, which says whether the streamed commit can check it.
    pub reads: Reads,
    /// Tests that show it refusing, as `file::function` under the workspace root.
    pub tests: &'static [&'static str],
}

/// The data lists and the index lists, in wire order.
const EVERY_LIST: &[&str] = &every_list();
const fn every_list() -> [&'static str; DATA_LISTS.len() + INDEX_LISTS.len()] {
    let mut lists = [""; DATA_LISTS.len() + INDEX_LISTS.len()];
    let mut i = 0;
    while i < lists.len() {
        lists[i] = if i < DATA_LISTS.len() {
            DATA_LISTS[i]
        } else {
            INDEX_LISTS[i - DATA_LISTS.len()]
        };
        i += 1;
    }
    lists
}
const ADDED_DATA: &[&str] = &[
    "new_files",
    "new_changelog_files",
    "compact_after",
    "compact_changelog_files",
];
const COMPACTION: &[&str] = &[
    "compact_before",
    "compact_after",
    "compact_changelog_files",
    "compact_new_index_files",
    "compact_deleted_index_files",
];

/// Every rule, in the order the coordinator applies them. `REGISTRY[i].rule as usize == i`.
pub const REGISTRY: [RuleEntry; 30] = [
    RuleEntry {
        rule: Rule::Partition,
        name: "partition",
        module: "validate",
        stage: Stage::Message,
        protects: "one partition is one byte string: the row has the partition keys' arity and types, no null in a NOT NULL key, and the canonical encoding",
        lists: &["partition"],
        reads: Reads::OneMessage,
        tests: &["crates/paimon-wire/tests/coordinator/validation.rs::every_rule_rejects_its_crafted_payload_and_nothing_is_committed", "crates/paimon-wire/tests/coordinator/validation.rs::a_null_partition_value_from_a_real_writer_is_canonical"],
    },
    RuleEntry {
        rule: Rule::Bucket,
        name: "bucket",
        module: "validate",
        stage: Stage::Message,
        protects: "a message's bucket exists in the table's bucket mode (a dynamic-bucket table's within Java's 0..32767)",
        lists: &["bucket"],
        reads: Reads::OneMessage,
        tests: &["crates/paimon-wire/tests/coordinator/validation.rs::bucket_unaware_append_tables_take_bucket_zero_only", "crates/paimon-wire/tests/coordinator/hostile_round_4.rs::a_hash_index_in_a_bucket_beyond_javas_range_is_refused"],
    },
    RuleEntry {
        rule: Rule::TotalBuckets,
        name: "total-buckets",
        module: "validate",
        stage: Stage::Message,
        protects: "a message's bucket count agrees with the table, or with its partition's for postpone fixed-bucket writes",
        lists: &["total_buckets"],
        reads: Reads::OneMessage,
        tests: &["crates/paimon-wire/tests/coordinator/validation.rs::every_rule_rejects_its_crafted_payload_and_nothing_is_committed"],
    },
    RuleEntry {
        rule: Rule::PlainFileName,
        name: "plain-file-name",
        module: "validate",
        stage: Stage::Message,
        protects: "no file name points outside its bucket directory",
        lists: EVERY_LIST,
        reads: Reads::OneMessage,
        tests: &["crates/paimon-wire/tests/coordinator/validation.rs::every_rule_rejects_its_crafted_payload_and_nothing_is_committed"],
    },
    RuleEntry {
        rule: Rule::ExternalPath,
        name: "external-path",
        module: "validate",
        stage: Stage::Message,
        protects: "an external path is exactly a root of this table plus the file's own partition and bucket path",
        lists: EVERY_LIST,
        reads: Reads::OneMessage,
        tests: &["crates/paimon-wire/tests/coordinator/hostile.rs::external_paths_must_be_exactly_the_files_own_bucket_path_under_a_root"],
    },
    RuleEntry {
        rule: Rule::SchemaId,
        name: "schema-id",
        module: "validate",
        stage: Stage::Message,
        protects: "every file's schema (and a global index's field) exists in the table's history",
        lists: EVERY_LIST,
        reads: Reads::OneMessage,
        tests: &["crates/paimon-wire/tests/coordinator/hostile.rs::index_entries_are_checked_against_their_file_and_the_schema"],
    },
    RuleEntry {
        rule: Rule::NonNegative,
        name: "non-negative",
        module: "validate",
        stage: Stage::Message,
        protects: "sizes, counts, levels, offsets and lengths are not negative",
        lists: EVERY_LIST,
        reads: Reads::OneMessage,
        tests: &["crates/paimon-wire/tests/coordinator/validation.rs::every_rule_rejects_its_crafted_payload_and_nothing_is_committed"],
    },
    RuleEntry {
        rule: Rule::IndexType,
        name: "index-type",
        module: "validate",
        stage: Stage::Message,
        protects: "index files are of a type Paimon defines, spelled as Paimon writes it",
        lists: &INDEX_LISTS,
        reads: Reads::OneMessage,
        tests: &["crates/paimon-wire/tests/coordinator/hostile.rs::index_entries_are_checked_against_their_file_and_the_schema"],
    },
    RuleEntry {
        rule: Rule::KeyRange,
        name: "key-range",
        module: "validate",
        stage: Stage::Message,
        protects: "a primary-key file's key range is a range of the table's keys",
        lists: EVERY_LIST,
        reads: Reads::OneMessage,
        tests: &["crates/paimon-wire/tests/coordinator/hostile_round_3.rs::key_rows_must_be_keys_of_the_table_in_order"],
    },
    RuleEntry {
        rule: Rule::NewFileLevel,
        name: "new-file-level",
        module: "validate",
        stage: Stage::Message,
        protects: "new data files are at level 0, where writers flush, so the one-writer and sequence checks see them",
        lists: &["new_files"],
        reads: Reads::OneMessage,
        tests: &["crates/paimon-wire/tests/coordinator/hostile_round_3.rs::new_files_above_level_0_are_refused"],
    },
    RuleEntry {
        rule: Rule::HashIndexReplaced,
        name: "hash-index-replaced",
        module: "hash_index",
        stage: Stage::Message,
        protects: "a bucket whose HASH index a message deletes gets its new one in the same message, whatever the binding allows",
        lists: &INDEX_LISTS,
        reads: Reads::OneMessage,
        tests: &["crates/paimon-wire/tests/coordinator/hostile_round_4.rs::a_hash_index_deleted_without_a_replacement_is_refused_in_every_list", "crates/paimon-wire/tests/coordinator/hash_index.rs::hash_indexes_in_the_compaction_lists_are_checked_too"],
    },
    RuleEntry {
        rule: Rule::ChangeKind,
        name: "change-kind",
        module: "validate",
        stage: Stage::Message,
        protects: "only a binding that opted in to deletes commits deleted files, deletion vectors or deleted index files",
        lists: &["deleted_files", "new_index_files", "deleted_index_files"],
        reads: Reads::OneMessage,
        tests: &["crates/paimon-wire/tests/coordinator/hostile.rs::an_append_binding_refuses_deletes_unless_it_opts_in"],
    },
    RuleEntry {
        rule: Rule::CompactIncrement,
        name: "compact-increment",
        module: "validate",
        stage: Stage::Message,
        protects: "only a binding that opted in to compaction, in append mode, commits compaction results",
        lists: COMPACTION,
        reads: Reads::OneMessage,
        tests: &["crates/paimon-wire/tests/coordinator/hostile_round_3.rs::a_compaction_that_drops_rows_is_refused"],
    },
    RuleEntry {
        rule: Rule::CompactInputs,
        name: "compact-inputs",
        module: "compaction",
        stage: Stage::Message,
        protects: "a compaction with results has inputs",
        lists: COMPACTION,
        reads: Reads::OneMessage,
        tests: &["crates/paimon-wire/tests/coordinator/hostile_round_3.rs::a_compaction_without_inputs_is_refused"],
    },
    RuleEntry {
        rule: Rule::CompactLevels,
        name: "compact-levels",
        module: "compaction",
        stage: Stage::Message,
        protects: "an in-place upgrade moves a file up and changes nothing else; a primary-key result is above level 0 and within num-levels",
        lists: &["compact_before", "compact_after"],
        reads: Reads::OneMessage,
        tests: &["crates/paimon-wire/tests/coordinator/hostile_round_3.rs::results_outside_their_inputs_ranges_and_levels_are_refused"],
    },
    RuleEntry {
        rule: Rule::CompactRanges,
        name: "compact-ranges",
        module: "compaction",
        stage: Stage::Message,
        protects: "a primary-key result's key and sequence ranges lie within its inputs'",
        lists: &["compact_before", "compact_after"],
        reads: Reads::OneMessage,
        tests: &["crates/paimon-wire/tests/coordinator/hostile_round_3.rs::results_outside_their_inputs_ranges_and_levels_are_refused"],
    },
    RuleEntry {
        rule: Rule::Bounds,
        name: "bounds",
        module: "validate, table_state, hash_index",
        stage: Stage::TableState,
        protects: "the commit's arithmetic cannot overflow, a bucket keeps room for its next writers, and a commit's HASH index checks stay within the coordinator's memory budget",
        lists: EVERY_LIST,
        reads: Reads::BucketState,
        tests: &["crates/paimon-wire/tests/coordinator/hostile.rs::numbers_that_would_overflow_the_commit_are_refused_before_it", "crates/paimon-wire/tests/coordinator/hostile_round_3.rs::a_sequence_number_that_would_brick_the_bucket_is_refused", "crates/paimon-wire/tests/coordinator/hostile_round_4.rs::hash_indexes_are_read_under_the_coordinators_budget"],
    },
    RuleEntry {
        rule: Rule::TwoRoles,
        name: "two-roles",
        module: "table_state",
        stage: Stage::TableState,
        protects: "one file has one role in a commit, beside the roles a compaction gives it",
        lists: EVERY_LIST,
        reads: Reads::NameKeys,
        tests: &["crates/paimon-wire/tests/coordinator/hostile.rs::one_file_in_two_roles_is_refused"],
    },
    RuleEntry {
        rule: Rule::SequenceNumbers,
        name: "sequence-numbers",
        module: "table_state",
        stage: Stage::TableState,
        protects: "a primary-key bucket's new files fit the commit mode's sequence numbers, so updates merge in order",
        lists: &["new_files"],
        reads: Reads::BucketState,
        tests: &["crates/paimon-wire/tests/coordinator/writer_mode.rs::an_overwrite_writers_payload_is_refused_by_an_append_coordinator"],
    },
    RuleEntry {
        rule: Rule::AlreadyLive,
        name: "already-live",
        module: "table_state",
        stage: Stage::TableState,
        protects: "no file is added twice, nor brought back while the history holds it",
        lists: &["new_files", "new_changelog_files", "compact_after", "compact_changelog_files", "new_index_files", "compact_new_index_files"],
        reads: Reads::NameKeys,
        tests: &["crates/paimon-wire/tests/coordinator/hostile.rs::committed_files_sent_again_at_another_level_are_refused", "crates/paimon-wire/tests/coordinator/hostile_round_3.rs::files_removed_by_an_earlier_snapshot_do_not_come_back"],
    },
    RuleEntry {
        rule: Rule::NotLive,
        name: "not-live",
        module: "table_state",
        stage: Stage::TableState,
        protects: "a file a commit removes is live, at the level named, as the table records it",
        lists: &["deleted_files", "compact_before", "deleted_index_files", "compact_deleted_index_files"],
        reads: Reads::WholeEntries(KeptOff::ListsEmpty),
        tests: &["crates/paimon-wire/tests/coordinator/hostile.rs::a_deleted_file_must_be_live_at_the_level_named", "crates/paimon-wire/tests/coordinator/hostile_round_3.rs::an_input_that_differs_from_the_live_entry_is_refused_before_anything_is_published"],
    },
    RuleEntry {
        rule: Rule::CompactRuns,
        name: "compact-runs",
        module: "sorted_runs",
        stage: Stage::TableState,
        protects: "a primary-key compaction takes whole sorted runs from the newest down, writes below every run it leaves, and keeps each level one sorted run, so no key's older value wins again",
        lists: &["compact_before", "compact_after"],
        reads: Reads::WholeEntries(KeptOff::ListsEmpty),
        tests: &["crates/paimon-wire/tests/coordinator/hostile_round_4.rs::a_compaction_that_skips_a_sorted_run_is_refused", "crates/paimon-wire/tests/coordinator/hostile_round_4.rs::verified_compaction_keeps_every_keys_winner_with_its_sequence_number"],
    },
    RuleEntry {
        rule: Rule::CompactRows,
        name: "compact-rows",
        module: "compaction",
        stage: Stage::TableState,
        protects: "a compaction keeps the rows its inputs show (append tables), or at most them (primary-key tables)",
        lists: &["compact_before", "compact_after", "compact_new_index_files", "compact_deleted_index_files"],
        reads: Reads::WholeEntries(KeptOff::ListsEmpty),
        tests: &["crates/paimon-wire/tests/coordinator/hostile_round_3.rs::a_compaction_that_drops_rows_is_refused"],
    },
    RuleEntry {
        rule: Rule::DeletionVectors,
        name: "deletion-vectors",
        module: "deletion_vectors",
        stage: Stage::TableState,
        protects: "a live file's deletion vector only grows, in either increment (read by content); a compaction leaves the vectors of files it does not rewrite as they are (or, on tables where the newest version of a key wins, adds positions for superseded-rows to read); a vector hides only rows of its own file; a file has one vector",
        lists: &["new_files", "deleted_files", "compact_before", "compact_after", "new_index_files", "deleted_index_files", "compact_new_index_files", "compact_deleted_index_files"],
        reads: Reads::WholeEntries(KeptOff::IndexListsEmpty),
        tests: &["crates/paimon-wire/tests/coordinator/hostile_round_3.rs::compaction_deletion_vectors_cannot_hide_rows", "crates/paimon-wire/tests/coordinator/hostile_round_3.rs::compaction_deletion_vectors_cannot_resurrect_rows", "crates/paimon-wire/tests/coordinator/hostile_round_4.rs::a_carried_deletion_vector_with_other_positions_is_refused", "crates/paimon-wire/tests/coordinator/hostile_round_4.rs::a_deletion_vector_beyond_its_result_is_refused", "crates/paimon-wire/tests/coordinator/hostile_round_4.rs::a_data_increment_cannot_shrink_or_drop_a_live_deletion_vector"],
    },
    RuleEntry {
        rule: Rule::SupersededRows,
        name: "superseded-rows",
        module: "superseded_rows",
        stage: Stage::TableState,
        protects: "a compaction hides rows of a file it does not rewrite (Java's lookup compaction) only where its results hold a newer version of the row's key (read by content), on tables where the newest version wins or merges",
        lists: &["compact_after", "compact_new_index_files", "compact_deleted_index_files"],
        reads: Reads::WholeEntries(KeptOff::ListsEmpty),
        tests: &["crates/paimon-wire/tests/coordinator/lookup_compaction.rs::a_hidden_row_without_a_newer_version_in_the_results_is_refused", "crates/paimon-wire/tests/coordinator/lookup_compaction.rs::a_lookup_compaction_hides_only_rows_it_replaced"],
    },
    RuleEntry {
        rule: Rule::MissingFile,
        name: "missing-file",
        module: "table_state",
        stage: Stage::TableState,
        protects: "every file a commit adds exists in storage, so no snapshot names a file that is not there",
        lists: &["new_files", "new_changelog_files", "compact_after", "compact_changelog_files", "new_index_files", "compact_new_index_files"],
        reads: Reads::AddedPaths,
        tests: &["crates/paimon-wire/tests/coordinator/compaction.rs::compaction_results_that_do_not_fit_the_table_are_refused_by_rule", "crates/paimon-wire/tests/coordinator/hostile_round_4.rs::a_new_data_file_missing_from_storage_is_refused_by_validate_and_commit", "crates/paimon-wire/tests/coordinator/hostile_round_4.rs::a_commit_refused_by_the_existence_check_leaves_no_manifest_behind"],
    },
    RuleEntry {
        rule: Rule::CompactContent,
        name: "compact-content",
        module: "verify",
        stage: Stage::TableState,
        protects: "with verification, a compaction's results read as its inputs do: append rows as a multiset, every primary key's winner with its sequence number and row kind, a partial-update or aggregation bucket's merged rows (whole buckets only)",
        lists: &["compact_before", "compact_after", "compact_new_index_files"],
        reads: Reads::WholeEntries(KeptOff::ListsEmpty),
        tests: &["crates/paimon-wire/tests/coordinator/hostile_round_3.rs::verified_compaction_refuses_results_that_hold_other_rows", "crates/paimon-wire/tests/coordinator/hostile_round_4.rs::verified_compaction_keeps_every_keys_winner_with_its_sequence_number", "crates/paimon-wire/tests/coordinator/native_compaction.rs::a_verified_compaction_of_part_of_a_value_merging_bucket_is_refused"],
    },
    RuleEntry {
        rule: Rule::HashIndexCoverage,
        name: "hash-index-coverage",
        module: "hash_index",
        stage: Stage::TableState,
        protects: "a dynamic bucket with new data has a HASH index after the commit, and one that keeps its live index gets only keys that index lists (the new files' keys are read, and an unverified compaction's results')",
        lists: &["new_files", "compact_after", "new_index_files", "compact_new_index_files"],
        reads: Reads::WholeEntries(KeptOff::DynamicBuckets),
        tests: &["crates/paimon-wire/tests/coordinator/hash_index.rs::new_data_in_a_bucket_without_an_index_is_refused", "crates/paimon-wire/tests/coordinator/hash_index.rs::a_new_key_in_a_bucket_that_keeps_its_index_is_refused", "crates/paimon-wire/tests/coordinator/hash_index.rs::a_compaction_bringing_a_new_key_into_a_bucket_that_keeps_its_index_is_refused"],
    },
    RuleEntry {
        rule: Rule::HashIndexKeys,
        name: "hash-index-keys",
        module: "hash_index",
        stage: Stage::TableState,
        protects: "one bucket per key in every partition of a dynamic-bucket table",
        lists: &["new_index_files", "compact_new_index_files"],
        reads: Reads::WholeEntries(KeptOff::ListsEmpty),
        tests: &["crates/paimon-wire/tests/coordinator/hash_index.rs::two_assigners_giving_one_key_two_buckets_are_refused", "crates/paimon-wire/tests/coordinator/hash_index.rs::an_index_that_drops_keys_of_the_one_it_replaces_is_refused"],
    },
    RuleEntry {
        rule: Rule::IdentifierOwner,
        name: "identifier-owner",
        module: "commit",
        stage: Stage::Publication,
        protects: "success is reported only for a snapshot that holds this commit: another commit under the same user and identifier is IdentifierReused",
        lists: ADDED_DATA,
        reads: Reads::DigestLeaves,
        tests: &["crates/paimon-wire/tests/coordinator/hostile_round_4.rs::racing_coordinators_with_one_identifier_and_other_payloads_report_one_success", "crates/paimon-wire/tests/coordinator/hostile_round_4.rs::a_rerun_of_an_identifier_with_other_payloads_is_refused_and_deletes_nothing", "crates/paimon-wire-cli/tests/concurrent_commits.rs::racing_coordinators_with_one_identifier_and_other_payloads_report_one_success"],
    },
];

/// The catalogue entry of `rule`.
pub fn entry(rule: Rule) -> &'static RuleEntry {
    &REGISTRY[rule as usize]
}

/// What a rule is, read from its catalogue entry: the catalogue is the one place that says.
impl Rule {
    /// Every rule, in the order of the catalogue ([`REGISTRY`]), which is the
    /// order the coordinator applies them: those checked on each message when a payload is
    /// decoded, then those checked against the table's state, then the outcome of publishing
    /// (see [`Rule::stage`]).
    pub const ALL: [Rule; REGISTRY.len()] = {
        let mut all = [Rule::Partition; REGISTRY.len()];
        let mut i = 0;
        while i < all.len() {
            all[i] = REGISTRY[i].rule;
            i += 1;
        }
        all
    };

    /// Whether the rule needs the table's state (its manifests, history or files), so it is
    /// checked when the coordinator commits (and by `Coordinator::check_against_table`), not
    /// when a payload is decoded. `bounds` is checked at both.
    pub fn needs_table_state(self) -> bool {
        self.stage() == Stage::TableState
    }

    /// When the rule is checked ([`REGISTRY`]).
    pub fn stage(self) -> Stage {
        entry(self).stage
    }

    /// The stable name of the rule, e.g. `plain-file-name`.
    pub fn name(self) -> &'static str {
        entry(self).name
    }

    /// The rule's catalogue entry: what it protects, the lists it reads, its tests.
    pub fn entry(self) -> &'static RuleEntry {
        entry(self)
    }
}

impl std::fmt::Display for Rule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_registry_is_in_rule_order_with_distinct_names() {
        let mut names = std::collections::HashSet::new();
        for (i, entry) in REGISTRY.iter().enumerate() {
            assert_eq!(entry.rule as usize, i, "{}", entry.name);
            assert!(names.insert(entry.name), "{}", entry.name);
            assert!(!entry.tests.is_empty(), "{} has no test", entry.name);
            assert!(!entry.lists.is_empty(), "{} reads no list", entry.name);
        }
    }

    /// The streamed commit may only meet rules it can check from what it keeps: a rule that
    /// reads whole entries names the admission limit that keeps it off that path, and the
    /// limit holds for the lists the rule reads.
    #[test]
    fn every_rule_that_reads_whole_entries_is_kept_off_the_streamed_path() {
        assert!(STREAMED_LISTS.iter().all(|list| DATA_LISTS.contains(list)));
        let streamed = |entry: &RuleEntry| {
            entry
                .lists
                .iter()
                .filter(|list| STREAMED_LISTS.contains(list))
                .count()
        };
        for entry in &REGISTRY {
            let name = entry.name;
            assert_eq!(
                entry.stage == Stage::Message,
                entry.reads == Reads::OneMessage,
                "{name}: the rules checked on each message, and only they, read one message"
            );
            match entry.reads {
                Reads::WholeEntries(KeptOff::ListsEmpty) => assert_eq!(
                    streamed(entry),
                    0,
                    "{name} reads a list the streamed path carries, so empty lists do not keep it off"
                ),
                Reads::WholeEntries(KeptOff::IndexListsEmpty) => {
                    assert!(
                        entry.lists.iter().any(|list| INDEX_LISTS.contains(list)),
                        "{name} is kept off by empty index lists but reads none"
                    );
                    assert!(streamed(entry) > 0, "{name}: say KeptOff::ListsEmpty");
                }
                Reads::WholeEntries(KeptOff::DynamicBuckets) => {
                    assert!(
                        entry.module.split(", ").all(|m| m == "hash_index"),
                        "{name}: only the HASH index family is specific to dynamic buckets"
                    );
                    assert!(streamed(entry) > 0, "{name}: say KeptOff::ListsEmpty");
                }
                Reads::DigestLeaves => assert_eq!(entry.stage, Stage::Publication, "{name}"),
                Reads::NameKeys | Reads::BucketState | Reads::AddedPaths => {
                    assert_eq!(entry.stage, Stage::TableState, "{name}")
                }
                Reads::OneMessage => {}
            }
        }
    }
}
