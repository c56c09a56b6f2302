//! `DataFileMeta` rows, every historical layout.
//!
//! Each layout Java ever wrote is a prefix of today's 21-field `DataFileMeta.SCHEMA`: a
//! release added fields at the end. So one reader and one writer serve every layout, with
//! the layout's field count deciding where they stop. Fields a layout lacks decode as
//! `None`, the way Java's legacy serializers pass `null`; writing a layout that lacks a field
//! the message sets is refused unless the caller lets that field go.

use chrono::DateTime;
use paimon::spec::DataFileMeta;

use super::{
    check_serialized_row, lossy, read_long_array, write_long_array, EncodeContext, LossyField,
};
use crate::binary::array::{read_strings, write_strings, ArrayBuilder};
use crate::binary::row::{RowBuilder, RowView};
use crate::error::CodecResult;

/// One historical `DataFileMeta` row layout, named after the Java class that reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DataFileLayout {
    /// `CommitMessageLegacyV2Serializer`'s 13 fields (Paimon 0.5–0.7).
    LegacyV2,
    /// `DataFileMeta08Serializer`: + delete row count, embedded index (15 fields).
    Meta08,
    /// `DataFileMeta09Serializer`: + file source (16).
    Meta09,
    /// `DataFileMeta10LegacySerializer`: + value stats columns (17).
    Meta10Legacy,
    /// `DataFileMeta12LegacySerializer`: + external path (18).
    Meta12Legacy,
    /// `DataFileMetaFirstRowIdLegacySerializer`: + first row id (19).
    FirstRowIdLegacy,
    /// `DataFileMetaWriteColsLegacySerializer`: + write columns (20).
    WriteColsLegacy,
    /// `DataFileMetaSerializer`: + write column sequences (21).
    Current,
}

impl DataFileLayout {
    /// How many fields of `DataFileMeta.SCHEMA` this layout holds.
    pub(crate) const fn arity(self) -> usize {
        match self {
            Self::LegacyV2 => 13,
            Self::Meta08 => 15,
            Self::Meta09 => 16,
            Self::Meta10Legacy => 17,
            Self::Meta12Legacy => 18,
            Self::FirstRowIdLegacy => 19,
            Self::WriteColsLegacy => 20,
            Self::Current => 21,
        }
    }
}

// Field positions in `DataFileMeta.SCHEMA`.
const FILE_NAME: usize = 0;
const FILE_SIZE: usize = 1;
const ROW_COUNT: usize = 2;
const MIN_KEY: usize = 3;
const MAX_KEY: usize = 4;
const KEY_STATS: usize = 5;
const VALUE_STATS: usize = 6;
const MIN_SEQUENCE_NUMBER: usize = 7;
const MAX_SEQUENCE_NUMBER: usize = 8;
const SCHEMA_ID: usize = 9;
const LEVEL: usize = 10;
const EXTRA_FILES: usize = 11;
const CREATION_TIME: usize = 12;
const DELETE_ROW_COUNT: usize = 13;
const EMBEDDED_FILE_INDEX: usize = 14;
const FILE_SOURCE: usize = 15;
const VALUE_STATS_COLS: usize = 16;
const EXTERNAL_PATH: usize = 17;
const FIRST_ROW_ID: usize = 18;
const WRITE_COLS: usize = 19;
const WRITE_COLS_SEQUENCES: usize = 20;

/// Decodes one `DataFileMeta` row of `layout` (without its length prefix) found at payload
/// offset `base`.
pub(crate) fn decode(
    data: &[u8],
    base: usize,
    layout: DataFileLayout,
) -> CodecResult<DataFileMeta> {
    let arity = layout.arity();
    let row = RowView::new(data, arity, base, "DataFileMeta")?;
    for (pos, name) in [
        (FILE_NAME, "_FILE_NAME"),
        (MIN_KEY, "_MIN_KEY"),
        (MAX_KEY, "_MAX_KEY"),
        (KEY_STATS, "_KEY_STATS"),
        (VALUE_STATS, "_VALUE_STATS"),
        (EXTRA_FILES, "_EXTRA_FILES"),
    ] {
        row.require(pos, name)?;
    }
    let has = |pos: usize| pos < arity && !row.is_null(pos);

    let min_key = row.bytes(MIN_KEY, "_MIN_KEY")?;
    check_serialized_row(min_key, "_MIN_KEY", row.offset_of(MIN_KEY))?;
    let max_key = row.bytes(MAX_KEY, "_MAX_KEY")?;
    check_serialized_row(max_key, "_MAX_KEY", row.offset_of(MAX_KEY))?;

    let creation_time = if has(CREATION_TIME) {
        let millis = row.long(CREATION_TIME);
        Some(DateTime::from_timestamp_millis(millis).ok_or_else(|| {
            crate::binary::invalid(
                "_CREATION_TIME",
                row.offset_of(CREATION_TIME),
                format!("{millis} ms since the epoch is outside the supported date range"),
            )
        })?)
    } else {
        None
    };
    let file_source = if has(FILE_SOURCE) {
        Some(decode_file_source(
            row.byte(FILE_SOURCE),
            row.offset_of(FILE_SOURCE),
        )?)
    } else {
        None
    };

    Ok(DataFileMeta {
        file_name: row.string(FILE_NAME, "_FILE_NAME")?.to_owned(),
        file_size: row.long(FILE_SIZE),
        row_count: row.long(ROW_COUNT),
        min_key: min_key.to_vec(),
        max_key: max_key.to_vec(),
        key_stats: decode_stats(row.row(KEY_STATS, 3, "_KEY_STATS")?, "_KEY_STATS")?,
        value_stats: decode_stats(row.row(VALUE_STATS, 3, "_VALUE_STATS")?, "_VALUE_STATS")?,
        min_sequence_number: row.long(MIN_SEQUENCE_NUMBER),
        max_sequence_number: row.long(MAX_SEQUENCE_NUMBER),
        schema_id: row.long(SCHEMA_ID),
        level: row.int(LEVEL),
        extra_files: read_strings(row.array(EXTRA_FILES, 8, "_EXTRA_FILES")?, "_EXTRA_FILES")?,
        creation_time,
        delete_row_count: has(DELETE_ROW_COUNT).then(|| row.long(DELETE_ROW_COUNT)),
        embedded_index: if has(EMBEDDED_FILE_INDEX) {
            Some(
                row.bytes(EMBEDDED_FILE_INDEX, "_EMBEDDED_FILE_INDEX")?
                    .to_vec(),
            )
        } else {
            None
        },
        file_source,
        value_stats_cols: if has(VALUE_STATS_COLS) {
            let array = row.array(VALUE_STATS_COLS, 8, "_VALUE_STATS_COLS")?;
            Some(read_strings(array, "_VALUE_STATS_COLS")?)
        } else {
            None
        },
        external_path: if has(EXTERNAL_PATH) {
            Some(row.string(EXTERNAL_PATH, "_EXTERNAL_PATH")?.to_owned())
        } else {
            None
        },
        first_row_id: has(FIRST_ROW_ID).then(|| row.long(FIRST_ROW_ID)),
        write_cols: if has(WRITE_COLS) {
            Some(read_strings(
                row.array(WRITE_COLS, 8, "_WRITE_COLS")?,
                "_WRITE_COLS",
            )?)
        } else {
            None
        },
        column_max_sequence_numbers: if has(WRITE_COLS_SEQUENCES) {
            let array = row.array(WRITE_COLS_SEQUENCES, 8, "_WRITE_COLS_SEQUENCES")?;
            Some(read_long_array(array, "_WRITE_COLS_SEQUENCES")?)
        } else {
            None
        },
    })
}

/// Java's `FileSource.fromByteValue`: 0 is APPEND, 1 is COMPACT, anything else fails.
fn decode_file_source(value: i8, offset: usize) -> CodecResult<i32> {
    match value {
        0 | 1 => Ok(value as i32),
        _ => Err(crate::binary::invalid(
            "_FILE_SOURCE",
            offset,
            format!("file source byte {value} is neither APPEND (0) nor COMPACT (1)"),
        )),
    }
}

/// `SimpleStats.SCHEMA`: min values, max values (serialized `BinaryRow`s), null counts.
fn decode_stats<S: serde::de::DeserializeOwned>(
    row: RowView<'_>,
    field: &'static str,
) -> CodecResult<S> {
    row.require(0, field)?;
    row.require(1, field)?;
    row.require(2, field)?;
    let min_values = row.bytes(0, "_MIN_VALUES").map_err(|e| e.within(field))?;
    check_serialized_row(min_values, "_MIN_VALUES", row.offset_of(0))
        .map_err(|e| e.within(field))?;
    let max_values = row.bytes(1, "_MAX_VALUES").map_err(|e| e.within(field))?;
    check_serialized_row(max_values, "_MAX_VALUES", row.offset_of(1))
        .map_err(|e| e.within(field))?;
    let counts = row
        .array(2, 8, "_NULL_COUNTS")
        .map_err(|e| e.within(field))?;
    Ok(crate::stats::table_stats_from_counts(
        min_values.to_vec(),
        max_values.to_vec(),
        counts.nullable_longs(),
    ))
}

/// Appends one `DataFileMeta` row of `ctx`'s data file layout (without length prefix).
pub(crate) fn encode(
    meta: &DataFileMeta,
    ctx: &EncodeContext,
    out: &mut Vec<u8>,
) -> CodecResult<()> {
    let arity = ctx.layouts.data_file.arity();
    // Refuse before writing anything: a field the layout can't hold must be let go by name.
    let beyond = |pos: usize| pos >= arity;
    if beyond(FILE_SOURCE) && meta.file_source.is_some() {
        lossy(ctx, LossyField::FileSource, "file_source")?;
    }
    if beyond(VALUE_STATS_COLS) && meta.value_stats_cols.is_some() {
        lossy(ctx, LossyField::ValueStatsCols, "value_stats_cols")?;
    }
    if beyond(EXTERNAL_PATH) && meta.external_path.is_some() {
        lossy(ctx, LossyField::ExternalPath, "external_path")?;
    }
    if beyond(FIRST_ROW_ID) && meta.first_row_id.is_some() {
        lossy(ctx, LossyField::FirstRowId, "first_row_id")?;
    }
    if beyond(WRITE_COLS) && meta.write_cols.is_some() {
        lossy(ctx, LossyField::WriteCols, "write_cols")?;
    }
    if beyond(WRITE_COLS_SEQUENCES) && meta.column_max_sequence_numbers.is_some() {
        lossy(
            ctx,
            LossyField::ColumnMaxSequenceNumbers,
            "column_max_sequence_numbers",
        )?;
    }
    if beyond(DELETE_ROW_COUNT) && meta.delete_row_count.is_some() {
        lossy(ctx, LossyField::DeleteRowCount, "delete_row_count")?;
    }
    if beyond(EMBEDDED_FILE_INDEX) && meta.embedded_index.is_some() {
        lossy(ctx, LossyField::EmbeddedIndex, "embedded_index")?;
    }
    let file_source = match meta.file_source {
        Some(v @ (0 | 1)) => Some(v as i8),
        Some(v) => {
            return Err(crate::error::CodecError::in_field(
                crate::error::CodecErrorKind::InvalidValue {
                    reason: format!("file source {v} is neither APPEND (0) nor COMPACT (1)"),
                },
                "file_source",
            ))
        }
        None => None,
    };

    let row = RowBuilder::begin(out, arity);
    row.bytes(out, FILE_NAME, meta.file_name.as_bytes());
    row.long(out, FILE_SIZE, meta.file_size);
    row.long(out, ROW_COUNT, meta.row_count);
    row.bytes(out, MIN_KEY, &meta.min_key);
    row.bytes(out, MAX_KEY, &meta.max_key);
    row.nested(out, KEY_STATS, |out| {
        let s = &meta.key_stats;
        encode_stats(s.min_values(), s.max_values(), s.null_counts(), out);
    });
    row.nested(out, VALUE_STATS, |out| {
        let s = &meta.value_stats;
        encode_stats(s.min_values(), s.max_values(), s.null_counts(), out);
    });
    row.long(out, MIN_SEQUENCE_NUMBER, meta.min_sequence_number);
    row.long(out, MAX_SEQUENCE_NUMBER, meta.max_sequence_number);
    row.long(out, SCHEMA_ID, meta.schema_id);
    row.int(out, LEVEL, meta.level);
    row.nested(out, EXTRA_FILES, |out| {
        write_strings(out, &meta.extra_files);
    });
    row.opt_long(
        out,
        CREATION_TIME,
        meta.creation_time.map(|t| t.timestamp_millis()),
    );
    if arity > DELETE_ROW_COUNT {
        row.opt_long(out, DELETE_ROW_COUNT, meta.delete_row_count);
        row.opt_bytes(out, EMBEDDED_FILE_INDEX, meta.embedded_index.as_deref());
    }
    if arity > FILE_SOURCE {
        match file_source {
            Some(v) => row.byte(out, FILE_SOURCE, v),
            None => row.set_null(out, FILE_SOURCE),
        }
    }
    if arity > VALUE_STATS_COLS {
        opt_strings(
            &row,
            out,
            VALUE_STATS_COLS,
            meta.value_stats_cols.as_deref(),
        );
    }
    if arity > EXTERNAL_PATH {
        row.opt_bytes(
            out,
            EXTERNAL_PATH,
            meta.external_path.as_deref().map(str::as_bytes),
        );
    }
    if arity > FIRST_ROW_ID {
        row.opt_long(out, FIRST_ROW_ID, meta.first_row_id);
    }
    if arity > WRITE_COLS {
        opt_strings(&row, out, WRITE_COLS, meta.write_cols.as_deref());
    }
    if arity > WRITE_COLS_SEQUENCES {
        match &meta.column_max_sequence_numbers {
            Some(values) => row.nested(out, WRITE_COLS_SEQUENCES, |out| {
                write_long_array(out, values)
            }),
            None => row.set_null(out, WRITE_COLS_SEQUENCES),
        }
    }
    Ok(())
}

fn opt_strings(row: &RowBuilder, out: &mut Vec<u8>, pos: usize, values: Option<&[String]>) {
    match values {
        Some(values) => row.nested(out, pos, |out| write_strings(out, values)),
        None => row.set_null(out, pos),
    }
}

/// `SimpleStats.toRow`: min and max values as serialized rows, null counts as
/// `ARRAY<BIGINT>`.
fn encode_stats(min_values: &[u8], max_values: &[u8], counts: &[Option<i64>], out: &mut Vec<u8>) {
    let row = RowBuilder::begin(out, 3);
    row.bytes(out, 0, min_values);
    row.bytes(out, 1, max_values);
    row.nested(out, 2, |out| {
        let array = ArrayBuilder::begin(out, counts.len(), 8);
        for (i, count) in counts.iter().enumerate() {
            match count {
                Some(v) => array.long(out, i, *v),
                None => array.set_null(out, i),
            }
        }
    });
}
