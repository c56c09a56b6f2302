//! Result types and the one helper every exported function runs its body through.
//!
//! Each `paimon_wire_result_*` struct is a value plus an error pointer: on success `error` is NULL
//! and the value is set; on failure `error` is set and the value is NULL / zero. The
//! [`guard`] helper runs a closure, catches panics and maps `Err` into the result type, so
//! an exported function is its argument checks and one call into the core.

use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::error::{paimon_wire_error, FfiError, FfiResult};

/// A C return type that carries either a value or an error.
pub(crate) trait FfiReturn {
    /// The Rust value a successful call produces.
    type Value;
    fn success(value: Self::Value) -> Self;
    fn failure(error: *mut paimon_wire_error) -> Self;
}

/// The name of the function it is written in: `guard(function_name!(), ...)` in an exported
/// function names that function.
macro_rules! function_name {
    () => {{
        fn here() {}
        let path = std::any::type_name_of_val(&here);
        let path = path.strip_suffix("::here").unwrap_or(path);
        path.rsplit("::").next().unwrap_or(path)
    }};
}
pub(crate) use function_name;

/// The log target of the records [`guard`] makes.
pub(crate) const LOG_TARGET: &str = "paimon_wire::ffi";

/// Runs `body`, the body of the exported function `function`, behind the C boundary: a panic
/// becomes a `PAIMON_WIRE_ERROR_CODE_INTERNAL` error and an `Err` becomes the result type's
/// error, so no unwinding ever reaches C. Every error returned is logged at DEBUG (target
/// [`LOG_TARGET`]) as `<function> returned error <code> (<name>): <message>`.
pub(crate) fn guard<R: FfiReturn>(function: &str, body: impl FnOnce() -> FfiResult<R::Value>) -> R {
    let error = match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(value)) => return R::success(value),
        Ok(Err(error)) => error,
        Err(panic) => FfiError::from_panic(panic),
    };
    log::debug!(
        target: LOG_TARGET,
        "{function} returned error {} ({:?}): {}",
        error.code as i32,
        error.code,
        error.message
    );
    R::failure(error.into_raw())
}

/// Runs a body that cannot report anything (free functions), swallowing a panic rather than
/// unwinding into C.
pub(crate) fn guard_void(body: impl FnOnce()) {
    let _ = catch_unwind(AssertUnwindSafe(body));
}

/// Functions that only succeed or fail return the error pointer itself: NULL on success.
impl FfiReturn for *mut paimon_wire_error {
    type Value = ();
    fn success((): ()) -> Self {
        std::ptr::null_mut()
    }
    fn failure(error: *mut paimon_wire_error) -> Self {
        error
    }
}

/// Implements [`FfiReturn`] for a result struct whose value field is `$field` with type
/// `$value`, and whose empty value (on failure) is `$empty`.
macro_rules! ffi_return {
    ($result:ty, $field:ident: $value:ty = $empty:expr) => {
        impl $crate::result::FfiReturn for $result {
            type Value = $value;
            fn success(value: $value) -> Self {
                Self {
                    $field: value,
                    error: std::ptr::null_mut(),
                }
            }
            fn failure(error: *mut $crate::error::paimon_wire_error) -> Self {
                Self {
                    $field: $empty,
                    error,
                }
            }
        }
    };
}
pub(crate) use ffi_return;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::{paimon_wire_error_code, paimon_wire_error_free};

    #[test]
    fn a_panic_becomes_an_internal_error() {
        let error: *mut paimon_wire_error = guard("test", || -> FfiResult<()> { panic!("boom") });
        assert!(!error.is_null());
        // SAFETY: `error` was just returned by `guard`, which made it with `into_raw`.
        unsafe {
            assert_eq!((*error).code, paimon_wire_error_code::Internal);
            let message = std::ffi::CStr::from_ptr((*error).message).to_str().unwrap();
            assert!(message.ends_with("boom"), "{message}");
            paimon_wire_error_free(error);
        }
    }

    #[test]
    fn function_name_names_the_enclosing_function() {
        fn paimon_wire_example() -> &'static str {
            function_name!()
        }
        assert_eq!(paimon_wire_example(), "paimon_wire_example");
    }

    #[test]
    fn success_is_a_null_error() {
        let error: *mut paimon_wire_error = guard("test", || Ok(()));
        assert!(error.is_null());
    }
}
