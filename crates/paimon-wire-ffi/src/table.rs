//! `paimon_wire_table`: a table opened from a warehouse.

use std::ffi::c_char;
use std::panic::{catch_unwind, AssertUnwindSafe};

use arrow_array::ffi::FFI_ArrowSchema;
use paimon_wire_core::coordinator::{
    check_file_format_compiled, create_table_with_options, open_table_with_options, TableDefinition,
};
use paimon_wire_core::paimon::table::Table;
use paimon_wire_core::warehouse::WarehouseOptions;

use crate::args::{c_str, c_str_array};
use crate::error::{paimon_wire_error, paimon_wire_error_code, FfiError};
use crate::handle::{self, HandleDescriptor, HandleKind};
use crate::options::{paimon_wire_table_options, TableSettings};
use crate::result::{ffi_return, function_name, guard, guard_void};
use crate::runtime::SharedRuntime;

/// A Paimon table opened from a warehouse. Created by `paimon_wire_table_open`, freed by
/// `paimon_wire_table_free`. Handles made from it (write builders, writes, table commits) keep what
/// they need alive, so it may be freed before them. Read-only after creation: it may be
/// passed to several threads at once.
#[allow(non_camel_case_types)]
pub struct paimon_wire_table {
    _private: [u8; 0],
}

/// What a `paimon_wire_table *` owns.
pub(crate) struct TableHandle {
    pub(crate) table: Table,
    pub(crate) runtime: SharedRuntime,
    /// The settings the table was opened with (decode limits and Arrow validation are read
    /// by the handles made from it).
    pub(crate) settings: TableSettings,
}

impl HandleDescriptor for paimon_wire_table {
    type Target = TableHandle;
    const KIND: HandleKind = HandleKind::Table;
}

/// Result of `paimon_wire_table_open` and `paimon_wire_table_create`: exactly one of `table` and `error` is non-NULL.
#[repr(C)]
#[allow(non_camel_case_types)]
pub struct paimon_wire_result_table {
    /// The opened table, owned by the caller (free with `paimon_wire_table_free`); NULL on error.
    pub table: *mut paimon_wire_table,
    /// The error, owned by the caller (free with `paimon_wire_error_free`); NULL on success.
    pub error: *mut paimon_wire_error,
}
ffi_return!(paimon_wire_result_table, table: *mut paimon_wire_table = std::ptr::null_mut());

/// Opens table `table_name` (`database.table`) in the warehouse at `warehouse`.
///
/// `warehouse` is a local path (`/data/warehouse` or `file:///data/warehouse`), a URI whose
/// storage backend this library was built with (by default `s3://` and `s3a://`; `oss://`,
/// `gs://`, `abfs[s]://`, `cos://` and `obs://` with the `object-stores` feature, `hdfs://`
/// with `storage-hdfs`), or a REST catalog's warehouse name (with `metastore=rest`).
/// `option_keys` / `option_values` are `option_count` catalog options; both may be NULL when
/// `option_count` is 0. The keys are Paimon's (same as Java's catalog options), e.g.:
///
/// - S3 and S3-compatible stores: `s3.endpoint`, `s3.region`, `s3.access-key`,
///   `s3.secret-key`, `s3.session.token`, `s3.path-style-access` (`true` for S3Proxy, MinIO
///   and most non-AWS servers); `fs.s3a.*` spellings are accepted too.
/// - OSS: `fs.oss.endpoint`, `fs.oss.accessKeyId`, `fs.oss.accessKeySecret`.
/// - GCS: `gcs.*` / `fs.gs.*`; Azure: `azure.*` / `fs.azure.*`; COS: `cos.*` / `fs.cosn.*`;
///   OBS: `obs.*` / `fs.obs.*` (the paimon crate's `io/storage_*.rs` list every key).
/// - REST catalog: `metastore=rest`, `uri`, `token.provider`, `token`, `dlf.*`.
/// - Table options are the table's own; catalog options here only reach storage and catalog.
///
/// Option values are copied; values of keys naming a secret, key, token, password or
/// credential never appear in error messages.
///
/// Every string is NUL-terminated UTF-8, borrowed for the duration of the call only.
/// Returns a table owned by the caller (free with `paimon_wire_table_free`) or an error:
/// - `PAIMON_WIRE_ERROR_CODE_NULL_POINTER` for a NULL string or option array (with
///   `option_count` > 0);
/// - `PAIMON_WIRE_ERROR_CODE_INVALID_ARGUMENT` for a string that is not UTF-8, a name that is not
///   `database.table`, or an invalid catalog option;
/// - `PAIMON_WIRE_ERROR_CODE_TABLE_NOT_FOUND` when the database or table does not exist;
/// - `PAIMON_WIRE_ERROR_CODE_STORAGE_BACKEND_NOT_COMPILED` for a URI whose backend this build
///   lacks (the message names the cargo feature);
/// - `PAIMON_WIRE_ERROR_CODE_UNSUPPORTED` for a URI scheme no backend serves, or a table or
///   catalog feature the paimon crate does not support;
/// - `PAIMON_WIRE_ERROR_CODE_IO` when the storage cannot be reached or read;
/// - `PAIMON_WIRE_ERROR_CODE_PAIMON` for any other error of the paimon crate (e.g. a corrupt
///   schema file);
/// - `PAIMON_WIRE_ERROR_CODE_INTERNAL` when the library's runtime cannot start.
///
/// # Safety
/// Pointer arguments are NULL or valid as described above.
#[no_mangle]
pub unsafe extern "C" fn paimon_wire_table_open(
    warehouse: *const c_char,
    table_name: *const c_char,
    option_keys: *const *const c_char,
    option_values: *const *const c_char,
    option_count: usize,
) -> paimon_wire_result_table {
    // SAFETY: forwarded from the caller.
    unsafe {
        paimon_wire_table_open_with_options(
            warehouse,
            table_name,
            option_keys,
            option_values,
            option_count,
            std::ptr::null(),
        )
    }
}

/// `paimon_wire_table_open` with the settings in `options` (from `paimon_wire_table_options_new`;
/// NULL means the defaults, exactly `paimon_wire_table_open`). The settings are copied: the
/// table keeps them for its lifetime, and the handles made from it use them (a table commit
/// its decode limits and HASH index budget, a writer its Arrow validation, all of them the
/// table's runtime). Table options set with `paimon_wire_table_options_set_table_option`
/// override the table's own options, as if the table had been created with them.
///
/// Errors: those of `paimon_wire_table_open`, and `PAIMON_WIRE_ERROR_CODE_WRONG_HANDLE_KIND`
/// when `options` is another kind of handle.
///
/// # Safety
/// As `paimon_wire_table_open`; `options` is NULL or a handle from this library.
#[no_mangle]
pub unsafe extern "C" fn paimon_wire_table_open_with_options(
    warehouse: *const c_char,
    table_name: *const c_char,
    option_keys: *const *const c_char,
    option_values: *const *const c_char,
    option_count: usize,
    options: *const paimon_wire_table_options,
) -> paimon_wire_result_table {
    guard(function_name!(), || {
        // SAFETY: the caller passes valid strings and arrays of `option_count` strings.
        let (warehouse, name, keys, values) = unsafe {
            (
                c_str(warehouse, "warehouse")?,
                c_str(table_name, "table_name")?,
                c_str_array(option_keys, option_count, "option_keys")?,
                c_str_array(option_values, option_count, "option_values")?,
            )
        };
        let settings = if options.is_null() {
            TableSettings::default()
        } else {
            // SAFETY: forwarded from the caller.
            unsafe { handle::borrow(options, "options")? }.clone()
        };
        let catalog_options: WarehouseOptions = owned_pairs(keys, values);
        let runtime = SharedRuntime::new(&settings.runtime)?;
        let table = runtime
            .block_on(open_table_with_options(warehouse, name, &catalog_options))
            .map_err(|e| FfiError::from(e).during(&format!("opening table {name}")))?;
        let table = if settings.table_options.is_empty() {
            table
        } else {
            let table = table.copy_with_options(settings.table_options.clone());
            // An override may name a file format this build lacks (`file.format=orc`).
            check_file_format_compiled(name, table.schema().options())
                .map_err(|e| FfiError::from(e).during(&format!("opening table {name}")))?;
            table
        };
        log::debug!(target: "paimon_wire", "opened table {name} in {warehouse}");
        Ok(handle::into_raw::<paimon_wire_table>(TableHandle {
            table,
            runtime,
            settings,
        }))
    })
}

/// Creates table `table_name` (`database.table`; the database too if it does not exist) in
/// `warehouse` and opens it, as `paimon_wire_table_open` opens a table.
///
/// - `schema` is the table's columns as an Arrow C Data Interface struct schema (format
///   `"+s"`, one child per column, in order: name, type, nullability), read and not released:
///   the caller keeps ownership. Arrow types map to Paimon types as the paimon crate maps
///   them (e.g. int64 to BIGINT, utf8 to STRING, timestamp[us] to TIMESTAMP(6)).
/// - `partition_keys` / `primary_keys` name `partition_key_count` / `primary_key_count`
///   columns (no primary keys: an append table).
/// - `table_option_keys` / `table_option_values` are `table_option_count` Paimon table
///   options (e.g. `bucket` = `4`), stored in the table's schema.
/// - `catalog_option_keys` / `catalog_option_values` are `catalog_option_count` catalog
///   options, as `paimon_wire_table_open` takes them.
/// - A table that exists is an error unless `ignore_if_exists`; then it is opened as it is,
///   whatever its columns and options.
///
/// Arrays may be NULL when their count is 0. Strings are NUL-terminated UTF-8, borrowed for
/// the call only. Returns a table owned by the caller (free with `paimon_wire_table_free`),
/// opened with the default settings, or an error:
/// - `PAIMON_WIRE_ERROR_CODE_NULL_POINTER` for a NULL string, schema or array (with a count
///   above 0);
/// - `PAIMON_WIRE_ERROR_CODE_INVALID_ARGUMENT` for a string that is not UTF-8, a name that is
///   not `database.table`, an invalid option, or keys naming no column;
/// - `PAIMON_WIRE_ERROR_CODE_ARROW` for a schema that is released, malformed or not a struct;
/// - `PAIMON_WIRE_ERROR_CODE_STORAGE_BACKEND_NOT_COMPILED` / `PAIMON_WIRE_ERROR_CODE_UNSUPPORTED`
///   / `PAIMON_WIRE_ERROR_CODE_IO` as for `paimon_wire_table_open`, and `UNSUPPORTED` for a
///   column type Paimon cannot store;
/// - `PAIMON_WIRE_ERROR_CODE_PAIMON` when the table exists (and `ignore_if_exists` is false),
///   and for any other error of the paimon crate;
/// - `PAIMON_WIRE_ERROR_CODE_INTERNAL` when the library's runtime cannot start.
///
/// # Safety
/// Pointer arguments are NULL or valid as described above; `schema` is NULL or an
/// `ArrowSchema` initialized per the Arrow C Data Interface (or released).
#[no_mangle]
#[allow(clippy::too_many_arguments)] // one C call, as `paimon_wire_table_open`'s arrays
pub unsafe extern "C" fn paimon_wire_table_create(
    warehouse: *const c_char,
    table_name: *const c_char,
    schema: *const FFI_ArrowSchema,
    partition_keys: *const *const c_char,
    partition_key_count: usize,
    primary_keys: *const *const c_char,
    primary_key_count: usize,
    table_option_keys: *const *const c_char,
    table_option_values: *const *const c_char,
    table_option_count: usize,
    catalog_option_keys: *const *const c_char,
    catalog_option_values: *const *const c_char,
    catalog_option_count: usize,
    ignore_if_exists: bool,
) -> paimon_wire_result_table {
    guard(function_name!(), || {
        // SAFETY: the caller passes valid strings and arrays of the given counts.
        let (warehouse, name, partition_keys, primary_keys) = unsafe {
            (
                c_str(warehouse, "warehouse")?,
                c_str(table_name, "table_name")?,
                c_str_array(partition_keys, partition_key_count, "partition_keys")?,
                c_str_array(primary_keys, primary_key_count, "primary_keys")?,
            )
        };
        // SAFETY: as above.
        let (table_keys, table_values, catalog_keys, catalog_values) = unsafe {
            (
                c_str_array(table_option_keys, table_option_count, "table_option_keys")?,
                c_str_array(
                    table_option_values,
                    table_option_count,
                    "table_option_values",
                )?,
                c_str_array(
                    catalog_option_keys,
                    catalog_option_count,
                    "catalog_option_keys",
                )?,
                c_str_array(
                    catalog_option_values,
                    catalog_option_count,
                    "catalog_option_values",
                )?,
            )
        };
        // SAFETY: forwarded from the caller.
        let columns = unsafe { import_schema(schema)? };
        let owned = |strings: Vec<&str>| strings.into_iter().map(str::to_string).collect();
        let definition = TableDefinition {
            columns,
            partition_keys: owned(partition_keys),
            primary_keys: owned(primary_keys),
            options: owned_pairs(table_keys, table_values),
        };
        let catalog_options: WarehouseOptions = owned_pairs(catalog_keys, catalog_values);
        let settings = TableSettings::default();
        let runtime = SharedRuntime::new(&settings.runtime)?;
        let table = runtime
            .block_on(create_table_with_options(
                warehouse,
                name,
                &definition,
                ignore_if_exists,
                &catalog_options,
            ))
            .map_err(|e| FfiError::from(e).during(&format!("creating table {name}")))?;
        log::debug!(target: "paimon_wire", "created table {name} in {warehouse}");
        Ok(handle::into_raw::<paimon_wire_table>(TableHandle {
            table,
            runtime,
            settings,
        }))
    })
}

/// Keys and values, owned, as a map of either kind.
fn owned_pairs<M: FromIterator<(String, String)>>(keys: Vec<&str>, values: Vec<&str>) -> M {
    keys.into_iter()
        .zip(values)
        .map(|(key, value)| (key.to_string(), value.to_string()))
        .collect()
}

/// The columns of an Arrow C Data Interface struct schema, read without taking ownership.
///
/// # Safety
/// `schema` is NULL or points to an `ArrowSchema` initialized per the C Data Interface (or
/// released).
unsafe fn import_schema(schema: *const FFI_ArrowSchema) -> Result<arrow_schema::Schema, FfiError> {
    if schema.is_null() {
        return Err(FfiError::null("schema"));
    }
    let arrow = |message: String| FfiError::new(paimon_wire_error_code::Arrow, message);
    // SAFETY: `schema` is non-NULL and points to an initialized struct per the caller; only
    // its `release` field is read. A released schema's other fields may point to freed memory.
    if unsafe { (*schema).release.is_none() } {
        return Err(arrow("argument `schema` was already released".into()));
    }
    // The arrow crate panics on a released schema (NULL format) or a non-UTF-8 format or
    // name; those are bad input here, not a library bug.
    catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: `schema` points to a C Data Interface schema per the caller; it is only
        // read.
        arrow_schema::Schema::try_from(unsafe { &*schema })
    }))
    .map_err(|_| {
        arrow("argument `schema` is malformed (a NULL or non-UTF-8 format or name)".into())
    })?
    .map_err(|e| {
        arrow(format!(
            "cannot import the table's schema (a struct schema, format \"+s\"): {e}"
        ))
    })
}

/// Frees a table. NULL is a no-op; a handle of another kind is left untouched.
///
/// # Safety
/// `table` is NULL or a handle from this library, not used again after this call.
#[no_mangle]
pub unsafe extern "C" fn paimon_wire_table_free(table: *mut paimon_wire_table) {
    // SAFETY: forwarded from the caller.
    guard_void(|| unsafe { handle::free(table) });
}
