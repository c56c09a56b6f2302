//! The Python exceptions, and how the core's errors become them.
//!
//! Every exception's message is the `Display` of the Rust error it comes from, so a log line
//! reads the same from the CLI, C and Python. The classes live in module `paimon_wire` (their
//! `__module__`; the package re-exports each one), so they pickle by name with their
//! attributes and a failed Ray task's exception is caught on the driver as the same class.
//! The hierarchy:
//!
//! ```text
//! PaimonWireError
//! ├── CodecError            payload bytes that do not decode (or cannot be encoded)
//! ├── EnvelopeError         a PWIR envelope that is malformed or corrupted
//! ├── FrameError            a Doris DPCM frame that is malformed or names another version
//! ├── ValidationError       a message that breaks a rule of the bound table
//! ├── MergeConflictError    two payloads disagree about one file
//! ├── SharedBucketError     two payloads write one bucket of a primary-key table
//! ├── SplitError            messages that cannot be split into payloads of the limit
//! ├── SplitSetError         one worker's split payloads that are not a whole set
//! ├── ForeignMessagesError  messages handed to a coordinator they are not bound to
//! ├── InvalidTableNameError a table name that is not `database.table`
//! ├── TableNotFoundError    the table or its database does not exist
//! ├── UnsupportedError      a table, binding or operation the library does not support
//! ├── ArrowError            Arrow data that cannot be imported
//! ├── CommitConflictError   other commits took every snapshot this commit tried (retry it)
//! ├── IdentifierSupersededError  a higher identifier of the same commit user was committed
//! ├── IdentifierReusedError  the identifier committed other files (reused for new data)
//! └── PaimonError           any other failure of the paimon table engine (I/O, write, commit)
//!     ├── CommitOutcomeUnknownError  a commit whose snapshot may be in the table or may land
//!     └── SchemaMismatchError  rows whose columns do not fit the table (named)
//! ```
//!
//! Every class has the class attribute `outcome_unknown`: `True` on
//! `CommitOutcomeUnknownError` only, so `except PaimonWireError as e: if e.outcome_unknown`
//! tells an engine whether it may clean up.

use paimon_wire::coordinator::{CoordinatorError, PayloadRefused};
use paimon_wire::dpcm::FrameError as CoreFrameError;
use paimon_wire::paimon;
use paimon_wire::{CodecError as CoreCodecError, EnvelopeError as CoreEnvelopeError};
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::{create_exception, PyErr};

create_exception!(
    paimon_wire,
    PaimonWireError,
    PyException,
    "Base class of every error raised by paimon_wire."
);
create_exception!(
    paimon_wire,
    CodecError,
    PaimonWireError,
    "Payload bytes that do not decode at their serializer version, or messages that cannot be \
     encoded at the requested one. Attributes: `version`, `offset` (byte offset in the payload, \
     or None) and `field` (the field path, e.g. `messages[0].new_files[1]._FILE_NAME`)."
);
create_exception!(
    paimon_wire,
    EnvelopeError,
    PaimonWireError,
    "A PWIR envelope that is truncated, corrupted (CRC32C mismatch) or of an unknown format. \
     Attribute: `offset`."
);
create_exception!(
    paimon_wire,
    FrameError,
    PaimonWireError,
    "An Apache Doris DPCM frame that is malformed (bad magic, truncated, bytes after its body, \
     a negative length or an unknown serializer version) or names a serializer version other \
     than the one the payload was handed over with. Attribute: `offset`."
);
create_exception!(
    paimon_wire,
    ValidationError,
    PaimonWireError,
    "A decoded message breaks a rule of the table the coordinator is bound to; nothing was \
     committed. Attributes: `message_index`, `field` and `rule` (e.g. `plain-file-name`)."
);
create_exception!(
    paimon_wire,
    SplitError,
    PaimonWireError,
    "Messages that cannot be split into payloads of the requested size: part of one message \
     that is never split (one file, or its compaction and index files) is larger on its own. \
     The message names it and the size it needs."
);
create_exception!(
    paimon_wire,
    SplitSetError,
    PaimonWireError,
    "The payloads given as one worker's split set are not a whole set: one is missing (the \
     message names the missing indexes), an index was given twice with different bytes, or \
     the payloads name different counts. Nothing was decoded or committed."
);
create_exception!(
    paimon_wire,
    MergeConflictError,
    PaimonWireError,
    "Two payloads name the same file with different metadata; nothing was committed."
);
create_exception!(
    paimon_wire,
    SharedBucketError,
    PaimonWireError,
    "Two payloads write new files into the same bucket of a primary-key table, so which row \
     wins for a key both wrote would be arbitrary; nothing was committed. Route each \
     (partition, bucket) to one writer (`Table.bucket_ids`). Attributes: `partition` \
     (`key=value/...`, empty if unpartitioned), `bucket`, `first_payload`, `second_payload` \
     (positions in the merge input)."
);
create_exception!(
    paimon_wire,
    ForeignMessagesError,
    PaimonWireError,
    "Messages bound to one coordinator were handed to another."
);
create_exception!(
    paimon_wire,
    InvalidTableNameError,
    PaimonWireError,
    "A table name that is not `database.table`."
);
create_exception!(
    paimon_wire,
    TableNotFoundError,
    PaimonWireError,
    "The table or its database does not exist in the warehouse."
);
create_exception!(
    paimon_wire,
    UnsupportedError,
    PaimonWireError,
    "A table, binding or operation this library does not support."
);
create_exception!(
    paimon_wire,
    StorageBackendNotCompiledError,
    UnsupportedError,
    "The warehouse is a URI whose storage backend (s3, oss, gs, abfs, cos, obs, hdfs) this \
     build does not have; the message names the cargo feature to build it with."
);
create_exception!(
    paimon_wire,
    ArrowError,
    PaimonWireError,
    "Arrow data that cannot be imported (released, malformed, not a record batch)."
);
create_exception!(
    paimon_wire,
    CommitConflictError,
    PaimonWireError,
    "Other committers took every snapshot this commit tried to publish, on every attempt the \
     table's `commit.max-retries` allows. Nothing was committed and the prepared files are \
     kept: commit again with the same identifier (never abort)."
);
create_exception!(
    paimon_wire,
    IdentifierSupersededError,
    PaimonWireError,
    "The commit identifier was never committed, but the same commit user already committed a \
     higher one (two coordinators share a commit user). Nothing was committed; give each \
     concurrent job its own commit user."
);
create_exception!(
    paimon_wire,
    IdentifierReusedError,
    PaimonWireError,
    "The identifier is already committed, by a snapshot that does not hold this commit's files: \
     it was reused for other data. Nothing was committed; use a new identifier for new data."
);
create_exception!(
    paimon_wire,
    PaimonError,
    PaimonWireError,
    "Any other failure of the paimon table engine: I/O, rows that do not fit the table, a \
     commit that failed before publishing anything."
);
create_exception!(
    paimon_wire,
    CommitOutcomeUnknownError,
    PaimonError,
    "A commit failed after a request that publishes its snapshot went unanswered (a timeout, \
     a lost answer): the snapshot may be in the table, or may still land. Keep the files and \
     commit again with the same identifier (it reports already committed if the snapshot \
     landed). `Coordinator.abort` raises it too, deleting nothing, while such a commit's \
     requests may still land. Attributes: `commit_user`, `identifier`; the class attribute \
     `outcome_unknown` is True (False on every other class)."
);
create_exception!(
    paimon_wire,
    SchemaMismatchError,
    PaimonError,
    "Rows whose columns do not fit the table: a column the table does not have, a missing \
     column, or a type that cannot be converted to the table's without changing a value \
     (the message names the column)."
);

/// Adds the exception classes to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("PaimonWireError", py.get_type::<PaimonWireError>())?;
    m.add("CodecError", py.get_type::<CodecError>())?;
    m.add("EnvelopeError", py.get_type::<EnvelopeError>())?;
    m.add("FrameError", py.get_type::<FrameError>())?;
    m.add("ValidationError", py.get_type::<ValidationError>())?;
    m.add("MergeConflictError", py.get_type::<MergeConflictError>())?;
    m.add("SharedBucketError", py.get_type::<SharedBucketError>())?;
    m.add("SplitError", py.get_type::<SplitError>())?;
    m.add("SplitSetError", py.get_type::<SplitSetError>())?;
    m.add(
        "ForeignMessagesError",
        py.get_type::<ForeignMessagesError>(),
    )?;
    m.add(
        "InvalidTableNameError",
        py.get_type::<InvalidTableNameError>(),
    )?;
    m.add("TableNotFoundError", py.get_type::<TableNotFoundError>())?;
    m.add("UnsupportedError", py.get_type::<UnsupportedError>())?;
    m.add(
        "StorageBackendNotCompiledError",
        py.get_type::<StorageBackendNotCompiledError>(),
    )?;
    m.add("ArrowError", py.get_type::<ArrowError>())?;
    m.add("CommitConflictError", py.get_type::<CommitConflictError>())?;
    m.add(
        "IdentifierSupersededError",
        py.get_type::<IdentifierSupersededError>(),
    )?;
    m.add(
        "IdentifierReusedError",
        py.get_type::<IdentifierReusedError>(),
    )?;
    m.add("PaimonError", py.get_type::<PaimonError>())?;
    m.add("SchemaMismatchError", py.get_type::<SchemaMismatchError>())?;
    m.add(
        "CommitOutcomeUnknownError",
        py.get_type::<CommitOutcomeUnknownError>(),
    )?;
    py.get_type::<PaimonWireError>()
        .setattr("outcome_unknown", false)?;
    py.get_type::<CommitOutcomeUnknownError>()
        .setattr("outcome_unknown", true)?;
    Ok(())
}

/// An error on the Rust side, before it becomes a Python exception. Work done without the
/// GIL returns these; the conversion into [`PyErr`] happens once the GIL is held again.
#[derive(Debug)]
pub(crate) enum Error {
    /// From the core's coordinator (decode, validate, merge, commit, abort, open).
    Coordinator(CoordinatorError),
    /// One of many payloads decoded together was refused.
    Refused(PayloadRefused),
    /// From the codec (encoding a worker's messages, inspecting a payload).
    Codec(CoreCodecError),
    /// From unwrapping an envelope.
    Envelope(CoreEnvelopeError),
    /// From framing or unframing a `DPCM` frame.
    Frame(CoreFrameError),
    /// From planning or running a compaction.
    Compaction(paimon_wire::compaction::CompactionError),
    /// From the paimon crate, with what this library was doing.
    Paimon {
        during: String,
        source: paimon::Error,
    },
    /// Arrow data that cannot be imported.
    Arrow(String),
    /// Rows that cannot be routed to buckets.
    Routing(paimon_wire::RoutingError),
    /// Rows whose columns do not fit the table.
    Conform(paimon_wire::ConformError),
    /// Messages that cannot be split into payloads of the requested size.
    Split(paimon_wire::SplitError),
    /// An object used in a way it does not allow (a closed writer, say).
    Usage(String),
}

/// Results of work done on the Rust side.
pub(crate) type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// A paimon crate error raised while doing `during` (e.g. "writing a record batch").
    pub(crate) fn paimon(during: impl Into<String>, source: paimon::Error) -> Self {
        Error::Paimon {
            during: during.into(),
            source,
        }
    }
}

impl From<CoordinatorError> for Error {
    fn from(e: CoordinatorError) -> Self {
        Error::Coordinator(e)
    }
}

impl From<CoreCodecError> for Error {
    fn from(e: CoreCodecError) -> Self {
        Error::Codec(e)
    }
}

impl From<CoreFrameError> for Error {
    fn from(e: CoreFrameError) -> Self {
        Error::Frame(e)
    }
}

impl From<CoreEnvelopeError> for Error {
    fn from(e: CoreEnvelopeError) -> Self {
        Error::Envelope(e)
    }
}

/// The exception class for an error of the paimon crate.
fn paimon_exception(source: &paimon::Error, message: String) -> PyErr {
    match source {
        paimon::Error::TableNotExist { .. } | paimon::Error::DatabaseNotExist { .. } => {
            TableNotFoundError::new_err(message)
        }
        paimon::Error::Unsupported { .. } => UnsupportedError::new_err(message),
        _ => PaimonError::new_err(message),
    }
}

/// A `CodecError` exception carrying the error's location as attributes.
fn codec_exception(py: Python<'_>, e: &CoreCodecError, message: String) -> PyErr {
    let err = CodecError::new_err(message);
    let value = err.value(py);
    let field = e.field_path();
    let set = value
        .setattr("version", e.version())
        .and_then(|()| value.setattr("offset", e.offset()))
        .and_then(|()| value.setattr("field", (!field.is_empty()).then_some(field)));
    match set {
        Ok(()) => err,
        Err(failed) => failed,
    }
}

/// A `FrameError` exception carrying the offset of the field that is wrong.
fn frame_exception(py: Python<'_>, e: &CoreFrameError, message: String) -> PyErr {
    let err = FrameError::new_err(message);
    match err.value(py).setattr("offset", e.offset) {
        Ok(()) => err,
        Err(failed) => failed,
    }
}

fn coordinator_exception(py: Python<'_>, e: CoordinatorError) -> PyErr {
    let message = e.to_string();
    coordinator_exception_saying(py, e, message)
}

/// The exception `deserialize` raises for the refused payload, with a message that names the
/// payload's position, which `payload_index` also holds.
fn refused_payload_exception(py: Python<'_>, refused: PayloadRefused) -> PyErr {
    let message = refused.to_string();
    let err = coordinator_exception_saying(py, refused.error, message);
    match err.value(py).setattr("payload_index", refused.index) {
        Ok(()) => err,
        Err(failed) => failed,
    }
}

/// The exception for `e`, saying `message`.
fn coordinator_exception_saying(py: Python<'_>, e: CoordinatorError, message: String) -> PyErr {
    match e {
        CoordinatorError::Codec(codec) => codec_exception(py, &codec, message),
        CoordinatorError::Frame(frame) => frame_exception(py, &frame, message),
        CoordinatorError::Validation(validation) => {
            let err = ValidationError::new_err(message);
            let value = err.value(py);
            let set = value
                .setattr("message_index", validation.message_index)
                .and_then(|()| value.setattr("field", validation.field.as_str()))
                .and_then(|()| value.setattr("rule", validation.rule.name()));
            match set {
                Ok(()) => err,
                Err(failed) => failed,
            }
        }
        CoordinatorError::Merge(_) => MergeConflictError::new_err(message),
        CoordinatorError::SharedBucket(shared) => {
            let err = SharedBucketError::new_err(message);
            let value = err.value(py);
            let set = value
                .setattr("partition", shared.partition.as_str())
                .and_then(|()| value.setattr("bucket", shared.bucket))
                .and_then(|()| value.setattr("first_payload", shared.first.part))
                .and_then(|()| value.setattr("second_payload", shared.second.part));
            match set {
                Ok(()) => err,
                Err(failed) => failed,
            }
        }
        CoordinatorError::Parts(_) => SplitSetError::new_err(message),
        CoordinatorError::ForeignMessages { .. } => ForeignMessagesError::new_err(message),
        CoordinatorError::InvalidTableName { .. } => InvalidTableNameError::new_err(message),
        CoordinatorError::Unsupported { .. } | CoordinatorError::UnknownStorageScheme { .. } => {
            UnsupportedError::new_err(message)
        }
        CoordinatorError::StorageBackendNotCompiled { .. } => {
            StorageBackendNotCompiledError::new_err(message)
        }
        CoordinatorError::Paimon { ref source, .. } => paimon_exception(source, message),
        CoordinatorError::CommitConflict { .. } => CommitConflictError::new_err(message),
        CoordinatorError::IdentifierSuperseded { .. } => {
            IdentifierSupersededError::new_err(message)
        }
        CoordinatorError::IdentifierReused { .. } => IdentifierReusedError::new_err(message),
        CoordinatorError::OutcomeUnknown {
            ref commit_user,
            identifier,
            ..
        } => {
            let err = CommitOutcomeUnknownError::new_err(message);
            let value = err.value(py);
            let set = value
                .setattr("commit_user", commit_user.as_str())
                .and_then(|()| value.setattr("identifier", identifier));
            match set {
                Ok(()) => err,
                Err(failed) => failed,
            }
        }
        _ => PaimonWireError::new_err(message),
    }
}

impl From<Error> for PyErr {
    fn from(e: Error) -> Self {
        Python::attach(|py| match e {
            Error::Coordinator(e) => coordinator_exception(py, e),
            Error::Refused(refused) => refused_payload_exception(py, refused),
            Error::Codec(e) => {
                let message = e.to_string();
                codec_exception(py, &e, message)
            }
            Error::Envelope(e) => {
                let err = EnvelopeError::new_err(e.to_string());
                match err.value(py).setattr("offset", e.offset) {
                    Ok(()) => err,
                    Err(failed) => failed,
                }
            }
            Error::Frame(e) => frame_exception(py, &e, e.to_string()),
            Error::Compaction(e) => {
                use paimon_wire::compaction::CompactionError as C;
                let message = e.to_string();
                match e {
                    C::Unsupported { .. } => UnsupportedError::new_err(message),
                    C::BadTask { .. } => pyo3::exceptions::PyValueError::new_err(message),
                    C::Paimon { source, .. } => paimon_exception(&source, message),
                    _ => PaimonWireError::new_err(message),
                }
            }
            Error::Paimon { during, source } => {
                // No secret of a warehouse this process opened shows, in any spelling.
                let source = paimon_wire::coordinator::without_secrets(source);
                let during = paimon_wire::secrets::redact_remembered(&during);
                let message = format!(
                    "{during}: {}",
                    paimon_wire::coordinator::PlainPaimonError(&source)
                );
                paimon_exception(&source, message)
            }
            Error::Arrow(message) => ArrowError::new_err(message),
            Error::Routing(e) => match e {
                paimon_wire::RoutingError::NotFixedBucket { .. }
                | paimon_wire::RoutingError::NotDynamicBucket { .. } => {
                    UnsupportedError::new_err(e.to_string())
                }
                paimon_wire::RoutingError::MissingColumn { .. } => {
                    ArrowError::new_err(e.to_string())
                }
                _ => PaimonError::new_err(e.to_string()),
            },
            Error::Conform(e) => SchemaMismatchError::new_err(e.to_string()),
            Error::Split(e) => match e {
                paimon_wire::SplitError::Codec(codec) => {
                    let message = codec.to_string();
                    codec_exception(py, &codec, message)
                }
                paimon_wire::SplitError::LimitTooSmall { .. } => {
                    pyo3::exceptions::PyValueError::new_err(e.to_string())
                }
                _ => SplitError::new_err(e.to_string()),
            },
            Error::Usage(message) => PaimonWireError::new_err(message),
        })
    }
}
