//! # paimon-wire
//!
//! Apache Paimon's commit messages as bytes, so that many processes can write one table and
//! one coordinator can commit it once.
//!
//! Workers call `TableWrite::prepare_commit` and get [`CommitMessage`]s; this crate turns
//! them into exactly the bytes Paimon Java's `CommitMessageSerializer.serializeList` writes,
//! at any version a Paimon release writes, and reads every version Java can read (1 to 14).
//! The version travels beside the bytes, as in Java.
//!
//! ```
//! use paimon_wire::{deserialize_list, serialize_list, SerializerVersion};
//! use paimon_wire::paimon::table::CommitMessage;
//!
//! // Worker: messages from `TableWrite::prepare_commit`, to bytes.
//! let prepared = vec![CommitMessage::new(Vec::new(), 0, Vec::new())];
//! let version = SerializerVersion::CURRENT;
//! let payload = serialize_list(&prepared, version)?;
//!
//! // ... the engine carries `payload` and `version` to the coordinator ...
//!
//! // Coordinator: bytes back to messages, then `TableCommit`.
//! let received = deserialize_list(version, &payload)?;
//! assert_eq!(received.len(), 1);
//! assert_eq!(received[0].bucket, 0);
//! # Ok::<(), paimon_wire::CodecError>(())
//! ```
//!
//! A worker that feeds an older Java coordinator picks that release's version: Paimon 0.9
//! reads version 3, so `serialize_list(&prepared, SerializerVersion::V3)`. Fields version 3
//! cannot carry are refused by name unless the caller lets them go
//! ([`EncodeOptions::allow_dropping`]).
//!
//! Every decoding error says where it happened (version, message, field, byte offset); no
//! input makes the decoder panic or allocate more than the input could hold.
//!
//! On the coordinator side, [`coordinator::Coordinator`] binds payloads to one table:
//! it decodes them, validates every message against the table (and says which message,
//! field and rule a bad one breaks), merges the payloads of many workers, and commits them
//! exactly once per commit identifier. [`envelope`] is an optional self-describing framing
//! (magic, versions, length, CRC32C) around a raw payload.

#![deny(missing_docs)]

mod binary;
mod codec;
pub mod compaction;
pub mod conform;
pub mod coordinator;
pub mod dpcm;
pub mod dump;
pub mod envelope;
mod error;
mod layout;
mod limits;
pub mod log_policy;
mod message;
mod options;
pub mod routing;
pub mod secrets;
pub mod split;
mod stats;
#[cfg(test)]
mod test_support;
mod version;
pub mod view;
pub mod warehouse;

pub use codec::{
    deserialize_list, deserialize_list_with_limits, deserialize_message, serialize_list,
    serialize_list_into, serialize_list_with, serialize_message, serialize_message_with,
};
pub use conform::{conform_batch, ConformError};
pub use coordinator::{
    Binding, BoundMessages, CommitMode, CommitOutcome, Coordinator, CoordinatorError, WriteKind,
};
pub use envelope::EnvelopeError;
pub use error::{CodecError, CodecErrorKind, CodecResult};
pub use limits::{DecodeLimits, Limit};
pub use options::{EncodeOptions, LossyField};
pub use routing::{AssignerRouter, BucketRouter, RoutingError, RoutingKind};
pub use split::{split_list, split_list_with, SplitError};
pub use stats::table_stats;
pub use version::{current_serializer_version, SerializerVersion, CURRENT_SERIALIZER_VERSION};

/// The `paimon` crate this library builds on, re-exported so callers use the same types.
pub use paimon;
/// The message type the codec reads and writes.
pub use paimon::table::CommitMessage;
