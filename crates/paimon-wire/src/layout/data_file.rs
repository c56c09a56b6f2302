//! `DataFileMeta` rows, every historical layout.
//!
//! Each layout Java ever wrote is a prefix of today's 21-field `DataFileMeta.SCHEMA`: a
//! release added fields at the end. So one reader and one writer serve every layout, with
//! the layout's field count deciding where they stop. Fields a layout lacks decode as
//! `None`, the way Java's legacy serializers pass `null`; writing a layout that lacks a field
//! the message sets is refused unless the caller lets that field go.

use chrono::{DateTime, Utc};
use paimon::spec::DataFileMeta;

use super::{check_serialized_row, lossy, write_long_array, EncodeContext, LossyField};
use crate::binary::array::{write_strings, ArrayBuilder};
use crate::binary::row::{RowBuilder, RowView};
use crate::error::CodecResult;
use crate::view::{validated, LongsView, StatsView, StringsView};

/// One historical `DataFileMeta` row layout, named after the Java class that reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DataFileLayout {
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

/// A `DataFileMeta` row read in place from a payload: every accessor reads its field from the
/// payload's bytes, nothing is copied until [`DataFileView::to_meta`].
///
/// A view exists only for a row that its parser (`DataFileView::parse`) checked completely (every
/// field an accessor reads is in bounds, well-formed UTF-8 where it is a string, `NOT NULL`
/// where the schema says so), so the accessors cannot fail.
#[derive(Clone, Copy)]
pub struct DataFileView<'a> {
    row: RowView<'a>,
    arity: usize,
}

impl<'a> DataFileView<'a> {
    /// Checks one `DataFileMeta` row of `layout` (without its length prefix) found at payload
    /// offset `base`, in the order the owned decoder always checked it, so a bad row fails
    /// with the same error either way. The `check_*` steps run here only; the accessors read
    /// what they checked without checking it again (the owned decoder reads every field once
    /// more through them).
    pub(crate) fn parse(data: &'a [u8], base: usize, layout: DataFileLayout) -> CodecResult<Self> {
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
        let view = Self { row, arity };
        view.check_key(MIN_KEY, "_MIN_KEY")?;
        view.check_key(MAX_KEY, "_MAX_KEY")?;
        view.check_creation_time()?;
        view.try_file_source()?;
        view.try_file_name()?;
        view.check_stats(KEY_STATS, "_KEY_STATS")?;
        view.check_stats(VALUE_STATS, "_VALUE_STATS")?;
        view.check_strings(EXTRA_FILES, "_EXTRA_FILES")?;
        view.try_embedded_index()?;
        if view.has(VALUE_STATS_COLS) {
            view.check_strings(VALUE_STATS_COLS, "_VALUE_STATS_COLS")?;
        }
        view.try_external_path()?;
        if view.has(WRITE_COLS) {
            view.check_strings(WRITE_COLS, "_WRITE_COLS")?;
        }
        view.check_write_cols_sequences()?;
        Ok(view)
    }

    /// Views a row that `parse` already accepted, without checking its fields again: what a
    /// list's iterator yields. `None` (and a failed debug assertion) only if that invariant
    /// is broken.
    pub(crate) fn checked(data: &'a [u8], base: usize, layout: DataFileLayout) -> Option<Self> {
        let row = RowView::new(data, layout.arity(), base, "DataFileMeta");
        debug_assert!(row.is_ok(), "a checked row no longer fits");
        Some(Self {
            row: row.ok()?,
            arity: layout.arity(),
        })
    }

    /// Whether the layout has field `pos` and it is set.
    #[inline]
    fn has(&self, pos: usize) -> bool {
        pos < self.arity && !self.row.is_null(pos)
    }

    fn check_key(&self, pos: usize, field: &'static str) -> CodecResult<()> {
        let key = self.row.bytes(pos, field)?;
        check_serialized_row(key, field, self.row.offset_of(pos))
    }

    /// What `try_creation_time` checks, without building the time in the common case: every
    /// instant from 1900 up to the year 10000 is inside chrono's range.
    fn check_creation_time(&self) -> CodecResult<()> {
        const YEAR_1900_MILLIS: i64 = -2_208_988_800_000;
        const YEAR_10000_MILLIS: i64 = 253_402_300_800_000;
        if !self.has(CREATION_TIME)
            || (YEAR_1900_MILLIS..YEAR_10000_MILLIS).contains(&self.row.long(CREATION_TIME))
        {
            return Ok(());
        }
        self.try_creation_time().map(drop)
    }

    fn try_creation_time(&self) -> CodecResult<Option<DateTime<Utc>>> {
        if !self.has(CREATION_TIME) {
            return Ok(None);
        }
        let millis = self.row.long(CREATION_TIME);
        DateTime::from_timestamp_millis(millis)
            .map(Some)
            .ok_or_else(|| {
                crate::binary::invalid(
                    "_CREATION_TIME",
                    self.row.offset_of(CREATION_TIME),
                    format!("{millis} ms since the epoch is outside the supported date range"),
                )
            })
    }

    fn try_file_source(&self) -> CodecResult<Option<i32>> {
        if !self.has(FILE_SOURCE) {
            return Ok(None);
        }
        decode_file_source(self.row.byte(FILE_SOURCE), self.row.offset_of(FILE_SOURCE)).map(Some)
    }

    fn try_file_name(&self) -> CodecResult<&'a str> {
        self.row.string(FILE_NAME, "_FILE_NAME")
    }

    /// `SimpleStats.SCHEMA`: min values, max values (serialized `BinaryRow`s), null counts;
    /// all three set.
    fn check_stats(&self, pos: usize, field: &'static str) -> CodecResult<()> {
        let row = self.row.row(pos, 3, field)?;
        row.require(0, field)?;
        row.require(1, field)?;
        row.require(2, field)?;
        let min_values = row.bytes(0, "_MIN_VALUES").map_err(|e| e.within(field))?;
        check_serialized_row(min_values, "_MIN_VALUES", row.offset_of(0))
            .map_err(|e| e.within(field))?;
        let max_values = row.bytes(1, "_MAX_VALUES").map_err(|e| e.within(field))?;
        check_serialized_row(max_values, "_MAX_VALUES", row.offset_of(1))
            .map_err(|e| e.within(field))?;
        row.array(2, 8, "_NULL_COUNTS")
            .map_err(|e| e.within(field))
            .map(drop)
    }

    /// The statistics `check_stats` accepted.
    fn read_stats(&self, pos: usize, field: &'static str) -> CodecResult<StatsView<'a>> {
        let row = self.row.row(pos, 3, field)?;
        Ok(StatsView {
            min_values: row.bytes(0, field)?,
            max_values: row.bytes(1, field)?,
            null_counts: row.array(2, 8, field)?,
        })
    }

    fn check_strings(&self, pos: usize, field: &'static str) -> CodecResult<()> {
        StringsView::parse(self.row.array(pos, 8, field)?, field).map(drop)
    }

    /// The string array `check_strings` accepted, if the layout has it and it is set.
    fn read_strings(&self, pos: usize, field: &'static str) -> Option<StringsView<'a>> {
        self.has(pos).then(|| {
            validated(
                self.row
                    .array(pos, 8, field)
                    .map(|array| StringsView::checked(array, field)),
            )
        })
    }

    fn try_embedded_index(&self) -> CodecResult<Option<&'a [u8]>> {
        if self.has(EMBEDDED_FILE_INDEX) {
            self.row
                .bytes(EMBEDDED_FILE_INDEX, "_EMBEDDED_FILE_INDEX")
                .map(Some)
        } else {
            Ok(None)
        }
    }

    fn try_external_path(&self) -> CodecResult<Option<&'a str>> {
        if self.has(EXTERNAL_PATH) {
            self.row.string(EXTERNAL_PATH, "_EXTERNAL_PATH").map(Some)
        } else {
            Ok(None)
        }
    }

    fn check_write_cols_sequences(&self) -> CodecResult<()> {
        if !self.has(WRITE_COLS_SEQUENCES) {
            return Ok(());
        }
        let array = self
            .row
            .array(WRITE_COLS_SEQUENCES, 8, "_WRITE_COLS_SEQUENCES")?;
        for i in 0..array.len() {
            array.require(i, "_WRITE_COLS_SEQUENCES")?;
        }
        Ok(())
    }

    /// The data file's name (`_FILE_NAME`).
    pub fn file_name(&self) -> &'a str {
        validated(self.try_file_name())
    }

    /// The file's size in bytes (`_FILE_SIZE`).
    pub fn file_size(&self) -> i64 {
        self.row.long(FILE_SIZE)
    }

    /// The file's row count (`_ROW_COUNT`).
    pub fn row_count(&self) -> i64 {
        self.row.long(ROW_COUNT)
    }

    /// The smallest key, a serialized `BinaryRow` (`_MIN_KEY`).
    pub fn min_key(&self) -> &'a [u8] {
        validated(self.row.bytes(MIN_KEY, "_MIN_KEY"))
    }

    /// The largest key, a serialized `BinaryRow` (`_MAX_KEY`).
    pub fn max_key(&self) -> &'a [u8] {
        validated(self.row.bytes(MAX_KEY, "_MAX_KEY"))
    }

    /// Statistics of the key columns (`_KEY_STATS`).
    pub fn key_stats(&self) -> StatsView<'a> {
        validated(self.read_stats(KEY_STATS, "_KEY_STATS"))
    }

    /// Statistics of the value columns (`_VALUE_STATS`).
    pub fn value_stats(&self) -> StatsView<'a> {
        validated(self.read_stats(VALUE_STATS, "_VALUE_STATS"))
    }

    /// The smallest sequence number of the file's rows.
    pub fn min_sequence_number(&self) -> i64 {
        self.row.long(MIN_SEQUENCE_NUMBER)
    }

    /// The largest sequence number of the file's rows.
    pub fn max_sequence_number(&self) -> i64 {
        self.row.long(MAX_SEQUENCE_NUMBER)
    }

    /// The id of the schema the file was written with.
    pub fn schema_id(&self) -> i64 {
        self.row.long(SCHEMA_ID)
    }

    /// The LSM level (0 for new files).
    pub fn level(&self) -> i32 {
        self.row.int(LEVEL)
    }

    /// Names of the file's extra files (`_EXTRA_FILES`).
    pub fn extra_files(&self) -> StringsView<'a> {
        // `_EXTRA_FILES` is NOT NULL in every layout: `parse` required it.
        self.read_strings(EXTRA_FILES, "_EXTRA_FILES")
            .unwrap_or_default()
    }

    /// When the file was written; `None` if the row does not say.
    pub fn creation_time(&self) -> Option<DateTime<Utc>> {
        validated(self.try_creation_time())
    }

    /// Rows the file deletes; `None` in layouts before Paimon 0.8 or when unset.
    pub fn delete_row_count(&self) -> Option<i64> {
        self.has(DELETE_ROW_COUNT)
            .then(|| self.row.long(DELETE_ROW_COUNT))
    }

    /// The embedded file index bytes, if any.
    pub fn embedded_index(&self) -> Option<&'a [u8]> {
        validated(self.try_embedded_index())
    }

    /// 0 (APPEND) or 1 (COMPACT); `None` if the layout or the row has none.
    pub fn file_source(&self) -> Option<i32> {
        validated(self.try_file_source())
    }

    /// The columns the value statistics cover, when not all of them.
    pub fn value_stats_cols(&self) -> Option<StringsView<'a>> {
        self.read_strings(VALUE_STATS_COLS, "_VALUE_STATS_COLS")
    }

    /// Where the file lives when outside the table's directory.
    pub fn external_path(&self) -> Option<&'a str> {
        validated(self.try_external_path())
    }

    /// The first row id of a data-evolution file.
    pub fn first_row_id(&self) -> Option<i64> {
        self.has(FIRST_ROW_ID).then(|| self.row.long(FIRST_ROW_ID))
    }

    /// The columns a partial-column file wrote.
    pub fn write_cols(&self) -> Option<StringsView<'a>> {
        self.read_strings(WRITE_COLS, "_WRITE_COLS")
    }

    /// The largest sequence number of each written column (`_WRITE_COLS_SEQUENCES`).
    pub fn column_max_sequence_numbers(&self) -> Option<LongsView<'a>> {
        self.has(WRITE_COLS_SEQUENCES).then(|| {
            let array = self
                .row
                .array(WRITE_COLS_SEQUENCES, 8, "_WRITE_COLS_SEQUENCES")
                .map(|array| LongsView { array });
            validated(array)
        })
    }

    /// The row's bytes as they travel (without the length prefix). Two rows of one layout
    /// with equal bytes hold equal metadata.
    pub(crate) fn row_bytes(&self) -> &'a [u8] {
        self.row.data()
    }

    /// The owned `DataFileMeta`: the only place this row's bytes are copied.
    pub fn to_meta(&self) -> DataFileMeta {
        DataFileMeta {
            file_name: self.file_name().to_owned(),
            file_size: self.file_size(),
            row_count: self.row_count(),
            min_key: self.min_key().to_vec(),
            max_key: self.max_key().to_vec(),
            key_stats: self.key_stats().to_stats(),
            value_stats: self.value_stats().to_stats(),
            min_sequence_number: self.min_sequence_number(),
            max_sequence_number: self.max_sequence_number(),
            schema_id: self.schema_id(),
            level: self.level(),
            extra_files: self.extra_files().to_vec(),
            creation_time: self.creation_time(),
            delete_row_count: self.delete_row_count(),
            embedded_index: self.embedded_index().map(<[u8]>::to_vec),
            file_source: self.file_source(),
            value_stats_cols: self.value_stats_cols().map(|cols| cols.to_vec()),
            external_path: self.external_path().map(str::to_owned),
            first_row_id: self.first_row_id(),
            write_cols: self.write_cols().map(|cols| cols.to_vec()),
            column_max_sequence_numbers: self
                .column_max_sequence_numbers()
                .map(|values| values.iter().collect()),
        }
    }
}

impl std::fmt::Debug for DataFileView<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DataFileView")
            .field("file_name", &self.file_name())
            .field("file_size", &self.file_size())
            .field("row_count", &self.row_count())
            .field("level", &self.level())
            .field("min_sequence_number", &self.min_sequence_number())
            .field("max_sequence_number", &self.max_sequence_number())
            .finish_non_exhaustive()
    }
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
