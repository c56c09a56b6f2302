//! A bounds-checked reader over the payload, equal to Java's `DataInputView` for the
//! primitives `CommitMessageSerializer` uses (big-endian `int`, `long`, `boolean`).

use crate::error::{CodecError, CodecErrorKind, CodecResult};

/// Reads big-endian primitives from a payload, tracking the absolute offset for errors.
pub(crate) struct Input<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Input<'a> {
    pub(crate) fn new(data: &'a [u8]) -> Self {
        Self { data, pos: 0 }
    }

    /// The absolute offset of the next byte.
    pub(crate) fn position(&self) -> usize {
        self.pos
    }

    /// The bytes read since absolute offset `start` (at most the current position).
    pub(crate) fn since(&self, start: usize) -> &'a [u8] {
        &self.data[start.min(self.pos)..self.pos]
    }

    /// Bytes not read yet.
    pub(crate) fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }

    fn take(&mut self, n: usize, field: &'static str) -> CodecResult<&'a [u8]> {
        if self.remaining() < n {
            return Err(CodecError::at(
                CodecErrorKind::Truncated {
                    needed: n,
                    available: self.remaining(),
                },
                field,
                self.pos,
            ));
        }
        let bytes = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Ok(bytes)
    }

    pub(crate) fn read_i32(&mut self, field: &'static str) -> CodecResult<i32> {
        let b = self.take(4, field)?;
        Ok(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    pub(crate) fn read_i64(&mut self, field: &'static str) -> CodecResult<i64> {
        let b = self.take(8, field)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(i64::from_be_bytes(a))
    }

    /// A Java `readBoolean` that accepts only 0 and 1 (Java accepts any non-zero byte; a
    /// writer never produces one, so anything else is corruption).
    pub(crate) fn read_bool(&mut self, field: &'static str) -> CodecResult<bool> {
        let offset = self.pos;
        match self.take(1, field)?[0] {
            0 => Ok(false),
            1 => Ok(true),
            value => Err(CodecError::at(
                CodecErrorKind::InvalidBoolean { value },
                field,
                offset,
            )),
        }
    }

    /// An `int` length followed by that many bytes. Returns the bytes and the offset they
    /// start at. A negative length or one past the end is an error before anything is
    /// allocated.
    pub(crate) fn read_sized(&mut self, field: &'static str) -> CodecResult<(&'a [u8], usize)> {
        let offset = self.pos;
        let length = self.read_i32(field)?;
        if length < 0 || length as usize > self.remaining() {
            return Err(CodecError::at(
                CodecErrorKind::InvalidLength {
                    length: length as i64,
                    available: self.remaining(),
                },
                field,
                offset,
            ));
        }
        let start = self.pos;
        Ok((self.take(length as usize, field)?, start))
    }

    /// An `int` element count, checked against the bytes left: every element takes at least
    /// `min_element_bytes`, so a count that can't fit is refused before any allocation.
    pub(crate) fn read_count(
        &mut self,
        field: &'static str,
        min_element_bytes: usize,
    ) -> CodecResult<usize> {
        let offset = self.pos;
        let count = self.read_i32(field)?;
        let fits = count >= 0
            && (count as usize)
                .checked_mul(min_element_bytes)
                .is_some_and(|n| n <= self.remaining());
        if !fits {
            return Err(CodecError::at(
                CodecErrorKind::InvalidLength {
                    length: count as i64,
                    available: self.remaining(),
                },
                field,
                offset,
            ));
        }
        Ok(count as usize)
    }
}
