//! The log hook: the records of the `log` crate (the paimon crate's warnings, this library's
//! own debug records) handed to a C callback.
//!
//! One `log::Log` implementation is installed, once, for the whole process's copy of this
//! library; it forwards each record to the callback registered last.

use std::ffi::{c_char, c_void, CString};
use std::sync::{Arc, Mutex, OnceLock};

use paimon_wire_core::log_policy::is_enabled;

use crate::error::{paimon_wire_error, paimon_wire_error_code, FfiError};
use crate::result::{function_name, guard};

/// The level of a log record, most severe first (the `log` crate's levels).
#[repr(C)]
#[allow(non_camel_case_types)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum paimon_wire_log_level {
    /// Something failed.
    Error = 1,
    /// Something unexpected that the library worked around (e.g. a setting it ignored).
    Warn = 2,
    /// A notable event.
    Info = 3,
    /// What the library is doing (tables opened, ...).
    Debug = 4,
    /// Fine detail.
    Trace = 5,
}

impl From<log::Level> for paimon_wire_log_level {
    fn from(level: log::Level) -> Self {
        match level {
            log::Level::Error => Self::Error,
            log::Level::Warn => Self::Warn,
            log::Level::Info => Self::Info,
            log::Level::Debug => Self::Debug,
            log::Level::Trace => Self::Trace,
        }
    }
}

/// A log callback: `user_data` as registered, the record's level, its target (the Rust module
/// that logged it, e.g. `paimon::io::user_agent` or `paimon_wire`) and its message, both
/// NUL-terminated UTF-8 strings valid only during the call.
#[allow(non_camel_case_types)]
pub type paimon_wire_log_callback = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        level: paimon_wire_log_level,
        target: *const c_char,
        message: *const c_char,
    ),
>;

/// The registered callback.
struct Sink {
    callback:
        unsafe extern "C" fn(*mut c_void, paimon_wire_log_level, *const c_char, *const c_char),
    /// The caller's pointer, kept as an integer: the library never dereferences it.
    user_data: usize,
}

static SINK: Mutex<Option<Arc<Sink>>> = Mutex::new(None);

struct CallbackLogger;

impl log::Log for CallbackLogger {
    fn enabled(&self, metadata: &log::Metadata<'_>) -> bool {
        is_enabled(metadata)
    }

    fn log(&self, record: &log::Record<'_>) {
        if !self.enabled(record.metadata()) {
            return;
        }
        // The lock is held only to clone the sink: a callback that logs, or that registers
        // another callback, does not deadlock.
        let sink = SINK.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let Some(sink) = sink else {
            return;
        };
        let text = |s: String| {
            CString::new(s.replace('\0', "\\0"))
                .unwrap_or_else(|_| CString::from(c"log text unavailable"))
        };
        let target = text(record.target().to_string());
        let message = text(record.args().to_string());
        // SAFETY: the callback was registered by the caller as a function of this signature;
        // both strings live until it returns.
        unsafe {
            (sink.callback)(
                sink.user_data as *mut c_void,
                record.level().into(),
                target.as_ptr(),
                message.as_ptr(),
            )
        };
    }

    fn flush(&self) {}
}

static LOGGER: CallbackLogger = CallbackLogger;

/// Registers `callback` to receive the library's log records of `max_level` and more severe
/// (a `paimon_wire_log_level`, or 0 for none), with `user_data` passed back on every call.
/// This is process-wide: it replaces the callback registered before, and NULL (or `max_level`
/// 0) turns logging off, the default. Records come from every table and thread. DEBUG and
/// TRACE records come only from the paimon crate and this library (targets `paimon::...` and
/// `paimon_wire`): the other crates underneath (object-store clients, request signers, TLS)
/// log credentials at those levels; their INFO, WARN and ERROR records are forwarded.
///
/// The callback may be called from any thread, also from threads of a table's runtime, and
/// from several threads at once: it must be thread-safe, must return (not `longjmp` out), and
/// must not throw. It may call this library (also this function). After this function
/// returns, calls already under way on other threads may still finish with the previous
/// callback; keep its `user_data` alive until they have. Returns NULL on success, or
/// `PAIMON_WIRE_ERROR_CODE_INVALID_ARGUMENT` for a `max_level` outside 0 to 5.
///
/// # Safety
/// `callback` is NULL or a function of the `paimon_wire_log_callback` signature, callable
/// until it is replaced; `user_data` is passed to it as it is.
#[no_mangle]
pub unsafe extern "C" fn paimon_wire_set_log_callback(
    callback: paimon_wire_log_callback,
    user_data: *mut c_void,
    max_level: i32,
) -> *mut paimon_wire_error {
    guard(function_name!(), || {
        let filter = match max_level {
            0 => log::LevelFilter::Off,
            1 => log::LevelFilter::Error,
            2 => log::LevelFilter::Warn,
            3 => log::LevelFilter::Info,
            4 => log::LevelFilter::Debug,
            5 => log::LevelFilter::Trace,
            other => {
                return Err(FfiError::invalid_argument(format!(
                    "argument `max_level` is {other}; expected 0 (off) or a paimon_wire_log_level \
                     (1 = ERROR to 5 = TRACE)"
                )))
            }
        };
        // Whether this library's logger is the process's `log` logger, decided once: every
        // later call sees the same answer (another logger installed first stays in place).
        static INSTALLED: OnceLock<bool> = OnceLock::new();
        if !*INSTALLED.get_or_init(|| log::set_logger(&LOGGER).is_ok()) {
            return Err(FfiError::new(
                paimon_wire_error_code::Unsupported,
                "another `log` logger is installed in this copy of the library",
            ));
        }
        let sink = callback.map(|callback| {
            Arc::new(Sink {
                callback,
                user_data: user_data as usize,
            })
        });
        let filter = if sink.is_some() {
            filter
        } else {
            log::LevelFilter::Off
        };
        // The sink and the level change together, so two threads registering at once leave
        // one thread's pair.
        let mut current = SINK.lock().unwrap_or_else(|e| e.into_inner());
        *current = sink;
        log::set_max_level(filter);
        Ok(())
    })
}
