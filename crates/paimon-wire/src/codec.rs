//! The public codec: lists of commit messages to bytes and back, equal to Java's
//! `CommitMessageSerializer.serializeList` / `deserializeList` at every version.
//!
//! The version is not inside the bytes; it travels beside them, as in Java.

use paimon::table::CommitMessage;

use crate::binary::input::Input;
use crate::error::{CodecError, CodecErrorKind, CodecResult};
use crate::layout::EncodeContext;
use crate::limits::{DecodeLimits, Limit, LimitExceeded};
use crate::message::{self, MessageView};
use crate::options::EncodeOptions;
use crate::version::{SerializerVersion, VersionLayouts};

/// Encodes `messages` as Java's `serializeList` does at `version`: an `int` count, then
/// each message. Fails, naming the field, if a message holds something `version` cannot
/// carry.
pub fn serialize_list(
    messages: &[CommitMessage],
    version: SerializerVersion,
) -> CodecResult<Vec<u8>> {
    serialize_list_with(messages, version, &EncodeOptions::default())
}

/// [`serialize_list`] with options, such as fields the caller accepts to drop when
/// writing an older version.
pub fn serialize_list_with(
    messages: &[CommitMessage],
    version: SerializerVersion,
    options: &EncodeOptions,
) -> CodecResult<Vec<u8>> {
    let mut out = Vec::new();
    serialize_list_into(messages, version, options, &mut out)?;
    Ok(out)
}

/// [`serialize_list_with`] appending to `out`, so a caller can reuse one buffer. On error,
/// `out` is left as it was.
pub fn serialize_list_into(
    messages: &[CommitMessage],
    version: SerializerVersion,
    options: &EncodeOptions,
    out: &mut Vec<u8>,
) -> CodecResult<()> {
    let start = out.len();
    let result = (|| {
        let ctx = encode_context(version, options)?;
        let count = i32::try_from(messages.len()).map_err(|_| too_many(messages.len()))?;
        out.extend_from_slice(&count.to_be_bytes());
        for (i, m) in messages.iter().enumerate() {
            message::encode(m, &ctx, out).map_err(|e| e.at_index(i).within("messages"))?;
        }
        Ok(())
    })();
    if result.is_err() {
        out.truncate(start);
    }
    result.map_err(|e: CodecError| e.with_version(version.as_i32()))
}

/// Encodes one message as Java's `serialize(CommitMessage)` does at `version` (no count).
pub fn serialize_message(
    message: &CommitMessage,
    version: SerializerVersion,
) -> CodecResult<Vec<u8>> {
    serialize_message_with(message, version, &EncodeOptions::default())
}

/// [`serialize_message`] with options.
pub fn serialize_message_with(
    message: &CommitMessage,
    version: SerializerVersion,
    options: &EncodeOptions,
) -> CodecResult<Vec<u8>> {
    let mut out = Vec::new();
    encode_context(version, options)
        .and_then(|ctx| message::encode(message, &ctx, &mut out))
        .map_err(|e| e.with_version(version.as_i32()))?;
    Ok(out)
}

/// Decodes a payload written by Java's `serializeList` (or [`serialize_list`]) at
/// `version`. Every byte must be used: trailing bytes are an error.
///
/// Version 2 has two historical layouts; like Java's `ManifestCommittableSerializer`, the
/// newer one is tried first and the legacy one (Paimon 0.5–0.7) if that fails.
///
/// No limit applies beyond the payload's own length ([`DecodeLimits::UNLIMITED`]); decode
/// bytes from another machine with [`deserialize_list_with_limits`].
pub fn deserialize_list(
    version: SerializerVersion,
    bytes: &[u8],
) -> CodecResult<Vec<CommitMessage>> {
    deserialize_list_with_limits(version, bytes, &DecodeLimits::UNLIMITED)
}

/// [`deserialize_list`] refusing a payload that goes over `limits`
/// ([`CodecErrorKind::LimitExceeded`]): its size before decoding anything, its message
/// count before allocating for the messages, its file count after each message.
pub fn deserialize_list_with_limits(
    version: SerializerVersion,
    bytes: &[u8],
    limits: &DecodeLimits,
) -> CodecResult<Vec<CommitMessage>> {
    // Each message is checked, then copied out while its bytes are still in cache.
    parse_list(version, bytes, limits, |message| message.to_message())
}

/// Decodes one message written by Java's `serialize(CommitMessage)` at `version`.
pub fn deserialize_message(version: SerializerVersion, bytes: &[u8]) -> CodecResult<CommitMessage> {
    let first = decode_one(bytes, version.layouts());
    match first {
        Err(e) if version == SerializerVersion::V2 => {
            decode_one(bytes, SerializerVersion::legacy_v2_layouts()).map_err(|_| e)
        }
        other => other,
    }
    .map_err(|e| e.with_version(version.as_i32()))
}

/// Checks a payload (Java's `serializeList`) at `version` within `limits`, handing each
/// message to `each` as soon as it is checked: the one walk behind both the owned decoder and
/// [`crate::view::PayloadView`], so both accept and refuse exactly the same bytes.
///
/// Version 2 has two historical layouts; the newer one is tried first and the legacy one
/// (Paimon 0.5–0.7) if that fails, reporting the first error.
pub(crate) fn parse_list<'a, T>(
    version: SerializerVersion,
    bytes: &'a [u8],
    limits: &DecodeLimits,
    mut each: impl FnMut(MessageView<'a>) -> T,
) -> CodecResult<Vec<T>> {
    let mut parse = || {
        limits
            .check(Limit::PayloadBytes, bytes.len())
            .map_err(|e| limit_error(e, "payload", 0))?;
        let first = walk_list(bytes, version.layouts(), limits, &mut each);
        match first {
            Err(e) if version == SerializerVersion::V2 => walk_list(
                bytes,
                SerializerVersion::legacy_v2_layouts(),
                limits,
                &mut each,
            )
            .map_err(|_| e),
            other => other,
        }
    };
    parse().map_err(|e| e.with_version(version.as_i32()))
}

fn walk_list<'a, T>(
    bytes: &'a [u8],
    layouts: VersionLayouts,
    limits: &DecodeLimits,
    each: &mut impl FnMut(MessageView<'a>) -> T,
) -> CodecResult<Vec<T>> {
    let mut input = Input::new(bytes);
    let count = input.read_count("messages", message::MIN_ENCODED_BYTES)?;
    limits
        .check(Limit::Messages, count)
        .map_err(|e| limit_error(e, "messages", 0))?;
    let mut messages = Vec::with_capacity(count);
    let mut files = 0usize;
    for i in 0..count {
        let start = input.position();
        let parsed = MessageView::parse(&mut input, layouts)
            .map_err(|e| e.at_index(i).within("messages"))?;
        files = files.saturating_add(parsed.file_count());
        limits.check(Limit::Files, files).map_err(|e| {
            limit_error(e, "files", start)
                .at_index(i)
                .within("messages")
        })?;
        messages.push(each(parsed));
    }
    finish(&input)?;
    Ok(messages)
}

/// A limit error in `field`, at payload offset `offset`.
fn limit_error(e: LimitExceeded, field: &'static str, offset: usize) -> CodecError {
    CodecError::at(
        CodecErrorKind::LimitExceeded {
            limit: e.limit,
            found: e.found,
            max: e.max,
        },
        field,
        offset,
    )
}

fn decode_one(bytes: &[u8], layouts: VersionLayouts) -> CodecResult<CommitMessage> {
    let mut input = Input::new(bytes);
    let message = MessageView::parse(&mut input, layouts)?;
    finish(&input)?;
    Ok(message.to_message())
}

fn finish(input: &Input<'_>) -> CodecResult<()> {
    if input.remaining() > 0 {
        return Err(CodecError::at(
            CodecErrorKind::TrailingBytes {
                count: input.remaining(),
            },
            "messages",
            input.position(),
        ));
    }
    Ok(())
}

pub(crate) fn encode_context(
    version: SerializerVersion,
    options: &EncodeOptions,
) -> CodecResult<EncodeContext<'_>> {
    if !version.is_writable() {
        return Err(CodecError::new(CodecErrorKind::VersionNotWritable {
            version: version.as_i32(),
        }));
    }
    Ok(EncodeContext {
        version,
        layouts: version.layouts(),
        options,
    })
}

pub(crate) fn too_many(count: usize) -> CodecError {
    CodecError::in_field(
        CodecErrorKind::Unrepresentable {
            reason: format!("{count} messages do not fit Java's int count"),
        },
        "messages",
    )
}
