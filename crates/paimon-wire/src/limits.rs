//! Resource limits for decoding a payload from an untrusted worker.
//!
//! The codec never allocates for a length or count field before checking it against the
//! bytes left, so memory stays within a small multiple of the payload's length whatever
//! the fields claim. These limits bound the payload itself: how many bytes, messages and
//! files one payload may bring, so that a buggy or hostile worker cannot make the
//! coordinator hold (and then validate, merge and commit) an arbitrarily large payload.

use std::fmt;

/// Upper bounds on one payload, checked by [`crate::deserialize_list_with_limits`] before
/// the bytes are decoded (size), right after the message count is read (messages), and
/// after each message (files, counted over all its file lists).
///
/// The [`Default`] suits a coordinator receiving one payload per worker; the
/// [`crate::coordinator::Coordinator`] applies it unless given other limits
/// ([`crate::coordinator::Coordinator::with_decode_limits`]).
///
/// ```
/// use paimon_wire::{deserialize_list_with_limits, DecodeLimits, SerializerVersion};
///
/// let limits = DecodeLimits {
///     max_payload_bytes: 1 << 20,
///     ..DecodeLimits::default()
/// };
/// let payload = paimon_wire::serialize_list(&[], SerializerVersion::CURRENT)?;
/// assert!(deserialize_list_with_limits(SerializerVersion::CURRENT, &payload, &limits)?.is_empty());
/// # Ok::<(), paimon_wire::CodecError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DecodeLimits {
    /// Most bytes one payload may have. Default 64 MiB
    /// ([`DecodeLimits::DEFAULT_MAX_PAYLOAD_BYTES`]).
    pub max_payload_bytes: usize,
    /// Most commit messages (one per partition and bucket a worker wrote) one payload may
    /// hold. Default 100,000 ([`DecodeLimits::DEFAULT_MAX_MESSAGES`]).
    pub max_messages: usize,
    /// Most files one payload may name, over every file list of every message (data,
    /// changelog, deleted, compaction and index files). Default 1,000,000
    /// ([`DecodeLimits::DEFAULT_MAX_FILES`]).
    pub max_files: usize,
}

impl DecodeLimits {
    /// Default [`Self::max_payload_bytes`]: 64 MiB, room for about 100,000 data files with
    /// statistics (real Java payloads take 300 to 1,000 bytes per file).
    pub const DEFAULT_MAX_PAYLOAD_BYTES: usize = 64 << 20;
    /// Default [`Self::max_messages`].
    pub const DEFAULT_MAX_MESSAGES: usize = 100_000;
    /// Default [`Self::max_files`].
    pub const DEFAULT_MAX_FILES: usize = 1_000_000;

    /// No limit beyond the payload's own length: what [`crate::deserialize_list`] applies.
    pub const UNLIMITED: DecodeLimits = DecodeLimits {
        max_payload_bytes: usize::MAX,
        max_messages: usize::MAX,
        max_files: usize::MAX,
    };

    /// Fails with [`crate::CodecErrorKind::LimitExceeded`] if `found` exceeds the limit
    /// on `limit`.
    pub(crate) fn check(&self, limit: Limit, found: usize) -> Result<(), LimitExceeded> {
        let max = match limit {
            Limit::PayloadBytes => self.max_payload_bytes,
            Limit::Messages => self.max_messages,
            Limit::Files => self.max_files,
        };
        if found > max {
            Err(LimitExceeded { limit, found, max })
        } else {
            Ok(())
        }
    }
}

impl Default for DecodeLimits {
    fn default() -> Self {
        Self {
            max_payload_bytes: Self::DEFAULT_MAX_PAYLOAD_BYTES,
            max_messages: Self::DEFAULT_MAX_MESSAGES,
            max_files: Self::DEFAULT_MAX_FILES,
        }
    }
}

/// Which of the [`DecodeLimits`] a payload went over.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Limit {
    /// [`DecodeLimits::max_payload_bytes`].
    PayloadBytes,
    /// [`DecodeLimits::max_messages`].
    Messages,
    /// [`DecodeLimits::max_files`].
    Files,
}

impl fmt::Display for Limit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Limit::PayloadBytes => "max_payload_bytes",
            Limit::Messages => "max_messages",
            Limit::Files => "max_files",
        })
    }
}

/// A limit and the value that went over it (the payload of
/// [`crate::CodecErrorKind::LimitExceeded`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LimitExceeded {
    pub(crate) limit: Limit,
    pub(crate) found: usize,
    pub(crate) max: usize,
}
