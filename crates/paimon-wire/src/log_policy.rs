//! Which log records may leave the library, on every surface (the C log callback, Python's
//! `logging`, the CLI's `--verbose`).
//!
//! The library logs through the `log` crate: this crate under the target `paimon_wire::…`,
//! the paimon crate under `paimon::…`, and the crates beneath them (object-store clients,
//! request signers, TLS) under their own names. Those other crates log credentials at DEBUG
//! and TRACE (the S3 request signer prints the access key pair it loaded), so their records
//! at those levels never leave the library; their INFO, WARN and ERROR records do.

/// The target of the coordinator's records (each commit: DEBUG before, INFO or WARN after).
pub const COORDINATOR_TARGET: &str = "paimon_wire::coordinator";

/// Whether a record of `target` at `level` may be handed to a caller's logger: DEBUG and
/// TRACE only from this library and the paimon crate, every other level from anyone.
pub fn may_leave_library(target: &str, level: log::Level) -> bool {
    level <= log::Level::Info || is_paimon_target(target)
}

/// Whether a logger that hands records to a caller should take a record of `metadata`: at or
/// above the `log` crate's maximum level, and [`may_leave_library`]. The `enabled` of every
/// such logger (the C callback's, Python's, the CLI's).
pub fn is_enabled(metadata: &log::Metadata<'_>) -> bool {
    metadata.level() <= log::max_level() && may_leave_library(metadata.target(), metadata.level())
}

/// Whether `target` is this library's or the paimon crate's (`paimon_wire`, `paimon_wire::…`,
/// `paimon_wire_ffi`, `paimon`, `paimon::…`), not a crate underneath.
pub fn is_paimon_target(target: &str) -> bool {
    target == "paimon" || target.starts_with("paimon::") || target.starts_with("paimon_wire")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_records_leave_only_from_paimon_and_this_library() {
        for target in [
            "paimon",
            "paimon::io",
            "paimon_wire",
            "paimon_wire::coordinator",
        ] {
            assert!(may_leave_library(target, log::Level::Debug), "{target}");
            assert!(may_leave_library(target, log::Level::Trace), "{target}");
        }
        for target in [
            "aws_sigv4::sign",
            "reqwest::connect",
            "opendal::services::s3",
            "paimonx",
        ] {
            assert!(!may_leave_library(target, log::Level::Debug), "{target}");
            assert!(!may_leave_library(target, log::Level::Trace), "{target}");
            assert!(may_leave_library(target, log::Level::Info), "{target}");
            assert!(may_leave_library(target, log::Level::Warn), "{target}");
            assert!(may_leave_library(target, log::Level::Error), "{target}");
        }
    }
}
