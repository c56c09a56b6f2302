//! `paimon_wire_table_options`: the settings of one opened table, given to
//! `paimon_wire_table_open_with_options`.
//!
//! An opaque builder rather than a struct the caller fills: a setting added later is a new
//! setter function, so programs built against an older header keep working unchanged and no
//! struct size or version field has to be checked.

use std::collections::HashMap;
use std::ffi::c_char;

use paimon_wire_core::coordinator::DEFAULT_HASH_INDEX_BUDGET;
use paimon_wire_core::DecodeLimits;

use crate::args::c_str;
use crate::error::{paimon_wire_error, FfiError};
use crate::handle::{self, HandleDescriptor, HandleKind};
use crate::result::{function_name, guard, guard_void};

/// Settings for `paimon_wire_table_open_with_options`: decode limits, the HASH index budget,
/// table-option overrides, the runtime's threads and Arrow validation. Created by
/// `paimon_wire_table_options_new` with every setting at its default, changed by the
/// `paimon_wire_table_options_set_*` functions, freed by `paimon_wire_table_options_free`. The
/// table copies the settings when it is opened, so the options may be freed (or reused for
/// another table) right after. Not thread-safe while it is being changed.
#[allow(non_camel_case_types)]
pub struct paimon_wire_table_options {
    _private: [u8; 0],
}

/// The runtime a table owns (see `crate::runtime`).
#[derive(Debug, Clone, Default)]
pub(crate) struct RuntimeSettings {
    /// 0: a current-thread runtime driven by the calling threads; N: N worker threads.
    pub(crate) worker_threads: usize,
    /// The most threads of the blocking pool (file I/O); `None` is tokio's default (512).
    pub(crate) max_blocking_threads: Option<usize>,
    /// Names of the runtime's threads: the prefix followed by a number.
    pub(crate) thread_name_prefix: Option<String>,
}

/// Everything `paimon_wire_table_options` holds.
#[derive(Debug, Clone)]
pub(crate) struct TableSettings {
    pub(crate) decode_limits: DecodeLimits,
    /// The most bytes of memory one commit's HASH index checks may hold
    /// (`Coordinator::with_hash_index_budget`).
    pub(crate) hash_index_budget: u64,
    /// The outcome horizon of the table commits (`Coordinator::with_outcome_horizon`); `None`
    /// is the coordinator's default for the warehouse.
    pub(crate) outcome_horizon: Option<std::time::Duration>,
    pub(crate) table_options: HashMap<String, String>,
    pub(crate) runtime: RuntimeSettings,
    pub(crate) validate_arrow: bool,
}

impl Default for TableSettings {
    fn default() -> Self {
        Self {
            decode_limits: DecodeLimits::default(),
            hash_index_budget: DEFAULT_HASH_INDEX_BUDGET,
            outcome_horizon: None,
            table_options: HashMap::new(),
            runtime: RuntimeSettings::default(),
            validate_arrow: true,
        }
    }
}

impl HandleDescriptor for paimon_wire_table_options {
    type Target = TableSettings;
    const KIND: HandleKind = HandleKind::TableOptions;
}

/// Creates table options with every setting at its default: the default decode limits (64 MiB,
/// 100,000 messages and 1,000,000 files per payload), a HASH index budget of
/// `PAIMON_WIRE_DEFAULT_HASH_INDEX_BUDGET` (1 GiB), no table-option override, a
/// current-thread runtime with tokio's default blocking pool, and full Arrow validation.
/// Never returns NULL (an allocation failure aborts, as everywhere in this library).
#[no_mangle]
pub extern "C" fn paimon_wire_table_options_new() -> *mut paimon_wire_table_options {
    handle::into_raw::<paimon_wire_table_options>(TableSettings::default())
}

/// Frees table options. NULL is a no-op; a handle of another kind is left untouched.
///
/// # Safety
/// `options` is NULL or a handle from this library, not used again after this call.
#[no_mangle]
pub unsafe extern "C" fn paimon_wire_table_options_free(options: *mut paimon_wire_table_options) {
    // SAFETY: forwarded from the caller.
    guard_void(|| unsafe { handle::free(options) });
}

/// Sets the limits `paimon_wire_commit_messages_deserialize` applies to each payload of the
/// table commits made from the table: the most bytes, messages and files one payload may have.
/// A payload beyond one is refused with `PAIMON_WIRE_ERROR_CODE_LIMIT_EXCEEDED`, naming the
/// limit. Returns NULL on success.
///
/// # Safety
/// `options` is NULL or a handle from this library.
#[no_mangle]
pub unsafe extern "C" fn paimon_wire_table_options_set_decode_limits(
    options: *mut paimon_wire_table_options,
    max_payload_bytes: usize,
    max_messages: usize,
    max_files: usize,
) -> *mut paimon_wire_error {
    guard(function_name!(), || {
        // SAFETY: forwarded from the caller.
        let settings = unsafe { handle::borrow_mut(options, "options")? };
        settings.decode_limits = DecodeLimits {
            max_payload_bytes,
            max_messages,
            max_files,
        };
        Ok(())
    })
}

/// The HASH index budget table options start with: 1 GiB, the core's
/// `DEFAULT_HASH_INDEX_BUDGET` (the keys of about 89 million rows, 12 bytes a key). A
/// `uint64_t`, so multiples of it do not overflow.
#[allow(clippy::unnecessary_cast)] // the cast makes the header's macro a uint64_t
pub const PAIMON_WIRE_DEFAULT_HASH_INDEX_BUDGET: u64 = 1_073_741_824 as u64;

const _: () = assert!(PAIMON_WIRE_DEFAULT_HASH_INDEX_BUDGET == DEFAULT_HASH_INDEX_BUDGET);

/// Sets the most bytes of memory one commit's HASH index checks may hold, for the table
/// commits made from the table (default `PAIMON_WIRE_DEFAULT_HASH_INDEX_BUDGET`, 1 GiB). On a
/// dynamic-bucket primary-key table (`'bucket' = '-1'`) the coordinator reads the HASH index
/// files a commit adds or replaces and the live ones of the partitions whose indexes it
/// changes, 12 bytes of memory for each of their keys, plus a 1 MiB read buffer. A commit that
/// would need more is refused by `paimon_wire_table_commit_commit` before any index is read,
/// with `PAIMON_WIRE_ERROR_CODE_VALIDATION_FAILED` (rule `bounds`, naming the budget), so a
/// payload of a few hundred bytes cannot make the coordinator read gigabytes of index. Raise
/// it when the table's partitions really hold more keys. Tables of other kinds have no HASH
/// index and ignore it. Returns NULL on success, or `PAIMON_WIRE_ERROR_CODE_INVALID_ARGUMENT`
/// for 0, which would refuse every commit that checks a HASH index (give
/// `PAIMON_WIRE_DEFAULT_HASH_INDEX_BUDGET` for the default).
///
/// # Safety
/// `options` is NULL or a handle from this library.
#[no_mangle]
pub unsafe extern "C" fn paimon_wire_table_options_set_hash_index_budget(
    options: *mut paimon_wire_table_options,
    bytes: u64,
) -> *mut paimon_wire_error {
    guard(function_name!(), || {
        // SAFETY: forwarded from the caller.
        let settings = unsafe { handle::borrow_mut(options, "options")? };
        if bytes == 0 {
            return Err(FfiError::invalid_argument(
                "argument `bytes` is 0, which would refuse every commit that checks a HASH \
                 index; give PAIMON_WIRE_DEFAULT_HASH_INDEX_BUDGET for the default",
            ));
        }
        settings.hash_index_budget = bytes;
        Ok(())
    })
}

/// Sets how long after a commit failed with `PAIMON_WIRE_ERROR_CODE_OUTCOME_UNKNOWN` a request
/// of it may still be applied by the store or the catalog, in milliseconds, for the table
/// commits made from the table. `paimon_wire_table_commit_abort` deletes nothing within it.
/// Default: 300000 (5 minutes) for object stores and REST catalogs, 0 for local file systems.
/// Set it to at least the longest time a request can spend in the store's client, the network
/// and the server, retries included. Returns NULL on success.
///
/// # Safety
/// `options` is NULL or a handle from this library.
#[no_mangle]
pub unsafe extern "C" fn paimon_wire_table_options_set_outcome_horizon_ms(
    options: *mut paimon_wire_table_options,
    milliseconds: u64,
) -> *mut paimon_wire_error {
    guard(function_name!(), || {
        // SAFETY: forwarded from the caller.
        let settings = unsafe { handle::borrow_mut(options, "options")? };
        settings.outcome_horizon = Some(std::time::Duration::from_millis(milliseconds));
        Ok(())
    })
}

/// Overrides one of the table's own options (`file.format`, `file.compression`,
/// `target-file-size`, `commit.max-retries`, ...) for this process's use of the table, as a
/// job's dynamic options do in Paimon Java; the table's schema is not changed. Setting a key
/// twice keeps the last value. Returns NULL on success, or `PAIMON_WIRE_ERROR_CODE_INVALID_ARGUMENT`
/// for an empty key or one that fixes the table's layout or key order (`bucket`,
/// `bucket-key`, `primary-key`, `partition`, `partition.default-name`, `merge-engine`,
/// `sequence.field`, `rowkind.field`, `data-file.path-directory`,
/// `index-file-in-data-file-dir`, `type`).
///
/// # Safety
/// `options` is NULL or a handle from this library; `key` and `value` are NULL or
/// NUL-terminated strings (copied).
#[no_mangle]
pub unsafe extern "C" fn paimon_wire_table_options_set_table_option(
    options: *mut paimon_wire_table_options,
    key: *const c_char,
    value: *const c_char,
) -> *mut paimon_wire_error {
    guard(function_name!(), || {
        // SAFETY: forwarded from the caller.
        let (settings, key, value) = unsafe {
            (
                handle::borrow_mut(options, "options")?,
                c_str(key, "key")?,
                c_str(value, "value")?,
            )
        };
        if key.is_empty() {
            return Err(FfiError::invalid_argument("argument `key` is empty"));
        }
        if paimon_wire_core::coordinator::is_fixed_table_option(key) {
            return Err(FfiError::invalid_argument(format!(
                "table option {key:?} fixes the table's layout or key order and cannot be \
                 overridden for one job"
            )));
        }
        settings
            .table_options
            .insert(key.to_string(), value.to_string());
        Ok(())
    })
}

/// Sets the threads of the async runtime the table owns (one per opened table, shared by the
/// handles made from it). `worker_threads` 0 (the default) is a current-thread runtime: calls
/// drive it on the calling thread and it has no worker threads; N > 0 starts N worker threads.
/// `max_blocking_threads` caps the runtime's blocking pool, where Paimon's file I/O runs
/// (tokio's default cap is 512); it must be at least 1. Returns NULL on success or
/// `PAIMON_WIRE_ERROR_CODE_INVALID_ARGUMENT`.
///
/// # Safety
/// `options` is NULL or a handle from this library.
#[no_mangle]
pub unsafe extern "C" fn paimon_wire_table_options_set_runtime_threads(
    options: *mut paimon_wire_table_options,
    worker_threads: usize,
    max_blocking_threads: usize,
) -> *mut paimon_wire_error {
    guard(function_name!(), || {
        // SAFETY: forwarded from the caller.
        let settings = unsafe { handle::borrow_mut(options, "options")? };
        if max_blocking_threads == 0 {
            return Err(FfiError::invalid_argument(
                "argument `max_blocking_threads` is 0; the blocking pool needs at least 1 thread",
            ));
        }
        settings.runtime.worker_threads = worker_threads;
        settings.runtime.max_blocking_threads = Some(max_blocking_threads);
        Ok(())
    })
}

/// Names the threads of the table's runtime `<prefix><n>` (worker and blocking-pool threads;
/// `n` counts from 0). Linux shows the first 15 bytes of a thread name (`/proc/self/task/*/comm`,
/// `top -H`), so keep the prefix short. Returns NULL on success, or
/// `PAIMON_WIRE_ERROR_CODE_INVALID_ARGUMENT` for an empty prefix.
///
/// # Safety
/// `options` is NULL or a handle from this library; `prefix` is NULL or a NUL-terminated
/// string (copied).
#[no_mangle]
pub unsafe extern "C" fn paimon_wire_table_options_set_thread_name_prefix(
    options: *mut paimon_wire_table_options,
    prefix: *const c_char,
) -> *mut paimon_wire_error {
    guard(function_name!(), || {
        // SAFETY: forwarded from the caller.
        let (settings, prefix) = unsafe {
            (
                handle::borrow_mut(options, "options")?,
                c_str(prefix, "prefix")?,
            )
        };
        if prefix.is_empty() {
            return Err(FfiError::invalid_argument("argument `prefix` is empty"));
        }
        settings.runtime.thread_name_prefix = Some(prefix.to_string());
        Ok(())
    })
}

/// Turns the full validation of every Arrow batch given to `paimon_wire_table_write_arrow_batch`
/// on (the default) or off (`paimon_wire_table_bucket_ids` always validates). The validation reads every
/// value (offsets in range, UTF-8 strings, ...) to refuse a malformed batch with
/// `PAIMON_WIRE_ERROR_CODE_ARROW`. Turn it off only for batches from a producer that already
/// guarantees the Arrow format (an Arrow library's own arrays): with it off, a malformed
/// batch is undefined behavior. The cheap checks (struct type, no null rows, the table's
/// columns) stay. Returns NULL on success.
///
/// # Safety
/// `options` is NULL or a handle from this library.
#[no_mangle]
pub unsafe extern "C" fn paimon_wire_table_options_set_arrow_validation(
    options: *mut paimon_wire_table_options,
    validate: bool,
) -> *mut paimon_wire_error {
    guard(function_name!(), || {
        // SAFETY: forwarded from the caller.
        let settings = unsafe { handle::borrow_mut(options, "options")? };
        settings.validate_arrow = validate;
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use std::ffi::{CStr, CString};

    use super::*;
    use crate::error::{paimon_wire_error_code, paimon_wire_error_free};

    /// Sets `key` on fresh options: the error's code and message, or None.
    fn set(key: &str) -> Option<(paimon_wire_error_code, String)> {
        let options = paimon_wire_table_options_new();
        let (key, value) = (CString::new(key).unwrap(), CString::new("8").unwrap());
        // SAFETY: a live handle and NUL-terminated strings; the error and handle are freed once.
        unsafe {
            let error =
                paimon_wire_table_options_set_table_option(options, key.as_ptr(), value.as_ptr());
            paimon_wire_table_options_free(options);
            if error.is_null() {
                return None;
            }
            let seen = (
                (*error).code,
                CStr::from_ptr((*error).message)
                    .to_string_lossy()
                    .into_owned(),
            );
            paimon_wire_error_free(error);
            Some(seen)
        }
    }

    #[test]
    fn options_that_fix_the_tables_layout_or_key_order_are_refused() {
        for key in [
            "bucket",
            "primary-key",
            "sequence.field",
            "partition.default-name",
        ] {
            let (code, message) = set(key).expect("refused");
            assert_eq!(code, paimon_wire_error_code::InvalidArgument);
            assert!(message.contains(key), "{message}");
        }
        for key in ["file.format", "target-file-size", "commit.max-retries"] {
            assert_eq!(set(key), None, "{key} is a job's own option");
        }
    }
}
