//! Size-bounded payloads: one worker's messages as several payloads of at most `max_bytes`
//! each, for transports with a frame limit (an engine's RPC status report).
//!
//! Every payload is a complete, standard `serializeList` at the chosen version, so any Java
//! release that reads that version deserializes it as it is, and a coordinator that
//! concatenates the decoded lists commits what the one unsplit payload would have committed.
//!
//! Messages are packed in order. A message larger than a payload is split by its files into
//! several messages of the same partition, bucket, bucket count and `check_from_snapshot`:
//!
//! - the data increment's three lists (`new_files`, `deleted_files`, `new_changelog_files`)
//!   are split, file by file: Java's committer collects the files of every message of a
//!   bucket, so two messages of one bucket commit what one would;
//! - the compact increment (its three data lists and both index lists) and the data
//!   increment's index lists stay whole, in the first of the pieces: a compaction and the
//!   deletion vectors and index files beside it are checked as one, and versions before 10
//!   route index files by whether the message has compaction files. When that first piece
//!   alone is over the limit, or one file is, [`SplitError::TooLarge`] names it.
//!
//! The payloads do not say how many there are. The engine sends the count beside them
//! (as it sends the serializer version) so the coordinator can tell a missing payload from a
//! complete set: [`crate::coordinator::Coordinator::deserialize_parts`] takes each payload
//! with its index and the count, refuses a set with a gap, and keeps one copy of a payload
//! delivered twice.

use std::fmt;

use paimon::spec::{DataFileMeta, IndexFileMeta};
use paimon::table::CommitMessage;

use crate::codec::{encode_context, too_many};
use crate::error::CodecError;
use crate::layout::{data_file, EncodeContext};
use crate::message;
use crate::options::EncodeOptions;
use crate::version::SerializerVersion;

/// Bytes of the `int` message count at the start of every payload.
const COUNT_BYTES: usize = 4;

/// Bytes of the `int` length before each file row in a list.
const ROW_LENGTH_BYTES: usize = 4;

/// The smallest `max_bytes` accepted. A message without files takes up to about 80 bytes
/// before its partition, and a data file with statistics a few hundred: a lower limit is a
/// mistake, not a frame size.
pub const MIN_PAYLOAD_BYTES: usize = 256;

/// A data-increment list of a message, by accessor.
type DataList = fn(&mut CommitMessage) -> &mut Vec<DataFileMeta>;

/// An index list of a message, by accessor.
type IndexList = fn(&mut CommitMessage) -> &mut Vec<IndexFileMeta>;

/// The data lists that stay whole in the first piece (the compact increment's).
const WHOLE_DATA_LISTS: [(&str, DataList); 3] = [
    ("compact_before", |m| &mut m.compact_before),
    ("compact_after", |m| &mut m.compact_after),
    ("compact_changelog_files", |m| {
        &mut m.compact_changelog_files
    }),
];

/// The index lists, all of which stay whole in the first piece.
const WHOLE_INDEX_LISTS: [(&str, IndexList); 4] = [
    ("new_index_files", |m| &mut m.new_index_files),
    ("deleted_index_files", |m| &mut m.deleted_index_files),
    ("compact_new_index_files", |m| {
        &mut m.compact_new_index_files
    }),
    ("compact_deleted_index_files", |m| {
        &mut m.compact_deleted_index_files
    }),
];

/// The lists split file by file, with their wire names.
const SPLIT_LISTS: [(&str, DataList); 3] = [
    ("new_files", |m| &mut m.new_files),
    ("deleted_files", |m| &mut m.deleted_files),
    ("new_changelog_files", |m| &mut m.new_changelog_files),
];

/// Why messages could not be split into payloads of the requested size.
#[derive(Debug)]
#[non_exhaustive]
pub enum SplitError {
    /// A message could not be encoded at the version (a field it cannot carry, a bad row).
    Codec(CodecError),
    /// `max_bytes` is below [`MIN_PAYLOAD_BYTES`].
    LimitTooSmall {
        /// The limit asked for.
        max_bytes: usize,
    },
    /// Part of one message that is never split does not fit in one payload on its own.
    TooLarge {
        /// Index of the message in the worker's list.
        message_index: usize,
        /// The message's bucket.
        bucket: i32,
        /// What does not fit: the lists that stay whole, or one file of a list.
        what: String,
        /// Its payload size on its own: count, message header and what is named.
        bytes: usize,
        /// The limit.
        max_bytes: usize,
    },
}

impl fmt::Display for SplitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SplitError::Codec(e) => write!(f, "cannot split the messages: {e}"),
            SplitError::LimitTooSmall { max_bytes } => write!(
                f,
                "a payload limit of {max_bytes} bytes is below the minimum of \
                 {MIN_PAYLOAD_BYTES} bytes"
            ),
            SplitError::TooLarge {
                message_index,
                bucket,
                what,
                bytes,
                max_bytes,
            } => write!(
                f,
                "message {message_index} (bucket {bucket}) cannot be split into payloads of at \
                 most {max_bytes} bytes: a payload holding only {what} needs {bytes} bytes. The \
                 compact increment and the index files stay in one message, and a file is never \
                 split; raise the limit"
            ),
        }
    }
}

impl std::error::Error for SplitError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SplitError::Codec(e) => Some(e),
            _ => None,
        }
    }
}

impl From<CodecError> for SplitError {
    fn from(e: CodecError) -> Self {
        SplitError::Codec(e)
    }
}

/// Encodes `messages` as standard `serializeList` payloads at `version`, each at most
/// `max_bytes` long (see the module documentation). Messages keep their order; one that does
/// not fit a payload is split by its files. A list that fits one payload comes back as one
/// payload, byte-identical to [`crate::serialize_list`].
pub fn split_list(
    messages: &[CommitMessage],
    version: SerializerVersion,
    max_bytes: usize,
) -> Result<Vec<Vec<u8>>, SplitError> {
    split_list_with(messages, version, max_bytes, &EncodeOptions::default())
}

/// [`split_list`] with encode options (fields the caller lets go at an older version).
pub fn split_list_with(
    messages: &[CommitMessage],
    version: SerializerVersion,
    max_bytes: usize,
    options: &EncodeOptions,
) -> Result<Vec<Vec<u8>>, SplitError> {
    if max_bytes < MIN_PAYLOAD_BYTES {
        return Err(SplitError::LimitTooSmall { max_bytes });
    }
    let ctx = encode_context(version, options).map_err(|e| e.with_version(version.as_i32()))?;
    // Each payload's count is Java's int; more messages than that cannot be listed at all.
    if i32::try_from(messages.len()).is_err() {
        return Err(SplitError::Codec(
            too_many(messages.len()).with_version(version.as_i32()),
        ));
    }
    let mut packer = Packer::new(max_bytes);
    let mut encoded = Vec::new();
    for (index, m) in messages.iter().enumerate() {
        encoded.clear();
        encode_at(m, index, &ctx, &mut encoded)?;
        if COUNT_BYTES + encoded.len() <= max_bytes {
            packer.push(&encoded);
            continue;
        }
        for piece in split_message(m, index, &ctx, max_bytes)? {
            encoded.clear();
            encode_at(&piece, index, &ctx, &mut encoded)?;
            packer.push(&encoded);
        }
    }
    Ok(packer.finish())
}

/// The file name of payload `index` of a set of `count` when a split set is kept as files
/// (`paimon-wire split` writes them, `validate` and `commit` read them):
/// `part-<index>-of-<count>.bin`, five digits or more each. The name carries what the
/// coordinator needs beside the bytes.
pub fn part_file_name(index: usize, count: usize) -> String {
    format!("part-{index:05}-of-{count:05}.bin")
}

/// The index and count in a name made by [`part_file_name`]; `None` for any other name.
pub fn parse_part_file_name(name: &str) -> Option<(u32, u32)> {
    let rest = name.strip_prefix("part-")?.strip_suffix(".bin")?;
    let (index, count) = rest.split_once("-of-")?;
    Some((index.parse().ok()?, count.parse().ok()?))
}

/// Appends one encoded message, its errors naming it within `messages`.
fn encode_at(
    m: &CommitMessage,
    index: usize,
    ctx: &EncodeContext<'_>,
    out: &mut Vec<u8>,
) -> Result<(), SplitError> {
    message::encode(m, ctx, out).map_err(|e| {
        SplitError::Codec(
            e.at_index(index)
                .within("messages")
                .with_version(ctx.version.as_i32()),
        )
    })
}

/// Payloads under construction: each starts with a count placeholder, set when it closes.
struct Packer {
    max_bytes: usize,
    done: Vec<Vec<u8>>,
    current: Vec<u8>,
    count: i32,
}

impl Packer {
    fn new(max_bytes: usize) -> Self {
        Self {
            max_bytes,
            done: Vec::new(),
            current: vec![0; COUNT_BYTES],
            count: 0,
        }
    }

    /// Adds one encoded message (at most `max_bytes - COUNT_BYTES` long), closing the
    /// current payload first if the message would take it over the limit.
    fn push(&mut self, encoded: &[u8]) {
        if self.count > 0 && self.current.len() + encoded.len() > self.max_bytes {
            self.close();
        }
        self.current.extend_from_slice(encoded);
        self.count += 1;
    }

    fn close(&mut self) {
        let mut payload = std::mem::replace(&mut self.current, vec![0; COUNT_BYTES]);
        payload[..COUNT_BYTES].copy_from_slice(&self.count.to_be_bytes());
        self.done.push(payload);
        self.count = 0;
    }

    /// The payloads; an empty list of messages gives one payload with a count of zero, as
    /// `serializeList` of an empty list does.
    fn finish(mut self) -> Vec<Vec<u8>> {
        if self.count > 0 || self.done.is_empty() {
            self.close();
        }
        self.done
    }
}

/// The pieces of one message too large for a payload: the first carries everything that
/// stays whole and as many data-increment files as fit, the others only data-increment
/// files. Each encodes to at most `max_bytes - COUNT_BYTES`.
fn split_message(
    m: &CommitMessage,
    index: usize,
    ctx: &EncodeContext<'_>,
    max_bytes: usize,
) -> Result<Vec<CommitMessage>, SplitError> {
    let budget = max_bytes - COUNT_BYTES;
    let too_large = |what: String, len: usize| SplitError::TooLarge {
        message_index: index,
        bucket: m.bucket,
        what,
        bytes: COUNT_BYTES + len,
        max_bytes,
    };

    let mut first = m.clone();
    let splittable = SPLIT_LISTS.map(|(name, list)| (name, list, std::mem::take(list(&mut first))));
    let mut scratch = Vec::new();
    encode_at(&first, index, ctx, &mut scratch)?;
    let first_len = scratch.len();
    if first_len > budget {
        return Err(too_large(whole_lists(&mut first), first_len));
    }
    let empty = without_whole_lists(&mut first);
    scratch.clear();
    encode_at(&empty, index, ctx, &mut scratch)?;
    let empty_len = scratch.len();

    let mut pieces = Vec::new();
    let mut piece = first;
    let mut piece_len = first_len;
    for (list_name, list, files) in splittable {
        for file in files {
            scratch.clear();
            data_file::encode(&file, ctx, &mut scratch).map_err(|e| {
                SplitError::Codec(
                    e.within(list_name)
                        .at_index(index)
                        .within("messages")
                        .with_version(ctx.version.as_i32()),
                )
            })?;
            let file_len = ROW_LENGTH_BYTES + scratch.len();
            if empty_len + file_len > budget {
                return Err(too_large(
                    format!("data file {:?} of {list_name}", file.file_name),
                    empty_len + file_len,
                ));
            }
            if piece_len + file_len > budget {
                pieces.push(std::mem::replace(&mut piece, empty.clone()));
                piece_len = empty_len;
            }
            piece_len += file_len;
            list(&mut piece).push(file);
        }
    }
    pieces.push(piece);
    Ok(pieces)
}

/// A copy of `first` without the lists that stay whole (the header of the later pieces),
/// made without copying their files.
fn without_whole_lists(first: &mut CommitMessage) -> CommitMessage {
    let data = WHOLE_DATA_LISTS.map(|(_, list)| std::mem::take(list(first)));
    let index = WHOLE_INDEX_LISTS.map(|(_, list)| std::mem::take(list(first)));
    let empty = first.clone();
    for ((_, list), files) in WHOLE_DATA_LISTS.iter().zip(data) {
        *list(first) = files;
    }
    for ((_, list), files) in WHOLE_INDEX_LISTS.iter().zip(index) {
        *list(first) = files;
    }
    empty
}

/// The lists of `m` that stay whole, with their file counts, for [`SplitError::TooLarge`].
fn whole_lists(m: &mut CommitMessage) -> String {
    let data = WHOLE_DATA_LISTS.map(|(name, list)| (name, list(m).len()));
    let index = WHOLE_INDEX_LISTS.map(|(name, list)| (name, list(m).len()));
    let named: Vec<String> = data
        .iter()
        .chain(&index)
        .filter(|(_, n)| *n > 0)
        .map(|(name, n)| format!("{name} ({n} files)"))
        .collect();
    if named.is_empty() {
        "the message header (partition and bucket)".to_string()
    } else {
        format!("the message header and {}", named.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn part_file_names_carry_index_and_count() {
        assert_eq!(part_file_name(3, 12), "part-00003-of-00012.bin");
        assert_eq!(parse_part_file_name(&part_file_name(3, 12)), Some((3, 12)));
        assert_eq!(parse_part_file_name("part-3-of-x.bin"), None);
        assert_eq!(parse_part_file_name("w1.bin"), None);
    }
}
