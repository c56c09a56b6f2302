//! Errors as C sees them: a stable numeric code and an owned message.

use std::ffi::{c_char, CString};

use paimon_wire_core::{CodecError, CodecErrorKind};

/// What kind of error a call failed with. The values are part of the ABI and never change
/// meaning; new codes may be added. Code 14 is not assigned (it never was, in any version of
/// this header).
#[repr(C)]
#[allow(non_camel_case_types)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum paimon_wire_error_code {
    /// A pointer argument that must not be NULL was NULL.
    NullPointer = 1,
    /// A handle argument is of another kind (e.g. a `paimon_wire_table *` cast to
    /// `paimon_wire_table_commit *`) or was not created by this library.
    WrongHandleKind = 2,
    /// An argument is malformed: a string that is not UTF-8, a table name that is not
    /// `database.table`, a negative length, an invalid commit user, ...
    InvalidArgument = 3,
    /// The serializer (or envelope) version is not one this library can read or write.
    UnsupportedVersion = 4,
    /// The payload bytes could not be decoded (truncated, corrupt, trailing bytes, ...).
    MalformedPayload = 5,
    /// The messages cannot be written at the requested version without losing data.
    Unrepresentable = 6,
    /// Messages or a payload belong to another table, commit user, overwrite mode or
    /// table-commit handle than the one they were handed to.
    ForeignMessages = 7,
    /// A decoded message breaks a rule of the table it was bound to; nothing was committed.
    ValidationFailed = 8,
    /// Two message sets disagree about the same file; nothing was committed.
    MergeConflict = 9,
    /// The Arrow C Data Interface input could not be imported, or does not match the table.
    Arrow = 10,
    /// The table (or its database) does not exist.
    TableNotFound = 11,
    /// Reading or writing storage failed.
    Io = 12,
    /// The table, mode or operation is not supported.
    Unsupported = 13,
    /// Any other error reported by the Paimon table engine.
    Paimon = 15,
    /// Other committers took every snapshot this commit tried to publish, on every attempt
    /// the table's `commit.max-retries` allows. Nothing was committed and the prepared files
    /// are kept: commit the same messages again with the same identifier (or raise
    /// `commit.max-retries`). Never abort them.
    CommitConflict = 16,
    /// The commit identifier was never committed, but the same commit user already committed
    /// a higher one (two coordinators share a commit user). Nothing was committed; give each
    /// concurrent job its own commit user.
    IdentifierSuperseded = 17,
    /// The warehouse is a URI whose storage backend (`s3`, `oss`, `gs`, `abfs`, `cos`, `obs`,
    /// `hdfs`) this build of the library does not have; the message names the cargo feature
    /// to build it with. Not an I/O error: no storage was touched.
    StorageBackendNotCompiled = 18,
    /// Two payloads write new files into one bucket of a primary-key table (route each
    /// (partition, bucket) to one writer; see `paimon_wire_table_bucket_ids`); nothing was
    /// committed.
    SharedBucket = 19,
    /// The identifier is already committed by a snapshot that does not hold this commit's
    /// files: it was reused for other data. Nothing was committed; use a new identifier.
    IdentifierReused = 20,
    /// A payload is beyond a decode limit (bytes, messages or files per payload; see
    /// `paimon_wire_table_options_set_decode_limits`); the message names the limit and the
    /// value found. Nothing of the payload was decoded further.
    LimitExceeded = 21,
    /// The payloads given as one worker's split set are not a whole set: one is missing, an
    /// index was given twice with different bytes, or the payloads name different counts (see
    /// `paimon_wire_commit_messages_deserialize_parts`). Nothing was decoded or committed.
    SplitSetIncomplete = 22,
    /// The commit failed after a request that publishes its snapshot went unanswered (a
    /// timeout, a lost answer): the snapshot may be in the table, or may still land. Keep the
    /// files: call `paimon_wire_table_commit_commit` again with the same identifier (it reports
    /// `PAIMON_WIRE_COMMIT_STATUS_ALREADY_COMMITTED` if the snapshot landed). Also returned by
    /// `paimon_wire_table_commit_abort` while such a commit's requests may still land (it
    /// deleted nothing; see `paimon_wire_table_options_set_outcome_horizon_ms`). Every other error of a commit is known to have committed nothing.
    OutcomeUnknown = 23,
    /// A bug inside the library (a Rust panic, caught at the boundary). The handle involved
    /// may be unusable; free it.
    Internal = 99,
}

/// An error returned by a fallible call. NULL means success.
///
/// Owned by the caller: free it with `paimon_wire_error_free`. `message` is a NUL-terminated UTF-8
/// string owned by the error and freed with it.
#[repr(C)]
#[allow(non_camel_case_types)]
pub struct paimon_wire_error {
    /// What kind of error this is.
    pub code: paimon_wire_error_code,
    /// A human-readable description naming the argument, field or rule at fault.
    pub message: *mut c_char,
}

/// An error on the Rust side of the boundary, before it is handed to C.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FfiError {
    pub(crate) code: paimon_wire_error_code,
    pub(crate) message: String,
}

/// The result type of every function body behind the C boundary.
pub(crate) type FfiResult<T> = Result<T, FfiError>;

impl FfiError {
    pub(crate) fn new(code: paimon_wire_error_code, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }

    /// A NULL pointer was passed for argument `arg`.
    pub(crate) fn null(arg: &str) -> Self {
        Self::new(
            paimon_wire_error_code::NullPointer,
            format!("argument `{arg}` is NULL"),
        )
    }

    pub(crate) fn invalid_argument(message: impl Into<String>) -> Self {
        Self::new(paimon_wire_error_code::InvalidArgument, message)
    }

    /// A panic caught at the boundary.
    pub(crate) fn from_panic(payload: Box<dyn std::any::Any + Send>) -> Self {
        let what = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic payload".to_string());
        Self::new(
            paimon_wire_error_code::Internal,
            format!("internal error in libpaimon_wire (please report it): {what}"),
        )
    }

    /// Prefixes the message with what the library was doing.
    pub(crate) fn during(mut self, what: &str) -> Self {
        self.message = format!("{what}: {}", self.message);
        self
    }

    /// Hands the error to C.
    pub(crate) fn into_raw(self) -> *mut paimon_wire_error {
        // Interior NULs would cut the C string short; they cannot occur in our messages but
        // a message may quote untrusted text.
        let text = self.message.replace('\0', "\\0");
        let message = CString::new(text)
            .unwrap_or_else(|_| CString::from(c"error message unavailable"))
            .into_raw();
        Box::into_raw(Box::new(paimon_wire_error {
            code: self.code,
            message,
        }))
    }
}

/// The code of a codec error: its kind decides.
pub(crate) fn codec_code(e: &CodecError) -> paimon_wire_error_code {
    match e.kind() {
        CodecErrorKind::UnsupportedVersion { .. } | CodecErrorKind::VersionNotWritable { .. } => {
            paimon_wire_error_code::UnsupportedVersion
        }
        CodecErrorKind::Unrepresentable { .. } => paimon_wire_error_code::Unrepresentable,
        CodecErrorKind::LimitExceeded { .. } => paimon_wire_error_code::LimitExceeded,
        _ => paimon_wire_error_code::MalformedPayload,
    }
}

/// The code of an error of the paimon crate.
pub(crate) fn paimon_code(e: &paimon_wire_core::paimon::Error) -> paimon_wire_error_code {
    use paimon_wire_core::paimon::Error as E;
    match e {
        E::TableNotExist { .. } | E::DatabaseNotExist { .. } => {
            paimon_wire_error_code::TableNotFound
        }
        E::IoUnexpected { .. } | E::IoUnsupported { .. } => paimon_wire_error_code::Io,
        E::Unsupported { .. } => paimon_wire_error_code::Unsupported,
        E::IdentifierInvalid { .. } | E::ConfigInvalid { .. } => {
            paimon_wire_error_code::InvalidArgument
        }
        E::CommitConflict { .. } => paimon_wire_error_code::CommitConflict,
        _ => paimon_wire_error_code::Paimon,
    }
}

impl From<CodecError> for FfiError {
    fn from(e: CodecError) -> Self {
        Self::new(codec_code(&e), e.to_string())
    }
}

impl From<paimon_wire_core::paimon::Error> for FfiError {
    /// A paimon crate error of the library's own (a writer's): no secret of a warehouse this
    /// process opened shows in it, in any spelling (`coordinator::without_secrets`).
    fn from(e: paimon_wire_core::paimon::Error) -> Self {
        let e = paimon_wire_core::coordinator::without_secrets(e);
        Self::new(paimon_code(&e), e.to_string())
    }
}

impl From<arrow_schema::ArrowError> for FfiError {
    fn from(e: arrow_schema::ArrowError) -> Self {
        Self::new(paimon_wire_error_code::Arrow, e.to_string())
    }
}

/// Frees an error returned by any function of this library. NULL is a no-op.
///
/// # Safety
/// `error` is NULL or an error returned by this library that was not freed yet.
#[no_mangle]
pub unsafe extern "C" fn paimon_wire_error_free(error: *mut paimon_wire_error) {
    if error.is_null() {
        return;
    }
    // SAFETY: the caller passes an error from `FfiError::into_raw`, which made both the box and
    // the C string; each is reclaimed exactly once here.
    let error = unsafe { Box::from_raw(error) };
    if !error.message.is_null() {
        // SAFETY: `message` came from `CString::into_raw` in `FfiError::into_raw`.
        drop(unsafe { CString::from_raw(error.message) });
    }
}
