//! What the coordinator's checks read of a message, as traits that both an owned
//! `CommitMessage` and a [`MessageView`] over payload bytes implement.
//!
//! Validation ([`crate::coordinator::rules::validate`]) and duplicate detection ([`crate::coordinator::rules::merge`]) are written once
//! against these traits: [`crate::coordinator::Coordinator::deserialize`] runs them on views, before any
//! owned value exists (a refused payload costs no copy of its files), and
//! [`crate::coordinator::Coordinator::bind_messages`] and [`crate::coordinator::Coordinator::merge`] run the same code on
//! owned messages.
//!
//! Lists are named by their slot in [`DATA_LISTS`] and [`INDEX_LISTS`] (wire order).

use paimon::spec::{DataFileMeta, IndexFileMeta};
use paimon::table::CommitMessage;

use crate::view::{DataFileView, DeletionVectorRange, IndexFileView, MessageView};

/// The six data file lists, in wire order.
pub(crate) const DATA_LISTS: [&str; 6] = [
    "new_files",
    "deleted_files",
    "new_changelog_files",
    "compact_before",
    "compact_after",
    "compact_changelog_files",
];
/// The four index file lists, in wire order.
pub(crate) const INDEX_LISTS: [&str; 4] = [
    "new_index_files",
    "deleted_index_files",
    "compact_new_index_files",
    "compact_deleted_index_files",
];
/// Slots in [`DATA_LISTS`].
pub(crate) const NEW_FILES: usize = 0;
pub(crate) const DELETED_FILES: usize = 1;
pub(crate) const NEW_CHANGELOG_FILES: usize = 2;
pub(crate) const COMPACT_BEFORE: usize = 3;
pub(crate) const COMPACT_AFTER: usize = 4;
/// Slots in [`INDEX_LISTS`].
pub(crate) const NEW_INDEX_FILES: usize = 0;
pub(crate) const DELETED_INDEX_FILES: usize = 1;
pub(crate) const COMPACT_NEW_INDEX_FILES: usize = 2;
pub(crate) const COMPACT_DELETED_INDEX_FILES: usize = 3;

/// The global index entry's fields the checks read.
#[derive(Debug, Clone, Copy)]
pub(crate) struct GlobalIndexRange {
    pub(crate) row_range_start: i64,
    pub(crate) row_range_end: i64,
    pub(crate) index_field_id: i32,
}

/// What the checks read of one data file; `'m` is how long the borrowed strings live.
pub(crate) trait DataFileFields<'m>: Copy {
    fn file_name(&self) -> &'m str;
    fn extra_files(&self) -> impl Iterator<Item = &'m str>;
    fn external_path(&self) -> Option<&'m str>;
    fn schema_id(&self) -> i64;
    fn file_size(&self) -> i64;
    fn row_count(&self) -> i64;
    fn level(&self) -> i32;
    fn min_sequence_number(&self) -> i64;
    fn max_sequence_number(&self) -> i64;
    fn delete_row_count(&self) -> Option<i64>;
    fn first_row_id(&self) -> Option<i64>;
    /// The serialized key row of the file's smallest key (empty rows on append tables).
    fn min_key(&self) -> &'m [u8];
    /// The serialized key row of the file's largest key.
    fn max_key(&self) -> &'m [u8];
    /// Whether the two files have equal metadata (the owned values would compare equal).
    fn same_metadata(&self, other: &Self) -> bool;
}

/// What the checks read of one index file.
pub(crate) trait IndexFileFields<'m>: Copy {
    fn index_type(&self) -> &'m str;
    fn file_name(&self) -> &'m str;
    fn external_path(&self) -> Option<&'m str>;
    fn file_size(&self) -> i64;
    fn row_count(&self) -> i64;
    /// The deletion-vector ranges with the owned value's map semantics: one entry per data
    /// file name, at the position of its first occurrence, holding its last value (Java
    /// reads the list into a map).
    fn deletion_vector_ranges(&self) -> Option<Vec<DeletionVectorRange<'m>>>;
    fn has_deletion_vector_ranges(&self) -> bool;
    fn global_index(&self) -> Option<GlobalIndexRange>;
    /// Whether the two files have equal metadata (the owned values would compare equal).
    fn same_metadata(&self, other: &Self) -> bool;
}

/// What the checks read of one message.
pub(crate) trait MessageFields {
    type DataFile<'m>: DataFileFields<'m>
    where
        Self: 'm;
    type IndexFile<'m>: IndexFileFields<'m>
    where
        Self: 'm;
    fn partition(&self) -> &[u8];
    fn bucket(&self) -> i32;
    fn total_buckets(&self) -> Option<i32>;
    fn check_from_snapshot(&self) -> Option<i64>;
    /// The files of data list `DATA_LISTS[list]`.
    fn data_files(&self, list: usize) -> impl Iterator<Item = Self::DataFile<'_>>;
    fn data_file_count(&self, list: usize) -> usize;
    /// The files of index list `INDEX_LISTS[list]`.
    fn index_files(&self, list: usize) -> impl Iterator<Item = Self::IndexFile<'_>>;
    fn index_file_count(&self, list: usize) -> usize;
}

/// The first field (besides the level and the statistics) in which two data files' metadata
/// differ, if any: the identity the paimon crate matches entries by (extra files, external
/// path; the embedded index is compared by the caller that has it) and the counts and ranges
/// the coordinator's rules rely on. Used where a file must be the same file: an in-place
/// upgrade and its input, a deleted file and its live entry.
pub(crate) fn metadata_difference<'m, F: DataFileFields<'m>>(a: &F, b: &F) -> Option<&'static str> {
    if !a.extra_files().eq(b.extra_files()) {
        Some("extra_files")
    } else if a.external_path() != b.external_path() {
        Some("external_path")
    } else if a.row_count() != b.row_count() {
        Some("row_count")
    } else if a.file_size() != b.file_size() {
        Some("file_size")
    } else if a.min_sequence_number() != b.min_sequence_number()
        || a.max_sequence_number() != b.max_sequence_number()
    {
        Some("sequence_numbers")
    } else if a.min_key() != b.min_key() || a.max_key() != b.max_key() {
        Some("keys")
    } else if a.delete_row_count() != b.delete_row_count() {
        Some("delete_row_count")
    } else if a.schema_id() != b.schema_id() {
        Some("schema_id")
    } else {
        None
    }
}

impl<'m> DataFileFields<'m> for &'m DataFileMeta {
    fn file_name(&self) -> &'m str {
        &self.file_name
    }
    fn extra_files(&self) -> impl Iterator<Item = &'m str> {
        self.extra_files.iter().map(String::as_str)
    }
    fn external_path(&self) -> Option<&'m str> {
        self.external_path.as_deref()
    }
    fn schema_id(&self) -> i64 {
        self.schema_id
    }
    fn file_size(&self) -> i64 {
        self.file_size
    }
    fn row_count(&self) -> i64 {
        self.row_count
    }
    fn level(&self) -> i32 {
        self.level
    }
    fn min_sequence_number(&self) -> i64 {
        self.min_sequence_number
    }
    fn max_sequence_number(&self) -> i64 {
        self.max_sequence_number
    }
    fn delete_row_count(&self) -> Option<i64> {
        self.delete_row_count
    }
    fn first_row_id(&self) -> Option<i64> {
        self.first_row_id
    }
    fn min_key(&self) -> &'m [u8] {
        &self.min_key
    }
    fn max_key(&self) -> &'m [u8] {
        &self.max_key
    }
    fn same_metadata(&self, other: &Self) -> bool {
        self == other
    }
}

impl<'m, 'a: 'm> DataFileFields<'m> for DataFileView<'a> {
    fn file_name(&self) -> &'m str {
        DataFileView::file_name(self)
    }
    fn extra_files(&self) -> impl Iterator<Item = &'m str> {
        DataFileView::extra_files(self).iter()
    }
    fn external_path(&self) -> Option<&'m str> {
        DataFileView::external_path(self)
    }
    fn schema_id(&self) -> i64 {
        DataFileView::schema_id(self)
    }
    fn file_size(&self) -> i64 {
        DataFileView::file_size(self)
    }
    fn row_count(&self) -> i64 {
        DataFileView::row_count(self)
    }
    fn level(&self) -> i32 {
        DataFileView::level(self)
    }
    fn min_sequence_number(&self) -> i64 {
        DataFileView::min_sequence_number(self)
    }
    fn max_sequence_number(&self) -> i64 {
        DataFileView::max_sequence_number(self)
    }
    fn delete_row_count(&self) -> Option<i64> {
        DataFileView::delete_row_count(self)
    }
    fn first_row_id(&self) -> Option<i64> {
        DataFileView::first_row_id(self)
    }
    fn min_key(&self) -> &'m [u8] {
        DataFileView::min_key(self)
    }
    fn max_key(&self) -> &'m [u8] {
        DataFileView::max_key(self)
    }
    /// Equal bytes in one layout are equal metadata; different bytes may still decode to
    /// equal values, which only the owned values can tell (rare: a duplicate name).
    fn same_metadata(&self, other: &Self) -> bool {
        self.row_bytes() == other.row_bytes() || self.to_meta() == other.to_meta()
    }
}

impl<'m> IndexFileFields<'m> for &'m IndexFileMeta {
    fn index_type(&self) -> &'m str {
        &self.index_type
    }
    fn file_name(&self) -> &'m str {
        &self.file_name
    }
    fn external_path(&self) -> Option<&'m str> {
        self.external_path.as_deref()
    }
    fn file_size(&self) -> i64 {
        self.file_size
    }
    fn row_count(&self) -> i64 {
        self.row_count
    }
    fn deletion_vector_ranges(&self) -> Option<Vec<DeletionVectorRange<'m>>> {
        let ranges = self.deletion_vectors_ranges.as_ref()?;
        Some(
            ranges
                .iter()
                .map(|(name, range)| DeletionVectorRange {
                    data_file_name: name,
                    offset: range.offset,
                    length: range.length,
                    cardinality: range.cardinality,
                })
                .collect(),
        )
    }
    fn has_deletion_vector_ranges(&self) -> bool {
        self.deletion_vectors_ranges.is_some()
    }
    fn global_index(&self) -> Option<GlobalIndexRange> {
        self.global_index_meta
            .as_ref()
            .map(|global| GlobalIndexRange {
                row_range_start: global.row_range_start,
                row_range_end: global.row_range_end,
                index_field_id: global.index_field_id,
            })
    }
    fn same_metadata(&self, other: &Self) -> bool {
        self == other
    }
}

impl<'m, 'a: 'm> IndexFileFields<'m> for IndexFileView<'a> {
    fn index_type(&self) -> &'m str {
        IndexFileView::index_type(self)
    }
    fn file_name(&self) -> &'m str {
        IndexFileView::file_name(self)
    }
    fn external_path(&self) -> Option<&'m str> {
        IndexFileView::external_path(self)
    }
    fn file_size(&self) -> i64 {
        IndexFileView::file_size(self)
    }
    fn row_count(&self) -> i64 {
        IndexFileView::row_count(self)
    }
    fn deletion_vector_ranges(&self) -> Option<Vec<DeletionVectorRange<'m>>> {
        // A map, as Java reads the list: linear in the ranges, however many name one file.
        let mut ranges: indexmap::IndexMap<&'m str, DeletionVectorRange<'m>> =
            indexmap::IndexMap::new();
        for range in IndexFileView::deletion_vector_ranges(self)? {
            ranges.insert(range.data_file_name, range);
        }
        Some(ranges.into_values().collect())
    }
    fn has_deletion_vector_ranges(&self) -> bool {
        IndexFileView::deletion_vector_ranges(self).is_some()
    }
    fn global_index(&self) -> Option<GlobalIndexRange> {
        IndexFileView::global_index(self).map(|global| GlobalIndexRange {
            row_range_start: global.row_range_start(),
            row_range_end: global.row_range_end(),
            index_field_id: global.index_field_id(),
        })
    }
    fn same_metadata(&self, other: &Self) -> bool {
        self.row_bytes() == other.row_bytes() || self.to_meta() == other.to_meta()
    }
}

fn owned_data_list(message: &CommitMessage, list: usize) -> &[DataFileMeta] {
    match list {
        0 => &message.new_files,
        1 => &message.deleted_files,
        2 => &message.new_changelog_files,
        3 => &message.compact_before,
        4 => &message.compact_after,
        _ => &message.compact_changelog_files,
    }
}

fn owned_index_list(message: &CommitMessage, list: usize) -> &[IndexFileMeta] {
    match list {
        0 => &message.new_index_files,
        1 => &message.deleted_index_files,
        2 => &message.compact_new_index_files,
        _ => &message.compact_deleted_index_files,
    }
}

impl MessageFields for CommitMessage {
    type DataFile<'m> = &'m DataFileMeta;
    type IndexFile<'m> = &'m IndexFileMeta;
    fn partition(&self) -> &[u8] {
        &self.partition
    }
    fn bucket(&self) -> i32 {
        self.bucket
    }
    fn total_buckets(&self) -> Option<i32> {
        self.total_buckets
    }
    fn check_from_snapshot(&self) -> Option<i64> {
        self.check_from_snapshot
    }
    fn data_files(&self, list: usize) -> impl Iterator<Item = &DataFileMeta> {
        owned_data_list(self, list).iter()
    }
    fn data_file_count(&self, list: usize) -> usize {
        owned_data_list(self, list).len()
    }
    fn index_files(&self, list: usize) -> impl Iterator<Item = &IndexFileMeta> {
        owned_index_list(self, list).iter()
    }
    fn index_file_count(&self, list: usize) -> usize {
        owned_index_list(self, list).len()
    }
}

impl<'a> MessageFields for MessageView<'a> {
    type DataFile<'m>
        = DataFileView<'a>
    where
        Self: 'm;
    type IndexFile<'m>
        = IndexFileView<'a>
    where
        Self: 'm;
    fn partition(&self) -> &[u8] {
        MessageView::partition(self)
    }
    fn bucket(&self) -> i32 {
        MessageView::bucket(self)
    }
    fn total_buckets(&self) -> Option<i32> {
        MessageView::total_buckets(self)
    }
    fn check_from_snapshot(&self) -> Option<i64> {
        MessageView::check_from_snapshot(self)
    }
    fn data_files(&self, list: usize) -> impl Iterator<Item = DataFileView<'a>> {
        self.data_file_lists()[list].1.iter()
    }
    fn data_file_count(&self, list: usize) -> usize {
        self.data_file_lists()[list].1.len()
    }
    fn index_files(&self, list: usize) -> impl Iterator<Item = IndexFileView<'a>> {
        self.index_file_lists()[list].1.iter()
    }
    fn index_file_count(&self, list: usize) -> usize {
        self.index_file_lists()[list].1.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_slots_follow_the_views_wire_order() {
        let message = CommitMessage::new(vec![], 0, vec![]);
        let bytes = crate::serialize_list(&[message], crate::SerializerVersion::CURRENT).unwrap();
        let view =
            crate::view::PayloadView::parse(crate::SerializerVersion::CURRENT, &bytes).unwrap();
        let message = view.messages()[0];
        let data: Vec<&str> = message.data_file_lists().iter().map(|(n, _)| *n).collect();
        let index: Vec<&str> = message.index_file_lists().iter().map(|(n, _)| *n).collect();
        assert_eq!(data, DATA_LISTS);
        assert_eq!(index, INDEX_LISTS);
    }
}
