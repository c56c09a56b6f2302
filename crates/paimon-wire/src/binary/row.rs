//! Java's `BinaryRow`: a header byte (the row kind), null bits, one 8-byte slot per field,
//! then the variable-length part. Reader ([`RowView`]) and writer ([`RowBuilder`]) side by
//! side.

use super::array::ArrayView;
use super::{invalid, read_u64_le, read_var_slot, utf8, write_nested_slot, write_var_slot};
use crate::error::CodecResult;

/// Java's `BinaryRow.calculateBitSetWidthInBytes`: the header byte and one null bit per
/// field, rounded up to 8-byte words.
#[inline]
pub(crate) const fn null_bits_size(arity: usize) -> usize {
    (arity + 63 + 8) / 64 * 8
}

/// Size of the header, null bits and field slots.
#[inline]
pub(crate) const fn fixed_part_size(arity: usize) -> usize {
    null_bits_size(arity) + 8 * arity
}

/// A read-only view of one `BinaryRow` inside the payload.
#[derive(Clone, Copy)]
pub(crate) struct RowView<'a> {
    data: &'a [u8],
    /// Payload offset of `data[0]`, for error messages.
    base: usize,
    null_bits: usize,
}

impl<'a> RowView<'a> {
    /// Views `data` as a row of `arity` fields, checking that its fixed part is there.
    pub(crate) fn new(
        data: &'a [u8],
        arity: usize,
        base: usize,
        field: &'static str,
    ) -> CodecResult<Self> {
        let fixed = fixed_part_size(arity);
        if data.len() < fixed {
            return Err(invalid(
                field,
                base,
                format!(
                    "row of {} bytes is shorter than the {fixed}-byte fixed part of {arity} fields",
                    data.len()
                ),
            ));
        }
        Ok(Self {
            data,
            base,
            null_bits: null_bits_size(arity),
        })
    }

    /// The row's bytes: fixed part and variable-length part.
    pub(crate) fn data(&self) -> &'a [u8] {
        self.data
    }

    #[inline]
    fn slot(&self, pos: usize) -> usize {
        self.null_bits + 8 * pos
    }

    /// Payload offset of the slot of field `pos`.
    #[inline]
    pub(crate) fn offset_of(&self, pos: usize) -> usize {
        self.base + self.slot(pos)
    }

    #[inline]
    pub(crate) fn is_null(&self, pos: usize) -> bool {
        let bit = pos + 8;
        self.data[bit / 8] & (1 << (bit % 8)) != 0
    }

    /// Fails if a field declared `NOT NULL` is marked null.
    #[inline]
    pub(crate) fn require(&self, pos: usize, field: &'static str) -> CodecResult<()> {
        if self.is_null(pos) {
            return Err(invalid(
                field,
                self.offset_of(pos),
                "a NOT NULL field is null".into(),
            ));
        }
        Ok(())
    }

    #[inline]
    pub(crate) fn long(&self, pos: usize) -> i64 {
        read_u64_le(self.data, self.slot(pos)) as i64
    }

    #[inline]
    pub(crate) fn int(&self, pos: usize) -> i32 {
        let at = self.slot(pos);
        i32::from_le_bytes([
            self.data[at],
            self.data[at + 1],
            self.data[at + 2],
            self.data[at + 3],
        ])
    }

    #[inline]
    pub(crate) fn byte(&self, pos: usize) -> i8 {
        self.data[self.slot(pos)] as i8
    }

    /// A `BYTES` or `STRING` field's bytes.
    #[inline]
    pub(crate) fn bytes(&self, pos: usize, field: &'static str) -> CodecResult<&'a [u8]> {
        read_var_slot(self.data, self.slot(pos), self.base, field)
    }

    #[inline]
    pub(crate) fn string(&self, pos: usize, field: &'static str) -> CodecResult<&'a str> {
        let bytes = self.bytes(pos, field)?;
        utf8(bytes, field, self.offset_of(pos))
    }

    /// A nested row of `arity` fields.
    #[inline]
    pub(crate) fn row(
        &self,
        pos: usize,
        arity: usize,
        field: &'static str,
    ) -> CodecResult<RowView<'a>> {
        let bytes = self.bytes(pos, field)?;
        RowView::new(bytes, arity, self.nested_base(bytes), field)
    }

    /// A nested array whose elements take `element_size` bytes in the fixed part.
    #[inline]
    pub(crate) fn array(
        &self,
        pos: usize,
        element_size: usize,
        field: &'static str,
    ) -> CodecResult<ArrayView<'a>> {
        let bytes = self.bytes(pos, field)?;
        ArrayView::new(bytes, element_size, self.nested_base(bytes), field)
    }

    fn nested_base(&self, nested: &[u8]) -> usize {
        self.base + (nested.as_ptr() as usize - self.data.as_ptr() as usize)
    }
}

/// Writes one `BinaryRow` at the end of a buffer, the way Java's `BinaryRowWriter` does
/// for a row of kind INSERT. Slots start zeroed; unset fields must be set null.
pub(crate) struct RowBuilder {
    start: usize,
    null_bits: usize,
}

impl RowBuilder {
    /// Appends the zeroed fixed part of a row of `arity` fields to `out`.
    #[inline]
    pub(crate) fn begin(out: &mut Vec<u8>, arity: usize) -> Self {
        let start = out.len();
        out.resize(start + fixed_part_size(arity), 0);
        Self {
            start,
            null_bits: null_bits_size(arity),
        }
    }

    #[inline]
    fn slot(&self, pos: usize) -> usize {
        self.null_bits + 8 * pos
    }

    #[inline]
    pub(crate) fn set_null(&self, out: &mut [u8], pos: usize) {
        let bit = pos + 8;
        out[self.start + bit / 8] |= 1 << (bit % 8);
    }

    #[inline]
    pub(crate) fn long(&self, out: &mut [u8], pos: usize, value: i64) {
        let at = self.start + self.slot(pos);
        out[at..at + 8].copy_from_slice(&value.to_le_bytes());
    }

    #[inline]
    pub(crate) fn int(&self, out: &mut [u8], pos: usize, value: i32) {
        let at = self.start + self.slot(pos);
        out[at..at + 4].copy_from_slice(&value.to_le_bytes());
    }

    #[inline]
    pub(crate) fn byte(&self, out: &mut [u8], pos: usize, value: i8) {
        out[self.start + self.slot(pos)] = value as u8;
    }

    #[inline]
    pub(crate) fn bytes(&self, out: &mut Vec<u8>, pos: usize, value: &[u8]) {
        write_var_slot(out, self.start, self.slot(pos), value);
    }

    /// Writes a nested row or array through `write`, which appends it to `out`.
    #[inline]
    pub(crate) fn nested(&self, out: &mut Vec<u8>, pos: usize, write: impl FnOnce(&mut Vec<u8>)) {
        write_nested_slot(out, self.start, self.slot(pos), write)
    }

    #[inline]
    pub(crate) fn opt_long(&self, out: &mut [u8], pos: usize, value: Option<i64>) {
        match value {
            Some(v) => self.long(out, pos, v),
            None => self.set_null(out, pos),
        }
    }

    #[inline]
    pub(crate) fn opt_bytes(&self, out: &mut Vec<u8>, pos: usize, value: Option<&[u8]>) {
        match value {
            Some(v) => self.bytes(out, pos, v),
            None => self.set_null(out, pos),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn null_bits_follow_java() {
        // Java: ((arity + 63 + HEADER_SIZE_IN_BITS) / 64) * 8
        assert_eq!(null_bits_size(0), 8);
        assert_eq!(null_bits_size(56), 8);
        assert_eq!(null_bits_size(57), 16);
        assert_eq!(fixed_part_size(21), 8 + 21 * 8);
    }

    #[test]
    fn strings_inline_up_to_seven_bytes() {
        let mut out = Vec::new();
        let row = RowBuilder::begin(&mut out, 2);
        row.bytes(&mut out, 0, b"seven!!");
        row.bytes(&mut out, 1, b"eight!!!");
        assert_eq!(out.len(), 8 + 16 + 8);
        assert_eq!(out[8 + 7], 0x80 | 7);
        let view = RowView::new(&out, 2, 0, "t").unwrap();
        assert_eq!(view.string(0, "a").unwrap(), "seven!!");
        assert_eq!(view.string(1, "b").unwrap(), "eight!!!");
    }

    #[test]
    fn out_of_range_offsets_are_errors() {
        let mut out = Vec::new();
        let row = RowBuilder::begin(&mut out, 1);
        row.bytes(&mut out, 0, b"a long string");
        let cut = &out[..out.len() - 8];
        let view = RowView::new(cut, 1, 100, "t").unwrap();
        let err = view.bytes(0, "name").unwrap_err();
        assert!(err.to_string().contains("outside"), "{err}");
        assert_eq!(err.offset(), Some(108));
        assert!(RowView::new(&out[..10], 1, 0, "t").is_err());
    }
}
