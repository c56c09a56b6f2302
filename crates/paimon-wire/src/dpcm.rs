//! Apache Doris's frame around a payload (`DPCM`), as its Paimon connector's frontend reads
//! each backend fragment's commit messages (issue 42):
//!
//! | offset | size | field                                                  |
//! |-------:|-----:|--------------------------------------------------------|
//! | 0      | 4    | magic `D` `P` `C` `M`                                  |
//! | 4      | 4    | serializer version, big-endian `i32` (1 to 14)         |
//! | 8      | 4    | body length in bytes, big-endian `i32`                 |
//! | 12     | n    | the body: Java's `CommitMessageSerializer.serializeList` |
//!
//! One frame is one payload: bytes after the declared body are an error, as is a body
//! shorter than declared. Unlike the [`crate::envelope`], a frame has no checksum.
//!
//! ```
//! use paimon_wire::dpcm::{frame, unframe};
//! use paimon_wire::SerializerVersion;
//!
//! let framed = frame(SerializerVersion::V14, b"payload")?;
//! let (version, body) = unframe(&framed)?;
//! assert_eq!(version, SerializerVersion::V14);
//! assert_eq!(body, b"payload");
//! # Ok::<(), paimon_wire::dpcm::FrameError>(())
//! ```

use std::fmt;

use crate::SerializerVersion;

/// The four bytes every frame starts with.
pub const MAGIC: [u8; 4] = *b"DPCM";
/// Size of the header before the body.
pub const HEADER_LEN: usize = 12;

const VERSION_OFFSET: usize = 4;
const LENGTH_OFFSET: usize = 8;

/// What is wrong with a frame.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum FrameErrorKind {
    /// The bytes do not start with `DPCM`.
    BadMagic {
        /// The first bytes found.
        found: Vec<u8>,
    },
    /// The bytes end before the header or the declared body is complete.
    Truncated {
        /// Bytes needed from the start of the frame.
        needed: u64,
        /// Bytes there are.
        available: u64,
    },
    /// The serializer version is not one Paimon Java writes.
    UnknownSerializerVersion {
        /// The version found.
        version: i32,
    },
    /// The frame's version is not the one the caller was told the payload is at.
    VersionDisagrees {
        /// The version in the frame.
        framed: i32,
        /// The version the caller expected.
        expected: i32,
    },
    /// The declared body length is negative.
    NegativeLength {
        /// The length found.
        declared: i32,
    },
    /// More bytes follow the body than its declared length.
    TrailingBytes {
        /// Body length the header declares.
        declared: u64,
        /// Body bytes actually there.
        available: u64,
    },
    /// A body too large for the frame's `i32` length field.
    BodyTooLarge {
        /// The body's length.
        length: u64,
    },
}

/// A frame error with the byte offset of the field that is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrameError {
    /// What is wrong.
    pub kind: FrameErrorKind,
    /// Byte offset in the frame of the field that is wrong.
    pub offset: usize,
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let offset = self.offset;
        match &self.kind {
            FrameErrorKind::BadMagic { found } => write!(
                f,
                "not a DPCM frame: expected magic \"DPCM\" at offset {offset}, found {found:02x?}"
            ),
            FrameErrorKind::Truncated { needed, available } => write!(
                f,
                "DPCM frame truncated at offset {offset}: needs {needed} bytes, has {available}"
            ),
            FrameErrorKind::UnknownSerializerVersion { version } => write!(
                f,
                "DPCM frame carries serializer version {version} at offset {offset}; supported \
                 versions are 1 to {}",
                SerializerVersion::CURRENT.as_i32()
            ),
            FrameErrorKind::VersionDisagrees { framed, expected } => write!(
                f,
                "DPCM frame carries serializer version {framed} at offset {offset}, but the \
                 payload was sent as version {expected}"
            ),
            FrameErrorKind::NegativeLength { declared } => write!(
                f,
                "DPCM frame declares a body of {declared} bytes at offset {offset}"
            ),
            FrameErrorKind::TrailingBytes {
                declared,
                available,
            } => write!(
                f,
                "DPCM frame declares a {declared}-byte body but {available} bytes follow the \
                 header (extra bytes start at offset {offset}); one frame is one payload"
            ),
            FrameErrorKind::BodyTooLarge { length } => write!(
                f,
                "a {length}-byte payload does not fit a DPCM frame (its length field is a \
                 32-bit signed integer); split the payload (paimon_wire::split_list)"
            ),
        }
    }
}

impl std::error::Error for FrameError {}

/// Frames `body` (raw `serializeList` bytes written at `version`) as Doris does.
pub fn frame(version: SerializerVersion, body: &[u8]) -> Result<Vec<u8>, FrameError> {
    let length = i32::try_from(body.len()).map_err(|_| FrameError {
        kind: FrameErrorKind::BodyTooLarge {
            length: body.len() as u64,
        },
        offset: LENGTH_OFFSET,
    })?;
    let mut out = Vec::with_capacity(HEADER_LEN + body.len());
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&version.as_i32().to_be_bytes());
    out.extend_from_slice(&length.to_be_bytes());
    out.extend_from_slice(body);
    Ok(out)
}

/// Whether `bytes` start with the frame magic. A raw payload starts with a big-endian message
/// count, which `DPCM` would make over 1.1 billion (far above any decode limit), and an
/// envelope starts with `PWIR`: the three are told apart by their first four bytes.
pub fn is_frame(bytes: &[u8]) -> bool {
    bytes.starts_with(&MAGIC)
}

/// Checks a frame and returns the serializer version and the body inside it.
pub fn unframe(bytes: &[u8]) -> Result<(SerializerVersion, &[u8]), FrameError> {
    let fail = |kind, offset| FrameError { kind, offset };
    let magic_len = bytes.len().min(MAGIC.len());
    if bytes[..magic_len] != MAGIC[..magic_len] {
        return Err(fail(
            FrameErrorKind::BadMagic {
                found: bytes[..magic_len].to_vec(),
            },
            0,
        ));
    }
    if bytes.len() < HEADER_LEN {
        return Err(fail(
            FrameErrorKind::Truncated {
                needed: HEADER_LEN as u64,
                available: bytes.len() as u64,
            },
            bytes.len(),
        ));
    }
    let i32_at =
        |at: usize| i32::from_be_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]);
    let raw_version = i32_at(VERSION_OFFSET);
    let version = SerializerVersion::try_from(raw_version).map_err(|_| {
        fail(
            FrameErrorKind::UnknownSerializerVersion {
                version: raw_version,
            },
            VERSION_OFFSET,
        )
    })?;
    let declared = i32_at(LENGTH_OFFSET);
    let Ok(declared) = u64::try_from(declared) else {
        return Err(fail(
            FrameErrorKind::NegativeLength { declared },
            LENGTH_OFFSET,
        ));
    };
    let available = (bytes.len() - HEADER_LEN) as u64;
    if declared > available {
        return Err(fail(
            FrameErrorKind::Truncated {
                needed: HEADER_LEN as u64 + declared,
                available: bytes.len() as u64,
            },
            bytes.len(),
        ));
    }
    if declared < available {
        return Err(fail(
            FrameErrorKind::TrailingBytes {
                declared,
                available,
            },
            HEADER_LEN + declared as usize,
        ));
    }
    Ok((version, &bytes[HEADER_LEN..]))
}

/// [`unframe`], refusing a frame whose version is not `expected` (the version the payload's
/// sender named beside it).
pub fn unframe_at(expected: SerializerVersion, bytes: &[u8]) -> Result<&[u8], FrameError> {
    let (version, body) = unframe(bytes)?;
    if version != expected {
        return Err(FrameError {
            kind: FrameErrorKind::VersionDisagrees {
                framed: version.as_i32(),
                expected: expected.as_i32(),
            },
            offset: VERSION_OFFSET,
        });
    }
    Ok(body)
}

/// `bytes` without a frame: the body of a frame, told by its magic, which must then carry
/// `expected`; any other bytes as they are. What every reader of a payload whose version
/// travels beside it calls.
pub fn strip_frame(expected: SerializerVersion, bytes: &[u8]) -> Result<&[u8], FrameError> {
    if is_frame(bytes) {
        unframe_at(expected, bytes)
    } else {
        Ok(bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(version: i32, length: i32) -> Vec<u8> {
        let mut out = MAGIC.to_vec();
        out.extend_from_slice(&version.to_be_bytes());
        out.extend_from_slice(&length.to_be_bytes());
        out
    }

    #[test]
    fn the_header_is_magic_then_big_endian_version_and_length() {
        let framed = frame(SerializerVersion::V14, b"abc").unwrap();
        assert_eq!(framed, [&header(14, 3)[..], b"abc"].concat());
        assert!(is_frame(&framed));
        assert_eq!(
            unframe(&framed).unwrap(),
            (SerializerVersion::V14, &b"abc"[..])
        );
        assert_eq!(unframe_at(SerializerVersion::V14, &framed).unwrap(), b"abc");
    }

    #[test]
    fn every_bad_frame_gets_its_kind_and_offset() {
        let cases: Vec<(Vec<u8>, FrameErrorKind, usize)> = vec![
            (
                b"PWIR".to_vec(),
                FrameErrorKind::BadMagic {
                    found: b"PWIR".to_vec(),
                },
                0,
            ),
            (
                header(14, 3)[..7].to_vec(),
                FrameErrorKind::Truncated {
                    needed: 12,
                    available: 7,
                },
                7,
            ),
            (
                header(99, 0),
                FrameErrorKind::UnknownSerializerVersion { version: 99 },
                4,
            ),
            (
                header(14, -1),
                FrameErrorKind::NegativeLength { declared: -1 },
                8,
            ),
            (
                [&header(14, 5)[..], b"abc"].concat(),
                FrameErrorKind::Truncated {
                    needed: 17,
                    available: 15,
                },
                15,
            ),
            (
                [&header(14, 2)[..], b"abc"].concat(),
                FrameErrorKind::TrailingBytes {
                    declared: 2,
                    available: 3,
                },
                14,
            ),
        ];
        for (bytes, kind, offset) in cases {
            let error = unframe(&bytes).unwrap_err();
            assert_eq!(error, FrameError { kind, offset }, "{bytes:02x?}");
            assert!(
                error.to_string().contains(&format!("offset {offset}")),
                "{error}"
            );
        }
        let framed = frame(SerializerVersion::V13, b"").unwrap();
        let error = unframe_at(SerializerVersion::V14, &framed).unwrap_err();
        assert_eq!(
            error.kind,
            FrameErrorKind::VersionDisagrees {
                framed: 13,
                expected: 14
            }
        );
    }

    #[test]
    fn a_frame_is_told_from_a_raw_payload_and_an_envelope() {
        let raw = crate::serialize_list(&[], SerializerVersion::V14).unwrap();
        assert!(!is_frame(&raw));
        assert!(!is_frame(&crate::envelope::wrap(
            SerializerVersion::V14,
            &raw
        )));
        assert!(!crate::envelope::is_envelope(
            &frame(SerializerVersion::V14, &raw).unwrap()
        ));
    }
}
