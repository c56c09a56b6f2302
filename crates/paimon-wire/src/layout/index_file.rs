//! `IndexFileMeta` rows, every historical layout.
//!
//! Like data files, each layout is a prefix of today's 7-field `IndexFileMeta.SCHEMA`, with
//! two nested rows that grew too: a deletion-vector range gained `_CARDINALITY` (V2) and the
//! global index gained `_SOURCE_META` (current).

use indexmap::IndexMap;
use paimon::spec::{DeletionVectorMeta, GlobalIndexMeta, IndexFileMeta};

use super::{lossy, EncodeContext, LossyField};
use crate::binary::array::{ArrayBuilder, ArrayView};
use crate::binary::row::{RowBuilder, RowView};
use crate::error::CodecResult;
use crate::view::validated;

/// One historical `IndexFileMeta` row layout, named after the Java class that reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndexFileLayout {
    /// `CommitMessageLegacyV2Serializer`'s 4 fields (Paimon 0.5–0.7).
    LegacyV2,
    /// `IndexFileMetaV1Deserializer`: + deletion-vector ranges of 3 fields (versions 1–4).
    V1,
    /// `IndexFileMetaV2Deserializer`: ranges gain a cardinality (versions 5–8).
    V2,
    /// `IndexFileMetaV3Deserializer`: + external path (versions 9–10).
    V3,
    /// `IndexFileMetaV4Deserializer`: + global index of 5 fields (version 11).
    V4,
    /// `IndexFileMetaSerializer`: the global index gains source meta (versions 12+).
    Current,
}

impl IndexFileLayout {
    pub(crate) const fn arity(self) -> usize {
        match self {
            Self::LegacyV2 => 4,
            Self::V1 | Self::V2 => 5,
            Self::V3 => 6,
            Self::V4 | Self::Current => 7,
        }
    }

    const fn range_arity(self) -> usize {
        match self {
            Self::LegacyV2 | Self::V1 => 3,
            _ => 4,
        }
    }

    const fn global_index_arity(self) -> usize {
        match self {
            Self::Current => 6,
            _ => 5,
        }
    }
}

const INDEX_TYPE: usize = 0;
const FILE_NAME: usize = 1;
const FILE_SIZE: usize = 2;
const ROW_COUNT: usize = 3;
const DELETION_VECTORS_RANGES: usize = 4;
const EXTERNAL_PATH: usize = 5;
const GLOBAL_INDEX: usize = 6;

// Deletion-vector range fields.
const RANGE_FILE_NAME: usize = 0;
const RANGE_OFFSET: usize = 1;
const RANGE_LENGTH: usize = 2;
const RANGE_CARDINALITY: usize = 3;

// Global index fields.
const ROW_RANGE_START: usize = 0;
const ROW_RANGE_END: usize = 1;
const INDEX_FIELD_ID: usize = 2;
const EXTRA_FIELD_IDS: usize = 3;
const INDEX_META: usize = 4;
const SOURCE_META: usize = 5;

/// An `IndexFileMeta` row read in place from a payload. Like [`crate::view::DataFileView`],
/// it exists only for a row that was checked completely, so its accessors cannot fail.
#[derive(Clone, Copy)]
pub struct IndexFileView<'a> {
    row: RowView<'a>,
    layout: IndexFileLayout,
}

impl<'a> IndexFileView<'a> {
    /// Checks one `IndexFileMeta` row of `layout` found at payload offset `base`, in the
    /// order the owned decoder always checked it.
    pub(crate) fn parse(data: &'a [u8], base: usize, layout: IndexFileLayout) -> CodecResult<Self> {
        let row = RowView::new(data, layout.arity(), base, "IndexFileMeta")?;
        row.require(INDEX_TYPE, "_INDEX_TYPE")?;
        row.require(FILE_NAME, "_FILE_NAME")?;
        let view = Self { row, layout };
        if let Some(ranges) = view.try_ranges_array()? {
            check_ranges(ranges, layout.range_arity())?;
        }
        view.try_global_index()?;
        view.try_index_type()?;
        view.try_file_name()?;
        view.try_external_path()?;
        Ok(view)
    }

    /// Views a row that `parse` already accepted, without checking its fields again: what a
    /// list's iterator yields. `None` (and a failed debug assertion) only if that invariant
    /// is broken.
    pub(crate) fn checked(data: &'a [u8], base: usize, layout: IndexFileLayout) -> Option<Self> {
        let row = RowView::new(data, layout.arity(), base, "IndexFileMeta");
        debug_assert!(row.is_ok(), "a checked row no longer fits");
        Some(Self {
            row: row.ok()?,
            layout,
        })
    }

    #[inline]
    fn has(&self, pos: usize) -> bool {
        pos < self.layout.arity() && !self.row.is_null(pos)
    }

    fn try_index_type(&self) -> CodecResult<&'a str> {
        self.row.string(INDEX_TYPE, "_INDEX_TYPE")
    }

    fn try_file_name(&self) -> CodecResult<&'a str> {
        self.row.string(FILE_NAME, "_FILE_NAME")
    }

    fn try_external_path(&self) -> CodecResult<Option<&'a str>> {
        if self.has(EXTERNAL_PATH) {
            self.row.string(EXTERNAL_PATH, "_EXTERNAL_PATH").map(Some)
        } else {
            Ok(None)
        }
    }

    fn try_ranges_array(&self) -> CodecResult<Option<ArrayView<'a>>> {
        if self.has(DELETION_VECTORS_RANGES) {
            self.row
                .array(DELETION_VECTORS_RANGES, 8, "_DELETIONS_VECTORS_RANGES")
                .map(Some)
        } else {
            Ok(None)
        }
    }

    fn try_global_index(&self) -> CodecResult<Option<GlobalIndexView<'a>>> {
        if !self.has(GLOBAL_INDEX) {
            return Ok(None);
        }
        let arity = self.layout.global_index_arity();
        let row = self.row.row(GLOBAL_INDEX, arity, "_GLOBAL_INDEX")?;
        GlobalIndexView::parse(row, arity)
            .map(Some)
            .map_err(|e| e.within("_GLOBAL_INDEX"))
    }

    /// The index type, e.g. `DELETION_VECTORS` or `HASH`.
    pub fn index_type(&self) -> &'a str {
        validated(self.try_index_type())
    }

    /// The index file's name.
    pub fn file_name(&self) -> &'a str {
        validated(self.try_file_name())
    }

    /// The index file's size in bytes.
    pub fn file_size(&self) -> i64 {
        self.row.long(FILE_SIZE)
    }

    /// The index file's row count.
    pub fn row_count(&self) -> i64 {
        self.row.long(ROW_COUNT)
    }

    /// The deletion-vector ranges, one per data file, in payload order (a name repeated in
    /// the payload appears twice here; [`IndexFileView::to_meta`] keeps Java's map semantics).
    pub fn deletion_vector_ranges(
        &self,
    ) -> Option<impl ExactSizeIterator<Item = DeletionVectorRange<'a>> + 'a> {
        let array = validated(self.try_ranges_array())?;
        let range_arity = self.layout.range_arity();
        Some((0..array.len()).map(move |i| validated(read_range(array, i, range_arity))))
    }

    /// Where the index file lives when outside the table's directory.
    pub fn external_path(&self) -> Option<&'a str> {
        validated(self.try_external_path())
    }

    /// The global index entry, if the file is one.
    pub fn global_index(&self) -> Option<GlobalIndexView<'a>> {
        validated(self.try_global_index())
    }

    /// The row's bytes as they travel (without the length prefix). Two rows of one layout
    /// with equal bytes hold equal metadata.
    pub(crate) fn row_bytes(&self) -> &'a [u8] {
        self.row.data()
    }

    /// The owned `IndexFileMeta`: the only place this row's bytes are copied.
    pub fn to_meta(&self) -> IndexFileMeta {
        IndexFileMeta {
            index_type: self.index_type().to_owned(),
            file_name: self.file_name().to_owned(),
            file_size: self.file_size(),
            row_count: self.row_count(),
            deletion_vectors_ranges: self.deletion_vector_ranges().map(|ranges| {
                // Java keys the ranges by data file name in a `LinkedHashMap`: a repeated
                // name keeps its first position and takes the last value, as `insert` does.
                let mut map = IndexMap::with_capacity(ranges.len());
                for range in ranges {
                    map.insert(
                        range.data_file_name.to_owned(),
                        DeletionVectorMeta {
                            offset: range.offset,
                            length: range.length,
                            cardinality: range.cardinality,
                        },
                    );
                }
                map
            }),
            external_path: self.external_path().map(str::to_owned),
            global_index_meta: self.global_index().map(|g| g.to_meta()),
        }
    }
}

impl std::fmt::Debug for IndexFileView<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IndexFileView")
            .field("index_type", &self.index_type())
            .field("file_name", &self.file_name())
            .field("file_size", &self.file_size())
            .field("row_count", &self.row_count())
            .finish_non_exhaustive()
    }
}

/// One deletion-vector range of an index file: where the deletion vector of one data file is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DeletionVectorRange<'a> {
    /// The data file the deletion vector belongs to.
    pub data_file_name: &'a str,
    /// Byte offset of the deletion vector inside the index file.
    pub offset: i32,
    /// Its length in bytes.
    pub length: i32,
    /// How many rows it deletes, where the layout records it.
    pub cardinality: Option<i64>,
}

const RANGES: &str = "_DELETIONS_VECTORS_RANGES";

fn read_range(
    array: ArrayView<'_>,
    i: usize,
    range_arity: usize,
) -> CodecResult<DeletionVectorRange<'_>> {
    array.require(i, RANGES)?;
    let range = array.row(i, range_arity, RANGES)?;
    let at = |e: crate::error::CodecError| e.at_index(i).within(RANGES);
    range.require(RANGE_FILE_NAME, "f0").map_err(at)?;
    let data_file_name = range.string(RANGE_FILE_NAME, "f0").map_err(at)?;
    let cardinality = (range_arity > RANGE_CARDINALITY && !range.is_null(RANGE_CARDINALITY))
        .then(|| range.long(RANGE_CARDINALITY));
    Ok(DeletionVectorRange {
        data_file_name,
        offset: range.int(RANGE_OFFSET),
        length: range.int(RANGE_LENGTH),
        cardinality,
    })
}

fn check_ranges(array: ArrayView<'_>, range_arity: usize) -> CodecResult<()> {
    for i in 0..array.len() {
        read_range(array, i, range_arity)?;
    }
    Ok(())
}

/// A global index entry read in place (`GlobalIndexMeta`).
#[derive(Clone, Copy, Default)]
pub struct GlobalIndexView<'a> {
    row_range_start: i64,
    row_range_end: i64,
    index_field_id: i32,
    extra_field_ids: Option<ArrayView<'a>>,
    index_meta: Option<&'a [u8]>,
    source_meta: Option<&'a [u8]>,
}

impl<'a> GlobalIndexView<'a> {
    fn parse(row: RowView<'a>, arity: usize) -> CodecResult<Self> {
        let has = |pos: usize| pos < arity && !row.is_null(pos);
        let extra_field_ids = if has(EXTRA_FIELD_IDS) {
            let array = row.array(EXTRA_FIELD_IDS, 4, "_EXTRA_FIELD_IDS")?;
            for i in 0..array.len() {
                array.require(i, "_EXTRA_FIELD_IDS")?;
            }
            Some(array)
        } else {
            None
        };
        Ok(Self {
            row_range_start: row.long(ROW_RANGE_START),
            row_range_end: row.long(ROW_RANGE_END),
            index_field_id: row.int(INDEX_FIELD_ID),
            extra_field_ids,
            index_meta: if has(INDEX_META) {
                Some(row.bytes(INDEX_META, "_INDEX_META")?)
            } else {
                None
            },
            source_meta: if has(SOURCE_META) {
                Some(row.bytes(SOURCE_META, "_SOURCE_META")?)
            } else {
                None
            },
        })
    }

    /// First row id the index covers.
    pub fn row_range_start(&self) -> i64 {
        self.row_range_start
    }

    /// Last row id the index covers.
    pub fn row_range_end(&self) -> i64 {
        self.row_range_end
    }

    /// The id of the indexed field.
    pub fn index_field_id(&self) -> i32 {
        self.index_field_id
    }

    /// Ids of further indexed fields, if any.
    pub fn extra_field_ids(&self) -> Option<impl ExactSizeIterator<Item = i32> + 'a> {
        self.extra_field_ids
            .map(|array| (0..array.len()).map(move |i| array.int(i)))
    }

    /// The index's own metadata bytes.
    pub fn index_meta(&self) -> Option<&'a [u8]> {
        self.index_meta
    }

    /// Metadata of the index's source, where the layout has it.
    pub fn source_meta(&self) -> Option<&'a [u8]> {
        self.source_meta
    }

    /// The owned `GlobalIndexMeta`.
    pub fn to_meta(&self) -> GlobalIndexMeta {
        GlobalIndexMeta {
            row_range_start: self.row_range_start,
            row_range_end: self.row_range_end,
            index_field_id: self.index_field_id,
            extra_field_ids: self.extra_field_ids().map(Iterator::collect),
            index_meta: self.index_meta.map(<[u8]>::to_vec),
            source_meta: self.source_meta.map(<[u8]>::to_vec),
        }
    }
}

impl std::fmt::Debug for GlobalIndexView<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GlobalIndexView")
            .field("row_range_start", &self.row_range_start)
            .field("row_range_end", &self.row_range_end)
            .field("index_field_id", &self.index_field_id)
            .finish_non_exhaustive()
    }
}

/// Appends one `IndexFileMeta` row of `ctx`'s index file layout.
pub(crate) fn encode(
    meta: &IndexFileMeta,
    ctx: &EncodeContext,
    out: &mut Vec<u8>,
) -> CodecResult<()> {
    let layout = ctx.layouts.index_file;
    let arity = layout.arity();
    // Every writable version has deletion-vector ranges; only the legacy layout, which is
    // never written, lacks them.
    debug_assert!(arity > DELETION_VECTORS_RANGES);
    if layout.range_arity() <= RANGE_CARDINALITY {
        let has_cardinality = meta
            .deletion_vectors_ranges
            .iter()
            .flat_map(|ranges| ranges.values())
            .any(|r| r.cardinality.is_some());
        if has_cardinality {
            lossy(
                ctx,
                LossyField::DeletionVectorCardinality,
                "deletion_vectors_ranges.cardinality",
            )?;
        }
    }
    if arity <= EXTERNAL_PATH && meta.external_path.is_some() {
        lossy(ctx, LossyField::IndexExternalPath, "external_path")?;
    }
    if arity <= GLOBAL_INDEX && meta.global_index_meta.is_some() {
        lossy(ctx, LossyField::GlobalIndexMeta, "global_index_meta")?;
    }
    let global_arity = layout.global_index_arity();
    if global_arity <= SOURCE_META
        && meta
            .global_index_meta
            .as_ref()
            .is_some_and(|g| g.source_meta.is_some())
    {
        lossy(
            ctx,
            LossyField::GlobalIndexSourceMeta,
            "global_index_meta.source_meta",
        )?;
    }

    let row = RowBuilder::begin(out, arity);
    row.bytes(out, INDEX_TYPE, meta.index_type.as_bytes());
    row.bytes(out, FILE_NAME, meta.file_name.as_bytes());
    row.long(out, FILE_SIZE, meta.file_size);
    row.long(out, ROW_COUNT, meta.row_count);
    if arity > DELETION_VECTORS_RANGES {
        match &meta.deletion_vectors_ranges {
            Some(ranges) => row.nested(out, DELETION_VECTORS_RANGES, |out| {
                encode_ranges(ranges, layout.range_arity(), out)
            }),
            None => row.set_null(out, DELETION_VECTORS_RANGES),
        }
    }
    if arity > EXTERNAL_PATH {
        row.opt_bytes(
            out,
            EXTERNAL_PATH,
            meta.external_path.as_deref().map(str::as_bytes),
        );
    }
    if arity > GLOBAL_INDEX {
        match &meta.global_index_meta {
            Some(global) => row.nested(out, GLOBAL_INDEX, |out| {
                encode_global_index(global, global_arity, out)
            }),
            None => row.set_null(out, GLOBAL_INDEX),
        }
    }
    Ok(())
}

fn encode_ranges(
    ranges: &IndexMap<String, DeletionVectorMeta>,
    range_arity: usize,
    out: &mut Vec<u8>,
) {
    let array = ArrayBuilder::begin(out, ranges.len(), 8);
    for (i, (name, range)) in ranges.iter().enumerate() {
        array.nested(out, i, |out| {
            let row = RowBuilder::begin(out, range_arity);
            row.bytes(out, RANGE_FILE_NAME, name.as_bytes());
            row.int(out, RANGE_OFFSET, range.offset);
            row.int(out, RANGE_LENGTH, range.length);
            if range_arity > RANGE_CARDINALITY {
                row.opt_long(out, RANGE_CARDINALITY, range.cardinality);
            }
        });
    }
}

fn encode_global_index(global: &GlobalIndexMeta, arity: usize, out: &mut Vec<u8>) {
    let row = RowBuilder::begin(out, arity);
    row.long(out, ROW_RANGE_START, global.row_range_start);
    row.long(out, ROW_RANGE_END, global.row_range_end);
    row.int(out, INDEX_FIELD_ID, global.index_field_id);
    match &global.extra_field_ids {
        Some(ids) => row.nested(out, EXTRA_FIELD_IDS, |out| {
            let array = ArrayBuilder::begin(out, ids.len(), 4);
            for (i, id) in ids.iter().enumerate() {
                array.int(out, i, *id);
            }
        }),
        None => row.set_null(out, EXTRA_FIELD_IDS),
    }
    row.opt_bytes(out, INDEX_META, global.index_meta.as_deref());
    if arity > SOURCE_META {
        row.opt_bytes(out, SOURCE_META, global.source_meta.as_deref());
    }
}
