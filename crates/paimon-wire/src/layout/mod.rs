//! The row layouts of the payload's file lists, one module per layout family, each with its
//! reader and writer side by side. [`crate::version::SerializerVersion::layouts`] picks the
//! layouts of a version.

pub(crate) mod data_file;
pub(crate) mod index_file;

use crate::binary::array::ArrayBuilder;
use crate::binary::invalid;
use crate::binary::row::fixed_part_size;
use crate::error::{CodecError, CodecErrorKind, CodecResult};
use crate::options::EncodeOptions;
pub use crate::options::LossyField;
use crate::version::{SerializerVersion, VersionLayouts};

/// What an encoder needs to know about its target.
pub(crate) struct EncodeContext<'a> {
    pub(crate) version: SerializerVersion,
    pub(crate) layouts: VersionLayouts,
    pub(crate) options: &'a EncodeOptions,
}

/// Called when a message sets `field` but the target version has no place for it: fine if
/// the caller allowed dropping it, an error naming the field and version otherwise.
pub(crate) fn lossy(
    ctx: &EncodeContext<'_>,
    field: LossyField,
    path: &'static str,
) -> CodecResult<()> {
    if ctx.options.may_drop(field) {
        return Ok(());
    }
    let releases = ctx.version.written_by();
    let written_by = if releases.is_empty() {
        String::new()
    } else {
        format!(" (Paimon {})", releases.join(", "))
    };
    Err(CodecError::in_field(
        CodecErrorKind::Unrepresentable {
            reason: format!(
                "version {}{written_by} has no {field}; allow dropping '{field}' to write it anyway",
                ctx.version
            ),
        },
        path,
    ))
}

/// Checks the shape of a serialized `BinaryRow` (Java's `SerializationUtils.serializeBinaryRow`:
/// a big-endian arity, then the row): the arity is non-negative and the row holds its fixed
/// part.
#[inline]
pub(crate) fn check_serialized_row(
    bytes: &[u8],
    field: &'static str,
    offset: usize,
) -> CodecResult<()> {
    let fits = bytes.len() >= 4 && {
        let arity = i32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
        arity >= 0 && fixed_part_size(arity as usize) <= bytes.len() - 4
    };
    if fits {
        Ok(())
    } else {
        Err(serialized_row_error(bytes, field, offset))
    }
}

#[cold]
#[inline(never)]
fn serialized_row_error(bytes: &[u8], field: &'static str, offset: usize) -> CodecError {
    if bytes.len() < 4 {
        return invalid(
            field,
            offset,
            format!("serialized row of {} bytes has no arity", bytes.len()),
        );
    }
    let arity = i32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
    invalid(
        field,
        offset,
        format!(
            "serialized row of arity {arity} does not fit in {} bytes",
            bytes.len() - 4
        ),
    )
}

/// Appends an `ARRAY<BIGINT NOT NULL>`.
pub(crate) fn write_long_array(out: &mut Vec<u8>, values: &[i64]) {
    let array = ArrayBuilder::begin(out, values.len(), 8);
    for (i, v) in values.iter().enumerate() {
        array.long(out, i, *v);
    }
}
