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

/// One historical `IndexFileMeta` row layout, named after the Java class that reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum IndexFileLayout {
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

/// Decodes one `IndexFileMeta` row of `layout` found at payload offset `base`.
pub(crate) fn decode(
    data: &[u8],
    base: usize,
    layout: IndexFileLayout,
) -> CodecResult<IndexFileMeta> {
    let arity = layout.arity();
    let row = RowView::new(data, arity, base, "IndexFileMeta")?;
    row.require(INDEX_TYPE, "_INDEX_TYPE")?;
    row.require(FILE_NAME, "_FILE_NAME")?;
    let has = |pos: usize| pos < arity && !row.is_null(pos);

    let deletion_vectors_ranges = if has(DELETION_VECTORS_RANGES) {
        let array = row.array(DELETION_VECTORS_RANGES, 8, "_DELETIONS_VECTORS_RANGES")?;
        Some(decode_ranges(array, layout.range_arity())?)
    } else {
        None
    };
    let global_index_meta = if has(GLOBAL_INDEX) {
        let global = row.row(GLOBAL_INDEX, layout.global_index_arity(), "_GLOBAL_INDEX")?;
        Some(
            decode_global_index(global, layout.global_index_arity())
                .map_err(|e| e.within("_GLOBAL_INDEX"))?,
        )
    } else {
        None
    };
    Ok(IndexFileMeta {
        index_type: row.string(INDEX_TYPE, "_INDEX_TYPE")?.to_owned(),
        file_name: row.string(FILE_NAME, "_FILE_NAME")?.to_owned(),
        file_size: row.long(FILE_SIZE),
        row_count: row.long(ROW_COUNT),
        deletion_vectors_ranges,
        external_path: if has(EXTERNAL_PATH) {
            Some(row.string(EXTERNAL_PATH, "_EXTERNAL_PATH")?.to_owned())
        } else {
            None
        },
        global_index_meta,
    })
}

/// Java keys the ranges by data file name in a `LinkedHashMap`: a repeated name keeps its
/// first position and takes the last value. `IndexMap::insert` does the same.
fn decode_ranges(
    array: ArrayView<'_>,
    range_arity: usize,
) -> CodecResult<IndexMap<String, DeletionVectorMeta>> {
    const FIELD: &str = "_DELETIONS_VECTORS_RANGES";
    let mut ranges = IndexMap::with_capacity(array.len());
    for i in 0..array.len() {
        array.require(i, FIELD)?;
        let range = array.row(i, range_arity, FIELD)?;
        let at = |e: crate::error::CodecError| e.at_index(i).within(FIELD);
        range.require(RANGE_FILE_NAME, "f0").map_err(at)?;
        let name = range.string(RANGE_FILE_NAME, "f0").map_err(at)?;
        let cardinality = (range_arity > RANGE_CARDINALITY && !range.is_null(RANGE_CARDINALITY))
            .then(|| range.long(RANGE_CARDINALITY));
        ranges.insert(
            name.to_owned(),
            DeletionVectorMeta {
                offset: range.int(RANGE_OFFSET),
                length: range.int(RANGE_LENGTH),
                cardinality,
            },
        );
    }
    Ok(ranges)
}

fn decode_global_index(row: RowView<'_>, arity: usize) -> CodecResult<GlobalIndexMeta> {
    let has = |pos: usize| pos < arity && !row.is_null(pos);
    Ok(GlobalIndexMeta {
        row_range_start: row.long(ROW_RANGE_START),
        row_range_end: row.long(ROW_RANGE_END),
        index_field_id: row.int(INDEX_FIELD_ID),
        extra_field_ids: if has(EXTRA_FIELD_IDS) {
            let array = row.array(EXTRA_FIELD_IDS, 4, "_EXTRA_FIELD_IDS")?;
            let mut ids = Vec::with_capacity(array.len());
            for i in 0..array.len() {
                array.require(i, "_EXTRA_FIELD_IDS")?;
                ids.push(array.int(i));
            }
            Some(ids)
        } else {
            None
        },
        index_meta: if has(INDEX_META) {
            Some(row.bytes(INDEX_META, "_INDEX_META")?.to_vec())
        } else {
            None
        },
        source_meta: if has(SOURCE_META) {
            Some(row.bytes(SOURCE_META, "_SOURCE_META")?.to_vec())
        } else {
            None
        },
    })
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
