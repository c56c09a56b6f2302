//! Size-bounded payloads across C: a worker's messages as several standard payloads of at most
//! N bytes each (`paimon_wire_commit_messages_serialize_split`), and a coordinator binding a
//! whole split set as one worker's payload (`paimon_wire_commit_messages_deserialize_parts`).

use paimon_wire_core::coordinator::PayloadPart;
use paimon_wire_core::{split_list, SerializerVersion, SplitError};

use crate::args::slice;
use crate::commit::paimon_wire_table_commit;
use crate::error::{paimon_wire_error, paimon_wire_error_code, FfiError};
use crate::handle;
use crate::messages::{
    paimon_wire_bytes, paimon_wire_commit_messages, paimon_wire_result_commit_messages,
    MessagesHandle,
};
use crate::result::{ffi_return, function_name, guard, guard_void};

impl From<SplitError> for FfiError {
    fn from(e: SplitError) -> Self {
        match e {
            SplitError::Codec(codec) => codec.into(),
            SplitError::LimitTooSmall { .. } => FfiError::invalid_argument(e.to_string()),
            other => FfiError::new(paimon_wire_error_code::LimitExceeded, other.to_string()),
        }
    }
}

/// Payloads owned by the caller: `count` byte strings at `items`, payload `i` being
/// `items[i].data[0 .. items[i].len]`. Free all of them at once with `paimon_wire_payloads_free`
/// (exactly once, passing the struct unchanged); never free one item on its own.
#[repr(C)]
#[allow(non_camel_case_types)]
pub struct paimon_wire_payloads {
    /// The payloads; NULL when they came from a failed call.
    pub items: *mut paimon_wire_bytes,
    /// Number of payloads.
    pub count: usize,
}

impl paimon_wire_payloads {
    const EMPTY: paimon_wire_payloads = paimon_wire_payloads {
        items: std::ptr::null_mut(),
        count: 0,
    };

    pub(crate) fn from_vecs(payloads: Vec<Vec<u8>>) -> Self {
        let items: Box<[paimon_wire_bytes]> = payloads
            .into_iter()
            .map(paimon_wire_bytes::from_vec)
            .collect();
        let count = items.len();
        paimon_wire_payloads {
            items: Box::into_raw(items).cast::<paimon_wire_bytes>(),
            count,
        }
    }
}

/// Result of `paimon_wire_commit_messages_serialize_split`: on success `error` is NULL and
/// `payloads` is owned by the caller; on failure `payloads` is `{NULL, 0}`.
#[repr(C)]
#[allow(non_camel_case_types)]
pub struct paimon_wire_result_payloads {
    /// The payloads (free with `paimon_wire_payloads_free`).
    pub payloads: paimon_wire_payloads,
    /// The error (free with `paimon_wire_error_free`); NULL on success.
    pub error: *mut paimon_wire_error,
}
ffi_return!(paimon_wire_result_payloads, payloads: paimon_wire_payloads = paimon_wire_payloads::EMPTY);

/// One payload of a split set as the coordinator received it: its bytes (borrowed for the
/// call), its index in the set and the set's count, which the engine sends beside the bytes.
#[repr(C)]
#[allow(non_camel_case_types)]
#[derive(Clone, Copy)]
pub struct paimon_wire_payload_part {
    /// The payload's first byte (may be NULL when `len` is 0).
    pub data: *const u8,
    /// Number of bytes.
    pub len: usize,
    /// The payload's index in its set, from 0.
    pub index: u32,
    /// How many payloads the set has.
    pub count: u32,
}

/// Serializes `messages` at `version` as several standard payloads of at most `max_bytes`
/// bytes each (for a transport with a frame limit), each one Java's
/// `CommitMessageSerializer.serializeList` of some of the messages. A message larger than a
/// payload is split by its new, deleted and changelog data files into messages of the same
/// partition and bucket; its compaction and index files stay in one message. Send each
/// payload with its index, the count and the version: the coordinator needs all three
/// (`paimon_wire_commit_messages_deserialize_parts`). Messages that fit one payload give one
/// payload, byte-identical to `paimon_wire_commit_messages_serialize_version`.
///
/// Errors: `PAIMON_WIRE_ERROR_CODE_NULL_POINTER` / `PAIMON_WIRE_ERROR_CODE_WRONG_HANDLE_KIND`
/// for `messages`, `PAIMON_WIRE_ERROR_CODE_UNSUPPORTED_VERSION`,
/// `PAIMON_WIRE_ERROR_CODE_UNREPRESENTABLE` (a field `version` cannot carry),
/// `PAIMON_WIRE_ERROR_CODE_INVALID_ARGUMENT` (`max_bytes` below 256) and
/// `PAIMON_WIRE_ERROR_CODE_LIMIT_EXCEEDED` (what of one message is never split — its
/// compaction and index files, or one file — does not fit `max_bytes`; the message names it).
///
/// # Safety
/// `messages` is NULL or a handle from this library.
#[no_mangle]
pub unsafe extern "C" fn paimon_wire_commit_messages_serialize_split(
    messages: *const paimon_wire_commit_messages,
    version: i32,
    max_bytes: usize,
) -> paimon_wire_result_payloads {
    guard(function_name!(), || {
        // SAFETY: forwarded from the caller.
        let messages = unsafe { handle::borrow(messages, "messages")? };
        let version = SerializerVersion::try_from(version)?;
        Ok(paimon_wire_payloads::from_vecs(split_list(
            messages.messages(),
            version,
            max_bytes,
        )?))
    })
}

/// Frees payloads returned by `paimon_wire_commit_messages_serialize_split`, every item with
/// them. `{NULL, 0}` (the payloads of a failed call) is a no-op.
///
/// # Safety
/// `payloads` is a value returned by this library, unchanged, not freed before.
#[no_mangle]
pub unsafe extern "C" fn paimon_wire_payloads_free(payloads: paimon_wire_payloads) {
    guard_void(|| {
        if payloads.items.is_null() {
            return;
        }
        let items = std::ptr::slice_from_raw_parts_mut(payloads.items, payloads.count);
        // SAFETY: `items`/`count` came from `paimon_wire_payloads::from_vecs`, i.e.
        // `Box::<[paimon_wire_bytes]>::into_raw` with this exact length, freed once per the
        // caller.
        let items = unsafe { Box::from_raw(items) };
        for item in items.into_vec() {
            // SAFETY: each item came from `paimon_wire_bytes::from_vec` and is freed once here.
            unsafe { item.free() };
        }
    });
}

/// Decodes the payloads of one worker's split set (`parts[0 .. parts_len]`, in any order, from
/// `paimon_wire_commit_messages_serialize_split` or any writer of standard payloads) as the one
/// payload they were split from, validates every message against the table of `commit` and
/// binds the result to `commit`, like `paimon_wire_commit_messages_deserialize`. A bucket whose
/// files span two payloads of the set is one writer's, not two.
///
/// The set must be whole: every index below the count, all payloads naming the same count, an
/// index given twice only with the same bytes (kept once). Otherwise nothing is decoded and
/// the call fails with `PAIMON_WIRE_ERROR_CODE_SPLIT_SET_INCOMPLETE`, naming the missing
/// indexes (committing the rest would commit part of a worker's write as if it were all).
///
/// Errors: as `paimon_wire_commit_messages_deserialize`, and
/// `PAIMON_WIRE_ERROR_CODE_SPLIT_SET_INCOMPLETE`.
///
/// # Safety
/// `commit` is NULL or a handle from this library; `parts` is NULL (only when `parts_len` is
/// 0) or points to `parts_len` parts, each with `data` NULL (only when `len` is 0) or pointing
/// to `len` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn paimon_wire_commit_messages_deserialize_parts(
    commit: *const paimon_wire_table_commit,
    parts: *const paimon_wire_payload_part,
    parts_len: usize,
    version: i32,
) -> paimon_wire_result_commit_messages {
    guard(function_name!(), || {
        // SAFETY: forwarded from the caller.
        let (commit, parts) = unsafe {
            (
                handle::borrow(commit, "commit")?,
                slice(parts, parts_len, "parts")?,
            )
        };
        let set = parts
            .iter()
            .enumerate()
            .map(|(i, part)| {
                // SAFETY: each part's `data` and `len` are valid per the caller.
                let bytes = unsafe { slice(part.data, part.len, &format!("parts[{i}].data"))? };
                Ok(PayloadPart {
                    index: part.index,
                    count: part.count,
                    bytes,
                })
            })
            .collect::<Result<Vec<_>, FfiError>>()?;
        let version = SerializerVersion::try_from(version)?;
        let bound = commit.coordinator.deserialize_parts(version, &set)?;
        Ok(handle::into_raw::<paimon_wire_commit_messages>(
            MessagesHandle::Bound(bound),
        ))
    })
}
