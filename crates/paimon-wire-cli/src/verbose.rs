//! `--verbose`: the library's log records on stderr.
//!
//! `-v` shows INFO (what was committed), `-vv` DEBUG (what the coordinator and the paimon
//! crate are doing), `-vvv` TRACE. Records pass the library's log policy
//! ([`paimon_wire::log_policy`]): DEBUG and TRACE only from paimon-wire and the paimon
//! crate, because the crates beneath them log credentials at those levels. Every line also
//! has the values of the secret catalog options this run was given replaced
//! ([`paimon_wire::warehouse::redact_secrets`]), in case a record quotes one.

use std::sync::Mutex;

use paimon_wire::log_policy::{is_enabled, may_leave_library};
use paimon_wire::warehouse::{is_secret_option, redact_secrets, WarehouseOptions};

use crate::output;
use crate::PROGRAM;

/// The secret options of this run, whose values no log line may show.
static SECRETS: Mutex<WarehouseOptions> = Mutex::new(WarehouseOptions::new());

/// Writes the records it lets through to stderr, one line each.
struct StderrLogger;

impl log::Log for StderrLogger {
    fn enabled(&self, metadata: &log::Metadata<'_>) -> bool {
        is_enabled(metadata)
    }

    fn log(&self, record: &log::Record<'_>) {
        if let Some(line) = line(record) {
            output::stderr_line(line);
        }
    }

    fn flush(&self) {}
}

/// The line `record` is shown as, if the policy lets it through: its level, target and
/// message, with the secrets of this run replaced.
fn line(record: &log::Record<'_>) -> Option<String> {
    if !may_leave_library(record.target(), record.level()) {
        return None;
    }
    let text = record.args().to_string();
    let text = {
        let secrets = SECRETS.lock().unwrap_or_else(|e| e.into_inner());
        redact_secrets(&text, &secrets)
    };
    Some(format!(
        "{PROGRAM}: {} {}: {text}",
        record.level(),
        record.target()
    ))
}

static LOGGER: StderrLogger = StderrLogger;

/// Shows records of the level `-v` repeated `count` times asks for (none for 0).
pub fn install(count: u8) {
    let level = match count {
        0 => return,
        1 => log::LevelFilter::Info,
        2 => log::LevelFilter::Debug,
        _ => log::LevelFilter::Trace,
    };
    if log::set_logger(&LOGGER).is_ok() {
        log::set_max_level(level);
    }
}

/// Keeps the secret values of `options` out of every later log line.
pub fn remember_secrets(options: &WarehouseOptions) {
    let mut secrets = SECRETS.lock().unwrap_or_else(|e| e.into_inner());
    for (key, value) in options.iter() {
        if is_secret_option(key) {
            secrets.insert(key.clone(), value.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(target: &str, level: log::Level, message: &str) -> Option<String> {
        line(
            &log::Record::builder()
                .target(target)
                .level(level)
                .args(format_args!("{message}"))
                .build(),
        )
    }

    #[test]
    fn a_remembered_secret_never_shows_and_dependency_debug_records_are_dropped() {
        let mut options = WarehouseOptions::new();
        options.insert("s3.secret-key".into(), "hunter2-verbose-test".into());
        options.insert("s3.endpoint".into(), "http://127.0.0.1:9000".into());
        remember_secrets(&options);
        let shown_line = shown(
            "paimon::io",
            log::Level::Debug,
            "signing with hunter2-verbose-test at http://127.0.0.1:9000",
        )
        .expect("a paimon DEBUG record is shown");
        assert!(!shown_line.contains("hunter2"), "{shown_line}");
        assert!(shown_line.contains("http://127.0.0.1:9000"), "{shown_line}");
        assert!(
            shown_line.starts_with("paimon-wire: DEBUG paimon::io: "),
            "{shown_line}"
        );
        assert_eq!(
            shown("aws_sigv4::sign", log::Level::Debug, "key pair"),
            None
        );
        assert!(shown("reqwest", log::Level::Warn, "retrying").is_some());
    }
}
