//! Serializer versions and the one table that maps each to its byte layouts.
//!
//! Java's `CommitMessageSerializer` is versioned: each Paimon release writes one version
//! and reads every older one. The version is not inside the payload; it travels beside the
//! bytes. [`SerializerVersion::layouts`] is the single place that says which row layout a
//! version uses for data files, index files and the message itself.

use crate::error::{CodecError, CodecErrorKind};
use crate::layout::data_file::DataFileLayout;
use crate::layout::index_file::IndexFileLayout;

/// A `CommitMessageSerializer` version, 1 to 14.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(i32)]
pub enum SerializerVersion {
    /// Paimon 0.4 era; read like version 2.
    V1 = 1,
    /// Paimon 0.5 to 0.8. Two layouts share this number: 0.5–0.7 wrote the legacy layout
    /// (no deleted files), 0.8 the newer one. Decoding tries the newer layout first and
    /// falls back to the legacy one, as Java's `ManifestCommittableSerializer` does.
    V2 = 2,
    /// Paimon 0.9.
    V3 = 3,
    /// Development version between 0.9 and 1.0 (never released).
    V4 = 4,
    /// Development version between 0.9 and 1.0 (never released).
    V5 = 5,
    /// Paimon 1.0.
    V6 = 6,
    /// Paimon 1.1 and 1.2.
    V7 = 7,
    /// Development version before 1.3 (never released).
    V8 = 8,
    /// Development version before 1.3 (never released).
    V9 = 9,
    /// Paimon 1.3.
    V10 = 10,
    /// Paimon 1.4.
    V11 = 11,
    /// Paimon 2.0.
    V12 = 12,
    /// Paimon Java after 2.0 (21-field data file rows).
    V13 = 13,
    /// Version 13 plus a trailing optional `checkFromSnapshot`; what the `paimon` crate
    /// 0.4 writes.
    V14 = 14,
}

/// The layout of the message body around the file lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MessageLayout {
    /// Paimon 0.5–0.7's version 2 (Java `CommitMessageLegacyV2Serializer`): no deleted
    /// files, one index list routed to the data or compact increment.
    LegacyV2,
    /// Versions 1–9: three data lists, three compact lists, then index lists routed to the
    /// data or compact increment. `total_buckets` from version 7, deleted index files from
    /// version 3.
    Routed {
        has_total_buckets: bool,
        has_deleted_index_files: bool,
    },
    /// Versions 10+: both increments carry their own index lists; version 14 adds the
    /// trailing `checkFromSnapshot`.
    Split { has_check_from_snapshot: bool },
}

/// Every layout a version uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VersionLayouts {
    pub(crate) message: MessageLayout,
    pub(crate) data_file: DataFileLayout,
    pub(crate) index_file: IndexFileLayout,
}

impl SerializerVersion {
    /// The version this library writes by default: 14.
    pub const CURRENT: SerializerVersion = SerializerVersion::V14;

    /// Every version, oldest first.
    pub const ALL: [SerializerVersion; 14] = [
        Self::V1,
        Self::V2,
        Self::V3,
        Self::V4,
        Self::V5,
        Self::V6,
        Self::V7,
        Self::V8,
        Self::V9,
        Self::V10,
        Self::V11,
        Self::V12,
        Self::V13,
        Self::V14,
    ];

    /// Versions that some Paimon release writes, and so that this library can encode.
    pub const WRITABLE: [SerializerVersion; 9] = [
        Self::V2,
        Self::V3,
        Self::V6,
        Self::V7,
        Self::V10,
        Self::V11,
        Self::V12,
        Self::V13,
        Self::V14,
    ];

    /// The version number as Java writes it beside the payload.
    pub const fn as_i32(self) -> i32 {
        self as i32
    }

    /// Whether a Paimon release writes this version.
    pub fn is_writable(self) -> bool {
        Self::WRITABLE.contains(&self)
    }

    /// The Paimon Java releases that write this version (empty for development versions).
    pub fn written_by(self) -> &'static [&'static str] {
        match self {
            Self::V1 => &["0.4"],
            Self::V2 => &["0.5", "0.6", "0.7", "0.8"],
            Self::V3 => &["0.9"],
            Self::V6 => &["1.0"],
            Self::V7 => &["1.1", "1.2"],
            Self::V10 => &["1.3"],
            Self::V11 => &["1.4"],
            Self::V12 => &["2.0"],
            Self::V13 => &["Java master after 2.0"],
            Self::V14 => &["paimon crate 0.4"],
            Self::V4 | Self::V5 | Self::V8 | Self::V9 => &[],
        }
    }

    /// Writable versions as text, for error messages.
    pub(crate) fn writable_list() -> String {
        Self::WRITABLE
            .iter()
            .map(|v| v.as_i32().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The one dispatch table from version to layouts, mirroring Java's
    /// `CommitMessageSerializer.fileDeserializer` and `indexEntryDeserializer`.
    pub(crate) const fn layouts(self) -> VersionLayouts {
        use DataFileLayout as D;
        use IndexFileLayout as I;
        let v = self as i32;
        let data_file = match v {
            13.. => D::Current,
            9..=12 => D::WriteColsLegacy,
            8 => D::FirstRowIdLegacy,
            6 | 7 => D::Meta12Legacy,
            4 | 5 => D::Meta10Legacy,
            3 => D::Meta09,
            _ => D::Meta08,
        };
        let index_file = match v {
            12.. => I::Current,
            11 => I::V4,
            9 | 10 => I::V3,
            5..=8 => I::V2,
            _ => I::V1,
        };
        let message = if v >= 10 {
            MessageLayout::Split {
                has_check_from_snapshot: v >= 14,
            }
        } else {
            MessageLayout::Routed {
                has_total_buckets: v >= 7,
                has_deleted_index_files: v > 2,
            }
        };
        VersionLayouts {
            message,
            data_file,
            index_file,
        }
    }

    /// Layouts of Paimon 0.5–0.7's version 2 (`CommitMessageLegacyV2Serializer`).
    pub(crate) const fn legacy_v2_layouts() -> VersionLayouts {
        VersionLayouts {
            message: MessageLayout::LegacyV2,
            data_file: DataFileLayout::LegacyV2,
            index_file: IndexFileLayout::LegacyV2,
        }
    }
}

impl TryFrom<i32> for SerializerVersion {
    type Error = CodecError;

    fn try_from(version: i32) -> Result<Self, CodecError> {
        match version {
            1..=14 => Ok(Self::ALL[(version - 1) as usize]),
            _ => Err(CodecError::new(CodecErrorKind::UnsupportedVersion {
                version,
            })),
        }
    }
}

impl From<SerializerVersion> for i32 {
    fn from(version: SerializerVersion) -> i32 {
        version.as_i32()
    }
}

impl std::fmt::Display for SerializerVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.as_i32())
    }
}

/// The version this library writes by default, as Java's `getVersion()` returns it.
pub const CURRENT_SERIALIZER_VERSION: i32 = SerializerVersion::CURRENT.as_i32();

/// The version this library writes by default. Consumers ask for it instead of
/// hard-coding a number.
pub const fn current_serializer_version() -> SerializerVersion {
    SerializerVersion::CURRENT
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_number_maps_to_its_variant() {
        for (i, v) in SerializerVersion::ALL.iter().enumerate() {
            assert_eq!(v.as_i32(), i as i32 + 1);
            assert_eq!(SerializerVersion::try_from(v.as_i32()).unwrap(), *v);
        }
        for bad in [0, -1, 15, i32::MAX, i32::MIN] {
            let err = SerializerVersion::try_from(bad).unwrap_err();
            assert!(
                err.to_string().contains("supported versions are 1 to 14"),
                "{err}"
            );
        }
    }

    #[test]
    fn release_versions_are_writable_and_development_ones_are_not() {
        for v in [2, 3, 6, 7, 10, 11, 12, 13, 14] {
            assert!(SerializerVersion::try_from(v).unwrap().is_writable(), "{v}");
        }
        for v in [1, 4, 5, 8, 9] {
            assert!(
                !SerializerVersion::try_from(v).unwrap().is_writable(),
                "{v}"
            );
        }
    }
}
