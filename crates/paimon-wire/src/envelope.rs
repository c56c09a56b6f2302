//! Optional self-describing framing around a payload, for engines that carry payloads
//! without the version beside them or over a channel that can corrupt them.
//!
//! The raw payload — Java `CommitMessageSerializer.serializeList` bytes with the version
//! carried separately — stays the primary format; an envelope adds a header in front:
//!
//! | offset | size | field                                                  |
//! |-------:|-----:|--------------------------------------------------------|
//! | 0      | 4    | magic `PWIR`                                           |
//! | 4      | 2    | envelope format version, big-endian (currently 1)      |
//! | 6      | 2    | reserved, zero                                         |
//! | 8      | 4    | serializer version, big-endian `i32` (1 to 14)         |
//! | 12     | 8    | payload length in bytes, big-endian `u64`              |
//! | 20     | 4    | CRC32C (Castagnoli) of the payload, big-endian         |
//! | 24     | n    | the raw payload                                        |
//!
//! The checksum detects corruption, not forgery: anyone can compute it.
//!
//! ```
//! use paimon_wire::envelope::{unwrap, wrap};
//! use paimon_wire::SerializerVersion;
//!
//! let framed = wrap(SerializerVersion::V14, b"payload");
//! let (version, payload) = unwrap(&framed)?;
//! assert_eq!(version, SerializerVersion::V14);
//! assert_eq!(payload, b"payload");
//! # Ok::<(), paimon_wire::envelope::EnvelopeError>(())
//! ```

use std::fmt;

use crate::SerializerVersion;

/// The four bytes every envelope starts with.
pub const MAGIC: [u8; 4] = *b"PWIR";
/// The envelope format version [`wrap`] writes.
pub const ENVELOPE_VERSION: u16 = 1;
/// Size of the header before the payload.
pub const HEADER_LEN: usize = 24;

const VERSION_OFFSET: usize = 4;
const RESERVED_OFFSET: usize = 6;
const SERIALIZER_VERSION_OFFSET: usize = 8;
const LENGTH_OFFSET: usize = 12;
const CRC_OFFSET: usize = 20;

/// What is wrong with an envelope.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum EnvelopeErrorKind {
    /// The bytes end before the header or the declared payload is complete.
    Truncated {
        /// Bytes needed from the start of the envelope.
        needed: u64,
        /// Bytes there are.
        available: u64,
    },
    /// The bytes do not start with `PWIR`: not an envelope (perhaps a raw payload).
    BadMagic {
        /// The first bytes found.
        found: Vec<u8>,
    },
    /// An envelope format version this library does not read.
    UnknownEnvelopeVersion {
        /// The version found.
        version: u16,
    },
    /// The reserved header bytes are not zero (written by a newer envelope format?).
    NonZeroReserved {
        /// The value found.
        value: u16,
    },
    /// The serializer version is not one Paimon Java can read.
    UnknownSerializerVersion {
        /// The version found.
        version: i32,
    },
    /// More bytes follow the payload than its declared length.
    LengthMismatch {
        /// Payload length the header declares.
        declared: u64,
        /// Payload bytes actually there.
        available: u64,
    },
    /// The payload's CRC32C differs from the header's: the payload was corrupted.
    CrcMismatch {
        /// CRC32C in the header.
        expected: u32,
        /// CRC32C of the payload received.
        actual: u32,
    },
}

/// An envelope error with the byte offset it was found at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvelopeError {
    /// What is wrong.
    pub kind: EnvelopeErrorKind,
    /// Byte offset in the envelope of the field that is wrong.
    pub offset: usize,
}

impl fmt::Display for EnvelopeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let offset = self.offset;
        match &self.kind {
            EnvelopeErrorKind::Truncated { needed, available } => write!(
                f,
                "envelope truncated at offset {offset}: needs {needed} bytes, has {available}"
            ),
            EnvelopeErrorKind::BadMagic { found } => write!(
                f,
                "not a paimon-wire envelope: expected magic \"PWIR\" at offset {offset}, found \
                 {found:02x?} (a raw payload is read with its version, not unwrapped)"
            ),
            EnvelopeErrorKind::UnknownEnvelopeVersion { version } => write!(
                f,
                "unknown envelope format version {version} at offset {offset}; this library \
                 reads version {ENVELOPE_VERSION}"
            ),
            EnvelopeErrorKind::NonZeroReserved { value } => write!(
                f,
                "reserved envelope field at offset {offset} is {value:#06x}, expected 0"
            ),
            EnvelopeErrorKind::UnknownSerializerVersion { version } => write!(
                f,
                "envelope carries serializer version {version} at offset {offset}; supported \
                 versions are 1 to {}",
                SerializerVersion::CURRENT.as_i32()
            ),
            EnvelopeErrorKind::LengthMismatch {
                declared,
                available,
            } => write!(
                f,
                "envelope declares a {declared}-byte payload but {available} bytes follow the \
                 header (extra bytes start at offset {offset})"
            ),
            EnvelopeErrorKind::CrcMismatch { expected, actual } => write!(
                f,
                "payload corrupted: CRC32C {actual:#010x} of the payload at offset {offset} \
                 differs from the header's {expected:#010x}"
            ),
        }
    }
}

impl std::error::Error for EnvelopeError {}

/// Frames `payload` (raw Java-compatible bytes written at `version`) in an envelope.
pub fn wrap(version: SerializerVersion, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER_LEN + payload.len());
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&ENVELOPE_VERSION.to_be_bytes());
    out.extend_from_slice(&0u16.to_be_bytes());
    out.extend_from_slice(&version.as_i32().to_be_bytes());
    out.extend_from_slice(&(payload.len() as u64).to_be_bytes());
    out.extend_from_slice(&crc32c::crc32c(payload).to_be_bytes());
    out.extend_from_slice(payload);
    out
}

/// Whether `bytes` start with the envelope magic (cheap check to tell an envelope from a raw
/// payload; a raw payload starts with a big-endian message count, which `PWIR` would make
/// over 1.3 billion).
pub fn is_envelope(bytes: &[u8]) -> bool {
    bytes.starts_with(&MAGIC)
}

/// Checks an envelope and returns the serializer version and the raw payload inside it.
pub fn unwrap(bytes: &[u8]) -> Result<(SerializerVersion, &[u8]), EnvelopeError> {
    let fail = |kind, offset| EnvelopeError { kind, offset };
    let magic_len = bytes.len().min(MAGIC.len());
    if bytes[..magic_len] != MAGIC[..magic_len] {
        return Err(fail(
            EnvelopeErrorKind::BadMagic {
                found: bytes[..magic_len].to_vec(),
            },
            0,
        ));
    }
    if bytes.len() < HEADER_LEN {
        return Err(fail(
            EnvelopeErrorKind::Truncated {
                needed: HEADER_LEN as u64,
                available: bytes.len() as u64,
            },
            bytes.len(),
        ));
    }
    let u16_at = |at: usize| u16::from_be_bytes([bytes[at], bytes[at + 1]]);
    let u32_at =
        |at: usize| u32::from_be_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]);
    let envelope_version = u16_at(VERSION_OFFSET);
    if envelope_version != ENVELOPE_VERSION {
        return Err(fail(
            EnvelopeErrorKind::UnknownEnvelopeVersion {
                version: envelope_version,
            },
            VERSION_OFFSET,
        ));
    }
    let reserved = u16_at(RESERVED_OFFSET);
    if reserved != 0 {
        return Err(fail(
            EnvelopeErrorKind::NonZeroReserved { value: reserved },
            RESERVED_OFFSET,
        ));
    }
    let raw_version = u32_at(SERIALIZER_VERSION_OFFSET) as i32;
    let version = SerializerVersion::try_from(raw_version).map_err(|_| {
        fail(
            EnvelopeErrorKind::UnknownSerializerVersion {
                version: raw_version,
            },
            SERIALIZER_VERSION_OFFSET,
        )
    })?;
    let declared = (u64::from(u32_at(LENGTH_OFFSET)) << 32) | u64::from(u32_at(LENGTH_OFFSET + 4));
    let available = (bytes.len() - HEADER_LEN) as u64;
    if declared > available {
        return Err(fail(
            EnvelopeErrorKind::Truncated {
                needed: (HEADER_LEN as u64).saturating_add(declared),
                available: bytes.len() as u64,
            },
            bytes.len(),
        ));
    }
    if declared < available {
        return Err(fail(
            EnvelopeErrorKind::LengthMismatch {
                declared,
                available,
            },
            HEADER_LEN + declared as usize,
        ));
    }
    let payload = &bytes[HEADER_LEN..];
    let expected = u32_at(CRC_OFFSET);
    let actual = crc32c::crc32c(payload);
    if expected != actual {
        return Err(fail(
            EnvelopeErrorKind::CrcMismatch { expected, actual },
            HEADER_LEN,
        ));
    }
    Ok((version, payload))
}
