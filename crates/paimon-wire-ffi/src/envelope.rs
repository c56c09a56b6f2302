//! The optional envelope (`paimon_wire::envelope`): a header with magic, serializer version,
//! length and CRC32C in front of a raw payload, for transports that cannot carry the version
//! beside the bytes or may corrupt them.

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

/// The contents of an envelope, as found by `paimon_wire_envelope_unwrap`.
#[repr(C)]
#[allow(non_camel_case_types)]
pub struct paimon_wire_envelope {
    /// The serializer version of the payload: pass it to `paimon_wire_commit_messages_deserialize`.
    pub serializer_version: i32,
    /// The raw payload: a pointer into the bytes given to `paimon_wire_envelope_unwrap` (borrowed,
    /// valid as long as they are; never freed on its own).
    pub payload: *const u8,
    /// Length of the payload in bytes.
    pub payload_len: usize,
}

/// Result of `paimon_wire_envelope_unwrap`: `envelope` is meaningful only when `error` is NULL.
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
        Ok(paimon_wire_envelope {
            serializer_version: version.as_i32(),
            payload: payload.as_ptr(),
            payload_len: payload.len(),
        })
    })
}
