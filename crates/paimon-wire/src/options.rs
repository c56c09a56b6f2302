//! What the caller allows when encoding to an older version.

use std::fmt;

/// A field that an older serializer version cannot carry. Encoding a message that sets one
/// of these to a version without it fails, naming the field, unless the caller lists the
/// field in [`EncodeOptions::allow_dropping`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum LossyField {
    /// `CommitMessage::check_from_snapshot` (version 14 only).
    CheckFromSnapshot,
    /// `CommitMessage::total_buckets` (versions 7+).
    TotalBuckets,
    /// `DataFileMeta::delete_row_count` (not in the legacy version 2 layout).
    DeleteRowCount,
    /// `DataFileMeta::embedded_index` (not in the legacy version 2 layout).
    EmbeddedIndex,
    /// `DataFileMeta::file_source` (versions 3+).
    FileSource,
    /// `DataFileMeta::value_stats_cols` (versions 4+).
    ValueStatsCols,
    /// `DataFileMeta::external_path` (versions 6+).
    ExternalPath,
    /// `DataFileMeta::first_row_id` (versions 8+).
    FirstRowId,
    /// `DataFileMeta::write_cols` (versions 9+).
    WriteCols,
    /// `DataFileMeta::column_max_sequence_numbers` (versions 13+).
    ColumnMaxSequenceNumbers,
    /// `DeletionVectorMeta::cardinality` (versions 5+).
    DeletionVectorCardinality,
    /// `IndexFileMeta::external_path` (versions 9+).
    IndexExternalPath,
    /// `IndexFileMeta::global_index_meta` (versions 11+).
    GlobalIndexMeta,
    /// `GlobalIndexMeta::source_meta` (versions 12+).
    GlobalIndexSourceMeta,
}

impl LossyField {
    /// Every field, for listing in help texts.
    pub const ALL: [LossyField; 14] = [
        Self::CheckFromSnapshot,
        Self::TotalBuckets,
        Self::DeleteRowCount,
        Self::EmbeddedIndex,
        Self::FileSource,
        Self::ValueStatsCols,
        Self::ExternalPath,
        Self::FirstRowId,
        Self::WriteCols,
        Self::ColumnMaxSequenceNumbers,
        Self::DeletionVectorCardinality,
        Self::IndexExternalPath,
        Self::GlobalIndexMeta,
        Self::GlobalIndexSourceMeta,
    ];

    /// The name used in errors and on the command line (snake_case, as in the model).
    pub const fn name(self) -> &'static str {
        match self {
            Self::CheckFromSnapshot => "check_from_snapshot",
            Self::TotalBuckets => "total_buckets",
            Self::DeleteRowCount => "delete_row_count",
            Self::EmbeddedIndex => "embedded_index",
            Self::FileSource => "file_source",
            Self::ValueStatsCols => "value_stats_cols",
            Self::ExternalPath => "external_path",
            Self::FirstRowId => "first_row_id",
            Self::WriteCols => "write_cols",
            Self::ColumnMaxSequenceNumbers => "column_max_sequence_numbers",
            Self::DeletionVectorCardinality => "deletion_vector_cardinality",
            Self::IndexExternalPath => "index_external_path",
            Self::GlobalIndexMeta => "global_index_meta",
            Self::GlobalIndexSourceMeta => "global_index_source_meta",
        }
    }
}

impl fmt::Display for LossyField {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for LossyField {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|f| f.name() == s)
            .ok_or_else(|| {
                let names: Vec<_> = Self::ALL.iter().map(|f| f.name()).collect();
                format!(
                    "unknown field '{s}'; droppable fields are {}",
                    names.join(", ")
                )
            })
    }
}

/// Options for encoding. The default refuses every lossy downgrade.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EncodeOptions {
    droppable: Vec<LossyField>,
}

impl EncodeOptions {
    /// Lets the encoder drop `field` when the target version cannot carry it. The caller
    /// names each field it accepts to lose; nothing is dropped by default.
    pub fn allow_dropping(mut self, field: LossyField) -> Self {
        if !self.droppable.contains(&field) {
            self.droppable.push(field);
        }
        self
    }

    /// Whether `field` may be dropped.
    pub fn may_drop(&self, field: LossyField) -> bool {
        self.droppable.contains(&field)
    }
}
