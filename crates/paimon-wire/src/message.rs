//! One commit message body: partition, bucket, the file lists of both increments, and the
//! fields around them, for each of the three message layouts. Reader and writer side by
//! side.

use paimon::spec::{DataFileMeta, IndexFileMeta};
use paimon::table::CommitMessage;

use crate::binary::input::Input;
use crate::binary::row::fixed_part_size;
use crate::error::{CodecError, CodecErrorKind, CodecResult};
use crate::layout::{check_serialized_row, data_file, index_file, lossy, EncodeContext};
use crate::options::LossyField;
use crate::version::{MessageLayout, VersionLayouts};

/// Java's `BinaryRow.EMPTY_ROW` as `serializeBinaryRow` writes it: arity 0, then 8 zero
/// bytes of null bits. The `paimon` crate uses an empty partition vector for it.
const EMPTY_SERIALIZED_ROW: [u8; 12] = [0; 12];

/// The fewest bytes a message body can take in any layout (a 12-byte empty partition with
/// its length, the bucket, and six empty lists), to bound a message count before
/// allocating.
pub(crate) const MIN_ENCODED_BYTES: usize = 16 + 4 + 6 * 4;

/// Decodes one message body.
pub(crate) fn decode(input: &mut Input<'_>, layouts: VersionLayouts) -> CodecResult<CommitMessage> {
    let (partition, offset) = input.read_sized("partition")?;
    check_serialized_row(partition, "partition", offset)?;
    let bucket = input.read_i32("bucket")?;
    let data_files = |input: &mut Input<'_>, name| read_data_files(input, layouts, name);
    let index_files = |input: &mut Input<'_>, name| read_index_files(input, layouts, name);

    let mut message = CommitMessage::new(partition.to_vec(), bucket, Vec::new());
    match layouts.message {
        MessageLayout::Split {
            has_check_from_snapshot,
        } => {
            message.total_buckets = read_optional_i32(input, "total_buckets")?;
            message.new_files = data_files(input, "new_files")?;
            message.deleted_files = data_files(input, "deleted_files")?;
            message.new_changelog_files = data_files(input, "new_changelog_files")?;
            message.new_index_files = index_files(input, "new_index_files")?;
            message.deleted_index_files = index_files(input, "deleted_index_files")?;
            message.compact_before = data_files(input, "compact_before")?;
            message.compact_after = data_files(input, "compact_after")?;
            message.compact_changelog_files = data_files(input, "compact_changelog_files")?;
            message.compact_new_index_files = index_files(input, "compact_new_index_files")?;
            message.compact_deleted_index_files =
                index_files(input, "compact_deleted_index_files")?;
            if has_check_from_snapshot {
                message.check_from_snapshot = if input.read_bool("check_from_snapshot")? {
                    Some(input.read_i64("check_from_snapshot")?)
                } else {
                    None
                };
            }
        }
        MessageLayout::Routed {
            has_total_buckets,
            has_deleted_index_files,
        } => {
            if has_total_buckets {
                message.total_buckets = read_optional_i32(input, "total_buckets")?;
            }
            message.new_files = data_files(input, "new_files")?;
            message.deleted_files = data_files(input, "deleted_files")?;
            message.new_changelog_files = data_files(input, "new_changelog_files")?;
            message.compact_before = data_files(input, "compact_before")?;
            message.compact_after = data_files(input, "compact_after")?;
            message.compact_changelog_files = data_files(input, "compact_changelog_files")?;
            let new_index = index_files(input, "new_index_files")?;
            let deleted_index = if has_deleted_index_files {
                index_files(input, "deleted_index_files")?
            } else {
                Vec::new()
            };
            route_index_files(&mut message, new_index, deleted_index);
        }
        MessageLayout::LegacyV2 => {
            message.new_files = data_files(input, "new_files")?;
            message.new_changelog_files = data_files(input, "new_changelog_files")?;
            message.compact_before = data_files(input, "compact_before")?;
            message.compact_after = data_files(input, "compact_after")?;
            message.compact_changelog_files = data_files(input, "compact_changelog_files")?;
            let new_index = index_files(input, "new_index_files")?;
            route_index_files(&mut message, new_index, Vec::new());
        }
    }
    Ok(message)
}

/// Before version 10 a message had one pair of index lists. Java puts them in the compact
/// increment when that increment has files, and in the data increment otherwise.
fn route_index_files(
    message: &mut CommitMessage,
    new_index: Vec<IndexFileMeta>,
    deleted_index: Vec<IndexFileMeta>,
) {
    if has_compact_files(message) {
        message.compact_new_index_files = new_index;
        message.compact_deleted_index_files = deleted_index;
    } else {
        message.new_index_files = new_index;
        message.deleted_index_files = deleted_index;
    }
}

fn has_compact_files(message: &CommitMessage) -> bool {
    !(message.compact_before.is_empty()
        && message.compact_after.is_empty()
        && message.compact_changelog_files.is_empty())
}

fn read_optional_i32(input: &mut Input<'_>, field: &'static str) -> CodecResult<Option<i32>> {
    Ok(if input.read_bool(field)? {
        Some(input.read_i32(field)?)
    } else {
        None
    })
}

fn read_data_files(
    input: &mut Input<'_>,
    layouts: VersionLayouts,
    list: &'static str,
) -> CodecResult<Vec<DataFileMeta>> {
    let min_row = fixed_part_size(layouts.data_file.arity());
    read_rows(input, list, min_row, |row, base| {
        data_file::decode(row, base, layouts.data_file)
    })
}

fn read_index_files(
    input: &mut Input<'_>,
    layouts: VersionLayouts,
    list: &'static str,
) -> CodecResult<Vec<IndexFileMeta>> {
    let min_row = fixed_part_size(layouts.index_file.arity());
    read_rows(input, list, min_row, |row, base| {
        index_file::decode(row, base, layouts.index_file)
    })
}

/// Reads an `int` count, then each row as `int` length + bytes, like Java's
/// `ObjectSerializer.deserializeList`. Every row takes at least its length and `min_row`
/// bytes, so a count that can't fit is refused before anything is allocated.
fn read_rows<T>(
    input: &mut Input<'_>,
    list: &'static str,
    min_row: usize,
    decode_row: impl Fn(&[u8], usize) -> CodecResult<T>,
) -> CodecResult<Vec<T>> {
    let count = input.read_count(list, 4 + min_row)?;
    let mut rows = Vec::with_capacity(count);
    for i in 0..count {
        let decoded = input
            .read_sized("length")
            .and_then(|(row, base)| decode_row(row, base));
        rows.push(decoded.map_err(|e| e.at_index(i).within(list))?);
    }
    Ok(rows)
}

/// Appends one message body in `ctx`'s layouts.
pub(crate) fn encode(
    message: &CommitMessage,
    ctx: &EncodeContext<'_>,
    out: &mut Vec<u8>,
) -> CodecResult<()> {
    refuse_format_table_message(message)?;
    let partition: &[u8] = if message.partition.is_empty() {
        &EMPTY_SERIALIZED_ROW
    } else {
        check_serialized_row(&message.partition, "partition", 0).map_err(|e| {
            CodecError::in_field(
                CodecErrorKind::InvalidValue {
                    reason: format!("partition is not a serialized BinaryRow: {}", e.kind()),
                },
                "partition",
            )
        })?;
        &message.partition
    };
    out.extend_from_slice(&(partition.len() as i32).to_be_bytes());
    out.extend_from_slice(partition);
    out.extend_from_slice(&message.bucket.to_be_bytes());

    match ctx.layouts.message {
        MessageLayout::Split {
            has_check_from_snapshot,
        } => {
            if !has_check_from_snapshot && message.check_from_snapshot.is_some() {
                lossy(ctx, LossyField::CheckFromSnapshot, "check_from_snapshot")?;
            }
            write_optional_i32(out, message.total_buckets);
            let [data, compact] = data_file_lists(message);
            for (files, list) in data {
                write_data_files(out, ctx, files, list)?;
            }
            write_index_files(out, ctx, &message.new_index_files, "new_index_files")?;
            write_index_files(
                out,
                ctx,
                &message.deleted_index_files,
                "deleted_index_files",
            )?;
            for (files, list) in compact {
                write_data_files(out, ctx, files, list)?;
            }
            write_index_files(
                out,
                ctx,
                &message.compact_new_index_files,
                "compact_new_index_files",
            )?;
            write_index_files(
                out,
                ctx,
                &message.compact_deleted_index_files,
                "compact_deleted_index_files",
            )?;
            if has_check_from_snapshot {
                match message.check_from_snapshot {
                    Some(id) => {
                        out.push(1);
                        out.extend_from_slice(&id.to_be_bytes());
                    }
                    None => out.push(0),
                }
            }
        }
        MessageLayout::Routed {
            has_total_buckets,
            has_deleted_index_files,
        } => {
            if message.check_from_snapshot.is_some() {
                lossy(ctx, LossyField::CheckFromSnapshot, "check_from_snapshot")?;
            }
            if has_total_buckets {
                write_optional_i32(out, message.total_buckets);
            } else if message.total_buckets.is_some() {
                lossy(ctx, LossyField::TotalBuckets, "total_buckets")?;
            }
            let (new_index, deleted_index) = routed_index_files(message, ctx)?;
            if !has_deleted_index_files && !deleted_index.is_empty() {
                return Err(unrepresentable(
                    ctx,
                    if has_compact_files(message) {
                        "compact_deleted_index_files"
                    } else {
                        "deleted_index_files"
                    },
                    "it has no list of deleted index files",
                ));
            }
            for (files, list) in data_file_lists(message).into_iter().flatten() {
                write_data_files(out, ctx, files, list)?;
            }
            write_index_files(out, ctx, new_index, "new_index_files")?;
            if has_deleted_index_files {
                write_index_files(out, ctx, deleted_index, "deleted_index_files")?;
            }
        }
        MessageLayout::LegacyV2 => {
            unreachable!("the legacy version 2 layout is never chosen for writing")
        }
    }
    Ok(())
}

/// The one pair of index lists a pre-10 version carries, refusing messages whose index
/// files would land in the other increment when read back.
fn routed_index_files<'m>(
    message: &'m CommitMessage,
    ctx: &EncodeContext<'_>,
) -> CodecResult<(&'m [IndexFileMeta], &'m [IndexFileMeta])> {
    if has_compact_files(message) {
        for (list, name) in [
            (&message.new_index_files, "new_index_files"),
            (&message.deleted_index_files, "deleted_index_files"),
        ] {
            if !list.is_empty() {
                return Err(unrepresentable(
                    ctx,
                    name,
                    "it keeps one pair of index lists, which belongs to the compact increment when that has files",
                ));
            }
        }
        Ok((
            &message.compact_new_index_files,
            &message.compact_deleted_index_files,
        ))
    } else {
        for (list, name) in [
            (&message.compact_new_index_files, "compact_new_index_files"),
            (
                &message.compact_deleted_index_files,
                "compact_deleted_index_files",
            ),
        ] {
            if !list.is_empty() {
                return Err(unrepresentable(
                    ctx,
                    name,
                    "it keeps one pair of index lists, which belongs to the data increment when the compact increment has no files",
                ));
            }
        }
        Ok((&message.new_index_files, &message.deleted_index_files))
    }
}

fn unrepresentable(ctx: &EncodeContext<'_>, field: &'static str, why: &str) -> CodecError {
    CodecError::in_field(
        CodecErrorKind::Unrepresentable {
            reason: format!("version {} cannot carry {field}: {why}", ctx.version),
        },
        field,
    )
}

/// A Format Table message carries its file outside the lists (in a field the `paimon` crate
/// keeps private), and its own serializer refuses it. Only a message with every list empty
/// can be one, so only those pay for the check.
fn refuse_format_table_message(message: &CommitMessage) -> CodecResult<()> {
    let all_empty = message.new_files.is_empty()
        && message.deleted_files.is_empty()
        && message.new_changelog_files.is_empty()
        && message.new_index_files.is_empty()
        && message.deleted_index_files.is_empty()
        && !has_compact_files(message)
        && message.compact_new_index_files.is_empty()
        && message.compact_deleted_index_files.is_empty();
    if all_empty && matches!(message.serialize(), Err(paimon::Error::Unsupported { .. })) {
        return Err(CodecError::new(CodecErrorKind::FormatTableMessage));
    }
    Ok(())
}

/// The data increment's and the compact increment's data file lists, in wire order.
fn data_file_lists(message: &CommitMessage) -> [[(&[DataFileMeta], &'static str); 3]; 2] {
    [
        [
            (&message.new_files, "new_files"),
            (&message.deleted_files, "deleted_files"),
            (&message.new_changelog_files, "new_changelog_files"),
        ],
        [
            (&message.compact_before, "compact_before"),
            (&message.compact_after, "compact_after"),
            (&message.compact_changelog_files, "compact_changelog_files"),
        ],
    ]
}

fn write_optional_i32(out: &mut Vec<u8>, value: Option<i32>) {
    match value {
        Some(v) => {
            out.push(1);
            out.extend_from_slice(&v.to_be_bytes());
        }
        None => out.push(0),
    }
}

/// Writes an `int` count, then each row as `int` length + bytes, like Java's
/// `ObjectSerializer.serializeList`.
fn write_rows<T>(
    out: &mut Vec<u8>,
    items: &[T],
    list: &'static str,
    mut encode_row: impl FnMut(&T, &mut Vec<u8>) -> CodecResult<()>,
) -> CodecResult<()> {
    out.extend_from_slice(&(items.len() as i32).to_be_bytes());
    for (i, item) in items.iter().enumerate() {
        let length_at = out.len();
        out.extend_from_slice(&[0; 4]);
        encode_row(item, out).map_err(|e| e.at_index(i).within(list))?;
        let length = (out.len() - length_at - 4) as i32;
        out[length_at..length_at + 4].copy_from_slice(&length.to_be_bytes());
    }
    Ok(())
}

fn write_data_files(
    out: &mut Vec<u8>,
    ctx: &EncodeContext<'_>,
    files: &[DataFileMeta],
    list: &'static str,
) -> CodecResult<()> {
    write_rows(out, files, list, |file, out| {
        data_file::encode(file, ctx, out)
    })
}

fn write_index_files(
    out: &mut Vec<u8>,
    ctx: &EncodeContext<'_>,
    files: &[IndexFileMeta],
    list: &'static str,
) -> CodecResult<()> {
    write_rows(out, files, list, |file, out| {
        index_file::encode(file, ctx, out)
    })
}
