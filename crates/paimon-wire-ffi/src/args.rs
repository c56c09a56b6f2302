//! Arguments from C: strings and byte ranges, checked before use.

use std::ffi::{c_char, CStr};

use crate::error::{FfiError, FfiResult};

/// Reads a NUL-terminated UTF-8 string argument named `arg`.
///
/// # Safety
/// `ptr` is NULL or points to a NUL-terminated string that stays valid for `'a`.
pub(crate) unsafe fn c_str<'a>(ptr: *const c_char, arg: &'static str) -> FfiResult<&'a str> {
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

/// Reads a byte-range argument: `data` may be NULL only when `len` is 0.
///
/// # Safety
/// When non-null, `data` points to `len` readable bytes that stay valid for `'a`.
pub(crate) unsafe fn byte_slice<'a>(
    data: *const u8,
    len: usize,
    arg: &'static str,
) -> FfiResult<&'a [u8]> {
    if data.is_null() {
        if len == 0 {
            return Ok(&[]);
        }
        return Err(FfiError::null(arg));
    }
    if len > isize::MAX as usize {
        return Err(FfiError::invalid_argument(format!(
            "argument `{arg}` has an impossible length {len}"
        )));
    }
    // SAFETY: non-null, `len` bytes readable per the caller, and `len` fits in `isize`.
    Ok(unsafe { std::slice::from_raw_parts(data, len) })
}

/// Reads `count` string pointers from `array` (which may be NULL only when `count` is 0).
///
/// # Safety
/// When non-null, `array` points to `count` pointers, each NULL or a NUL-terminated string.
pub(crate) unsafe fn c_str_array<'a>(
    array: *const *const c_char,
    count: usize,
    arg: &'static str,
) -> FfiResult<Vec<&'a str>> {
    if count == 0 {
        return Ok(Vec::new());
    }
    if array.is_null() {
        return Err(FfiError::null(arg));
    }
    if count > isize::MAX as usize / std::mem::size_of::<*const c_char>() {
        return Err(FfiError::invalid_argument(format!(
            "argument `{arg}` has an impossible length {count}"
        )));
    }
    // SAFETY: `array` holds `count` pointers per the caller; the size was checked above.
    let pointers = unsafe { std::slice::from_raw_parts(array, count) };
    pointers
        .iter()
        // SAFETY: each element is NULL or a NUL-terminated string per the caller.
        .map(|&p| unsafe { c_str(p, arg) })
        .collect()
}
