//! The frames around a raw payload: the optional envelope (`paimon_wire::envelope`: magic,
//! serializer version, length and CRC32C, for transports that cannot carry the version beside
//! the bytes or may corrupt them), and Apache Doris's `DPCM` frame (`paimon_wire::dpcm`:
//! magic, serializer version and length, as Doris's frontend reads its backends' payloads).

use paimon_wire_core::dpcm::{self, FrameError, FrameErrorKind};
use paimon_wire_core::envelope::{self, EnvelopeError, EnvelopeErrorKind};
use paimon_wire_core::SerializerVersion;

use crate::args::slice;
use crate::error::{paimon_wire_error, paimon_wire_error_code, FfiError};
use crate::messages::{paimon_wire_bytes, paimon_wire_result_bytes};
use crate::result::{ffi_return, function_name, guard};

impl From<EnvelopeError> for FfiError {
    fn from(e: EnvelopeError) -> Self {
        let code = match e.kind {
            EnvelopeErrorKind::UnknownEnvelopeVersion { .. }
            | EnvelopeErrorKind::UnknownSerializerVersion { .. } => {
                paimon_wire_error_code::UnsupportedVersion
            }
            _ => paimon_wire_error_code::MalformedPayload,
        };
        FfiError::new(code, e.to_string())
    }
}

/// The contents of an envelope or a `DPCM` frame, as found by `paimon_wire_envelope_unwrap`
/// or `paimon_wire_dpcm_unframe`.
#[repr(C)]
#[allow(non_camel_case_types)]
pub struct paimon_wire_envelope {
    /// The serializer version of the payload: pass it to `paimon_wire_commit_messages_deserialize`.
    pub serializer_version: i32,
    /// The raw payload: a pointer into the bytes given to `paimon_wire_envelope_unwrap` or
    /// `paimon_wire_dpcm_unframe` (borrowed, valid as long as they are; never freed on its own).
    pub payload: *const u8,
    /// Length of the payload in bytes.
    pub payload_len: usize,
}

impl paimon_wire_envelope {
    /// The raw payload a frame holds, borrowed from the caller's bytes.
    fn found(version: SerializerVersion, payload: &[u8]) -> Self {
        paimon_wire_envelope {
            serializer_version: version.as_i32(),
            payload: payload.as_ptr(),
            payload_len: payload.len(),
        }
    }
}

/// Result of `paimon_wire_envelope_unwrap` and `paimon_wire_dpcm_unframe`: `envelope` is
/// meaningful only when `error` is NULL.
#[repr(C)]
#[allow(non_camel_case_types)]
pub struct paimon_wire_result_envelope {
    /// What the envelope holds.
    pub envelope: paimon_wire_envelope,
    /// The error (free with `paimon_wire_error_free`); NULL on success.
    pub error: *mut paimon_wire_error,
}
ffi_return!(
    paimon_wire_result_envelope,
    envelope: paimon_wire_envelope = paimon_wire_envelope {
        serializer_version: 0,
        payload: std::ptr::null(),
        payload_len: 0,
    }
);

/// Frames a raw payload (`payload_len` bytes at `payload`, written at serializer `version`) in
/// an envelope, returned as new bytes owned by the caller (free with `paimon_wire_bytes_free`).
/// The input is borrowed for the call only. Fails with `PAIMON_WIRE_ERROR_CODE_UNSUPPORTED_VERSION`
/// for a version outside 1 to the current one.
///
/// # Safety
/// `payload` is NULL (only when `payload_len` is 0) or points to `payload_len` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn paimon_wire_envelope_wrap(
    payload: *const u8,
    payload_len: usize,
    version: i32,
) -> paimon_wire_result_bytes {
    guard(function_name!(), || {
        // SAFETY: forwarded from the caller.
        let payload = unsafe { slice(payload, payload_len, "payload")? };
        let version = SerializerVersion::try_from(version)?;
        Ok(paimon_wire_bytes::from_vec(envelope::wrap(
            version, payload,
        )))
    })
}

/// Checks an envelope (`data_len` bytes at `data`: magic, format version, length, CRC32C) and
/// says where its payload is and which serializer version wrote it. Nothing is copied: the
/// payload pointer points into `data`. Errors: `PAIMON_WIRE_ERROR_CODE_MALFORMED_PAYLOAD` (not an
/// envelope, truncated, corrupted; the message names the offset),
/// `PAIMON_WIRE_ERROR_CODE_UNSUPPORTED_VERSION`.
///
/// # Safety
/// `data` is NULL (only when `data_len` is 0) or points to `data_len` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn paimon_wire_envelope_unwrap(
    data: *const u8,
    data_len: usize,
) -> paimon_wire_result_envelope {
    guard(function_name!(), || {
        // SAFETY: forwarded from the caller.
        let data = unsafe { slice(data, data_len, "data")? };
        let (version, payload) = envelope::unwrap(data)?;
        Ok(paimon_wire_envelope::found(version, payload))
    })
}

/// The code of a `DPCM` frame's error: an unknown serializer version is
/// `UNSUPPORTED_VERSION`, a payload too large for the frame's length field `LIMIT_EXCEEDED`,
/// anything else (bad magic, truncated, trailing bytes, a version other than the one the
/// payload was handed over with) `MALFORMED_PAYLOAD`.
pub(crate) fn frame_code(e: &FrameError) -> paimon_wire_error_code {
    match e.kind {
        FrameErrorKind::UnknownSerializerVersion { .. } => {
            paimon_wire_error_code::UnsupportedVersion
        }
        FrameErrorKind::BodyTooLarge { .. } => paimon_wire_error_code::LimitExceeded,
        _ => paimon_wire_error_code::MalformedPayload,
    }
}

impl From<FrameError> for FfiError {
    fn from(e: FrameError) -> Self {
        FfiError::new(frame_code(&e), e.to_string())
    }
}

/// Frames a raw payload (`payload_len` bytes at `payload`, written at serializer `version`) as
/// Apache Doris's frontend reads a backend's commit messages: the magic `DPCM`, the version
/// and the payload's length as big-endian 32-bit integers, then the payload. Returned as new
/// bytes owned by the caller (free with `paimon_wire_bytes_free`); the input is borrowed for
/// the call only. A coordinator's `paimon_wire_commit_messages_deserialize` and
/// `paimon_wire_commit_messages_deserialize_parts` take the frame as it is. Errors:
/// `PAIMON_WIRE_ERROR_CODE_UNSUPPORTED_VERSION` for a version outside 1 to the current one,
/// `PAIMON_WIRE_ERROR_CODE_LIMIT_EXCEEDED` for a payload of 2 GiB or more (split it).
///
/// # Safety
/// `payload` is NULL (only when `payload_len` is 0) or points to `payload_len` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn paimon_wire_dpcm_frame(
    payload: *const u8,
    payload_len: usize,
    version: i32,
) -> paimon_wire_result_bytes {
    guard(function_name!(), || {
        // SAFETY: forwarded from the caller.
        let payload = unsafe { slice(payload, payload_len, "payload")? };
        let version = SerializerVersion::try_from(version)?;
        Ok(paimon_wire_bytes::from_vec(dpcm::frame(version, payload)?))
    })
}

/// Checks a `DPCM` frame (`data_len` bytes at `data`) and says where its payload is and which
/// serializer version wrote it, as `paimon_wire_envelope_unwrap` does for an envelope (the
/// result's payload points into `data`; nothing is copied). Errors:
/// `PAIMON_WIRE_ERROR_CODE_MALFORMED_PAYLOAD` (not a frame, truncated, bytes after the body,
/// a negative length; the message names the offset),
/// `PAIMON_WIRE_ERROR_CODE_UNSUPPORTED_VERSION`.
///
/// # Safety
/// `data` is NULL (only when `data_len` is 0) or points to `data_len` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn paimon_wire_dpcm_unframe(
    data: *const u8,
    data_len: usize,
) -> paimon_wire_result_envelope {
    guard(function_name!(), || {
        // SAFETY: forwarded from the caller.
        let data = unsafe { slice(data, data_len, "data")? };
        let (version, payload) = dpcm::unframe(data)?;
        Ok(paimon_wire_envelope::found(version, payload))
    })
}
