//! What a coordinator commits as — the parts of a commit the payload never decides: the
//! commit user, append or overwrite, the writer kind, and what the binding allows (deletes,
//! compaction, verification). A type every layer of the coordinator reads: the rules below
//! it and the publication above.

use std::fmt;

/// Append new files, or overwrite the partitions the messages touch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CommitMode {
    /// Add the files to the table (`INSERT INTO`).
    Append,
    /// Replace the partitions the messages write (`INSERT OVERWRITE`, dynamic partitions).
    /// On an unpartitioned table this replaces the whole table — even with no messages:
    /// an empty overwrite of an unpartitioned table empties it, as in Java. On a partitioned
    /// table an empty overwrite touches nothing.
    Overwrite,
}

impl fmt::Display for CommitMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CommitMode::Append => "append",
            CommitMode::Overwrite => "overwrite",
        })
    }
}

/// Which writer produced the messages. Only matters for postpone tables (`bucket = -2`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum WriteKind {
    /// `Table::new_write_builder` (or Java's writers): the table's own bucket layout.
    #[default]
    Standard,
    /// `Table::new_postpone_fixed_bucket_write_builder`: a postpone table written into
    /// fixed buckets, each message carrying `total_buckets`.
    PostponeFixedBucket,
}

impl fmt::Display for WriteKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            WriteKind::Standard => "standard",
            WriteKind::PostponeFixedBucket => "postpone-fixed-bucket",
        })
    }
}

/// What the coordinator commits as: the parts of a commit the payload never decides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Binding {
    /// The commit user recorded in snapshots. Workers and coordinator of one job share it,
    /// and commit identifiers are checked per user.
    pub commit_user: String,
    /// Append or overwrite.
    pub mode: CommitMode,
    /// Standard or postpone fixed-bucket messages.
    pub write_kind: WriteKind,
    /// Whether messages may delete: name deleted data files, carry deletion-vector index
    /// files, or delete index files (other than a HASH index the same message replaces).
    /// `false` by default, so a payload cannot turn an append job into one that removes
    /// rows; a job that deletes rows or maintains deletion vectors opts in with
    /// [`Binding::with_deletes`].
    pub allow_deletes: bool,
    /// Whether messages may carry compaction results (`compact_before`, `compact_after`,
    /// compact changelog and index files), committed as a COMPACT snapshot after the
    /// APPEND snapshot of the new files, as Java's committer does. `false` by default: a
    /// compaction replaces rows with rows the coordinator cannot read, so a payload that
    /// carries one could erase, hide or bring back rows. A job whose writers compact (Java
    /// writers with `write-only = false`, the default) opts in with
    /// [`Binding::with_compaction`]; the compaction rules (`crate::coordinator::rules::compaction`)
    /// then check everything the metadata can show.
    pub allow_compaction: bool,
    /// Whether the coordinator reads every compaction's inputs and results and refuses one
    /// whose rows differ (rule `compact-content`; implies [`Binding::allow_compaction`]).
    /// `false` by default: it costs a read of every compacted byte, twice.
    pub verify_compaction: bool,
}

impl Binding {
    /// Append standard messages as `commit_user`.
    pub fn append(commit_user: impl Into<String>) -> Self {
        Self {
            commit_user: commit_user.into(),
            mode: CommitMode::Append,
            write_kind: WriteKind::Standard,
            allow_deletes: false,
            allow_compaction: false,
            verify_compaction: false,
        }
    }

    /// Overwrite with standard messages as `commit_user`.
    pub fn overwrite(commit_user: impl Into<String>) -> Self {
        Self {
            commit_user: commit_user.into(),
            mode: CommitMode::Overwrite,
            write_kind: WriteKind::Standard,
            allow_deletes: false,
            allow_compaction: false,
            verify_compaction: false,
        }
    }

    /// The same binding for postpone fixed-bucket messages.
    pub fn postpone_fixed_bucket(mut self) -> Self {
        self.write_kind = WriteKind::PostponeFixedBucket;
        self
    }

    /// The same binding, allowing messages that delete (see [`Binding::allow_deletes`]):
    /// for jobs that do row-level deletes or maintain deletion vectors.
    pub fn with_deletes(mut self) -> Self {
        self.allow_deletes = true;
        self
    }

    /// The same binding, taking messages that carry compaction results (see
    /// [`Binding::allow_compaction`]): for jobs whose writers compact, such as Java writers
    /// with `write-only = false`. The compaction rules still refuse what the metadata shows
    /// to be wrong (inputs not live, rows appearing or vanishing on an append table, key or
    /// sequence ranges outside the inputs', deletion vectors of files the compaction does
    /// not touch).
    pub fn with_compaction(mut self) -> Self {
        self.allow_compaction = true;
        self
    }

    /// The same binding, taking compaction results and verifying each by reading its inputs
    /// and results (see [`Binding::verify_compaction`]): append tables must keep the
    /// multiset of rows, primary-key tables every key's winner (`deduplicate`, `first-row`)
    /// or, for a compaction of a whole bucket, the merged rows (`partial-update`,
    /// `aggregation`). Binding refuses tables whose compactions cannot be verified
    /// (postpone tables).
    pub fn with_verified_compaction(mut self) -> Self {
        self.allow_compaction = true;
        self.verify_compaction = true;
        self
    }

    /// The same binding, refusing compaction results: the default since compaction became
    /// opt-in, kept so older callers compile. Equivalent to setting
    /// [`Binding::allow_compaction`] to `false`.
    #[deprecated(note = "compaction is refused by default; use Binding::with_compaction to opt in")]
    pub fn without_compaction(mut self) -> Self {
        self.allow_compaction = false;
        self
    }
}
