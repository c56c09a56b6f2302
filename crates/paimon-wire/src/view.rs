//! Zero-copy views of a payload: its messages, their file lists and every file's fields, read
//! in place from the payload's bytes.
//!
//! A coordinator mostly *looks at* what workers send (counts, partitions, file names, sizes)
//! before it needs the `paimon` crate's owned values for the commit. [`PayloadView::parse`]
//! checks the whole payload up front — with the same checks, limits and typed errors as
//! [`crate::deserialize_list_with_limits`], which is itself a parse followed by
//! [`MessageView::to_message`] — and allocates one small entry per message, nothing per file.
//! After that every accessor reads from the bytes and cannot fail; owned values are built
//! only where asked for ([`PayloadView::to_messages`], [`MessageView::to_message`],
//! [`DataFileView::to_meta`], [`IndexFileView::to_meta`]).
//!
//! ```
//! use paimon_wire::view::PayloadView;
//! use paimon_wire::{serialize_list, CommitMessage, SerializerVersion};
//!
//! let payload = serialize_list(&[CommitMessage::new(Vec::new(), 3, Vec::new())], SerializerVersion::V14)?;
//! let view = PayloadView::parse(SerializerVersion::V14, &payload)?;
//! assert_eq!(view.messages()[0].bucket(), 3);
//! assert_eq!(view.data_file_count(), 0);
//! # Ok::<(), paimon_wire::CodecError>(())
//! ```

use crate::binary::array::ArrayView;
use crate::codec;
use crate::error::CodecResult;
use crate::limits::DecodeLimits;
use crate::version::SerializerVersion;

pub use crate::layout::data_file::DataFileView;
pub use crate::layout::index_file::{DeletionVectorRange, GlobalIndexView, IndexFileView};
pub use crate::message::{DataFiles, FileList, FileRow, IndexFiles, MessageView};

/// A whole payload (Java's `serializeList`), checked, with its messages read in place.
#[derive(Debug, Clone)]
pub struct PayloadView<'a> {
    version: SerializerVersion,
    messages: Vec<MessageView<'a>>,
}

impl<'a> PayloadView<'a> {
    /// Checks `bytes` as a payload written at `version` and views it. No limit applies
    /// beyond the payload's own length, as with [`crate::deserialize_list`].
    pub fn parse(version: SerializerVersion, bytes: &'a [u8]) -> CodecResult<Self> {
        Self::parse_with_limits(version, bytes, &DecodeLimits::UNLIMITED)
    }

    /// [`PayloadView::parse`] refusing a payload beyond `limits`, exactly as
    /// [`crate::deserialize_list_with_limits`] does (same checks, same errors).
    pub fn parse_with_limits(
        version: SerializerVersion,
        bytes: &'a [u8],
        limits: &DecodeLimits,
    ) -> CodecResult<Self> {
        let messages = codec::parse_list(version, bytes, limits, |message| message)?;
        Ok(Self { version, messages })
    }

    /// The serializer version the bytes were read at.
    pub fn version(&self) -> SerializerVersion {
        self.version
    }

    /// The messages, in payload order.
    pub fn messages(&self) -> &[MessageView<'a>] {
        &self.messages
    }

    /// How many messages the payload holds.
    pub fn len(&self) -> usize {
        self.messages.len()
    }

    /// Whether the payload holds no message.
    pub fn is_empty(&self) -> bool {
        self.messages.is_empty()
    }

    /// New data files over all messages (the data increment's `new_files`).
    pub fn data_file_count(&self) -> usize {
        self.messages.iter().map(|m| m.new_files().len()).sum()
    }

    /// Sum of the row counts of the new data files, as the writers reported them (saturating).
    pub fn reported_row_count(&self) -> i64 {
        self.messages
            .iter()
            .flat_map(|m| m.new_files().iter())
            .map(|f| f.row_count())
            .fold(0i64, i64::saturating_add)
    }

    /// The owned messages, equal to what [`crate::deserialize_list`] returns for the same bytes.
    pub fn to_messages(&self) -> Vec<crate::CommitMessage> {
        self.messages.iter().map(MessageView::to_message).collect()
    }
}

/// The value of an accessor whose field [`PayloadView::parse`] already checked: the error
/// branch cannot be taken. Rather than panic on a broken invariant, a release build returns
/// the type's default; tests and debug builds assert.
#[inline]
pub(crate) fn validated<T: Default>(result: CodecResult<T>) -> T {
    debug_assert!(
        result.is_ok(),
        "a view's field failed after its row was checked: {:?}",
        result.as_ref().err()
    );
    result.unwrap_or_default()
}

/// `SimpleStats` read in place: min and max values as serialized `BinaryRow`s, and the null
/// count of each column.
#[derive(Clone, Copy)]
pub struct StatsView<'a> {
    pub(crate) min_values: &'a [u8],
    pub(crate) max_values: &'a [u8],
    pub(crate) null_counts: ArrayView<'a>,
}

impl Default for StatsView<'_> {
    fn default() -> Self {
        Self {
            min_values: &[],
            max_values: &[],
            null_counts: ArrayView::empty(8),
        }
    }
}

impl<'a> StatsView<'a> {
    /// The minimum of each column, a serialized `BinaryRow`.
    pub fn min_values(&self) -> &'a [u8] {
        self.min_values
    }

    /// The maximum of each column, a serialized `BinaryRow`.
    pub fn max_values(&self) -> &'a [u8] {
        self.max_values
    }

    /// Each column's null count; `None` where the writer did not count.
    pub fn null_counts(&self) -> impl ExactSizeIterator<Item = Option<i64>> + 'a {
        self.null_counts.nullable_longs()
    }

    /// The owned statistics (the `paimon` crate's `BinaryTableStats`).
    pub fn to_stats(&self) -> crate::stats::BinaryTableStats {
        crate::stats::BinaryTableStats::new(
            self.min_values.to_vec(),
            self.max_values.to_vec(),
            self.null_counts().collect(),
        )
    }
}

impl std::fmt::Debug for StatsView<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StatsView")
            .field("min_values", &self.min_values)
            .field("max_values", &self.max_values)
            .field("null_counts", &self.null_counts().collect::<Vec<_>>())
            .finish()
    }
}

/// An `ARRAY<STRING NOT NULL>` read in place, every element checked.
#[derive(Clone, Copy)]
pub struct StringsView<'a> {
    array: ArrayView<'a>,
    field: &'static str,
}

impl Default for StringsView<'_> {
    fn default() -> Self {
        Self {
            array: ArrayView::empty(8),
            field: "",
        }
    }
}

impl<'a> StringsView<'a> {
    /// Checks that every element is set and a string inside the array.
    pub(crate) fn parse(array: ArrayView<'a>, field: &'static str) -> CodecResult<Self> {
        for i in 0..array.len() {
            array.require(i, field)?;
            array.string(i, field)?;
        }
        Ok(Self::checked(array, field))
    }

    /// Views an array that [`StringsView::parse`] already accepted, without checking it again.
    pub(crate) fn checked(array: ArrayView<'a>, field: &'static str) -> Self {
        Self { array, field }
    }

    /// How many strings.
    pub fn len(&self) -> usize {
        self.array.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.array.len() == 0
    }

    /// The strings, in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &'a str> + 'a {
        let Self { array, field } = *self;
        (0..array.len()).map(move |i| validated(array.string(i, field)))
    }

    /// The owned strings.
    pub fn to_vec(&self) -> Vec<String> {
        self.iter().map(str::to_owned).collect()
    }
}

impl std::fmt::Debug for StringsView<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// An `ARRAY<BIGINT NOT NULL>` read in place, every element checked.
#[derive(Clone, Copy)]
pub struct LongsView<'a> {
    pub(crate) array: ArrayView<'a>,
}

impl Default for LongsView<'_> {
    fn default() -> Self {
        Self {
            array: ArrayView::empty(8),
        }
    }
}

impl<'a> LongsView<'a> {
    /// How many values.
    pub fn len(&self) -> usize {
        self.array.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.array.len() == 0
    }

    /// The values, in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = i64> + 'a {
        let array = self.array;
        (0..array.len()).map(move |i| array.long(i))
    }
}

impl std::fmt::Debug for LongsView<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}
