//! `paimon_table`: a table opened from a warehouse.

use std::ffi::c_char;

use paimon_wire_core::coordinator::parse_table_name;
use paimon_wire_core::paimon::table::Table;
use paimon_wire_core::paimon::{CatalogFactory, CatalogOptions, Options};

use crate::args::{c_str, c_str_array};
use crate::error::{paimon_error, FfiError};
use crate::handle::{self, HandleDescriptor, HandleKind};
use crate::result::{ffi_return, guard, guard_void};
use crate::runtime::SharedRuntime;

/// A Paimon table opened from a warehouse. Created by `paimon_table_open`, freed by
/// `paimon_table_free`. Handles made from it (write builders, writes, table commits) keep what
/// they need alive, so it may be freed before them. Read-only after creation: it may be
/// passed to several threads at once.
#[allow(non_camel_case_types)]
pub struct paimon_table {
    _private: [u8; 0],
}

/// What a `paimon_table *` owns.
pub(crate) struct TableHandle {
    pub(crate) table: Table,
    pub(crate) runtime: SharedRuntime,
}

impl HandleDescriptor for paimon_table {
    type Target = TableHandle;
    const KIND: HandleKind = HandleKind::Table;
}

/// Result of `paimon_table_open`: exactly one of `table` and `error` is non-NULL.
#[repr(C)]
#[allow(non_camel_case_types)]
pub struct paimon_result_table {
    /// The opened table, owned by the caller (free with `paimon_table_free`); NULL on error.
    pub table: *mut paimon_table,
    /// The error, owned by the caller (free with `paimon_error_free`); NULL on success.
    pub error: *mut paimon_error,
}
ffi_return!(paimon_result_table, table: *mut paimon_table = std::ptr::null_mut());

/// Opens table `table_name` (`database.table`) in the warehouse at `warehouse`.
///
/// `warehouse` is a local path (`/data/warehouse` or `file:///data/warehouse`) or any URI the
/// Paimon crate was built to reach. `option_keys` / `option_values` are `option_count` extra
/// catalog options (e.g. storage credentials); both may be NULL when `option_count` is 0.
///
/// Every string is NUL-terminated UTF-8, borrowed for the duration of the call only.
/// Returns a table owned by the caller (free with `paimon_table_free`) or an error:
/// `PAIMON_ERROR_CODE_TABLE_NOT_FOUND` when the database or table does not exist,
/// `PAIMON_ERROR_CODE_INVALID_ARGUMENT` for a malformed name or option.
///
/// # Safety
/// Pointer arguments are NULL or valid as described above.
#[no_mangle]
pub unsafe extern "C" fn paimon_table_open(
    warehouse: *const c_char,
    table_name: *const c_char,
    option_keys: *const *const c_char,
    option_values: *const *const c_char,
    option_count: usize,
) -> paimon_result_table {
    guard(|| {
        // SAFETY: the caller passes valid strings and arrays of `option_count` strings.
        let (warehouse, name, keys, values) = unsafe {
            (
                c_str(warehouse, "warehouse")?,
                c_str(table_name, "table_name")?,
                c_str_array(option_keys, option_count, "option_keys")?,
                c_str_array(option_values, option_count, "option_values")?,
            )
        };
        let identifier = parse_table_name(name)?;
        let mut options = Options::new();
        for (key, value) in keys.into_iter().zip(values) {
            options.set(key, value);
        }
        options.set(CatalogOptions::WAREHOUSE, warehouse);
        let runtime = SharedRuntime::new()?;
        let table = runtime
            .block_on(async {
                let catalog = CatalogFactory::create(options).await?;
                catalog.get_table(&identifier).await
            })
            .map_err(|e| FfiError::from(e).during(&format!("opening table {name}")))?;
        Ok(handle::into_raw::<paimon_table>(TableHandle {
            table,
            runtime,
        }))
    })
}

/// Frees a table. NULL is a no-op; a handle of another kind is left untouched.
///
/// # Safety
/// `table` is NULL or a handle from this library, not used again after this call.
#[no_mangle]
pub unsafe extern "C" fn paimon_table_free(table: *mut paimon_table) {
    // SAFETY: forwarded from the caller.
    guard_void(|| unsafe { handle::free(table) });
}
