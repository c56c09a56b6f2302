//! The worker side: `paimon_wire_write_builder` and `paimon_wire_table_write`.

use std::ffi::c_char;
use std::panic::{catch_unwind, AssertUnwindSafe};

use arrow_array::ffi::{from_ffi, FFI_ArrowArray, FFI_ArrowSchema};
use arrow_array::{Array, RecordBatch, StructArray};
use arrow_schema::DataType;
use paimon_wire_core::paimon::table::{
    AssignerShare, PostponeFixedBucketTableWrite, Table, TableWrite,
};
use paimon_wire_core::AssignerRouter;
use paimon_wire_core::CommitMessage;

use crate::args::c_str;
use crate::commit::{paimon_wire_write_kind, write_kind_arg};
use crate::error::{paimon_wire_error, paimon_wire_error_code, FfiError, FfiResult};
use crate::handle::{self, HandleDescriptor, HandleKind};
use crate::messages::{
    paimon_wire_commit_messages, paimon_wire_result_commit_messages, MessagesHandle,
};
use crate::result::{ffi_return, function_name, guard, guard_void};
use crate::runtime::SharedRuntime;
use crate::table::paimon_wire_table;

/// Settings shared by every write of one logical commit: the table, the commit user and the
/// overwrite flag. Created by `paimon_wire_write_builder_new`, freed by `paimon_wire_write_builder_free`.
/// Read-only after creation: it may be passed to several threads at once.
#[allow(non_camel_case_types)]
pub struct paimon_wire_write_builder {
    _private: [u8; 0],
}

pub(crate) struct WriteBuilderHandle {
    table: Table,
    runtime: SharedRuntime,
    validate_arrow: bool,
    commit_user: String,
    overwrite: bool,
    write_kind: paimon_wire_write_kind,
    /// On a dynamic-bucket table: the assigner share its writers are.
    assigner: Option<AssignerShare>,
}

impl HandleDescriptor for paimon_wire_write_builder {
    type Target = WriteBuilderHandle;
    const KIND: HandleKind = HandleKind::WriteBuilder;
}

/// A writer of data files for one worker. Created by `paimon_wire_write_builder_new_write`, freed
/// by `paimon_wire_table_write_free`. Not thread-safe: use it from one thread at a time.
#[allow(non_camel_case_types)]
pub struct paimon_wire_table_write {
    _private: [u8; 0],
}

pub(crate) struct TableWriteHandle {
    writer: Writer,
    runtime: SharedRuntime,
    validate_arrow: bool,
}

/// The paimon writer of each write kind (boxed: both are large and of different sizes).
enum Writer {
    Standard(Box<TableWrite>),
    PostponeFixedBucket(Box<PostponeFixedBucketTableWrite>),
}

impl Writer {
    async fn write_arrow_batch(
        &mut self,
        batch: &RecordBatch,
    ) -> paimon_wire_core::paimon::Result<()> {
        match self {
            Writer::Standard(w) => w.write_arrow_batch(batch).await,
            Writer::PostponeFixedBucket(w) => w.write_arrow_batch(batch).await,
        }
    }

    async fn prepare_commit(&mut self) -> paimon_wire_core::paimon::Result<Vec<CommitMessage>> {
        match self {
            Writer::Standard(w) => w.prepare_commit().await,
            Writer::PostponeFixedBucket(w) => w.prepare_commit().await,
        }
    }

    async fn close(&mut self) {
        match self {
            Writer::Standard(w) => w.close().await,
            Writer::PostponeFixedBucket(w) => w.close().await,
        }
    }
}

impl HandleDescriptor for paimon_wire_table_write {
    type Target = TableWriteHandle;
    const KIND: HandleKind = HandleKind::TableWrite;
}

/// Result of `paimon_wire_write_builder_new`: exactly one of `builder` and `error` is non-NULL.
#[repr(C)]
#[allow(non_camel_case_types)]
pub struct paimon_wire_result_write_builder {
    /// The builder, owned by the caller (free with `paimon_wire_write_builder_free`); NULL on error.
    pub builder: *mut paimon_wire_write_builder,
    /// The error, owned by the caller (free with `paimon_wire_error_free`); NULL on success.
    pub error: *mut paimon_wire_error,
}
ffi_return!(paimon_wire_result_write_builder, builder: *mut paimon_wire_write_builder = std::ptr::null_mut());

/// Result of `paimon_wire_write_builder_new_write`: exactly one of `write` and `error` is non-NULL.
#[repr(C)]
#[allow(non_camel_case_types)]
pub struct paimon_wire_result_table_write {
    /// The writer, owned by the caller (free with `paimon_wire_table_write_free`); NULL on error.
    pub write: *mut paimon_wire_table_write,
    /// The error, owned by the caller (free with `paimon_wire_error_free`); NULL on success.
    pub error: *mut paimon_wire_error,
}
ffi_return!(paimon_wire_result_table_write, write: *mut paimon_wire_table_write = std::ptr::null_mut());

/// Refuses a commit user the paimon crate refuses (empty, not a safe file-name segment) with
/// `INVALID_ARGUMENT`: the one rule for write builders and table commits.
pub(crate) fn check_commit_user(table: &Table, commit_user: &str) -> FfiResult<()> {
    if commit_user.is_empty() {
        return Err(FfiError::invalid_argument(
            "argument `commit_user` is empty",
        ));
    }
    table
        .new_write_builder()
        .with_commit_user(commit_user)
        .map(drop)
        .map_err(WriteBuilderHandle::refused_commit_user)
}

impl WriteBuilderHandle {
    fn refused_commit_user(e: paimon_wire_core::paimon::Error) -> FfiError {
        FfiError::new(
            paimon_wire_error_code::InvalidArgument,
            format!("argument `commit_user` is refused: {e}"),
        )
    }

    /// A new paimon writer with these settings.
    fn new_writer(&self) -> FfiResult<Writer> {
        match self.write_kind {
            paimon_wire_write_kind::Standard => {
                let builder = self
                    .table
                    .new_write_builder()
                    .with_commit_user(self.commit_user.as_str())
                    .map_err(Self::refused_commit_user)?;
                let builder = if self.overwrite {
                    builder.with_overwrite()
                } else {
                    builder
                };
                let builder = match self.assigner {
                    Some(share) => builder.with_dynamic_bucket_share(share),
                    None => builder,
                };
                Ok(Writer::Standard(Box::new(builder.new_write()?)))
            }
            paimon_wire_write_kind::PostponeFixedBucket => {
                let builder = self
                    .table
                    .new_postpone_fixed_bucket_write_builder()?
                    .with_commit_user(self.commit_user.as_str())
                    .map_err(Self::refused_commit_user)?;
                let builder = if self.overwrite {
                    builder.with_overwrite()
                } else {
                    builder
                };
                Ok(Writer::PostponeFixedBucket(Box::new(builder.new_write()?)))
            }
        }
    }
}

/// Creates a write builder for `table`.
///
/// `commit_user` (NUL-terminated UTF-8, copied) names the logical commit: every worker and the
/// coordinator of one commit pass the same value, and it must be a safe file-name segment.
/// `overwrite` marks the writes as an overwrite (the coordinator's table commit must be created
/// with the same flag). `write_kind` is a `paimon_wire_write_kind` value: which paimon writer to use
/// (only postpone tables accept `PAIMON_WIRE_WRITE_KIND_POSTPONE_FIXED_BUCKET`; the coordinator
/// must be created with the same kind). Returns a builder owned by the caller, or an error:
/// `PAIMON_WIRE_ERROR_CODE_INVALID_ARGUMENT` when the commit user or write kind is refused,
/// `PAIMON_WIRE_ERROR_CODE_UNSUPPORTED` when the table cannot be written with that kind (a
/// postpone kind for a table that is not a postpone table, a table the paimon crate cannot
/// write).
///
/// # Safety
/// `table` is NULL or a handle from this library; `commit_user` is NULL or a NUL-terminated
/// string.
#[no_mangle]
pub unsafe extern "C" fn paimon_wire_write_builder_new(
    table: *const paimon_wire_table,
    commit_user: *const c_char,
    overwrite: bool,
    write_kind: i32,
) -> paimon_wire_result_write_builder {
    guard(function_name!(), || {
        // SAFETY: forwarded from the caller.
        let (table, commit_user) = unsafe {
            (
                handle::borrow(table, "table")?,
                c_str(commit_user, "commit_user")?,
            )
        };
        check_commit_user(&table.table, commit_user)?;
        let handle = WriteBuilderHandle {
            table: table.table.clone(),
            runtime: table.runtime.clone(),
            validate_arrow: table.settings.validate_arrow,
            commit_user: commit_user.to_string(),
            overwrite,
            write_kind: write_kind_arg(write_kind)?,
            assigner: None,
        };
        // Refuse a bad commit user or write kind now rather than at the first write.
        drop(handle.new_writer()?);
        Ok(handle::into_raw::<paimon_wire_write_builder>(handle))
    })
}

/// Creates a write builder like `builder` whose writers are dynamic-bucket assigner `assign_id`
/// of `assigners` (Paimon Java's distributed `HashBucketAssigner`): each accepts only the rows
/// `paimon_wire_table_assigner_ids` routes to `assign_id`, keeps the bucket of every key already
/// in the table's HASH index, creates only the buckets it owns (`bucket % owners == assign_id %
/// owners`), and writes the HASH index updates of its buckets in its commit messages. `builder`
/// is unchanged. A table written this way needs every worker to pass the same `assigners`; the
/// coordinator refuses payloads that give one key two buckets (rule `hash-index-keys`).
///
/// Returns a new builder owned by the caller, or an error: `PAIMON_WIRE_ERROR_CODE_UNSUPPORTED`
/// for a table that is not a dynamic-bucket primary-key table whose primary key includes every
/// partition key, or a builder of another write kind; `PAIMON_WIRE_ERROR_CODE_INVALID_ARGUMENT`
/// when `assign_id` is not in `0..assigners`.
///
/// # Safety
/// `builder` is NULL or a handle from this library.
#[no_mangle]
pub unsafe extern "C" fn paimon_wire_write_builder_new_assigner(
    builder: *const paimon_wire_write_builder,
    assign_id: i32,
    assigners: i32,
) -> paimon_wire_result_write_builder {
    guard(function_name!(), || {
        // SAFETY: forwarded from the caller.
        let builder = unsafe { handle::borrow(builder, "builder")? };
        if builder.write_kind != paimon_wire_write_kind::Standard {
            return Err(FfiError::new(
                paimon_wire_error_code::Unsupported,
                "dynamic-bucket assigners use PAIMON_WIRE_WRITE_KIND_STANDARD writers",
            ));
        }
        if assigners < 1 || !(0..assigners).contains(&assign_id) {
            return Err(FfiError::invalid_argument(format!(
                "argument `assign_id` is {assign_id}, not one of 0..{assigners}"
            )));
        }
        let router = AssignerRouter::for_table(&builder.table, assigners)
            .map_err(|e| FfiError::new(paimon_wire_error_code::Unsupported, e.to_string()))?;
        let share = router
            .share(assign_id)
            .map_err(|e| FfiError::invalid_argument(e.to_string()))?;
        let handle = WriteBuilderHandle {
            table: builder.table.clone(),
            runtime: builder.runtime.clone(),
            validate_arrow: builder.validate_arrow,
            commit_user: builder.commit_user.clone(),
            overwrite: builder.overwrite,
            write_kind: builder.write_kind,
            assigner: Some(share),
        };
        drop(handle.new_writer()?);
        Ok(handle::into_raw::<paimon_wire_write_builder>(handle))
    })
}

/// Creates a writer. A worker usually makes one writer per builder; several writers of one
/// builder write disjoint data and their messages are merged by the coordinator.
///
/// # Safety
/// `builder` is NULL or a handle from this library.
#[no_mangle]
pub unsafe extern "C" fn paimon_wire_write_builder_new_write(
    builder: *const paimon_wire_write_builder,
) -> paimon_wire_result_table_write {
    guard(function_name!(), || {
        // SAFETY: forwarded from the caller.
        let builder = unsafe { handle::borrow(builder, "builder")? };
        Ok(handle::into_raw::<paimon_wire_table_write>(
            TableWriteHandle {
                writer: builder.new_writer()?,
                runtime: builder.runtime.clone(),
                validate_arrow: builder.validate_arrow,
            },
        ))
    })
}

/// Frees a write builder. NULL is a no-op; a handle of another kind is left untouched.
///
/// # Safety
/// `builder` is NULL or a handle from this library, not used again after this call.
#[no_mangle]
pub unsafe extern "C" fn paimon_wire_write_builder_free(builder: *mut paimon_wire_write_builder) {
    // SAFETY: forwarded from the caller.
    guard_void(|| unsafe { handle::free(builder) });
}

/// Moves a record batch in through the Arrow C Data Interface; `validate` runs the full
/// validation of every value (see `paimon_wire_table_options_set_arrow_validation`).
///
/// Ownership is taken first, before anything is checked: a non-NULL struct is moved out and
/// marked released, so the caller never releases it, whatever the outcome.
///
/// # Safety
/// Each pointer is NULL or points to an `ArrowArray` / `ArrowSchema` initialized per the Arrow
/// C Data Interface (or already released).
pub(crate) unsafe fn import_record_batch(
    array: *mut FFI_ArrowArray,
    schema: *mut FFI_ArrowSchema,
    validate: bool,
) -> FfiResult<RecordBatch> {
    // SAFETY: non-null pointers point to C Data Interface structs per the caller; `from_raw`
    // moves the contents out and leaves a released struct behind.
    let array = (!array.is_null()).then(|| unsafe { FFI_ArrowArray::from_raw(array) });
    // SAFETY: as above.
    let schema = (!schema.is_null()).then(|| unsafe { FFI_ArrowSchema::from_raw(schema) });
    let array = array.ok_or_else(|| FfiError::null("array"))?;
    let schema = schema.ok_or_else(|| FfiError::null("schema"))?;
    if array.is_released() {
        return Err(arrow_error("argument `array` was already released"));
    }
    // `FFI_ArrowSchema` has no `is_released`; a released schema has a NULL format, which the
    // arrow crate asserts on. Its panics on malformed input (NULL or non-UTF-8 format strings)
    // are turned into an Arrow error here rather than reported as a library bug.
    let imported = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: both structs are C Data Interface values per the caller; `from_ffi` keeps
        // `array` alive inside the returned buffers and releases it when they are dropped.
        let data = unsafe { from_ffi(array, &schema) }?;
        if validate {
            data.validate_full()?;
        }
        Ok::<_, arrow_schema::ArrowError>(data)
    }))
    .map_err(|_| arrow_error("argument `schema` is malformed (NULL or non-UTF-8 format or name)"))?
    .map_err(|e| arrow_error(&format!("cannot import the Arrow array: {e}")))?;
    if !matches!(imported.data_type(), DataType::Struct(_)) {
        return Err(arrow_error(&format!(
            "a record batch is exported as a struct array (format \"+s\"), got {}",
            imported.data_type()
        )));
    }
    let columns = StructArray::from(imported);
    if columns.null_count() > 0 {
        return Err(arrow_error(
            "the struct array of a record batch must have no null rows",
        ));
    }
    Ok(RecordBatch::from(columns))
}

fn arrow_error(message: &str) -> FfiError {
    FfiError::new(paimon_wire_error_code::Arrow, message)
}

/// Writes one record batch: `array` is a struct array whose children are the table's columns
/// (by name), `schema` its schema, as exported through the Arrow C Data Interface.
///
/// Ownership of `array` and `schema` moves to this function whenever they are non-NULL, even
/// when it fails: on return both are marked released (`release == NULL`) and the caller must
/// not release them. Rows are routed to their partition and bucket.
/// Returns NULL on success or an error owned by the caller: `PAIMON_WIRE_ERROR_CODE_NULL_POINTER`
/// / `PAIMON_WIRE_ERROR_CODE_WRONG_HANDLE_KIND` for the arguments, `PAIMON_WIRE_ERROR_CODE_ARROW`
/// when the structs cannot be imported (released, malformed, not a struct array, null rows),
/// `PAIMON_WIRE_ERROR_CODE_PAIMON` naming the field when the columns do not match the table, and
/// `PAIMON_WIRE_ERROR_CODE_IO` when writing a file fails.
///
/// After an error, the writer is unusable: part of the batch may already be in its files (a
/// batch is split by partition and bucket and written piece by piece), so neither writing the
/// batch again nor preparing a commit from this writer is correct. Free it (which deletes the
/// files it has not handed out) and write the whole batch again with a new writer. The
/// argument errors (NULL_POINTER, WRONG_HANDLE_KIND, ARROW) are found before anything is written;
/// the writer stays usable after them.
///
/// # Safety
/// `write` is NULL or a handle from this library, not used by another thread during the call;
/// `array` / `schema` are NULL or valid Arrow C Data Interface structs.
#[no_mangle]
pub unsafe extern "C" fn paimon_wire_table_write_arrow_batch(
    write: *mut paimon_wire_table_write,
    array: *mut FFI_ArrowArray,
    schema: *mut FFI_ArrowSchema,
) -> *mut paimon_wire_error {
    guard(function_name!(), || {
        // SAFETY: forwarded from the caller.
        let write = unsafe { handle::borrow_mut(write, "write") };
        let validate = write.as_ref().map_or(true, |write| write.validate_arrow);
        // SAFETY: forwarded from the caller (imported before the handle's error is returned,
        // so ownership moves on every path).
        let batch = unsafe { import_record_batch(array, schema, validate)? };
        let write = write?;
        write
            .runtime
            .block_on(write.writer.write_arrow_batch(&batch))
            .map_err(|e| FfiError::from(e).during("writing a record batch"))
    })
}

/// Flushes the writer and returns the commit messages describing the files it wrote, owned by
/// the caller (free with `paimon_wire_commit_messages_free`). Serialize them with
/// `paimon_wire_commit_messages_serialize` and send the bytes to the coordinator. The writer may
/// be used again for the next commit.
///
/// # Safety
/// `write` is NULL or a handle from this library, not used by another thread during the call.
#[no_mangle]
pub unsafe extern "C" fn paimon_wire_table_write_prepare_commit(
    write: *mut paimon_wire_table_write,
) -> paimon_wire_result_commit_messages {
    guard(function_name!(), || {
        // SAFETY: forwarded from the caller.
        let write = unsafe { handle::borrow_mut(write, "write")? };
        let messages = write
            .runtime
            .block_on(write.writer.prepare_commit())
            .map_err(|e| FfiError::from(e).during("preparing the commit"))?;
        Ok(handle::into_raw::<paimon_wire_commit_messages>(
            MessagesHandle::prepared(messages),
        ))
    })
}

/// Frees a writer, discarding anything written since the last `paimon_wire_table_write_prepare_commit`
/// (files already handed out in commit messages are left to the coordinator). NULL is a no-op;
/// a handle of another kind is left untouched.
///
/// This call blocks: it closes the writer's open files and deletes the ones it has not handed
/// out, on the caller's thread (through the table's runtime). A failure to delete them cannot be
/// returned (the paimon crate's writer reports none); the paimon crate logs it as a warning
/// (see `paimon_wire_set_log_callback`), and the files are orphans that Paimon's orphan-file
/// cleanup removes.
///
/// # Safety
/// `write` is NULL or a handle from this library, not used again after this call.
#[no_mangle]
pub unsafe extern "C" fn paimon_wire_table_write_free(write: *mut paimon_wire_table_write) {
    guard_void(|| {
        // SAFETY: forwarded from the caller.
        if let Ok(mut write) = unsafe { handle::take::<paimon_wire_table_write>(write, "write") } {
            let TableWriteHandle {
                writer, runtime, ..
            } = &mut write;
            runtime.block_on(writer.close());
        }
    });
}
