//! Java's binary formats, reproduced byte for byte: the big-endian `DataInputView`
//! primitives around the rows ([`input`]), `BinaryRow` ([`row`]) and `BinaryArray`
//! ([`array`]).
//!
//! Rows and arrays are little-endian inside. A fixed-size slot of 8 bytes holds either a
//! primitive, a string or byte string of at most 7 bytes stored inline (the top byte is
//! `0x80 | length`), or `offset << 32 | length` pointing into the variable-length part,
//! whose pieces are padded with zeros to 8-byte words.

pub(crate) mod array;
pub(crate) mod input;
pub(crate) mod row;

use crate::error::{CodecError, CodecErrorKind, CodecResult};

/// Largest byte string stored inline in an 8-byte slot (Java's `MAX_FIX_PART_DATA_SIZE`).
const MAX_INLINE_BYTES: usize = 7;

/// Java's `roundNumberOfBytesToNearestWord`.
#[inline]
pub(crate) const fn round_to_word(n: usize) -> usize {
    (n + 7) & !7
}

#[inline]
fn read_u64_le(data: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&data[at..at + 8]);
    u64::from_le_bytes(a)
}

/// Decodes the variable-length value whose 8-byte slot is at `slot` in `data` (a row or
/// array whose first byte is at payload offset `base`).
#[inline]
fn read_var_slot<'a>(
    data: &'a [u8],
    slot: usize,
    base: usize,
    field: &'static str,
) -> CodecResult<&'a [u8]> {
    let word = read_u64_le(data, slot);
    if word & (0x80 << 56) != 0 {
        let len = ((word >> 56) & 0x7f) as usize;
        if len > MAX_INLINE_BYTES {
            return Err(inline_too_long(field, base + slot, len));
        }
        Ok(&data[slot..slot + len])
    } else {
        let offset = (word >> 32) as usize;
        let len = (word & 0xffff_ffff) as usize;
        match offset
            .checked_add(len)
            .and_then(|end| data.get(offset..end))
        {
            Some(bytes) => Ok(bytes),
            None => Err(outside_value(field, base + slot, offset, len, data.len())),
        }
    }
}

#[cold]
#[inline(never)]
fn inline_too_long(field: &'static str, offset: usize, len: usize) -> CodecError {
    invalid(
        field,
        offset,
        format!("inline length {len} exceeds {MAX_INLINE_BYTES}"),
    )
}

#[cold]
#[inline(never)]
fn outside_value(
    field: &'static str,
    at: usize,
    offset: usize,
    len: usize,
    value_len: usize,
) -> CodecError {
    invalid(
        field,
        at,
        format!("offset {offset} + length {len} is outside the {value_len}-byte value"),
    )
}

/// Writes `bytes` for the slot at `slot` (relative to `start`): inline if short, otherwise
/// appended to the variable-length part at the end of `out`, zero-padded to a word.
#[inline]
fn write_var_slot(out: &mut Vec<u8>, start: usize, slot: usize, bytes: &[u8]) {
    let at = start + slot;
    if bytes.len() <= MAX_INLINE_BYTES {
        out[at..at + bytes.len()].copy_from_slice(bytes);
        out[at + 7] = 0x80 | bytes.len() as u8;
    } else {
        let offset = out.len() - start;
        out.extend_from_slice(bytes);
        out.resize(start + round_to_word(offset + bytes.len()), 0);
        set_offset_and_size(out, at, offset, bytes.len());
    }
}

/// Runs `write` to append a nested row or array at the end of `out` and points the slot at
/// `slot` (relative to `start`) to it.
#[inline]
fn write_nested_slot(
    out: &mut Vec<u8>,
    start: usize,
    slot: usize,
    write: impl FnOnce(&mut Vec<u8>),
) {
    let offset = out.len() - start;
    write(out);
    let size = out.len() - start - offset;
    out.resize(start + round_to_word(offset + size), 0);
    set_offset_and_size(out, start + slot, offset, size);
}

#[inline]
fn set_offset_and_size(out: &mut [u8], at: usize, offset: usize, size: usize) {
    let word = ((offset as u64) << 32) | size as u64;
    out[at..at + 8].copy_from_slice(&word.to_le_bytes());
}

#[cold]
pub(crate) fn invalid(field: &'static str, offset: usize, reason: String) -> CodecError {
    CodecError::at(CodecErrorKind::InvalidValue { reason }, field, offset)
}

/// Decodes UTF-8, refusing invalid bytes (Java would replace them; a Java writer never
/// produces them).
#[inline]
pub(crate) fn utf8<'a>(
    bytes: &'a [u8],
    field: &'static str,
    offset: usize,
) -> CodecResult<&'a str> {
    std::str::from_utf8(bytes).map_err(|_| invalid_utf8(field, offset))
}

#[cold]
#[inline(never)]
fn invalid_utf8(field: &'static str, offset: usize) -> CodecError {
    CodecError::at(CodecErrorKind::InvalidUtf8, field, offset)
}
