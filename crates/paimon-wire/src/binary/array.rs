//! Java's `BinaryArray`: a 4-byte element count, null bits in 4-byte words, the elements'
//! fixed part rounded to 8 bytes, then the variable-length part. Reader ([`ArrayView`])
//! and writer ([`ArrayBuilder`]) side by side.

use super::row::RowView;
use super::{
    invalid, read_u64_le, read_var_slot, round_to_word, utf8, write_nested_slot, write_var_slot,
};
use crate::error::CodecResult;

/// Java's `BinaryArray.calculateHeaderInBytes`.
#[inline]
const fn header_size(len: usize) -> usize {
    4 + len.div_ceil(32) * 4
}

/// A read-only view of one `BinaryArray` inside the payload.
#[derive(Clone, Copy)]
pub(crate) struct ArrayView<'a> {
    data: &'a [u8],
    base: usize,
    len: usize,
    element_size: usize,
}

impl<'a> ArrayView<'a> {
    /// Views `data` as an array whose elements take `element_size` bytes, checking that the
    /// count is non-negative and that the header and elements are inside `data`.
    #[inline]
    pub(crate) fn new(
        data: &'a [u8],
        element_size: usize,
        base: usize,
        field: &'static str,
    ) -> CodecResult<Self> {
        let count = match data.get(..4) {
            Some(&[a, b, c, d]) => i32::from_le_bytes([a, b, c, d]),
            _ => return Err(array_error(data, base, field)),
        };
        let fits = count >= 0 && {
            let len = count as usize;
            header_size(len) + len * element_size <= data.len()
        };
        if !fits {
            return Err(array_error(data, base, field));
        }
        Ok(Self {
            data,
            base,
            len: count as usize,
            element_size,
        })
    }

    /// An array of no elements, for the fallback of a view's accessor (see
    /// `crate::view::validated`).
    pub(crate) const fn empty(element_size: usize) -> ArrayView<'static> {
        ArrayView {
            data: &[0; 4],
            base: 0,
            len: 0,
            element_size,
        }
    }

    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    #[inline]
    fn slot(&self, i: usize) -> usize {
        header_size(self.len) + self.element_size * i
    }

    #[inline]
    pub(crate) fn is_null(&self, i: usize) -> bool {
        self.data[4 + i / 8] & (1 << (i % 8)) != 0
    }

    /// Fails if element `i` of an array of `NOT NULL` elements is null.
    #[inline]
    pub(crate) fn require(&self, i: usize, field: &'static str) -> CodecResult<()> {
        if self.is_null(i) {
            return Err(invalid(
                field,
                self.base + self.slot(i),
                format!("element {i} of an array of NOT NULL elements is null"),
            ));
        }
        Ok(())
    }

    #[inline]
    pub(crate) fn long(&self, i: usize) -> i64 {
        read_u64_le(self.data, self.slot(i)) as i64
    }

    #[inline]
    pub(crate) fn int(&self, i: usize) -> i32 {
        let at = self.slot(i);
        i32::from_le_bytes([
            self.data[at],
            self.data[at + 1],
            self.data[at + 2],
            self.data[at + 3],
        ])
    }

    /// The elements of an array of nullable 8-byte elements (`ARRAY<BIGINT>`), in order:
    /// one pass over the null bits and slots, without a bounds check per element.
    #[inline]
    pub(crate) fn nullable_longs(&self) -> impl ExactSizeIterator<Item = Option<i64>> + 'a {
        debug_assert_eq!(self.element_size, 8);
        let header = header_size(self.len);
        // `new` checked that the header and `len` elements of `element_size` bytes fit.
        let null_bits = &self.data[4..header];
        let slots = &self.data[header..header + 8 * self.len];
        slots.chunks_exact(8).enumerate().map(move |(i, slot)| {
            if null_bits[i / 8] & (1 << (i % 8)) != 0 {
                None
            } else {
                let mut bytes = [0u8; 8];
                bytes.copy_from_slice(slot);
                Some(i64::from_le_bytes(bytes))
            }
        })
    }

    #[inline]
    pub(crate) fn string(&self, i: usize, field: &'static str) -> CodecResult<&'a str> {
        let bytes = read_var_slot(self.data, self.slot(i), self.base, field)?;
        utf8(bytes, field, self.base + self.slot(i))
    }

    #[inline]
    pub(crate) fn row(
        &self,
        i: usize,
        arity: usize,
        field: &'static str,
    ) -> CodecResult<RowView<'a>> {
        let bytes = read_var_slot(self.data, self.slot(i), self.base, field)?;
        let base = self.base + (bytes.as_ptr() as usize - self.data.as_ptr() as usize);
        RowView::new(bytes, arity, base, field)
    }
}

#[cold]
#[inline(never)]
fn array_error(data: &[u8], base: usize, field: &'static str) -> crate::error::CodecError {
    match data.get(..4) {
        Some(&[a, b, c, d]) => invalid(
            field,
            base,
            format!(
                "array count {} does not fit in its {} bytes",
                i32::from_le_bytes([a, b, c, d]),
                data.len()
            ),
        ),
        _ => invalid(
            field,
            base,
            format!("array of {} bytes has no element count", data.len()),
        ),
    }
}

/// Writes one `BinaryArray` at the end of a buffer, the way Java's `BinaryArrayWriter` does.
pub(crate) struct ArrayBuilder {
    start: usize,
    header: usize,
    element_size: usize,
}

impl ArrayBuilder {
    /// Appends the zeroed header and fixed part of an array of `len` elements.
    #[inline]
    pub(crate) fn begin(out: &mut Vec<u8>, len: usize, element_size: usize) -> Self {
        let start = out.len();
        let header = header_size(len);
        out.resize(start + round_to_word(header + element_size * len), 0);
        out[start..start + 4].copy_from_slice(&(len as i32).to_le_bytes());
        Self {
            start,
            header,
            element_size,
        }
    }

    #[inline]
    fn slot(&self, i: usize) -> usize {
        self.header + self.element_size * i
    }

    #[inline]
    pub(crate) fn set_null(&self, out: &mut [u8], i: usize) {
        out[self.start + 4 + i / 8] |= 1 << (i % 8);
    }

    #[inline]
    pub(crate) fn long(&self, out: &mut [u8], i: usize, value: i64) {
        let at = self.start + self.slot(i);
        out[at..at + 8].copy_from_slice(&value.to_le_bytes());
    }

    #[inline]
    pub(crate) fn int(&self, out: &mut [u8], i: usize, value: i32) {
        let at = self.start + self.slot(i);
        out[at..at + 4].copy_from_slice(&value.to_le_bytes());
    }

    #[inline]
    pub(crate) fn bytes(&self, out: &mut Vec<u8>, i: usize, value: &[u8]) {
        write_var_slot(out, self.start, self.slot(i), value);
    }

    #[inline]
    pub(crate) fn nested(&self, out: &mut Vec<u8>, i: usize, write: impl FnOnce(&mut Vec<u8>)) {
        write_nested_slot(out, self.start, self.slot(i), write)
    }
}

/// Appends an `ARRAY<STRING NOT NULL>`.
pub(crate) fn write_strings<S: AsRef<str>>(out: &mut Vec<u8>, values: &[S]) {
    let array = ArrayBuilder::begin(out, values.len(), 8);
    for (i, v) in values.iter().enumerate() {
        array.bytes(out, i, v.as_ref().as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_follows_java() {
        assert_eq!(header_size(0), 4);
        assert_eq!(header_size(1), 8);
        assert_eq!(header_size(32), 8);
        assert_eq!(header_size(33), 12);
    }

    #[test]
    fn string_arrays_round_trip() {
        let values = ["", "short", "a string longer than seven", "ünï"];
        let mut out = Vec::new();
        write_strings(&mut out, &values);
        assert_eq!(out.len() % 8, 0);
        let view = ArrayView::new(&out, 8, 0, "t").unwrap();
        let strings = crate::view::StringsView::parse(view, "t").unwrap();
        assert_eq!(strings.to_vec(), values);
    }

    #[test]
    fn nullable_longs_read_null_bits_across_words() {
        // 40 elements: the null bits take two 4-byte words.
        let values: Vec<Option<i64>> = (0..40i64)
            .map(|i| (i % 3 != 1).then_some(i * 1_000_000_007 - 5))
            .collect();
        let mut out = Vec::new();
        let array = ArrayBuilder::begin(&mut out, values.len(), 8);
        for (i, v) in values.iter().enumerate() {
            match v {
                Some(v) => array.long(&mut out, i, *v),
                None => array.set_null(&mut out, i),
            }
        }
        let view = ArrayView::new(&out, 8, 0, "t").unwrap();
        assert_eq!(view.nullable_longs().len(), 40);
        assert_eq!(view.nullable_longs().collect::<Vec<_>>(), values);
        let per_element: Vec<_> = (0..view.len())
            .map(|i| (!view.is_null(i)).then(|| view.long(i)))
            .collect();
        assert_eq!(per_element, values);
    }

    #[test]
    fn impossible_counts_are_errors() {
        let mut bytes = vec![0u8; 16];
        bytes[..4].copy_from_slice(&i32::MAX.to_le_bytes());
        assert!(ArrayView::new(&bytes, 8, 0, "t").is_err());
        bytes[..4].copy_from_slice(&(-1i32).to_le_bytes());
        assert!(ArrayView::new(&bytes, 8, 0, "t").is_err());
    }
}
