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
    /// A primary-key table's data file has a `min_key` or `max_key` that is not a row of the
    /// table's key type, or a minimum above its maximum.
    KeyRange,
    /// A new data file (not a compaction result) is not at level 0, where every writer puts
    /// what it flushes.
    NewFileLevel,
    /// A message that deletes a HASH index (in `deleted_index_files` or
    /// `compact_deleted_index_files`, whatever the binding allows) adds its bucket's new HASH
    /// index (in `new_index_files` or `compact_new_index_files`). A bucket left without its
    /// index makes the next writers' assigners put its keys in other buckets.
    HashIndexReplaced,
    /// The message carries a kind of change the binding does not allow: deleted data files,
    /// deletion-vector index entries or deleted index files on a binding that did not opt in
    /// to deletes ([`crate::coordinator::Binding::with_deletes`]).
    ChangeKind,
    /// The message carries a compaction result, and the binding did not opt in to compaction
    /// ([`crate::coordinator::Binding::with_compaction`]) or commits in overwrite mode.
    CompactIncrement,
    /// A compaction has results but no inputs (`compact_before` is empty).
    CompactInputs,
    /// The levels of a compaction result do not fit together: a file upgraded in place
    /// (named in `compact_before` and `compact_after`) must move to a higher level and change
    /// nothing else, a primary-key table's compaction never writes level 0, and no result
    /// lies above the table's `num-levels`.
    CompactLevels,
    /// On a primary-key table a compaction result's key range or sequence range lies
    /// outside the union of its inputs'.
    CompactRanges,
    /// A number that feeds the commit's arithmetic (row counts, sizes, sequence numbers, row
    /// ids, bucket counts, and their sums) is beyond the coordinator's bounds, or a range
    /// lies outside the file it points into.
    Bounds,
    /// One file appears in two roles (e.g. added as data and as changelog, or added and
    /// deleted).
    TwoRoles,
    /// A primary-key table's new files do not fit the commit mode's sequence numbers. In an
    /// append commit they must start above every live file of their bucket: a writer that
    /// restored the bucket continues its numbers, while an overwrite writer (or one started
    /// before another commit wrote the bucket) would have its rows lose to older rows. In an
    /// overwrite commit a bucket's new files start at 0: an overwrite writer starts every
    /// bucket there, so higher numbers come from an append writer, whose rows were meant to
    /// merge with the rows the overwrite would delete. Tables with `sequence.field` (rows
    /// ordered by a column) and postpone tables are exempt.
    SequenceNumbers,
    /// A file the message adds (data, changelog or index file) is already live in the table,
    /// at any level.
    AlreadyLive,
    /// A file the message deletes is not live in the table.
    NotLive,
    /// A primary-key table's compaction does not pick what Java's compaction strategies pick:
    /// whole sorted runs from the newest down (every level above 0 taken whole, none skipped,
    /// no older level-0 file left), with its results below every run it leaves. Any other pick
    /// gives a result rows both newer and older than a run it skipped.
    CompactRuns,
    /// A compaction's results do not hold the rows its inputs held: on an append table the
    /// visible rows out differ from the visible rows in, on a primary-key table they exceed
    /// them.
    CompactRows,
    /// A live file's deletion vector would lose positions (dropped or shrunk, in either
    /// increment), a compaction would change the vector of a file it does not rewrite (on
    /// tables where the newest version of a key wins or merges, a compaction may add
    /// positions, checked by [`Rule::SupersededRows`]), a vector would hide positions past its
    /// file's row count, a file would have two vectors,
    /// or a vector names a data file that is not live in its bucket once the commit is
    /// applied.
    DeletionVectors,
    /// A compaction hides a row of a file it does not rewrite (Java's lookup compaction marks
    /// the older versions of the keys it compacts) whose key has no newer version among the
    /// compaction's results: a live row would disappear.
    SupersededRows,
    /// A file the message says was written (a compaction result) is not in storage.
    MissingFile,
    /// Verified compaction: the rows read from a compaction's results differ from the rows
    /// read from its inputs.
    CompactContent,
    /// On a dynamic-bucket primary-key table, a bucket that gets new data files has a HASH
    /// index after the commit (live, or new in the commit; in an overwrite commit, new), and a
    /// bucket that keeps its live index gets only keys that index lists (the coordinator reads
    /// the keys of those new files, and of an unverified compaction's results). Keys written
    /// without an index are invisible to the next writers' assigners.
    HashIndexCoverage,
    /// On a dynamic-bucket primary-key table, the HASH indexes after the commit give each key
    /// one bucket per partition: no key hash in two buckets' indexes (new against new, and
    /// new against the live indexes of buckets the commit does not replace), a bucket's new
    /// index keeps every key of the index it replaces (append commits), and an index file
    /// holds exactly its `row_count` keys. Otherwise later writers put a key's next version
    /// in another bucket and the key reads back twice.
    HashIndexKeys,
    /// Success is reported only for a snapshot that holds this commit: a snapshot carrying the
    /// commit user and identifier with another commit's digest (or, for a commit that only adds
    /// files, without every one of its files) makes the commit fail with
    /// [`CoordinatorError::IdentifierReused`] instead. Checked when `commit` reports its
    /// outcome, not by `validate`.
    IdentifierOwner,
}

/// `source` unchanged if neither its text nor any cause in its chain shows a secret this
/// process was given, or an `Authorization` credential ([`crate::secrets`]); else an error of
/// the same class whose message is the whole text with them replaced and whose cause chain
/// is dropped: a commit conflict stays one, an I/O error stays one (`IoUnsupported`, the I/O
/// variant that takes a message), a configuration, unsupported-feature or invalid-data error
/// keeps its variant, anything else becomes an unexpected error. Every surface builds its
/// error codes and exceptions from the class, so a redacted error keeps its code.
///
/// The coordinator applies it to every error of the paimon crate
/// (`CoordinatorError::paimon`); the C library and the Python module apply it where they
/// turn a paimon crate error of their own (a writer's) into theirs.
pub fn without_secrets(source: paimon::Error) -> paimon::Error {
    use paimon::Error as E;
    let text = PlainPaimonError(&source).to_string();
    let redacted = crate::secrets::redact_remembered(&text);
    let mut shows_secret = redacted != text;
    let mut next = std::error::Error::source(&source);
    while let Some(cause) = next {
        let cause_text = cause.to_string();
        shows_secret |= crate::secrets::redact_remembered(&cause_text) != cause_text;
        let debug = format!("{cause:?}");
        shows_secret |= crate::secrets::redact_remembered(&debug) != debug;
        next = cause.source();
    }
    if !shows_secret {
        return source;
    }
    let message = redacted;
    match source {
        E::CommitConflict { .. } => E::CommitConflict {
            message,
            source: None,
        },
        E::CommitOutcomeUnknown { .. } => E::CommitOutcomeUnknown {
            message,
            source: None,
        },
        E::IoUnexpected { .. } | E::IoUnsupported { .. } => E::IoUnsupported { message },
        E::ConfigInvalid { .. } | E::IdentifierInvalid { .. } => E::ConfigInvalid { message },
        E::Unsupported { .. } => E::Unsupported { message },
        E::DataInvalid { .. } => E::DataInvalid {
            message,
            source: None,
        },
        _ => E::UnexpectedError {
            message,
            source: None,
        },
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
    /// The payload came in a Doris `DPCM` frame ([`crate::dpcm`]) that is malformed (a bad
    /// magic, a truncated body, bytes after it), or that names a serializer version other
    /// than the one the payload was handed over with. Nothing was committed.
    Frame(crate::dpcm::FrameError),
    /// A decoded message breaks a rule of the bound table. Nothing was committed.
    Validation(ValidationError),
    /// Two payloads disagree about one file. Nothing was committed.
    Merge(MergeConflict),
    /// Two payloads write new files into one bucket of a primary-key table. Nothing was
    /// committed.
    SharedBucket(SharedBucket),
    /// The payloads of one worker's split set are not one whole set (one is missing, or
    /// delivered twice with different bytes). Nothing was committed.
    Parts(super::parts::PartsError),
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
    /// Other committers published every snapshot this commit tried to publish, on every
    /// attempt the table's `commit.max-retries` and `commit.timeout` allow. Nothing of this
    /// commit was published; the prepared files are kept, so the same commit (same
    /// identifier) can be run again later.
    CommitConflict {
        /// What the coordinator was committing.
        during: String,
        /// The paimon crate's report (attempts, elapsed time).
        source: paimon::Error,
    },
    /// The commit failed after it started to publish its snapshot, and no read since could
    /// tell whether that snapshot is in the table: it may be, or a request of this commit
    /// still in flight may publish it later. Never delete the commit's files on this error
    /// (the coordinator's [`abort`](super::Coordinator::abort) refuses to until the outcome is
    /// known): rerun the same commit with the same identifier, which reports already committed
    /// if the snapshot landed, or read [`commit_status`](super::Coordinator::commit_status)
    /// after [`outcome_horizon`](super::Coordinator::outcome_horizon). Every other error of the
    /// coordinator is known to have committed nothing
    /// ([`CoordinatorError::outcome_unknown`]).
    OutcomeUnknown {
        /// The commit user.
        commit_user: String,
        /// The identifier whose outcome is unknown.
        identifier: i64,
        /// What the coordinator was doing.
        during: String,
        /// The failure that left the outcome unknown; `None` when the coordinator refused an
        /// abort because an earlier commit's outcome is still unknown. Boxed: it is rare, and
        /// every result of the coordinator carries this enum.
        source: Option<Box<paimon::Error>>,
    },
    /// The identifier was never committed, but the same commit user already committed a
    /// higher one: identifiers must increase per commit user, so this commit can never be
    /// made under this identifier. Happens when two coordinators share a commit user. Nothing
    /// was committed.
    IdentifierSuperseded {
        /// The commit user.
        commit_user: String,
        /// The identifier that was to be committed.
        identifier: i64,
        /// The higher identifier the commit user committed.
        committed_identifier: i64,
        /// The snapshot that carries `committed_identifier`.
        snapshot_id: i64,
    },
    /// The identifier is already committed, by a snapshot that does not hold the files of
    /// this commit: the identifier was reused for other data (a sink or job rerun with a
    /// fixed identifier after writing new files). Nothing was committed; an honest retry of
    /// the same payloads finds every file in that snapshot and reports already committed.
    IdentifierReused {
        /// The commit user.
        commit_user: String,
        /// The identifier.
        identifier: i64,
        /// The snapshot that committed it.
        snapshot_id: i64,
        /// A file of this commit that snapshot does not add.
        file: String,
    },
    /// The warehouse is a URI whose storage backend this build does not have. Rebuild with
    /// the named cargo feature (of paimon-wire, the CLI, the C library or the Python module).
    StorageBackendNotCompiled {
        /// The warehouse's URI scheme (`s3`, `oss`, ...).
        scheme: String,
        /// The cargo feature that compiles the backend in (`storage-s3`, ...).
        feature: &'static str,
    },
    /// The warehouse is a URI whose scheme no storage backend of the paimon crate serves.
    UnknownStorageScheme {
        /// The warehouse's URI scheme.
        scheme: String,
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
    /// Wraps an error of the paimon crate; a lost publication race becomes
    /// [`CoordinatorError::CommitConflict`].
    ///
    /// No secret this process was given ([`crate::secrets::remember`]) and no `Authorization`
    /// credential survives in it, in any spelling: when the error's text or any cause in its
    /// chain shows one, the error keeps its text with them replaced (as `ConfigInvalid`, or
    /// `CommitConflict` for a conflict), losing only the original error's type. Every error of
    /// the paimon crate reaches every surface (C, C++, Python, CLI) through here.
    pub(crate) fn paimon(during: impl Into<String>, source: paimon::Error) -> Self {
        let during = crate::secrets::redact_remembered(&during.into());
        let source = without_secrets(source);
        match source {
            paimon::Error::CommitConflict { .. } => {
                CoordinatorError::CommitConflict { during, source }
            }
            source => CoordinatorError::Paimon { during, source },
        }
    }

    /// Whether a snapshot of the failed commit may be in the table, or may still land: true
    /// only for [`CoordinatorError::OutcomeUnknown`]. Every other error is known to have
    /// committed nothing (nothing new; an identifier committed earlier stays committed), so
    /// the caller may fix the cause and commit again, or abort.
    pub fn outcome_unknown(&self) -> bool {
        matches!(self, CoordinatorError::OutcomeUnknown { .. })
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
            CoordinatorError::Frame(e) => {
                write!(f, "payload rejected, nothing was committed: {e}")
            }
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
            CoordinatorError::Parts(e) => {
                write!(f, "split payloads rejected, nothing was committed: {e}")
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
            CoordinatorError::CommitConflict { during, source } => write!(
                f,
                "commit conflict while {during}: other commits took every snapshot this commit \
                 tried to publish ({}); nothing was committed and the prepared files are \
                 kept: run the same commit again with the same identifier, or raise the table's \
                 commit.max-retries",
                PlainPaimonError(source)
            ),
            CoordinatorError::OutcomeUnknown {
                commit_user,
                identifier,
                during,
                source,
            } => {
                write!(
                    f,
                    "outcome unknown while {during}: the snapshot of identifier {identifier} \
                     (commit user {commit_user:?}) may be in the table, or may still be \
                     published by a request in flight"
                )?;
                if let Some(source) = source {
                    write!(f, " ({})", PlainPaimonError(source))?;
                }
                write!(
                    f,
                    ". Do not delete its files: rerun the same commit with the same identifier \
                     (it reports already committed if the snapshot landed), or read its commit \
                     status once the coordinator's requests can no longer land"
                )
            }
            CoordinatorError::IdentifierSuperseded {
                commit_user,
                identifier,
                committed_identifier,
                snapshot_id,
            } => write!(
                f,
                "identifier {identifier} of commit user {commit_user:?} was never committed, \
                 but the same commit user already committed identifier {committed_identifier} \
                 (snapshot {snapshot_id}); identifiers must increase per commit user, so nothing \
                 was committed. Give each concurrent job its own commit user"
            ),
            CoordinatorError::IdentifierReused {
                commit_user,
                identifier,
                snapshot_id,
                file,
            } => write!(
                f,
                "rule identifier-owner: identifier {identifier} of commit user {commit_user:?} \
                 is already committed (snapshot {snapshot_id}), but that snapshot does not add \
                 file {file} of this commit: the identifier was reused for other data, so \
                 nothing was committed. Use a new identifier for new data"
            ),
            CoordinatorError::StorageBackendNotCompiled { scheme, feature } => write!(
                f,
                "the storage backend for {scheme}:// warehouses is not compiled in; build with \
                 the cargo feature `{feature}`"
            ),
            CoordinatorError::UnknownStorageScheme { scheme } => write!(
                f,
                "no storage backend serves {scheme}:// warehouses (known: file, memory, s3, \
                 s3a, oss, gs, gcs, abfs, abfss, az, cos, cosn, obs, hdfs)"
            ),
            CoordinatorError::Paimon { during, source } => {
                write!(
                    f,
                    "paimon failed while {during}: {}",
                    PlainPaimonError(source)
                )
            }
        }
    }
}

impl std::error::Error for CoordinatorError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            CoordinatorError::Codec(e) => Some(e),
            CoordinatorError::Frame(e) => Some(e),
            CoordinatorError::Validation(e) => Some(e),
            CoordinatorError::Merge(e) => Some(e),
            CoordinatorError::SharedBucket(e) => Some(e),
            CoordinatorError::Parts(e) => Some(e),
            CoordinatorError::Paimon { source, .. }
            | CoordinatorError::CommitConflict { source, .. } => Some(source),
            CoordinatorError::OutcomeUnknown {
                source: Some(source),
                ..
            } => Some(source.as_ref()),
            _ => None,
        }
    }
}

impl From<CodecError> for CoordinatorError {
    fn from(e: CodecError) -> Self {
        CoordinatorError::Codec(e)
    }
}

impl From<crate::dpcm::FrameError> for CoordinatorError {
    fn from(e: crate::dpcm::FrameError) -> Self {
        CoordinatorError::Frame(e)
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

/// A paimon crate error as plain sentences: the crate's own `Display` prints the source of
/// some variants with `{:?}` (`Some(DataInvalid { message: .. })`); this prints each error
/// of the chain with `Display` instead, joined by `: `.
pub struct PlainPaimonError<'a>(pub &'a paimon::Error);

impl fmt::Display for PlainPaimonError<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let nested = match self.0 {
            paimon::Error::DataInvalid { message, source } => {
                write!(f, "{message}")?;
                source.as_deref()
            }
            paimon::Error::UnexpectedError { message, source } => {
                write!(f, "{message}")?;
                source.as_deref()
            }
            paimon::Error::CommitOutcomeUnknown { message, source } => {
                write!(f, "{message}")?;
                source.as_deref()
            }
            // The crate prints the object store's error with `{:?}`: a backtrace and the
            // whole HTTP response, headers included.
            paimon::Error::IoUnexpected { message, source } => {
                let text = without_context(&source.to_string()).into_owned();
                write!(f, "{message}: {text}")?;
                // The deeper causes (the HTTP client's: "connection closed before message
                // completed", "operation timed out"), each once.
                let mut next = std::error::Error::source(source.as_ref());
                while let Some(cause) = next {
                    let cause_text = cause.to_string();
                    if !text.contains(&cause_text) {
                        write!(f, ": {cause_text}")?;
                    }
                    next = cause.source();
                }
                return Ok(());
            }
            // The crate's message drops why each publication failed; say it.
            paimon::Error::CommitConflict {
                message,
                source: Some(source),
            } => {
                write!(
                    f,
                    "{}; the last attempt to publish the snapshot failed",
                    paimon::Error::CommitConflict {
                        message: message.clone(),
                        source: None,
                    }
                )?;
                Some(source.as_ref())
            }
            other => return write!(f, "{other}"),
        };
        let mut next: Option<&(dyn std::error::Error + 'static)> = nested.map(|e| e as _);
        while let Some(error) = next {
            match error.downcast_ref::<paimon::Error>() {
                Some(inner) => return write!(f, ": {}", PlainPaimonError(inner)),
                None => write!(f, ": {error}")?,
            }
            next = error.source();
        }
        Ok(())
    }
}

/// An object store error's one-line text (`Unexpected (persistent) at write, context: { uri:
/// .., response: .. } => message, source: ..`) without its context list but the request's URI:
/// the whole HTTP response with its headers goes. What stays names the operation, the kind
/// (and whether retries were made: `persistent`), the URI, the store's message (an S3 error
/// names its code and resource) and the cause.
fn without_context(text: &str) -> std::borrow::Cow<'_, str> {
    const OPEN: &str = ", context: { ";
    let Some(start) = text.find(OPEN) else {
        return text.into();
    };
    let rest = &text[start + OPEN.len()..];
    let end = [" } => ", " }, source: "]
        .iter()
        .filter_map(|marker| rest.find(marker).map(|i| i + 2))
        .min()
        .or_else(|| rest.strip_suffix(" }").map(str::len).map(|n| n + 2));
    let Some(end) = end else {
        return text.into();
    };
    // The request's URI (`uri`, or `url` when it did not parse) stays: it names the endpoint
    // and the object (no URI has ", ").
    let uri = rest[..end]
        .split(", ")
        .find_map(|entry| {
            entry
                .strip_prefix("uri: ")
                .or_else(|| entry.strip_prefix("url: "))
        })
        .map(|uri| format!(" (uri {})", uri.trim_end_matches(" }")))
        .unwrap_or_default();
    format!("{}{uri}{}", &text[..start], &rest[end..]).into()
}

/// Two payloads wrote new files or compaction results into the same bucket of a primary-key
/// table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SharedBucket {
    /// The partition, as `key=value/...` (empty for an unpartitioned table).
    pub partition: String,
    /// The bucket.
    pub bucket: i32,
    /// The first payload that writes it.
    pub first: MessageOrigin,
    /// Another payload that writes it too.
    pub second: MessageOrigin,
}

impl fmt::Display for SharedBucket {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let partition = if self.partition.is_empty() {
            String::new()
        } else {
            format!(" of partition {}", self.partition)
        };
        write!(
            f,
            "bucket {}{partition} of a primary-key table is written by two writers ({} and \
             {} both add new files or compaction results); rows of one key from two writers \
             overlap in sequence numbers and which one wins is arbitrary. Route each (partition, bucket) to one \
             writer (paimon_wire::BucketRouter computes the bucket), or use a postpone-bucket \
             table (bucket = -2) to write one bucket from many writers",
            self.bucket, self.first, self.second
        )
    }
}

impl std::error::Error for SharedBucket {}

#[cfg(test)]
mod tests {
    use super::Rule;

    #[test]
    fn object_store_errors_lose_their_context_only() {
        let text = "RateLimited (persistent) at write, context: { uri: http://h/b/k, response: \
                    Parts { status: 503, headers: {\"a\": \"b\"} }, service: s3 } => S3Error { \
                    code: \"SlowDown\" }";
        assert_eq!(
            super::without_context(text),
            "RateLimited (persistent) at write (uri http://h/b/k) => S3Error { code: \"SlowDown\" }"
        );
        let text = "Unexpected (persistent) at write, context: { path: k }, source: connection \
                    closed";
        assert_eq!(
            super::without_context(text),
            "Unexpected (persistent) at write, source: connection closed"
        );
        let text = "NotFound (permanent) at stat, context: { path: k }";
        assert_eq!(super::without_context(text), "NotFound (permanent) at stat");
        assert_eq!(super::without_context("plain"), "plain");
    }

    /// The number of `Rule` variants: the match below fails to compile when a rule is
    /// added, until it is counted here (and listed in `Rule::ALL`).
    fn variant_index(rule: Rule) -> usize {
        match rule {
            Rule::Partition => 0,
            Rule::Bucket => 1,
            Rule::TotalBuckets => 2,
            Rule::PlainFileName => 3,
            Rule::ExternalPath => 4,
            Rule::SchemaId => 5,
            Rule::NonNegative => 6,
            Rule::IndexType => 7,
            Rule::KeyRange => 8,
            Rule::NewFileLevel => 9,
            Rule::ChangeKind => 10,
            Rule::CompactIncrement => 11,
            Rule::CompactInputs => 12,
            Rule::CompactLevels => 13,
            Rule::CompactRanges => 14,
            Rule::Bounds => 15,
            Rule::TwoRoles => 16,
            Rule::SequenceNumbers => 17,
            Rule::AlreadyLive => 18,
            Rule::NotLive => 19,
            Rule::CompactRows => 20,
            Rule::DeletionVectors => 21,
            Rule::MissingFile => 22,
            Rule::CompactContent => 23,
            Rule::HashIndexKeys => 24,
            Rule::HashIndexCoverage => 25,
            Rule::HashIndexReplaced => 26,
            Rule::CompactRuns => 27,
            Rule::IdentifierOwner => 28,
            Rule::SupersededRows => 29,
        }
    }

    #[test]
    fn every_rule_is_listed_once_with_a_distinct_name() {
        let mut seen = [false; Rule::ALL.len()];
        for rule in Rule::ALL {
            assert!(
                !std::mem::replace(&mut seen[variant_index(rule)], true),
                "{rule}"
            );
        }
        assert!(seen.iter().all(|s| *s));
        let names: std::collections::HashSet<_> = Rule::ALL.iter().map(|r| r.name()).collect();
        assert_eq!(names.len(), Rule::ALL.len());
    }
}
