//! Errors of the coordinator: what a payload, a merge or a commit did wrong, in words an
//! operator woken at 3 a.m. can act on.

use std::fmt;

use crate::CodecError;

/// A rule the coordinator enforces on every message before anything is committed.
///
/// Each rule has a stable kebab-case name ([`Rule::name`]) that appears in error messages,
/// so logs and tests can match on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Rule {
    /// The partition row has the arity of the table's partition keys, decodes against
    /// their types, holds no null in a NOT NULL key, and is in the canonical encoding
    /// (equal partitions must be equal bytes).
    Partition,
    /// The bucket is valid for the table's bucket mode.
    Bucket,
    /// `total_buckets` agrees with the table (or, for postpone fixed-bucket writes, is
    /// positive and the same for every message of one partition).
    TotalBuckets,
    /// Data, changelog, extra, deletion-vector and index file names are plain names: not
    /// empty, no `/`, `\`, NUL, and not `.` or `..`.
    PlainFileName,
    /// An external path lies under one of the table's configured external roots and ends
    /// with the file's own name.
    ExternalPath,
    /// The file's schema id exists in the table's schema history.
    SchemaId,
    /// Sizes, row counts, levels, offsets and lengths are not negative, and a file does not
    /// delete more rows than it holds.
    NonNegative,
    /// The index type is one Paimon defines.
    IndexType,
    /// The message carries a compaction result, which the coordinator does not commit.
    CompactIncrement,
}

impl Rule {
    /// The stable name of the rule, e.g. `plain-file-name`.
    pub fn name(self) -> &'static str {
        match self {
            Rule::Partition => "partition",
            Rule::Bucket => "bucket",
            Rule::TotalBuckets => "total-buckets",
            Rule::PlainFileName => "plain-file-name",
            Rule::ExternalPath => "external-path",
            Rule::SchemaId => "schema-id",
            Rule::NonNegative => "non-negative",
            Rule::IndexType => "index-type",
            Rule::CompactIncrement => "compact-increment",
        }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A message that breaks a [`Rule`]: which message, which field, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidationError {
    /// Index of the message in its payload (0-based).
    pub message_index: usize,
    /// Path of the offending field, e.g. `new_files[2].file_name`.
    pub field: String,
    /// The rule broken.
    pub rule: Rule,
    /// Why the value breaks the rule, with the value when it is short enough to print.
    pub reason: String,
}

impl fmt::Display for ValidationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "message {} field {}: rule {} broken: {}",
            self.message_index, self.field, self.rule, self.reason
        )
    }
}

impl std::error::Error for ValidationError {}

/// Where a message came from when several payloads are merged: the position of its
/// payload in the merge input and its index inside that payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MessageOrigin {
    /// Position of the payload (the [`crate::coordinator::BoundMessages`]) in the merge input.
    pub part: usize,
    /// Index of the message inside that payload.
    pub message_index: usize,
}

impl fmt::Display for MessageOrigin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "payload {} message {}", self.part, self.message_index)
    }
}

/// The same file named twice with different contents: two workers (or a worker and its
/// retry) disagree about a file, so the coordinator cannot tell which one is true.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MergeConflict {
    /// The list the file is in, e.g. `new_files`.
    pub list: &'static str,
    /// The file name both entries carry.
    pub file_name: String,
    /// Where the file was first seen.
    pub first: MessageOrigin,
    /// Where it was seen again, with different metadata.
    pub second: MessageOrigin,
    /// What differs (partition, bucket, or the file metadata).
    pub difference: String,
}

impl fmt::Display for MergeConflict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "file {:?} in {} appears in {} and again in {} with a different {}; \
             identical duplicates are dropped, but differing ones mean two writers claim the \
             same file — find which worker is stale and resend only its correct payload",
            self.file_name, self.list, self.first, self.second, self.difference
        )
    }
}

impl std::error::Error for MergeConflict {}

/// Everything that can go wrong between payload bytes and a committed snapshot.
#[derive(Debug)]
#[non_exhaustive]
pub enum CoordinatorError {
    /// The payload bytes could not be decoded.
    Codec(CodecError),
    /// A decoded message breaks a rule of the bound table. Nothing was committed.
    Validation(ValidationError),
    /// Two payloads disagree about one file. Nothing was committed.
    Merge(MergeConflict),
    /// Two payloads write new files into one bucket of a primary-key table. Nothing was
    /// committed.
    SharedBucket(super::one_writer::SharedBucket),
    /// Messages bound to one coordinator were handed to another.
    ForeignMessages {
        /// The coordinator the messages were bound to.
        bound_to: String,
        /// The coordinator they were handed to.
        handed_to: String,
    },
    /// A table name could not be understood (expected `database.table`).
    InvalidTableName {
        /// The name given.
        name: String,
        /// Why it was refused.
        reason: String,
    },
    /// The table or binding is one the coordinator does not support.
    Unsupported {
        /// What is not supported, and what to do instead.
        reason: String,
    },
    /// The paimon crate failed while opening the table, reading its state, committing or
    /// aborting.
    Paimon {
        /// What the coordinator was doing.
        during: String,
        /// The paimon crate's error.
        source: paimon::Error,
    },
}

impl CoordinatorError {
    pub(crate) fn paimon(during: impl Into<String>, source: paimon::Error) -> Self {
        CoordinatorError::Paimon {
            during: during.into(),
            source,
        }
    }

    /// The validation error, if this is one.
    pub fn as_validation(&self) -> Option<&ValidationError> {
        match self {
            CoordinatorError::Validation(e) => Some(e),
            _ => None,
        }
    }
}

impl fmt::Display for CoordinatorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CoordinatorError::Codec(e) => write!(
                f,
                "payload rejected, cannot decode it: {e}. Check that the worker and the \
                 coordinator agree on the serializer version; nothing was committed"
            ),
            CoordinatorError::Validation(e) => write!(
                f,
                "payload rejected by validation, nothing was committed: {e}"
            ),
            CoordinatorError::Merge(e) => {
                write!(f, "payloads rejected at merge, nothing was committed: {e}")
            }
            CoordinatorError::SharedBucket(e) => {
                write!(f, "payloads rejected at merge, nothing was committed: {e}")
            }
            CoordinatorError::ForeignMessages {
                bound_to,
                handed_to,
            } => write!(
                f,
                "messages bound to {bound_to} were handed to {handed_to}; deserialize the \
                 payload again through the coordinator that commits it"
            ),
            CoordinatorError::InvalidTableName { name, reason } => {
                write!(f, "invalid table name {name:?}: {reason}")
            }
            CoordinatorError::Unsupported { reason } => write!(f, "not supported: {reason}"),
            CoordinatorError::Paimon { during, source } => {
                write!(f, "paimon failed while {during}: {source}")
            }
        }
    }
}

impl std::error::Error for CoordinatorError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            CoordinatorError::Codec(e) => Some(e),
            CoordinatorError::Validation(e) => Some(e),
            CoordinatorError::Merge(e) => Some(e),
            CoordinatorError::SharedBucket(e) => Some(e),
            CoordinatorError::Paimon { source, .. } => Some(source),
            _ => None,
        }
    }
}

impl From<CodecError> for CoordinatorError {
    fn from(e: CodecError) -> Self {
        CoordinatorError::Codec(e)
    }
}

impl From<ValidationError> for CoordinatorError {
    fn from(e: ValidationError) -> Self {
        CoordinatorError::Validation(e)
    }
}

impl From<MergeConflict> for CoordinatorError {
    fn from(e: MergeConflict) -> Self {
        CoordinatorError::Merge(e)
    }
}

/// Result of coordinator operations.
pub type CoordinatorResult<T> = Result<T, CoordinatorError>;
