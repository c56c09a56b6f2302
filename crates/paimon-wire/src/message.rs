//! One commit message body: partition, bucket, the file lists of both increments, and the
//! fields around them, for each of the three message layouts. Reader and writer side by
//! side.

use paimon::spec::{DataFileMeta, IndexFileMeta};
use paimon::table::CommitMessage;

use crate::binary::input::Input;
use crate::binary::row::fixed_part_size;
use crate::error::{CodecError, CodecErrorKind, CodecResult};
use crate::layout::data_file::{self, DataFileLayout, DataFileView};
use crate::layout::index_file::{self, IndexFileLayout, IndexFileView};
use crate::layout::{check_serialized_row, lossy, EncodeContext};
use crate::options::LossyField;
use crate::version::{MessageLayout, VersionLayouts};

/// Java's `BinaryRow.EMPTY_ROW` as `serializeBinaryRow` writes it: arity 0, then 8 zero
/// bytes of null bits. The `paimon` crate uses an empty partition vector for it.
const EMPTY_SERIALIZED_ROW: [u8; 12] = [0; 12];

/// The fewest bytes a message body can take in any layout (a 12-byte empty partition with
/// its length, the bucket, and six empty lists), to bound a message count before
/// allocating.
pub(crate) const MIN_ENCODED_BYTES: usize = 16 + 4 + 6 * 4;

/// One commit message read in place from a payload: partition, bucket and the ten file
/// lists, every row of which was checked when the message was parsed.
#[derive(Clone, Copy)]
pub struct MessageView<'a> {
    partition: &'a [u8],
    bucket: i32,
    total_buckets: Option<i32>,
    check_from_snapshot: Option<i64>,
    new_files: DataFiles<'a>,
    deleted_files: DataFiles<'a>,
    new_changelog_files: DataFiles<'a>,
    compact_before: DataFiles<'a>,
    compact_after: DataFiles<'a>,
    compact_changelog_files: DataFiles<'a>,
    new_index_files: IndexFiles<'a>,
    deleted_index_files: IndexFiles<'a>,
    compact_new_index_files: IndexFiles<'a>,
    compact_deleted_index_files: IndexFiles<'a>,
}

impl<'a> MessageView<'a> {
    /// Checks one message body and views it; `input` moves past it.
    pub(crate) fn parse(input: &mut Input<'a>, layouts: VersionLayouts) -> CodecResult<Self> {
        let (partition, offset) = input.read_sized("partition")?;
        check_serialized_row(partition, "partition", offset)?;
        let bucket = input.read_i32("bucket")?;
        let data_files = |input: &mut Input<'a>, name| DataFiles::parse(input, layouts, name);
        let index_files = |input: &mut Input<'a>, name| IndexFiles::parse(input, layouts, name);

        let no_data = DataFiles::empty(layouts);
        let no_index = IndexFiles::empty(layouts);
        let mut m = Self {
            partition,
            bucket,
            total_buckets: None,
            check_from_snapshot: None,
            new_files: no_data,
            deleted_files: no_data,
            new_changelog_files: no_data,
            compact_before: no_data,
            compact_after: no_data,
            compact_changelog_files: no_data,
            new_index_files: no_index,
            deleted_index_files: no_index,
            compact_new_index_files: no_index,
            compact_deleted_index_files: no_index,
        };
        match layouts.message {
            MessageLayout::Split {
                has_check_from_snapshot,
            } => {
                m.total_buckets = read_optional_i32(input, "total_buckets")?;
                m.new_files = data_files(input, "new_files")?;
                m.deleted_files = data_files(input, "deleted_files")?;
                m.new_changelog_files = data_files(input, "new_changelog_files")?;
                m.new_index_files = index_files(input, "new_index_files")?;
                m.deleted_index_files = index_files(input, "deleted_index_files")?;
                m.compact_before = data_files(input, "compact_before")?;
                m.compact_after = data_files(input, "compact_after")?;
                m.compact_changelog_files = data_files(input, "compact_changelog_files")?;
                m.compact_new_index_files = index_files(input, "compact_new_index_files")?;
                m.compact_deleted_index_files = index_files(input, "compact_deleted_index_files")?;
                if has_check_from_snapshot {
                    m.check_from_snapshot = if input.read_bool("check_from_snapshot")? {
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
                    m.total_buckets = read_optional_i32(input, "total_buckets")?;
                }
                m.new_files = data_files(input, "new_files")?;
                m.deleted_files = data_files(input, "deleted_files")?;
                m.new_changelog_files = data_files(input, "new_changelog_files")?;
                m.compact_before = data_files(input, "compact_before")?;
                m.compact_after = data_files(input, "compact_after")?;
                m.compact_changelog_files = data_files(input, "compact_changelog_files")?;
                let new_index = index_files(input, "new_index_files")?;
                let deleted_index = if has_deleted_index_files {
                    index_files(input, "deleted_index_files")?
                } else {
                    no_index
                };
                m.route_index_files(new_index, deleted_index);
            }
            MessageLayout::LegacyV2 => {
                m.new_files = data_files(input, "new_files")?;
                m.new_changelog_files = data_files(input, "new_changelog_files")?;
                m.compact_before = data_files(input, "compact_before")?;
                m.compact_after = data_files(input, "compact_after")?;
                m.compact_changelog_files = data_files(input, "compact_changelog_files")?;
                let new_index = index_files(input, "new_index_files")?;
                m.route_index_files(new_index, no_index);
            }
        }
        Ok(m)
    }

    /// Before version 10 a message had one pair of index lists. Java puts them in the compact
    /// increment when that increment has files, and in the data increment otherwise.
    fn route_index_files(&mut self, new_index: IndexFiles<'a>, deleted_index: IndexFiles<'a>) {
        let has_compact_files = !(self.compact_before.is_empty()
            && self.compact_after.is_empty()
            && self.compact_changelog_files.is_empty());
        if has_compact_files {
            self.compact_new_index_files = new_index;
            self.compact_deleted_index_files = deleted_index;
        } else {
            self.new_index_files = new_index;
            self.deleted_index_files = deleted_index;
        }
    }

    /// The partition, a serialized `BinaryRow` (Java's `BinaryRow.EMPTY_ROW` for an
    /// unpartitioned table).
    pub fn partition(&self) -> &'a [u8] {
        self.partition
    }

    /// The bucket.
    pub fn bucket(&self) -> i32 {
        self.bucket
    }

    /// The table's bucket count when the writer knew it (versions 5+).
    pub fn total_buckets(&self) -> Option<i32> {
        self.total_buckets
    }

    /// The snapshot a row-tracking conflict check starts from (versions 13+).
    pub fn check_from_snapshot(&self) -> Option<i64> {
        self.check_from_snapshot
    }

    /// Data increment: new data files.
    pub fn new_files(&self) -> DataFiles<'a> {
        self.new_files
    }

    /// Data increment: deleted data files.
    pub fn deleted_files(&self) -> DataFiles<'a> {
        self.deleted_files
    }

    /// Data increment: new changelog files.
    pub fn new_changelog_files(&self) -> DataFiles<'a> {
        self.new_changelog_files
    }

    /// Compact increment: files the compaction replaced.
    pub fn compact_before(&self) -> DataFiles<'a> {
        self.compact_before
    }

    /// Compact increment: files the compaction wrote.
    pub fn compact_after(&self) -> DataFiles<'a> {
        self.compact_after
    }

    /// Compact increment: changelog files the compaction wrote.
    pub fn compact_changelog_files(&self) -> DataFiles<'a> {
        self.compact_changelog_files
    }

    /// Data increment: new index files.
    pub fn new_index_files(&self) -> IndexFiles<'a> {
        self.new_index_files
    }

    /// Data increment: deleted index files.
    pub fn deleted_index_files(&self) -> IndexFiles<'a> {
        self.deleted_index_files
    }

    /// Compact increment: new index files.
    pub fn compact_new_index_files(&self) -> IndexFiles<'a> {
        self.compact_new_index_files
    }

    /// Compact increment: deleted index files.
    pub fn compact_deleted_index_files(&self) -> IndexFiles<'a> {
        self.compact_deleted_index_files
    }

    /// The six data file lists with their wire names, data increment first.
    pub fn data_file_lists(&self) -> [(&'static str, DataFiles<'a>); 6] {
        [
            ("new_files", self.new_files),
            ("deleted_files", self.deleted_files),
            ("new_changelog_files", self.new_changelog_files),
            ("compact_before", self.compact_before),
            ("compact_after", self.compact_after),
            ("compact_changelog_files", self.compact_changelog_files),
        ]
    }

    /// The four index file lists with their wire names, data increment first.
    pub fn index_file_lists(&self) -> [(&'static str, IndexFiles<'a>); 4] {
        [
            ("new_index_files", self.new_index_files),
            ("deleted_index_files", self.deleted_index_files),
            ("compact_new_index_files", self.compact_new_index_files),
            (
                "compact_deleted_index_files",
                self.compact_deleted_index_files,
            ),
        ]
    }

    /// Files of every list, data and index.
    pub fn file_count(&self) -> usize {
        let data: usize = self.data_file_lists().iter().map(|(_, l)| l.len()).sum();
        let index: usize = self.index_file_lists().iter().map(|(_, l)| l.len()).sum();
        data + index
    }

    /// The owned message, equal to what [`crate::deserialize_list`] returns for it.
    pub fn to_message(&self) -> CommitMessage {
        let mut message = CommitMessage::new(
            self.partition.to_vec(),
            self.bucket,
            self.new_files.to_metas(),
        );
        message.total_buckets = self.total_buckets;
        message.check_from_snapshot = self.check_from_snapshot;
        message.deleted_files = self.deleted_files.to_metas();
        message.new_changelog_files = self.new_changelog_files.to_metas();
        message.compact_before = self.compact_before.to_metas();
        message.compact_after = self.compact_after.to_metas();
        message.compact_changelog_files = self.compact_changelog_files.to_metas();
        message.new_index_files = self.new_index_files.to_metas();
        message.deleted_index_files = self.deleted_index_files.to_metas();
        message.compact_new_index_files = self.compact_new_index_files.to_metas();
        message.compact_deleted_index_files = self.compact_deleted_index_files.to_metas();
        message
    }
}

impl std::fmt::Debug for MessageView<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut s = f.debug_struct("MessageView");
        s.field("partition", &self.partition)
            .field("bucket", &self.bucket)
            .field("total_buckets", &self.total_buckets)
            .field("check_from_snapshot", &self.check_from_snapshot);
        for (name, list) in self.data_file_lists() {
            s.field(name, &list.len());
        }
        for (name, list) in self.index_file_lists() {
            s.field(name, &list.len());
        }
        s.finish()
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

/// The rows of one checked file list: `int` length + row, one after another, as Java's
/// `ObjectSerializer.serializeList` writes them (the count is kept beside them).
#[derive(Clone, Copy)]
struct Rows<'a> {
    data: &'a [u8],
    /// Payload offset of `data[0]`.
    base: usize,
    count: usize,
}

impl<'a> Rows<'a> {
    const EMPTY: Rows<'static> = Rows {
        data: &[],
        base: 0,
        count: 0,
    };

    /// Reads an `int` count, then each row as `int` length + bytes, checking each with
    /// `check_row`. Every row takes at least its length and `min_row` bytes, so a count
    /// that can't fit is refused before anything is looked at.
    fn parse(
        input: &mut Input<'a>,
        list: &'static str,
        min_row: usize,
        check_row: impl Fn(&'a [u8], usize) -> CodecResult<()>,
    ) -> CodecResult<Self> {
        let count = input.read_count(list, 4 + min_row)?;
        let base = input.position();
        for i in 0..count {
            input
                .read_sized("length")
                .and_then(|(row, at)| check_row(row, at))
                .map_err(|e| e.at_index(i).within(list))?;
        }
        Ok(Self {
            data: input.since(base),
            base,
            count,
        })
    }

    /// Each row's bytes and payload offset. The list was checked, so every length is in
    /// bounds; a broken invariant ends the iteration (and fails a debug assertion) instead of
    /// panicking.
    fn iter(self) -> impl Iterator<Item = (&'a [u8], usize)> + 'a {
        let mut input = Input::new(self.data);
        let base = self.base;
        (0..self.count).map_while(move |_| {
            let row = input.read_sized("length");
            debug_assert!(row.is_ok(), "a checked list's row is out of bounds");
            let (row, at) = row.ok()?;
            Some((row, base + at))
        })
    }
}

/// A row type a file list holds: its layout, how to check a row and how to view a checked one.
/// Sealed: implemented by [`DataFileView`] and [`IndexFileView`] only.
pub trait FileRow<'a>: Sized + sealed::Sealed {
    /// The row layouts of this row type.
    #[doc(hidden)]
    type Layout: Copy;
    /// The owned value the `paimon` crate uses for this row.
    type Meta;
    #[doc(hidden)]
    fn layout_of(layouts: VersionLayouts) -> Self::Layout;
    #[doc(hidden)]
    fn min_row_bytes(layout: Self::Layout) -> usize;
    #[doc(hidden)]
    fn parse_row(data: &'a [u8], base: usize, layout: Self::Layout) -> CodecResult<Self>;
    #[doc(hidden)]
    fn checked_row(data: &'a [u8], base: usize, layout: Self::Layout) -> Option<Self>;
    #[doc(hidden)]
    fn meta(&self) -> Self::Meta;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::DataFileView<'_> {}
    impl Sealed for super::IndexFileView<'_> {}
}

impl<'a> FileRow<'a> for DataFileView<'a> {
    type Layout = DataFileLayout;
    type Meta = DataFileMeta;
    fn layout_of(layouts: VersionLayouts) -> DataFileLayout {
        layouts.data_file
    }
    fn min_row_bytes(layout: DataFileLayout) -> usize {
        fixed_part_size(layout.arity())
    }
    fn parse_row(data: &'a [u8], base: usize, layout: DataFileLayout) -> CodecResult<Self> {
        Self::parse(data, base, layout)
    }
    fn checked_row(data: &'a [u8], base: usize, layout: DataFileLayout) -> Option<Self> {
        Self::checked(data, base, layout)
    }
    fn meta(&self) -> DataFileMeta {
        self.to_meta()
    }
}

impl<'a> FileRow<'a> for IndexFileView<'a> {
    type Layout = IndexFileLayout;
    type Meta = IndexFileMeta;
    fn layout_of(layouts: VersionLayouts) -> IndexFileLayout {
        layouts.index_file
    }
    fn min_row_bytes(layout: IndexFileLayout) -> usize {
        fixed_part_size(layout.arity())
    }
    fn parse_row(data: &'a [u8], base: usize, layout: IndexFileLayout) -> CodecResult<Self> {
        Self::parse(data, base, layout)
    }
    fn checked_row(data: &'a [u8], base: usize, layout: IndexFileLayout) -> Option<Self> {
        Self::checked(data, base, layout)
    }
    fn meta(&self) -> IndexFileMeta {
        self.to_meta()
    }
}

/// One checked list of file rows, read in place.
pub struct FileList<'a, R: FileRow<'a>> {
    rows: Rows<'a>,
    layout: R::Layout,
}

impl<'a, R: FileRow<'a>> Clone for FileList<'a, R> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<'a, R: FileRow<'a>> Copy for FileList<'a, R> {}

/// A checked list of `DataFileMeta` rows.
pub type DataFiles<'a> = FileList<'a, DataFileView<'a>>;
/// A checked list of `IndexFileMeta` rows.
pub type IndexFiles<'a> = FileList<'a, IndexFileView<'a>>;

impl<'a, R: FileRow<'a> + 'a> FileList<'a, R> {
    fn empty(layouts: VersionLayouts) -> Self {
        Self {
            rows: Rows::EMPTY,
            layout: R::layout_of(layouts),
        }
    }

    fn parse(
        input: &mut Input<'a>,
        layouts: VersionLayouts,
        list: &'static str,
    ) -> CodecResult<Self> {
        let layout = R::layout_of(layouts);
        let rows = Rows::parse(input, list, R::min_row_bytes(layout), |row, at| {
            R::parse_row(row, at, layout).map(drop)
        })?;
        Ok(Self { rows, layout })
    }

    /// How many files.
    pub fn len(&self) -> usize {
        self.rows.count
    }

    /// Whether the list is empty.
    pub fn is_empty(&self) -> bool {
        self.rows.count == 0
    }

    /// The files, in payload order.
    pub fn iter(&self) -> impl Iterator<Item = R> + 'a {
        let layout = self.layout;
        self.rows
            .iter()
            .filter_map(move |(row, at)| R::checked_row(row, at, layout))
    }

    /// The owned values (`DataFileMeta`s or `IndexFileMeta`s).
    pub fn to_metas(&self) -> Vec<R::Meta> {
        let mut metas = Vec::with_capacity(self.len());
        metas.extend(self.iter().map(|file| file.meta()));
        metas
    }
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
