//! The library's log records (the `log` crate's) handed to Python's `logging`.
//!
//! A record of target `paimon_wire::coordinator` goes to the Python logger
//! `paimon_wire.coordinator`; every other target `a::b` to `paimon_wire.a.b` (the paimon
//! crate's `paimon::io` to `paimon_wire.paimon.io`), so the `paimon_wire` logger's level and
//! handlers govern them all. Records pass the library's log policy first
//! ([`paimon_wire::log_policy`]): DEBUG only from paimon-wire and the paimon crate, because
//! the crates beneath them log credentials at that level. TRACE records are not forwarded
//! (the crates beneath would build one per network frame).
//!
//! A record is handed over only if its Python logger is enabled for its level; the message
//! is passed as an argument of `"%s"`, never as a format string. A record logged while the
//! interpreter shuts down is dropped.

use paimon_wire::log_policy::is_enabled;
use pyo3::prelude::*;

/// The name of the Python logger every record goes under.
const ROOT_LOGGER: &str = "paimon_wire";

/// Forwards records to Python's `logging`.
struct PythonLogger;

impl log::Log for PythonLogger {
    fn enabled(&self, metadata: &log::Metadata<'_>) -> bool {
        is_enabled(metadata)
    }

    fn log(&self, record: &log::Record<'_>) {
        if !self.enabled(record.metadata()) {
            return;
        }
        let name = python_logger_name(record.target());
        let level = python_level(record.level());
        // The interpreter may be shutting down; then there is nobody to tell.
        let _ = Python::try_attach(|py| -> PyResult<()> {
            let logger = py.import("logging")?.call_method1("getLogger", (name,))?;
            if logger.call_method1("isEnabledFor", (level,))?.is_truthy()? {
                let message = record.args().to_string();
                logger.call_method1("log", (level, "%s", message))?;
            }
            Ok(())
        });
    }

    fn flush(&self) {}
}

static LOGGER: PythonLogger = PythonLogger;

/// The Python logger of a record of `target`.
fn python_logger_name(target: &str) -> String {
    let dotted = target.replace("::", ".");
    if dotted == ROOT_LOGGER || dotted.starts_with("paimon_wire.") {
        dotted
    } else {
        format!("{ROOT_LOGGER}.{dotted}")
    }
}

/// Python's number for `level` (`logging.ERROR` ... `logging.DEBUG`; TRACE below DEBUG).
fn python_level(level: log::Level) -> i32 {
    match level {
        log::Level::Error => 40,
        log::Level::Warn => 30,
        log::Level::Info => 20,
        log::Level::Debug => 10,
        log::Level::Trace => 5,
    }
}

/// Installs the bridge, once per process (importing the module again does nothing).
pub(crate) fn install() {
    if log::set_logger(&LOGGER).is_ok() {
        log::set_max_level(log::LevelFilter::Debug);
    }
}
