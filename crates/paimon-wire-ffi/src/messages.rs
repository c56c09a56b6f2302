//! `paimon_wire_commit_messages` and their bytes: Paimon Java's `CommitMessageSerializer` format.

use paimon_wire_core::coordinator::BoundMessages;
use paimon_wire_core::view::PayloadView;
use paimon_wire_core::{serialize_list, CommitMessage, DecodeLimits, SerializerVersion};

use crate::args::slice;
use crate::commit::paimon_wire_table_commit;
use crate::error::{paimon_wire_error, paimon_wire_error_code, FfiError, FfiResult};
use crate::handle::{self, HandleDescriptor, HandleKind};
use crate::result::{ffi_return, function_name, guard, guard_void};

/// A list of commit messages: either prepared by a worker's `paimon_wire_table_write_prepare_commit`
/// (unbound: they can only be serialized), or decoded by `paimon_wire_commit_messages_deserialize`
/// / combined by `paimon_wire_table_commit_merge` (bound to that table commit: only it can merge,
/// commit or abort them). Freed by `paimon_wire_commit_messages_free`. Read-only: it may be passed
/// to several threads at once.
#[allow(non_camel_case_types)]
pub struct paimon_wire_commit_messages {
    _private: [u8; 0],
}

/// What a `paimon_wire_commit_messages *` owns.
pub(crate) enum MessagesHandle {
    /// Straight from a worker's `prepare_commit`.
    Prepared(Vec<CommitMessage>),
    /// Validated and bound to one table commit by the core coordinator.
    Bound(BoundMessages),
}

impl HandleDescriptor for paimon_wire_commit_messages {
    type Target = MessagesHandle;
    const KIND: HandleKind = HandleKind::CommitMessages;
}

impl MessagesHandle {
    pub(crate) fn prepared(messages: Vec<CommitMessage>) -> Self {
        MessagesHandle::Prepared(messages)
    }

    pub(crate) fn messages(&self) -> &[CommitMessage] {
        match self {
            MessagesHandle::Prepared(messages) => messages,
            MessagesHandle::Bound(bound) => bound.messages(),
        }
    }

    /// The bound messages, or an error saying that worker-side messages must travel as bytes
    /// through the coordinator first.
    pub(crate) fn bound(&self, arg: &str) -> FfiResult<&BoundMessages> {
        match self {
            MessagesHandle::Bound(bound) => Ok(bound),
            MessagesHandle::Prepared(_) => Err(FfiError::new(
                paimon_wire_error_code::ForeignMessages,
                format!(
                    "argument `{arg}` holds messages prepared by a writer, which are bound to no \
                     table commit; serialize them and pass the bytes to \
                     paimon_wire_commit_messages_deserialize on the coordinator's table commit"
                ),
            )),
        }
    }
}

/// Bytes owned by the caller: `len` bytes at `data`. Free with `paimon_wire_bytes_free` (exactly
/// once, passing the struct unchanged). An empty value may have a NULL or dangling `data`.
#[repr(C)]
#[allow(non_camel_case_types)]
pub struct paimon_wire_bytes {
    /// The first byte; NULL when the bytes came from a failed call.
    pub data: *mut u8,
    /// Number of bytes.
    pub len: usize,
}

impl paimon_wire_bytes {
    const EMPTY: paimon_wire_bytes = paimon_wire_bytes {
        data: std::ptr::null_mut(),
        len: 0,
    };

    /// Frees bytes made by [`Self::from_vec`]; `{NULL, _}` is a no-op.
    ///
    /// # Safety
    /// `self` came from `from_vec` unchanged and is not freed before.
    pub(crate) unsafe fn free(self) {
        if self.data.is_null() {
            return;
        }
        let slice = std::ptr::slice_from_raw_parts_mut(self.data, self.len);
        // SAFETY: `data`/`len` came from `from_vec`, i.e. `Box::<[u8]>::into_raw` with this
        // exact length, and are freed once per the caller.
        drop(unsafe { Box::from_raw(slice) });
    }

    pub(crate) fn from_vec(bytes: Vec<u8>) -> Self {
        let boxed: Box<[u8]> = bytes.into_boxed_slice();
        let len = boxed.len();
        let data = Box::into_raw(boxed).cast::<u8>();
        paimon_wire_bytes { data, len }
    }
}

/// Result of a call returning bytes: on success `error` is NULL and `bytes` is owned by the
/// caller; on failure `bytes` is `{NULL, 0}` and `error` is owned by the caller.
#[repr(C)]
#[allow(non_camel_case_types)]
pub struct paimon_wire_result_bytes {
    /// The bytes (free with `paimon_wire_bytes_free`).
    pub bytes: paimon_wire_bytes,
    /// The error (free with `paimon_wire_error_free`); NULL on success.
    pub error: *mut paimon_wire_error,
}
ffi_return!(paimon_wire_result_bytes, bytes: paimon_wire_bytes = paimon_wire_bytes::EMPTY);

/// Result of a call returning commit messages: exactly one of `messages` and `error` is
/// non-NULL.
#[repr(C)]
#[allow(non_camel_case_types)]
pub struct paimon_wire_result_commit_messages {
    /// The messages, owned by the caller (free with `paimon_wire_commit_messages_free`).
    pub messages: *mut paimon_wire_commit_messages,
    /// The error (free with `paimon_wire_error_free`); NULL on success.
    pub error: *mut paimon_wire_error,
}
ffi_return!(paimon_wire_result_commit_messages, messages: *mut paimon_wire_commit_messages = std::ptr::null_mut());

/// Counts describing a message list, from `paimon_wire_commit_messages_summarize`.
#[repr(C)]
#[allow(non_camel_case_types)]
#[derive(Clone, Copy)]
pub struct paimon_wire_commit_messages_summary {
    /// Number of messages (one per partition and bucket written).
    pub message_count: usize,
    /// Number of new data files.
    pub data_file_count: usize,
    /// Sum of the row counts of the new data files, as the writers reported them.
    pub row_count: i64,
}

/// Result of `paimon_wire_commit_messages_summarize`; `summary` is zero on error.
#[repr(C)]
#[allow(non_camel_case_types)]
pub struct paimon_wire_result_commit_messages_summary {
    /// The counts.
    pub summary: paimon_wire_commit_messages_summary,
    /// The error (free with `paimon_wire_error_free`); NULL on success.
    pub error: *mut paimon_wire_error,
}
ffi_return!(
    paimon_wire_result_commit_messages_summary,
    summary: paimon_wire_commit_messages_summary = paimon_wire_commit_messages_summary {
        message_count: 0,
        data_file_count: 0,
        row_count: 0,
    }
);

/// The serializer version `paimon_wire_commit_messages_serialize` writes: the newest version of
/// Paimon Java's `CommitMessageSerializer` this library knows. Send it beside the bytes.
#[no_mangle]
pub extern "C" fn paimon_wire_commit_messages_serializer_version() -> i32 {
    SerializerVersion::CURRENT.as_i32()
}

/// Serializes `messages` at the current serializer version
/// (`paimon_wire_commit_messages_serializer_version()`), as Java's
/// `CommitMessageSerializer.serializeList` does. The bytes carry no version: send it with them.
///
/// # Safety
/// `messages` is NULL or a handle from this library.
#[no_mangle]
pub unsafe extern "C" fn paimon_wire_commit_messages_serialize(
    messages: *const paimon_wire_commit_messages,
) -> paimon_wire_result_bytes {
    // SAFETY: forwarded from the caller.
    unsafe {
        paimon_wire_commit_messages_serialize_version(
            messages,
            paimon_wire_commit_messages_serializer_version(),
        )
    }
}

/// Serializes `messages` at `version` (1 to the current version; only versions some Paimon
/// release writes), e.g. 3 for a Paimon 0.9 coordinator. Fails with
/// `PAIMON_WIRE_ERROR_CODE_UNSUPPORTED_VERSION` for other versions, and with
/// `PAIMON_WIRE_ERROR_CODE_UNREPRESENTABLE` naming the field when a message holds something
/// `version` cannot carry.
///
/// # Safety
/// `messages` is NULL or a handle from this library.
#[no_mangle]
pub unsafe extern "C" fn paimon_wire_commit_messages_serialize_version(
    messages: *const paimon_wire_commit_messages,
    version: i32,
) -> paimon_wire_result_bytes {
    guard(function_name!(), || {
        // SAFETY: forwarded from the caller.
        let messages = unsafe { handle::borrow(messages, "messages")? };
        let version = SerializerVersion::try_from(version)?;
        Ok(paimon_wire_bytes::from_vec(serialize_list(
            messages.messages(),
            version,
        )?))
    })
}

/// A frame of `paimon_wire_commit_messages_serialize_framed`: the raw payload, as
/// `paimon_wire_commit_messages_serialize_version` writes it (the version travels beside it).
pub const PAIMON_WIRE_FRAME_RAW: u32 = 0;

/// A frame of `paimon_wire_commit_messages_serialize_framed`: a paimon-wire envelope (`PWIR`:
/// magic, versions, length, CRC32C), as `paimon_wire_envelope_wrap` writes it.
pub const PAIMON_WIRE_FRAME_ENVELOPE: u32 = 1;

/// A frame of `paimon_wire_commit_messages_serialize_framed`: Apache Doris's frame (`DPCM`:
/// magic, version, length), as `paimon_wire_dpcm_frame` writes it and Doris's frontend reads
/// a backend's commit messages.
pub const PAIMON_WIRE_FRAME_DPCM: u32 = 2;

/// Serializes `messages` at `version` as `paimon_wire_commit_messages_serialize_version` does,
/// in the frame `frame` (`PAIMON_WIRE_FRAME_RAW`, `PAIMON_WIRE_FRAME_ENVELOPE` or
/// `PAIMON_WIRE_FRAME_DPCM`), in one call. Errors: those of
/// `paimon_wire_commit_messages_serialize_version`, `PAIMON_WIRE_ERROR_CODE_INVALID_ARGUMENT`
/// for another `frame`, `PAIMON_WIRE_ERROR_CODE_LIMIT_EXCEEDED` for a payload of 2 GiB or more
/// in a `DPCM` frame (split it: `paimon_wire_commit_messages_serialize_split`).
///
/// # Safety
/// `messages` is NULL or a handle from this library.
#[no_mangle]
pub unsafe extern "C" fn paimon_wire_commit_messages_serialize_framed(
    messages: *const paimon_wire_commit_messages,
    version: i32,
    frame: u32,
) -> paimon_wire_result_bytes {
    guard(function_name!(), || {
        // SAFETY: forwarded from the caller.
        let messages = unsafe { handle::borrow(messages, "messages")? };
        let version = SerializerVersion::try_from(version)?;
        if !matches!(
            frame,
            PAIMON_WIRE_FRAME_RAW | PAIMON_WIRE_FRAME_ENVELOPE | PAIMON_WIRE_FRAME_DPCM
        ) {
            return Err(FfiError::invalid_argument(format!(
                "frame {frame} is none of PAIMON_WIRE_FRAME_RAW (0), PAIMON_WIRE_FRAME_ENVELOPE \
                 (1) and PAIMON_WIRE_FRAME_DPCM (2)"
            )));
        }
        let raw = serialize_list(messages.messages(), version)?;
        let framed = match frame {
            PAIMON_WIRE_FRAME_ENVELOPE => paimon_wire_core::envelope::wrap(version, &raw),
            PAIMON_WIRE_FRAME_DPCM => paimon_wire_core::dpcm::frame(version, &raw)?,
            _ => raw,
        };
        Ok(paimon_wire_bytes::from_vec(framed))
    })
}

/// Decodes a payload written at `version` by `paimon_wire_commit_messages_serialize` (or by Java's
/// `CommitMessageSerializer.serializeList`) on the coordinator side, validates every message
/// against the table of `commit`, and binds the result to `commit`.
///
/// The table, commit user and overwrite mode come from `commit`, never from the payload. The
/// bytes (`data_len` bytes at `data`; `data` may be NULL when `data_len` is 0) are borrowed for
/// the call only. Errors: `PAIMON_WIRE_ERROR_CODE_UNSUPPORTED_VERSION`,
/// `PAIMON_WIRE_ERROR_CODE_MALFORMED_PAYLOAD` (with the field and byte offset),
/// `PAIMON_WIRE_ERROR_CODE_LIMIT_EXCEEDED` (a payload beyond the table's decode limits, see
/// `paimon_wire_table_options_set_decode_limits`; the message names the limit),
/// `PAIMON_WIRE_ERROR_CODE_VALIDATION_FAILED` (with the message, field and rule; e.g. a payload
/// written for another table), `PAIMON_WIRE_ERROR_CODE_MERGE_CONFLICT`.
///
/// The payload may come in Apache Doris's `DPCM` frame (`paimon_wire_dpcm_frame`), told by its
/// magic: its version must then be `version` (else `PAIMON_WIRE_ERROR_CODE_MALFORMED_PAYLOAD`).
///
/// # Safety
/// `commit` is NULL or a handle from this library; `data` is NULL or points to `data_len`
/// readable bytes.
#[no_mangle]
pub unsafe extern "C" fn paimon_wire_commit_messages_deserialize(
    commit: *const paimon_wire_table_commit,
    data: *const u8,
    data_len: usize,
    version: i32,
) -> paimon_wire_result_commit_messages {
    guard(function_name!(), || {
        // SAFETY: forwarded from the caller.
        let (commit, payload) = unsafe {
            (
                handle::borrow(commit, "commit")?,
                slice(data, data_len, "data")?,
            )
        };
        let bound = commit
            .coordinator
            .deserialize_raw_version(version, payload)?;
        Ok(handle::into_raw::<paimon_wire_commit_messages>(
            MessagesHandle::Bound(bound),
        ))
    })
}

/// One worker's payload handed to `paimon_wire_commit_messages_deserialize_all`: its bytes and
/// the serializer version it was written at.
#[repr(C)]
#[allow(non_camel_case_types)]
#[derive(Clone, Copy)]
pub struct paimon_wire_payload {
    /// The payload's first byte (may be NULL when `len` is 0).
    pub data: *const u8,
    /// Number of bytes.
    pub len: usize,
    /// The serializer version it was written at (as `paimon_wire_commit_messages_deserialize`
    /// takes it).
    pub version: i32,
}

/// Decodes and validates every payload of `payloads[0 .. payloads_len]` as
/// `paimon_wire_commit_messages_deserialize` does, and merges them as
/// `paimon_wire_table_commit_merge` does: the one call a coordinator needs between receiving
/// its workers' payloads and `paimon_wire_table_commit_commit`. The payloads are decoded on
/// two threads (one checks each payload while the calling thread builds the messages of the
/// one before), about 30 % faster than decoding them one after the other on two cores.
///
/// A payload refused fails the whole call with the error code
/// `paimon_wire_commit_messages_deserialize` gives it, and a message that starts with
/// `payload N (counting from 0 in the order given): `. Nothing is bound then.
///
/// Errors: `PAIMON_WIRE_ERROR_CODE_NULL_POINTER` / `PAIMON_WIRE_ERROR_CODE_WRONG_HANDLE_KIND`
/// for the arguments, `PAIMON_WIRE_ERROR_CODE_UNSUPPORTED_VERSION` (a payload's `version`, the
/// message naming `payloads[N].version`), `PAIMON_WIRE_ERROR_CODE_MALFORMED_PAYLOAD` (with the
/// field and byte offset), `PAIMON_WIRE_ERROR_CODE_LIMIT_EXCEEDED`,
/// `PAIMON_WIRE_ERROR_CODE_VALIDATION_FAILED`, `PAIMON_WIRE_ERROR_CODE_MERGE_CONFLICT` (two
/// payloads name one file with different metadata) and `PAIMON_WIRE_ERROR_CODE_SHARED_BUCKET`
/// (two payloads write new files into one bucket of a primary-key table).
///
/// The bytes are borrowed for the call only. Zero payloads give empty messages.
///
/// # Safety
/// `commit` is NULL or a handle from this library; `payloads` is NULL (only when
/// `payloads_len` is 0) or points to `payloads_len` payloads, each with `data` NULL (only when
/// `len` is 0) or pointing to `len` readable bytes that nothing writes during the call.
#[no_mangle]
pub unsafe extern "C" fn paimon_wire_commit_messages_deserialize_all(
    commit: *const paimon_wire_table_commit,
    payloads: *const paimon_wire_payload,
    payloads_len: usize,
) -> paimon_wire_result_commit_messages {
    guard(function_name!(), || {
        // SAFETY: forwarded from the caller.
        let (commit, payloads) = unsafe {
            (
                handle::borrow(commit, "commit")?,
                slice(payloads, payloads_len, "payloads")?,
            )
        };
        let versioned = payloads
            .iter()
            .enumerate()
            .map(|(i, payload)| {
                // SAFETY: each payload's `data` and `len` are valid per the caller.
                let bytes =
                    unsafe { slice(payload.data, payload.len, &format!("payloads[{i}].data"))? };
                let version = SerializerVersion::try_from(payload.version).map_err(|error| {
                    let error = FfiError::from(error);
                    FfiError::new(
                        error.code,
                        format!("payloads[{i}].version: {}", error.message),
                    )
                })?;
                Ok((version, bytes))
            })
            .collect::<FfiResult<Vec<_>>>()?;
        let parts = commit.coordinator.deserialize_all_versioned(versioned)?;
        let merged = commit.coordinator.merge(parts)?;
        Ok(handle::into_raw::<paimon_wire_commit_messages>(
            MessagesHandle::Bound(merged),
        ))
    })
}

/// Counts messages, new data files and their rows.
///
/// # Safety
/// `messages` is NULL or a handle from this library.
#[no_mangle]
pub unsafe extern "C" fn paimon_wire_commit_messages_summarize(
    messages: *const paimon_wire_commit_messages,
) -> paimon_wire_result_commit_messages_summary {
    guard(function_name!(), || {
        // SAFETY: forwarded from the caller.
        let messages = unsafe { handle::borrow(messages, "messages")? }.messages();
        Ok(paimon_wire_commit_messages_summary {
            message_count: messages.len(),
            data_file_count: messages.iter().map(|m| m.new_files.len()).sum(),
            row_count: messages
                .iter()
                .flat_map(|m| &m.new_files)
                .map(|f| f.row_count)
                .fold(0i64, i64::saturating_add),
        })
    })
}

/// Counts the messages, new data files and their rows of a payload written at `version`,
/// without a table and without decoding it into messages: the payload is checked completely
/// (the same checks and errors as `paimon_wire_commit_messages_deserialize`'s decoding, within
/// the default decode limits) and read in place, so nothing per file is allocated. For logging
/// or vetting a payload before it reaches the coordinator; it does not validate the payload
/// against a table. A `DPCM` frame is read as it is (it must carry `version`).
///
/// Errors: `PAIMON_WIRE_ERROR_CODE_UNSUPPORTED_VERSION`, `PAIMON_WIRE_ERROR_CODE_MALFORMED_PAYLOAD`
/// (with the field and byte offset), `PAIMON_WIRE_ERROR_CODE_LIMIT_EXCEEDED`.
///
/// # Safety
/// `data` is NULL or points to `data_len` readable bytes (NULL only with `data_len` 0).
#[no_mangle]
pub unsafe extern "C" fn paimon_wire_payload_summarize(
    data: *const u8,
    data_len: usize,
    version: i32,
) -> paimon_wire_result_commit_messages_summary {
    guard(function_name!(), || {
        // SAFETY: forwarded from the caller.
        let payload = unsafe { slice(data, data_len, "data")? };
        let version = SerializerVersion::try_from(version)?;
        let payload = paimon_wire_core::dpcm::strip_frame(version, payload)?;
        let view = PayloadView::parse_with_limits(version, payload, &DecodeLimits::default())?;
        Ok(paimon_wire_commit_messages_summary {
            message_count: view.len(),
            data_file_count: view.data_file_count(),
            row_count: view.reported_row_count(),
        })
    })
}

/// Frees commit messages (not the files they describe). NULL is a no-op; a handle of another
/// kind is left untouched.
///
/// # Safety
/// `messages` is NULL or a handle from this library, not used again after this call.
#[no_mangle]
pub unsafe extern "C" fn paimon_wire_commit_messages_free(
    messages: *mut paimon_wire_commit_messages,
) {
    // SAFETY: forwarded from the caller.
    guard_void(|| unsafe { handle::free(messages) });
}

/// Frees bytes returned by this library. `{NULL, 0}` (the bytes of a failed call) is a no-op.
///
/// # Safety
/// `bytes` is a value returned by this library, unchanged, not freed before.
#[no_mangle]
pub unsafe extern "C" fn paimon_wire_bytes_free(bytes: paimon_wire_bytes) {
    // SAFETY: forwarded from the caller.
    guard_void(|| unsafe { bytes.free() });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_round_trip_through_the_c_struct() {
        for payload in [vec![], vec![1u8, 2, 3]] {
            let bytes = paimon_wire_bytes::from_vec(payload.clone());
            assert!(!bytes.data.is_null());
            // SAFETY: `from_vec` made `len` bytes at `data`.
            let seen = unsafe { std::slice::from_raw_parts(bytes.data, bytes.len) };
            assert_eq!(seen, payload.as_slice());
            // SAFETY: freed once, unchanged.
            unsafe { paimon_wire_bytes_free(bytes) };
        }
        // SAFETY: the empty value of a failed call.
        unsafe { paimon_wire_bytes_free(paimon_wire_bytes::EMPTY) };
    }

    #[test]
    fn prepared_messages_serialize_as_the_codec_does_and_refuse_unknown_versions() {
        let handle =
            handle::into_raw::<paimon_wire_commit_messages>(MessagesHandle::prepared(vec![
                CommitMessage::new(Vec::new(), 0, Vec::new()),
            ]));
        // SAFETY: `handle` is live until freed at the end.
        unsafe {
            let current = paimon_wire_commit_messages_serialize(handle);
            assert!(current.error.is_null());
            let expected = serialize_list(
                &[CommitMessage::new(Vec::new(), 0, Vec::new())],
                SerializerVersion::CURRENT,
            )
            .unwrap();
            assert_eq!(
                std::slice::from_raw_parts(current.bytes.data, current.bytes.len),
                expected.as_slice()
            );
            paimon_wire_bytes_free(current.bytes);

            let bad = paimon_wire_commit_messages_serialize_version(handle, 99);
            assert!(bad.bytes.data.is_null());
            assert_eq!(
                (*bad.error).code,
                paimon_wire_error_code::UnsupportedVersion
            );
            crate::error::paimon_wire_error_free(bad.error);
            paimon_wire_commit_messages_free(handle);
        }
    }
}
