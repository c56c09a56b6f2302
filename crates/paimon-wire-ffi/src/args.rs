//! Arguments from C: strings and byte ranges, checked before use.

use std::ffi::{c_char, CStr};

use crate::error::{FfiError, FfiResult};

/// Reads a NUL-terminated UTF-8 string argument named `arg`.
///
/// # Safety
/// `ptr` is NULL or points to a NUL-terminated string that stays valid for `'a`.
pub(crate) unsafe fn c_str<'a>(ptr: *const c_char, arg: &str) -> FfiResult<&'a str> {
    if ptr.is_null() {
        return Err(FfiError::null(arg));
    }
    // SAFETY: non-null and NUL-terminated per the caller.
    let text = unsafe { CStr::from_ptr(ptr) };
    text.to_str().map_err(|e| {
        FfiError::invalid_argument(format!(
            "argument `{arg}` is not valid UTF-8 (invalid byte at index {})",
            e.valid_up_to()
        ))
    })
}

/// Reads an array argument of `len` values of `T`: `data` may be NULL only when `len` is 0.
///
/// # Safety
/// When non-null, `data` points to `len` initialized values that stay valid for `'a`.
pub(crate) unsafe fn slice<'a, T>(data: *const T, len: usize, arg: &str) -> FfiResult<&'a [T]> {
    if len == 0 {
        return Ok(&[]);
    }
    if data.is_null() {
        return Err(FfiError::null(arg));
    }
    if len > isize::MAX as usize / std::mem::size_of::<T>().max(1) {
        return Err(FfiError::invalid_argument(format!(
            "argument `{arg}` has an impossible length {len}"
        )));
    }
    // SAFETY: non-null, `len` values readable per the caller, and the size fits in `isize`.
    Ok(unsafe { std::slice::from_raw_parts(data, len) })
}

/// Reads `count` string pointers from `array` (which may be NULL only when `count` is 0).
///
/// # Safety
/// When non-null, `array` points to `count` pointers, each NULL or a NUL-terminated string.
pub(crate) unsafe fn c_str_array<'a>(
    array: *const *const c_char,
    count: usize,
    arg: &str,
) -> FfiResult<Vec<&'a str>> {
    // SAFETY: forwarded from the caller.
    let pointers = unsafe { slice(array, count, arg)? };
    pointers
        .iter()
        .enumerate()
        // SAFETY: each element is NULL or a NUL-terminated string per the caller.
        .map(|(i, &p)| unsafe { c_str(p, &format!("{arg}[{i}]")) })
        .collect()
}
