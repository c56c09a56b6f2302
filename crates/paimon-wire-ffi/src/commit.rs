//! The coordinator side: `paimon_wire_table_commit`, a thin door into the core coordinator
//! (`paimon_wire::coordinator::Coordinator`), which decides every rule.

use std::ffi::c_char;

use paimon_wire_core::coordinator::{
    Binding, CommitOutcome, Coordinator, CoordinatorError, PayloadRefused, WriteKind,
};

use crate::args::{c_str, slice};
use crate::error::{
    codec_code, paimon_code, paimon_wire_error, paimon_wire_error_code, FfiError, FfiResult,
};
use crate::handle::{self, HandleDescriptor, HandleKind};
use crate::messages::{
    paimon_wire_commit_messages, paimon_wire_result_commit_messages, MessagesHandle,
};
use crate::result::{ffi_return, function_name, guard, guard_void};
use crate::runtime::SharedRuntime;
use crate::table::paimon_wire_table;
use crate::write::check_commit_user;

/// Which writer produced the messages. Only matters for postpone tables (`'bucket' = '-2'`).
#[repr(C)]
#[allow(non_camel_case_types)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum paimon_wire_write_kind {
    /// The table's own bucket layout. On a postpone table, data lands in the postpone bucket
    /// (`bucket-postpone`, bucket -2) and Paimon's compaction assigns real buckets later.
    Standard = 0,
    /// A postpone table written directly into fixed buckets `0..n-1` (every message carries
    /// `total_buckets = n`). Needs the table option `postpone.default-bucket-num`.
    PostponeFixedBucket = 1,
}

impl From<paimon_wire_write_kind> for WriteKind {
    fn from(kind: paimon_wire_write_kind) -> Self {
        match kind {
            paimon_wire_write_kind::Standard => WriteKind::Standard,
            paimon_wire_write_kind::PostponeFixedBucket => WriteKind::PostponeFixedBucket,
        }
    }
}

/// Checks a write kind that arrived as a C integer, where any value is possible (functions take
/// it as `int32_t`, not as the enum, so an out-of-range value is an error rather than
/// undefined behavior).
pub(crate) fn write_kind_arg(raw: i32) -> FfiResult<paimon_wire_write_kind> {
    match raw {
        0 => Ok(paimon_wire_write_kind::Standard),
        1 => Ok(paimon_wire_write_kind::PostponeFixedBucket),
        other => Err(FfiError::invalid_argument(format!(
            "argument `write_kind` is {other}; expected PAIMON_WIRE_WRITE_KIND_STANDARD (0) or \
             PAIMON_WIRE_WRITE_KIND_POSTPONE_FIXED_BUCKET (1)"
        ))),
    }
}

/// The coordinator of one logical commit: a table, a commit user, append or overwrite, and a
/// write kind. Created by `paimon_wire_table_commit_new`, freed by `paimon_wire_table_commit_free`.
/// Read-only after creation: it may be passed to several threads at once.
#[allow(non_camel_case_types)]
pub struct paimon_wire_table_commit {
    _private: [u8; 0],
}

pub(crate) struct TableCommitHandle {
    pub(crate) coordinator: Coordinator,
    runtime: SharedRuntime,
}

impl HandleDescriptor for paimon_wire_table_commit {
    type Target = TableCommitHandle;
    const KIND: HandleKind = HandleKind::TableCommit;
}

/// Result of `paimon_wire_table_commit_new`: exactly one of `commit` and `error` is non-NULL.
#[repr(C)]
#[allow(non_camel_case_types)]
pub struct paimon_wire_result_table_commit {
    /// The table commit, owned by the caller (free with `paimon_wire_table_commit_free`).
    pub commit: *mut paimon_wire_table_commit,
    /// The error (free with `paimon_wire_error_free`); NULL on success.
    pub error: *mut paimon_wire_error,
}
ffi_return!(paimon_wire_result_table_commit, commit: *mut paimon_wire_table_commit = std::ptr::null_mut());

/// What `paimon_wire_table_commit_commit` did.
#[repr(C)]
#[allow(non_camel_case_types)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum paimon_wire_commit_status {
    /// A new snapshot was committed; its id is in `snapshot_id`.
    Committed = 0,
    /// Nothing was committed: a snapshot of this commit user already carries this commit
    /// identifier and every file of the messages (`snapshot_id` is its id), or its snapshot
    /// may have expired and a later identifier of the user is committed (`snapshot_id` is
    /// -1). An identifier that a later one overtook before it was ever committed is the
    /// error `PAIMON_WIRE_ERROR_CODE_IDENTIFIER_SUPERSEDED`, never this status.
    AlreadyCommitted = 1,
    /// The messages hold no files: nothing was committed and `snapshot_id` is -1.
    NothingToCommit = 2,
}

/// The outcome of a successful commit call.
#[repr(C)]
#[allow(non_camel_case_types)]
#[derive(Debug, Clone, Copy)]
pub struct paimon_wire_commit_outcome {
    /// What happened.
    pub status: paimon_wire_commit_status,
    /// The snapshot committed (or found), or -1.
    pub snapshot_id: i64,
}

/// Result of `paimon_wire_table_commit_commit`: `outcome` is meaningful only when `error` is NULL.
#[repr(C)]
#[allow(non_camel_case_types)]
pub struct paimon_wire_result_commit {
    /// What the commit did.
    pub outcome: paimon_wire_commit_outcome,
    /// The error (free with `paimon_wire_error_free`); NULL on success.
    pub error: *mut paimon_wire_error,
}
ffi_return!(
    paimon_wire_result_commit,
    outcome: paimon_wire_commit_outcome = paimon_wire_commit_outcome {
        status: paimon_wire_commit_status::NothingToCommit,
        snapshot_id: -1,
    }
);

impl From<CommitOutcome> for paimon_wire_commit_outcome {
    fn from(outcome: CommitOutcome) -> Self {
        match outcome {
            CommitOutcome::Committed { snapshot_id } => paimon_wire_commit_outcome {
                status: paimon_wire_commit_status::Committed,
                snapshot_id,
            },
            CommitOutcome::AlreadyCommitted { snapshot_id } => paimon_wire_commit_outcome {
                status: paimon_wire_commit_status::AlreadyCommitted,
                snapshot_id: snapshot_id.unwrap_or(-1),
            },
            CommitOutcome::NothingToCommit => paimon_wire_commit_outcome {
                status: paimon_wire_commit_status::NothingToCommit,
                snapshot_id: -1,
            },
        }
    }
}

impl From<CoordinatorError> for FfiError {
    fn from(e: CoordinatorError) -> Self {
        FfiError::new(coordinator_code(&e), e.to_string())
    }
}

/// One of many payloads refused: the code of its error, and a message naming its position.
impl From<PayloadRefused> for FfiError {
    fn from(refused: PayloadRefused) -> Self {
        FfiError::new(coordinator_code(&refused.error), refused.to_string())
    }
}

/// The C error code of a coordinator error.
fn coordinator_code(e: &CoordinatorError) -> paimon_wire_error_code {
    match e {
        CoordinatorError::Codec(codec) => codec_code(codec),
        CoordinatorError::Frame(frame) => crate::envelope::frame_code(frame),
        CoordinatorError::Validation(_) => paimon_wire_error_code::ValidationFailed,
        CoordinatorError::Merge(_) => paimon_wire_error_code::MergeConflict,
        CoordinatorError::SharedBucket(_) => paimon_wire_error_code::SharedBucket,
        CoordinatorError::ForeignMessages { .. } => paimon_wire_error_code::ForeignMessages,
        CoordinatorError::InvalidTableName { .. } => paimon_wire_error_code::InvalidArgument,
        CoordinatorError::Parts(_) => paimon_wire_error_code::SplitSetIncomplete,
        CoordinatorError::Unsupported { .. } | CoordinatorError::UnknownStorageScheme { .. } => {
            paimon_wire_error_code::Unsupported
        }
        CoordinatorError::StorageBackendNotCompiled { .. } => {
            paimon_wire_error_code::StorageBackendNotCompiled
        }
        CoordinatorError::Paimon { source, .. } => paimon_code(source),
        CoordinatorError::CommitConflict { .. } => paimon_wire_error_code::CommitConflict,
        CoordinatorError::IdentifierReused { .. } => paimon_wire_error_code::IdentifierReused,
        CoordinatorError::IdentifierSuperseded { .. } => {
            paimon_wire_error_code::IdentifierSuperseded
        }
        CoordinatorError::OutcomeUnknown { .. } => paimon_wire_error_code::OutcomeUnknown,
        _ => paimon_wire_error_code::Paimon,
    }
}

/// A flag of `paimon_wire_table_commit_new_with_flags`: the binding takes messages that delete
/// (deleted data files, deletion-vector index files, deleted index files), as
/// `paimon_wire_table_commit_new_with_deletes` does.
pub const PAIMON_WIRE_BINDING_ALLOW_DELETES: u32 = 1;

/// A flag of `paimon_wire_table_commit_new_with_flags`: the binding takes messages that carry
/// compaction results, as `paimon_wire_table_commit_new_with_compaction` does.
pub const PAIMON_WIRE_BINDING_ALLOW_COMPACTION: u32 = 2;

/// A flag of `paimon_wire_table_commit_new_with_flags`: the binding takes messages that carry
/// compaction results (it implies `PAIMON_WIRE_BINDING_ALLOW_COMPACTION`) and verifies each
/// compaction by reading its inputs and its results: a compaction whose rows differ (append
/// tables: the multiset of rows; primary-key tables: every key's winner, or with the
/// `partial-update` or `aggregation` merge engine the merged rows of a whole bucket) is refused
/// with `PAIMON_WIRE_ERROR_CODE_VALIDATION_FAILED`, rule `compact-content`. The cost is a read
/// of every compacted byte, twice (inputs and results). Binding fails with
/// `PAIMON_WIRE_ERROR_CODE_UNSUPPORTED` for tables whose compactions cannot be verified:
/// postpone tables (`'bucket' = '-2'`).
pub const PAIMON_WIRE_BINDING_VERIFY_COMPACTION: u32 = 4;

/// Every flag `paimon_wire_table_commit_new_with_flags` knows.
const KNOWN_BINDING_FLAGS: u32 = PAIMON_WIRE_BINDING_ALLOW_DELETES
    | PAIMON_WIRE_BINDING_ALLOW_COMPACTION
    | PAIMON_WIRE_BINDING_VERIFY_COMPACTION;

/// Creates the coordinator of one logical commit on `table`.
///
/// `commit_user` (NUL-terminated UTF-8, copied) is the one the workers' write builders were
/// created with. `overwrite` selects `INSERT OVERWRITE` (replace the partitions the messages
/// touch; the whole table if unpartitioned) instead of append. `write_kind` says which
/// writer produced the messages (a `paimon_wire_write_kind` value): a postpone table refuses messages of
/// the other kind by name. Payloads are then decoded with `paimon_wire_commit_messages_deserialize`,
/// combined with `paimon_wire_table_commit_merge` and committed once with
/// `paimon_wire_table_commit_commit`.
///
/// The table commit takes new files only. Messages that delete (see
/// `paimon_wire_table_commit_new_with_deletes`) are refused with
/// `PAIMON_WIRE_ERROR_CODE_VALIDATION_FAILED` (rule `change-kind`), and so are messages carrying
/// compaction results (`compact_before`, `compact_after`, compact changelog or index files;
/// rule `compact-increment`): a compaction replaces rows with rows the coordinator cannot read,
/// so a payload alone must not be able to rewrite the table's files. A job whose writers
/// compact (Java writers with `write-only = false`, Java's default) creates its table commit
/// with `paimon_wire_table_commit_new_with_compaction` (or `paimon_wire_table_commit_new_with_flags`).
///
/// Errors: `PAIMON_WIRE_ERROR_CODE_NULL_POINTER` / `PAIMON_WIRE_ERROR_CODE_WRONG_HANDLE_KIND` for
/// the arguments, `PAIMON_WIRE_ERROR_CODE_INVALID_ARGUMENT` for a commit user that is empty or not
/// a safe file-name segment (as `paimon_wire_write_builder_new`) or an unknown `write_kind`,
/// `PAIMON_WIRE_ERROR_CODE_UNSUPPORTED` for tables or bindings the coordinator cannot commit
/// (format tables, a fixed-bucket kind on a table that is not a postpone table), and
/// `PAIMON_WIRE_ERROR_CODE_IO` / `PAIMON_WIRE_ERROR_CODE_PAIMON` when the table's state cannot be
/// read.
///
/// # Safety
/// `table` is NULL or a handle from this library; `commit_user` is NULL or a NUL-terminated
/// string.
#[no_mangle]
pub unsafe extern "C" fn paimon_wire_table_commit_new(
    table: *const paimon_wire_table,
    commit_user: *const c_char,
    overwrite: bool,
    write_kind: i32,
) -> paimon_wire_result_table_commit {
    // SAFETY: forwarded from the caller.
    unsafe {
        table_commit_new(
            function_name!(),
            table,
            commit_user,
            overwrite,
            write_kind,
            0,
        )
    }
}

/// `paimon_wire_table_commit_new` for a job that deletes: its messages may name deleted data
/// files, carry deletion-vector index files and delete index files (a primary-key table's
/// deletion-vector maintenance, row-level deletes). `paimon_wire_table_commit_new` refuses such
/// messages with `PAIMON_WIRE_ERROR_CODE_VALIDATION_FAILED` (rule `change-kind`), so a payload
/// alone cannot turn an append job into one that removes rows. Compaction results are still
/// refused (rule `compact-increment`); a job that both deletes and compacts uses
/// `paimon_wire_table_commit_new_with_flags` with
/// `PAIMON_WIRE_BINDING_ALLOW_DELETES | PAIMON_WIRE_BINDING_ALLOW_COMPACTION`.
///
/// Ownership and errors as `paimon_wire_table_commit_new`.
///
/// # Safety
/// As `paimon_wire_table_commit_new`.
#[no_mangle]
pub unsafe extern "C" fn paimon_wire_table_commit_new_with_deletes(
    table: *const paimon_wire_table,
    commit_user: *const c_char,
    overwrite: bool,
    write_kind: i32,
) -> paimon_wire_result_table_commit {
    // SAFETY: forwarded from the caller.
    unsafe {
        table_commit_new(
            function_name!(),
            table,
            commit_user,
            overwrite,
            write_kind,
            PAIMON_WIRE_BINDING_ALLOW_DELETES,
        )
    }
}

/// `paimon_wire_table_commit_new` for a job whose writers compact (Java writers with
/// `write-only = false`): its messages may carry compaction results (`compact_before`,
/// `compact_after`, compact changelog and index files), committed as Java's committer does: an
/// APPEND snapshot of the new files, then a COMPACT snapshot, under one identifier. The
/// compaction rules still refuse, with `PAIMON_WIRE_ERROR_CODE_VALIDATION_FAILED`, what the
/// metadata shows to be wrong (inputs that are not live files, rows appearing or vanishing on
/// an append table, key or sequence ranges outside the inputs'), and an overwrite commit
/// refuses compaction results. Messages that delete are refused as by
/// `paimon_wire_table_commit_new` (rule `change-kind`).
///
/// Ownership and errors as `paimon_wire_table_commit_new`.
///
/// # Safety
/// As `paimon_wire_table_commit_new`.
#[no_mangle]
pub unsafe extern "C" fn paimon_wire_table_commit_new_with_compaction(
    table: *const paimon_wire_table,
    commit_user: *const c_char,
    overwrite: bool,
    write_kind: i32,
) -> paimon_wire_result_table_commit {
    // SAFETY: forwarded from the caller.
    unsafe {
        table_commit_new(
            function_name!(),
            table,
            commit_user,
            overwrite,
            write_kind,
            PAIMON_WIRE_BINDING_ALLOW_COMPACTION,
        )
    }
}

/// `paimon_wire_table_commit_new` with the binding's permissions given as `flags`, a bitwise OR
/// of `PAIMON_WIRE_BINDING_ALLOW_DELETES` (as `paimon_wire_table_commit_new_with_deletes`),
/// `PAIMON_WIRE_BINDING_ALLOW_COMPACTION` (as `paimon_wire_table_commit_new_with_compaction`)
/// and `PAIMON_WIRE_BINDING_VERIFY_COMPACTION`; 0 is `paimon_wire_table_commit_new`. Flags
/// added later are new bits.
///
/// `PAIMON_WIRE_BINDING_VERIFY_COMPACTION` implies `PAIMON_WIRE_BINDING_ALLOW_COMPACTION` and
/// has the coordinator read each compaction's inputs and results, refusing one whose rows
/// differ with `PAIMON_WIRE_ERROR_CODE_VALIDATION_FAILED` (rule `compact-content`), where the
/// metadata rules alone cannot tell. It reads every compacted byte twice (inputs and results),
/// and binding fails with `PAIMON_WIRE_ERROR_CODE_UNSUPPORTED` for tables whose compactions
/// cannot be verified (postpone tables, `'bucket' = '-2'`).
///
/// Ownership and errors as `paimon_wire_table_commit_new`, and
/// `PAIMON_WIRE_ERROR_CODE_INVALID_ARGUMENT` when `flags` has a bit this library does not know
/// (the message names the bits).
///
/// # Safety
/// As `paimon_wire_table_commit_new`.
#[no_mangle]
pub unsafe extern "C" fn paimon_wire_table_commit_new_with_flags(
    table: *const paimon_wire_table,
    commit_user: *const c_char,
    overwrite: bool,
    write_kind: i32,
    flags: u32,
) -> paimon_wire_result_table_commit {
    // SAFETY: forwarded from the caller.
    unsafe {
        table_commit_new(
            function_name!(),
            table,
            commit_user,
            overwrite,
            write_kind,
            flags,
        )
    }
}

/// Kept for programs built against earlier headers: compaction results are now refused by
/// default, so this is the same as `paimon_wire_table_commit_new` (messages carrying
/// compaction results are refused with `PAIMON_WIRE_ERROR_CODE_VALIDATION_FAILED`, rule
/// `compact-increment`). New code calls `paimon_wire_table_commit_new`.
///
/// # Safety
/// As `paimon_wire_table_commit_new`.
#[no_mangle]
pub unsafe extern "C" fn paimon_wire_table_commit_new_refusing_compaction(
    table: *const paimon_wire_table,
    commit_user: *const c_char,
    overwrite: bool,
    write_kind: i32,
) -> paimon_wire_result_table_commit {
    // SAFETY: forwarded from the caller.
    unsafe {
        table_commit_new(
            function_name!(),
            table,
            commit_user,
            overwrite,
            write_kind,
            0,
        )
    }
}

/// Checks `flags` of `paimon_wire_table_commit_new_with_flags`: only known bits.
fn binding_flags_arg(flags: u32) -> FfiResult<u32> {
    let unknown = flags & !KNOWN_BINDING_FLAGS;
    if unknown != 0 {
        return Err(FfiError::invalid_argument(format!(
            "argument `flags` is {flags:#x} with unknown bits {unknown:#x}; expected a bitwise OR \
             of PAIMON_WIRE_BINDING_ALLOW_DELETES ({PAIMON_WIRE_BINDING_ALLOW_DELETES}), \
             PAIMON_WIRE_BINDING_ALLOW_COMPACTION ({PAIMON_WIRE_BINDING_ALLOW_COMPACTION}) and \
             PAIMON_WIRE_BINDING_VERIFY_COMPACTION ({PAIMON_WIRE_BINDING_VERIFY_COMPACTION})"
        )));
    }
    Ok(flags)
}

/// The binding of a table commit; `flags` are `PAIMON_WIRE_BINDING_*` bits, checked.
fn binding(
    commit_user: &str,
    overwrite: bool,
    write_kind: paimon_wire_write_kind,
    flags: u32,
) -> FfiResult<Binding> {
    let flags = binding_flags_arg(flags)?;
    let mut binding = Binding {
        write_kind: write_kind.into(),
        ..if overwrite {
            Binding::overwrite(commit_user)
        } else {
            Binding::append(commit_user)
        }
    };
    if flags & PAIMON_WIRE_BINDING_ALLOW_DELETES != 0 {
        binding = binding.with_deletes();
    }
    if flags & PAIMON_WIRE_BINDING_VERIFY_COMPACTION != 0 {
        binding = binding.with_verified_compaction();
    } else if flags & PAIMON_WIRE_BINDING_ALLOW_COMPACTION != 0 {
        binding = binding.with_compaction();
    }
    Ok(binding)
}

/// The body of the `paimon_wire_table_commit_new*` functions; `function` is the one called.
///
/// # Safety
/// As `paimon_wire_table_commit_new`.
unsafe fn table_commit_new(
    function: &str,
    table: *const paimon_wire_table,
    commit_user: *const c_char,
    overwrite: bool,
    write_kind: i32,
    flags: u32,
) -> paimon_wire_result_table_commit {
    guard(function, || {
        // SAFETY: forwarded from the caller.
        let (table, commit_user) = unsafe {
            (
                handle::borrow(table, "table")?,
                c_str(commit_user, "commit_user")?,
            )
        };
        check_commit_user(&table.table, commit_user)?;
        let write_kind = write_kind_arg(write_kind)?;
        let binding = binding(commit_user, overwrite, write_kind, flags)?;
        let coordinator = table
            .runtime
            .block_on(Coordinator::bind(table.table.clone(), binding))?
            .with_decode_limits(table.settings.decode_limits)
            .with_hash_index_budget(table.settings.hash_index_budget);
        let coordinator = match table.settings.outcome_horizon {
            Some(horizon) => coordinator.with_outcome_horizon(horizon),
            None => coordinator,
        };
        Ok(handle::into_raw::<paimon_wire_table_commit>(
            TableCommitHandle {
                coordinator,
                runtime: table.runtime.clone(),
            },
        ))
    })
}

/// Collects `count` message handles from C.
///
/// # Safety
/// `parts` is NULL (only when `count` is 0) or points to `count` pointers, each NULL or a
/// handle from this library.
unsafe fn message_parts<'a>(
    parts: *const *const paimon_wire_commit_messages,
    count: usize,
) -> FfiResult<Vec<&'a MessagesHandle>> {
    // SAFETY: forwarded from the caller.
    let pointers = unsafe { slice(parts, count, "parts")? };
    pointers
        .iter()
        .enumerate()
        // SAFETY: each element is NULL or a handle per the caller.
        .map(|(i, &p)| unsafe { handle::borrow(p, &format!("parts[{i}]")) })
        .collect()
}

/// Merges `count` message sets (`parts[0..count]`, each from
/// `paimon_wire_commit_messages_deserialize` or an earlier merge on this same `commit`) into one new
/// set owned by the caller. The parts are only read; free them as usual.
///
/// A file that appears more than once with identical metadata (a worker retry) is kept once;
/// the same file name with different metadata is a `PAIMON_WIRE_ERROR_CODE_MERGE_CONFLICT`. Parts
/// bound to another table commit, or prepared by a writer and never deserialized, are refused
/// with `PAIMON_WIRE_ERROR_CODE_FOREIGN_MESSAGES`.
///
/// Errors: `PAIMON_WIRE_ERROR_CODE_NULL_POINTER` / `PAIMON_WIRE_ERROR_CODE_WRONG_HANDLE_KIND`
/// for the arguments, `PAIMON_WIRE_ERROR_CODE_MERGE_CONFLICT`,
/// `PAIMON_WIRE_ERROR_CODE_FOREIGN_MESSAGES`, `PAIMON_WIRE_ERROR_CODE_SHARED_BUCKET` (two parts
/// write new files into one bucket of a primary-key table), and
/// `PAIMON_WIRE_ERROR_CODE_VALIDATION_FAILED` (rule `total-buckets`: parts disagree on a
/// partition's total buckets).
///
/// # Safety
/// `commit` is NULL or a handle from this library; `parts` as in `message_parts`.
#[no_mangle]
pub unsafe extern "C" fn paimon_wire_table_commit_merge(
    commit: *const paimon_wire_table_commit,
    parts: *const *const paimon_wire_commit_messages,
    count: usize,
) -> paimon_wire_result_commit_messages {
    guard(function_name!(), || {
        // SAFETY: forwarded from the caller.
        let (commit, parts) = unsafe {
            (
                handle::borrow(commit, "commit")?,
                message_parts(parts, count)?,
            )
        };
        let bound = parts
            .into_iter()
            .enumerate()
            .map(|(i, part)| part.bound(&format!("parts[{i}]")).cloned())
            .collect::<FfiResult<Vec<_>>>()?;
        let merged = commit.coordinator.merge(bound)?;
        Ok(handle::into_raw::<paimon_wire_commit_messages>(
            MessagesHandle::Bound(merged),
        ))
    })
}

/// Commits `messages` once under `commit_identifier`.
///
/// Identifiers must increase for one commit user. If a snapshot of this commit user already
/// carries `commit_identifier` (a coordinator rerun after a crash), nothing is committed and
/// the outcome is `PAIMON_WIRE_COMMIT_STATUS_ALREADY_COMMITTED`; so a coordinator that does not know
/// whether its commit landed simply calls this again with the same identifier. `messages` is
/// only read (free it as usual) and must be bound to `commit`
/// (`PAIMON_WIRE_ERROR_CODE_FOREIGN_MESSAGES` otherwise).
///
/// `PAIMON_WIRE_ERROR_CODE_OUTCOME_UNKNOWN`: a request that publishes the snapshot went
/// unanswered, so the snapshot may be in the table or may still land; keep the files and call
/// this again with the same identifier.
///
/// Other errors (nothing committed after any of them): `PAIMON_WIRE_ERROR_CODE_NULL_POINTER` /
/// `PAIMON_WIRE_ERROR_CODE_WRONG_HANDLE_KIND` for the arguments,
/// `PAIMON_WIRE_ERROR_CODE_FOREIGN_MESSAGES`, `PAIMON_WIRE_ERROR_CODE_VALIDATION_FAILED` (the
/// rules checked against the table's current state: files already live or not live,
/// compaction, sequence bounds; rule `bounds` also for HASH index checks over the budget of
/// `paimon_wire_table_options_set_hash_index_budget`),
/// `PAIMON_WIRE_ERROR_CODE_COMMIT_CONFLICT` (commit again with the same identifier),
/// `PAIMON_WIRE_ERROR_CODE_IDENTIFIER_SUPERSEDED`,
/// `PAIMON_WIRE_ERROR_CODE_IDENTIFIER_REUSED`, `PAIMON_WIRE_ERROR_CODE_IO` and
/// `PAIMON_WIRE_ERROR_CODE_PAIMON` (storage and the table engine, before anything was
/// published).
///
/// # Safety
/// `commit` and `messages` are NULL or handles from this library.
#[no_mangle]
pub unsafe extern "C" fn paimon_wire_table_commit_commit(
    commit: *const paimon_wire_table_commit,
    messages: *const paimon_wire_commit_messages,
    commit_identifier: i64,
) -> paimon_wire_result_commit {
    guard(function_name!(), || {
        // SAFETY: forwarded from the caller.
        let (commit, messages) = unsafe {
            (
                handle::borrow(commit, "commit")?,
                handle::borrow(messages, "messages")?,
            )
        };
        let bound = messages.bound("messages")?.clone();
        let outcome = commit
            .runtime
            .block_on(commit.coordinator.commit(bound, commit_identifier))?;
        Ok(outcome.into())
    })
}

/// Deletes the data files `messages` prepared, for a write that is abandoned and will never be
/// committed (best effort: files already gone are ignored). Deletes only files no snapshot of
/// the table references; files a snapshot lists (a payload that was committed after all) and
/// the files a message deletes are left alone. `messages` must be bound to `commit`.
///
/// After a commit of `commit` failed with `PAIMON_WIRE_ERROR_CODE_OUTCOME_UNKNOWN`, deletes
/// nothing and returns `PAIMON_WIRE_ERROR_CODE_OUTCOME_UNKNOWN` until the outcome horizon has
/// passed (`paimon_wire_table_options_set_outcome_horizon_ms`; 5 minutes on object stores and
/// REST catalogs, none on local file systems), since a request of that commit may still
/// publish a snapshot of these files; past it, reads the identifier's status first. Calling
/// `paimon_wire_table_commit_commit` again with the same identifier settles it at once.
///
/// Returns NULL on success, or an error: `PAIMON_WIRE_ERROR_CODE_OUTCOME_UNKNOWN` (above),
/// `PAIMON_WIRE_ERROR_CODE_FOREIGN_MESSAGES` when `messages` are bound to another table commit
/// (or were prepared by a writer and never deserialized), `PAIMON_WIRE_ERROR_CODE_IO` /
/// `PAIMON_WIRE_ERROR_CODE_PAIMON` when the table's snapshots cannot be read (nothing is
/// deleted then).
///
/// # Safety
/// `commit` and `messages` are NULL or handles from this library.
#[no_mangle]
pub unsafe extern "C" fn paimon_wire_table_commit_abort(
    commit: *const paimon_wire_table_commit,
    messages: *const paimon_wire_commit_messages,
) -> *mut paimon_wire_error {
    // SAFETY: forwarded from the caller.
    unsafe {
        abort(
            function_name!(),
            commit,
            messages,
            AbortGuard::WaitForOutcomes,
        )
    }
}

/// `paimon_wire_table_commit_abort` without waiting for unknown outcomes: for an engine that
/// knows from elsewhere that no request of its failed commit can still land (its own
/// reconciliation of the table). Files that snapshots reference when it reads the table are
/// still kept, but a snapshot published after that read loses its files. Same errors, except
/// that it never returns `PAIMON_WIRE_ERROR_CODE_OUTCOME_UNKNOWN`.
///
/// # Safety
/// `commit` and `messages` are NULL or handles from this library.
#[no_mangle]
pub unsafe extern "C" fn paimon_wire_table_commit_abort_despite_unknown_outcome(
    commit: *const paimon_wire_table_commit,
    messages: *const paimon_wire_commit_messages,
) -> *mut paimon_wire_error {
    // SAFETY: forwarded from the caller.
    unsafe { abort(function_name!(), commit, messages, AbortGuard::Override) }
}

/// Whether an abort waits for the coordinator's unknown outcomes to settle.
#[derive(Clone, Copy)]
enum AbortGuard {
    WaitForOutcomes,
    Override,
}

/// The two aborts.
///
/// # Safety
/// `commit` and `messages` are NULL or handles from this library.
unsafe fn abort(
    function: &'static str,
    commit: *const paimon_wire_table_commit,
    messages: *const paimon_wire_commit_messages,
    guard_kind: AbortGuard,
) -> *mut paimon_wire_error {
    guard(function, || {
        // SAFETY: forwarded from the caller.
        let (commit, messages) = unsafe {
            (
                handle::borrow(commit, "commit")?,
                handle::borrow(messages, "messages")?,
            )
        };
        let bound = messages.bound("messages")?;
        let coordinator = &commit.coordinator;
        commit
            .runtime
            .block_on(async {
                match guard_kind {
                    AbortGuard::WaitForOutcomes => coordinator.abort(bound).await,
                    AbortGuard::Override => coordinator.abort_despite_unknown_outcome(bound).await,
                }
            })
            .map(drop)
            .map_err(FfiError::from)
    })
}

/// Frees a table commit. NULL is a no-op; a handle of another kind is left untouched.
/// Messages bound to it stay valid to free, but no other table commit accepts them.
///
/// # Safety
/// `commit` is NULL or a handle from this library, not used again after this call.
#[no_mangle]
pub unsafe extern "C" fn paimon_wire_table_commit_free(commit: *mut paimon_wire_table_commit) {
    // SAFETY: forwarded from the caller.
    guard_void(|| unsafe { handle::free(commit) });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_outcome_has_its_own_code_and_says_to_keep_the_files() {
        let error = FfiError::from(CoordinatorError::OutcomeUnknown {
            commit_user: "job".into(),
            identifier: 3,
            during: "committing".into(),
            source: None,
        });
        assert!(matches!(error.code, paimon_wire_error_code::OutcomeUnknown));
        assert!(
            error.message.contains("identifier 3") && error.message.contains("Do not delete"),
            "{}",
            error.message
        );
    }
}
