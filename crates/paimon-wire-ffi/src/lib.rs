//! # libpaimon_wire
//!
//! The C ABI of paimon-wire, for native engines that write one Apache Paimon table from many
//! processes and commit it once (Apache Doris' C++ backends are the model).
//!
//! Workers open the table, write Arrow record batches through the Arrow C Data Interface,
//! `prepare_commit`, and serialize the commit messages to bytes in Paimon Java's
//! `CommitMessageSerializer` format. The coordinator opens the table, creates a table commit
//! (table + commit user + overwrite flag), deserializes every worker's bytes through it,
//! merges them and commits once under a commit identifier. The C header,
//! `include/paimon_wire.h`, is generated from this crate by cbindgen and documents every
//! function, who owns each pointer and how it is freed.
//!
//! This crate decides nothing: decoding, validation, merging and exactly-once commits are the
//! core crate's (`paimon_wire::coordinator`). Here live only the boundary's mechanics:
//!
//! - [`handle`]: one generic idiom for every opaque pointer, with a kind tag checked on entry;
//! - [`error`]: the `paimon_wire_error_code` enum with explicit values and the owned error;
//! - [`result`]: the result structs and the `guard` helper that catches panics and maps
//!   errors, so each exported function is a few lines.
//!
//! The paimon crate is async: each table handle owns a current-thread tokio runtime, shared
//! with the handles made from it, and exported functions `block_on` it.

#![deny(missing_docs)]
#![deny(unsafe_op_in_unsafe_fn)]

mod args;
pub mod commit;
pub mod compaction;
pub mod envelope;
pub mod error;
mod handle;
pub mod logging;
pub mod messages;
pub mod options;
mod result;
pub mod routing;
mod runtime;
pub mod split;
pub mod table;
pub mod version;
pub mod write;

// The handles the header documents as usable from several threads at once are `Sync`.
const _: () = {
    const fn sync<T: Sync>() {}
    sync::<table::TableHandle>();
    sync::<write::WriteBuilderHandle>();
    sync::<commit::TableCommitHandle>();
    sync::<messages::MessagesHandle>();
};
