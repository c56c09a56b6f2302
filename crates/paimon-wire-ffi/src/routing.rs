//! Bucket routing for engines: which bucket each row of a fixed-bucket table belongs to,
//! byte-exact with Paimon Java, so every (partition, bucket) of a primary-key table can be
//! sent to one writer.

use arrow_array::ffi::{FFI_ArrowArray, FFI_ArrowSchema};
use paimon_wire_core::{AssignerRouter, BucketRouter, RoutingError, RoutingKind};

use crate::error::{paimon_wire_error, paimon_wire_error_code, FfiError, FfiResult};
use crate::handle;
use crate::result::{function_name, guard};
use crate::table::paimon_wire_table;
use crate::write::import_record_batch;

/// How rows of a table must be spread over writers when many workers write it.
#[repr(C)]
#[allow(non_camel_case_types)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum paimon_wire_routing_kind {
    /// Fixed buckets (`bucket >= 1`): send every row of one (partition, bucket) to one
    /// writer; compute the bucket with `paimon_wire_table_bucket_ids`. Required for primary-key
    /// tables (the coordinator refuses two writers of one bucket).
    FixedBucket = 1,
    /// Any writer may write any row: append tables with `bucket = -1`, and postpone tables
    /// (`bucket = -2`, the way to write one primary-key bucket from many writers).
    AnyWriter = 2,
    /// Primary-key table with dynamic buckets (`bucket = -1`): buckets come from the table's
    /// hash index and are assigned by the writer, so independent writers put one key in two
    /// buckets. Write it from one writer, or, when the primary key includes every partition
    /// key, from N writers that are assigners 0..N-1: route rows with
    /// `paimon_wire_table_assigner_ids` and make each writer's builder with
    /// `paimon_wire_write_builder_new_assigner`.
    SingleWriter = 3,
}

/// Routing of a table: its kind and, for `PAIMON_WIRE_ROUTING_KIND_FIXED_BUCKET`, the bucket count.
#[repr(C)]
#[allow(non_camel_case_types)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct paimon_wire_routing {
    /// How rows must be spread over writers.
    pub kind: paimon_wire_routing_kind,
    /// The table's bucket count for a fixed-bucket table, else 0.
    pub buckets: i32,
}

/// Writes the routing `table` needs into `*out`. Returns NULL on success or an error owned by
/// the caller (`PAIMON_WIRE_ERROR_CODE_NULL_POINTER`, `PAIMON_WIRE_ERROR_CODE_WRONG_HANDLE_KIND`).
///
/// # Safety
/// `table` is NULL or a table handle from this library; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn paimon_wire_table_routing(
    table: *const paimon_wire_table,
    out: *mut paimon_wire_routing,
) -> *mut paimon_wire_error {
    guard(function_name!(), || {
        // SAFETY: forwarded from the caller; tables may be shared between threads.
        let table = unsafe { handle::borrow(table, "table")? };
        if out.is_null() {
            return Err(FfiError::null("out"));
        }
        let routing = match RoutingKind::of(&table.table) {
            RoutingKind::FixedBucket { buckets } => paimon_wire_routing {
                kind: paimon_wire_routing_kind::FixedBucket,
                buckets,
            },
            RoutingKind::AnyWriter => paimon_wire_routing {
                kind: paimon_wire_routing_kind::AnyWriter,
                buckets: 0,
            },
            RoutingKind::SingleWriter => paimon_wire_routing {
                kind: paimon_wire_routing_kind::SingleWriter,
                buckets: 0,
            },
        };
        // SAFETY: `out` is non-null and writable per the caller.
        unsafe { out.write(routing) };
        Ok(())
    })
}

/// Computes the bucket of every row of a record batch of a fixed-bucket table, as Paimon
/// Java's writer assigns it (bucket key = `bucket-key`, or the primary key minus the partition
/// keys; `bucket-function.type` default, mod or hive). `array` / `schema` are a struct array
/// and its schema exported through the Arrow C Data Interface; the bucket-key columns are found
/// by name and must have the Arrow types the table's writer takes (other columns are ignored).
/// Row `i`'s bucket is written to `out_buckets[i]`; `out_len` must be at least the row count.
///
/// Ownership of `array` and `schema` moves to this function whenever they are non-NULL, even
/// when it fails (as `paimon_wire_table_write_arrow_batch`). Returns NULL on success or an error
/// owned by the caller: `PAIMON_WIRE_ERROR_CODE_UNSUPPORTED` for a table without fixed buckets (the
/// message says which routing it needs; see `paimon_wire_table_routing`),
/// `PAIMON_WIRE_ERROR_CODE_ARROW` for an array that cannot be imported or lacks a bucket-key column,
/// `PAIMON_WIRE_ERROR_CODE_PAIMON` for a column of the wrong type or an unusable bucket function,
/// `PAIMON_WIRE_ERROR_CODE_INVALID_ARGUMENT` when `out_len` is below the row count.
///
/// # Safety
/// `table` is NULL or a table handle from this library; `array` / `schema` are NULL or valid
/// Arrow C Data Interface structs; `out_buckets` is NULL (only with `out_len` 0) or points to
/// `out_len` writable `int32_t`s.
#[no_mangle]
pub unsafe extern "C" fn paimon_wire_table_bucket_ids(
    table: *const paimon_wire_table,
    array: *mut FFI_ArrowArray,
    schema: *mut FFI_ArrowSchema,
    out_buckets: *mut i32,
    out_len: usize,
) -> *mut paimon_wire_error {
    guard(function_name!(), || {
        // SAFETY: forwarded from the caller (taken first, so ownership moves on every path).
        let batch = unsafe { import_record_batch(array, schema, true)? };
        // SAFETY: forwarded from the caller; tables may be shared between threads.
        let table = unsafe { handle::borrow(table, "table")? };
        let router = BucketRouter::for_table(&table.table).map_err(routing_error)?;
        let buckets = router.bucket_ids(&batch).map_err(routing_error)?;
        copy_out(&buckets, out_buckets, out_len, "out_buckets")
    })
}

/// Computes which of `assigners` dynamic-bucket assigners owns every row of a record batch of a
/// dynamic-bucket primary-key table (`bucket = -1`, primary key including every partition key),
/// as Paimon Java routes rows to its `HashBucketAssigner`s: `(|partition hash % assigners| +
/// |key hash % owners|) % assigners` over the `BinaryRow` hashes of the partition and the
/// trimmed primary key, where `owners` is `dynamic-bucket.initial-buckets` capped at
/// `assigners` (unset: `assigners`). Send each row to the writer that is that assigner
/// (`paimon_wire_write_builder_new_assigner`). Row `i`'s assigner is written to
/// `out_assigners[i]`; `out_len` must be at least the row count.
///
/// Ownership of `array` and `schema` moves to this function whenever they are non-NULL, even
/// when it fails. Returns NULL on success or an error owned by the caller:
/// `PAIMON_WIRE_ERROR_CODE_UNSUPPORTED` for a table that is not such a table (the message says
/// why), `PAIMON_WIRE_ERROR_CODE_ARROW` for an array that cannot be imported or lacks a
/// partition or primary-key column, `PAIMON_WIRE_ERROR_CODE_PAIMON` for a column of the wrong
/// type or `assigners` below 1, `PAIMON_WIRE_ERROR_CODE_INVALID_ARGUMENT` when `out_len` is below
/// the row count.
///
/// # Safety
/// `table` is NULL or a table handle from this library; `array` / `schema` are NULL or valid
/// Arrow C Data Interface structs; `out_assigners` is NULL (only with `out_len` 0) or points to
/// `out_len` writable `int32_t`s.
#[no_mangle]
pub unsafe extern "C" fn paimon_wire_table_assigner_ids(
    table: *const paimon_wire_table,
    array: *mut FFI_ArrowArray,
    schema: *mut FFI_ArrowSchema,
    assigners: i32,
    out_assigners: *mut i32,
    out_len: usize,
) -> *mut paimon_wire_error {
    guard(function_name!(), || {
        // SAFETY: forwarded from the caller (taken first, so ownership moves on every path).
        let batch = unsafe { import_record_batch(array, schema, true)? };
        // SAFETY: forwarded from the caller; tables may be shared between threads.
        let table = unsafe { handle::borrow(table, "table")? };
        let router = AssignerRouter::for_table(&table.table, assigners).map_err(routing_error)?;
        let ids = router.assigner_ids(&batch).map_err(routing_error)?;
        copy_out(&ids, out_assigners, out_len, "out_assigners")
    })
}

/// Copies `values` to the caller's `out` of `out_len` elements.
fn copy_out(values: &[i32], out: *mut i32, out_len: usize, name: &'static str) -> FfiResult<()> {
    if values.len() > out_len {
        return Err(FfiError::invalid_argument(format!(
            "argument `out_len` is {out_len}, but the batch has {} rows",
            values.len()
        )));
    }
    if values.is_empty() {
        return Ok(());
    }
    if out.is_null() {
        return Err(FfiError::null(name));
    }
    // SAFETY: `out` points to `out_len >= values.len()` writable i32s per the caller, and
    // cannot overlap `values`, which this library allocated.
    unsafe {
        std::ptr::copy_nonoverlapping(values.as_ptr(), out, values.len());
    }
    Ok(())
}

fn routing_error(e: RoutingError) -> FfiError {
    let code = match &e {
        RoutingError::NotFixedBucket { .. } | RoutingError::NotDynamicBucket { .. } => {
            paimon_wire_error_code::Unsupported
        }
        RoutingError::MissingColumn { .. } => paimon_wire_error_code::Arrow,
        _ => paimon_wire_error_code::Paimon,
    };
    FfiError::new(code, e.to_string())
}
