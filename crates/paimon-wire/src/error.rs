//! Errors of the codec.
//!
//! A payload is untrusted input from another machine, so every way it can be wrong has a
//! kind of its own, and every error says where it happened: the serializer version, the
//! message, the field path and the byte offset in the payload.

use std::fmt;

/// What went wrong while encoding or decoding commit messages.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CodecErrorKind {
    /// The serializer version is not one that Paimon Java can read (1 to 14).
    UnsupportedVersion {
        /// The version asked for.
        version: i32,
    },
    /// The serializer version is readable but no Paimon release writes it, so it can't be
    /// chosen as an encoding target.
    VersionNotWritable {
        /// The version asked for.
        version: i32,
    },
    /// The payload ended before a field was complete.
    Truncated {
        /// Bytes the field needs.
        needed: usize,
        /// Bytes left in the payload (or in the enclosing row).
        available: usize,
    },
    /// A length or count field is negative or larger than what is left to read.
    InvalidLength {
        /// The value the length field holds.
        length: i64,
        /// Bytes left to read where the length was found.
        available: usize,
    },
    /// A boolean byte is neither 0 nor 1.
    InvalidBoolean {
        /// The byte found.
        value: u8,
    },
    /// A string field holds bytes that are not UTF-8.
    InvalidUtf8,
    /// A binary row, array or value breaks the layout (offsets outside the row, a
    /// non-nullable field marked null, an out-of-range enum byte, ...).
    InvalidValue {
        /// What is wrong with it.
        reason: String,
    },
    /// Bytes are left over after the last message.
    TrailingBytes {
        /// How many bytes are left over.
        count: usize,
    },
    /// A message holds something the target version cannot carry; writing it would drop
    /// data silently.
    Unrepresentable {
        /// Why the value does not fit the version.
        reason: String,
    },
    /// The message belongs to a Format Table, whose messages use a different Java
    /// serializer (`TwoPhaseCommitMessage`).
    FormatTableMessage,
    /// The payload goes over one of the caller's [`crate::DecodeLimits`].
    LimitExceeded {
        /// The limit it goes over.
        limit: crate::Limit,
        /// The payload's size, message count or file count so far.
        found: usize,
        /// The limit's value.
        max: usize,
    },
}

/// An error from [`crate::deserialize_list`], [`crate::serialize_list`] and friends, with
/// the place it happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodecError {
    kind: CodecErrorKind,
    version: Option<i32>,
    path: Vec<PathSegment>,
    offset: Option<usize>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum PathSegment {
    Field(&'static str),
    Index(usize),
}

impl CodecError {
    /// An error of `kind` with no location yet.
    pub(crate) fn new(kind: CodecErrorKind) -> Self {
        Self {
            kind,
            version: None,
            path: Vec::new(),
            offset: None,
        }
    }

    /// An error of `kind` in field `field` at payload offset `offset`.
    pub(crate) fn at(kind: CodecErrorKind, field: &'static str, offset: usize) -> Self {
        Self {
            kind,
            version: None,
            path: vec![PathSegment::Field(field)],
            offset: Some(offset),
        }
    }

    /// An error of `kind` in field `field`, for encoding where there is no offset.
    pub(crate) fn in_field(kind: CodecErrorKind, field: &'static str) -> Self {
        Self {
            kind,
            version: None,
            path: vec![PathSegment::Field(field)],
            offset: None,
        }
    }

    /// Prefixes the field path with `parent` (an enclosing field).
    pub(crate) fn within(mut self, parent: &'static str) -> Self {
        self.path.insert(0, PathSegment::Field(parent));
        self
    }

    /// Prefixes the field path with an element index of the enclosing list.
    pub(crate) fn at_index(mut self, index: usize) -> Self {
        self.path.insert(0, PathSegment::Index(index));
        self
    }

    /// Records the serializer version the error happened in.
    pub(crate) fn with_version(mut self, version: i32) -> Self {
        self.version = Some(version);
        self
    }

    /// What went wrong.
    pub fn kind(&self) -> &CodecErrorKind {
        &self.kind
    }

    /// The serializer version being read or written, if known.
    pub fn version(&self) -> Option<i32> {
        self.version
    }

    /// The byte offset in the payload where the bad field starts, if the error came from
    /// decoding.
    pub fn offset(&self) -> Option<usize> {
        self.offset
    }

    /// The path of the field, such as `messages[2].new_files[0]._FILE_NAME`.
    pub fn field_path(&self) -> String {
        let mut out = String::new();
        for segment in &self.path {
            match segment {
                PathSegment::Field(name) => {
                    if !out.is_empty() {
                        out.push('.');
                    }
                    out.push_str(name);
                }
                PathSegment::Index(i) => {
                    out.push('[');
                    out.push_str(&i.to_string());
                    out.push(']');
                }
            }
        }
        out
    }
}

impl fmt::Display for CodecErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CodecErrorKind::UnsupportedVersion { version } => write!(
                f,
                "unsupported commit message serializer version {version}; supported versions are 1 to {}",
                crate::version::SerializerVersion::CURRENT.as_i32()
            ),
            CodecErrorKind::VersionNotWritable { version } => write!(
                f,
                "no Paimon release writes commit message serializer version {version}; writable versions are {}",
                crate::version::SerializerVersion::writable_list()
            ),
            CodecErrorKind::Truncated { needed, available } => write!(
                f,
                "truncated payload: needs {needed} bytes, {available} left"
            ),
            CodecErrorKind::InvalidLength { length, available } => write!(
                f,
                "invalid length or count {length} ({available} bytes left)"
            ),
            CodecErrorKind::InvalidBoolean { value } => {
                write!(f, "invalid boolean byte {value} (expected 0 or 1)")
            }
            CodecErrorKind::InvalidUtf8 => write!(f, "string is not valid UTF-8"),
            CodecErrorKind::InvalidValue { reason } => write!(f, "invalid value: {reason}"),
            CodecErrorKind::TrailingBytes { count } => {
                write!(f, "{count} trailing bytes after the last message")
            }
            CodecErrorKind::Unrepresentable { reason } => {
                write!(f, "cannot be written without losing data: {reason}")
            }
            CodecErrorKind::FormatTableMessage => write!(
                f,
                "format-table commit messages use Java's TwoPhaseCommitMessage serializer, not CommitMessageSerializer"
            ),
            CodecErrorKind::LimitExceeded { limit, found, max } => {
                let what = match limit {
                    crate::Limit::PayloadBytes => "bytes",
                    crate::Limit::Messages => "messages",
                    crate::Limit::Files => "files",
                };
                write!(
                    f,
                    "payload exceeds the decode limit {limit} = {max}: it has {found} {what}"
                )
            }
        }
    }
}

impl fmt::Display for CodecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.kind)?;
        let mut sep = " (";
        if let Some(version) = self.version {
            write!(f, "{sep}version {version}")?;
            sep = ", ";
        }
        if !self.path.is_empty() {
            write!(f, "{sep}field {}", self.field_path())?;
            sep = ", ";
        }
        if let Some(offset) = self.offset {
            write!(f, "{sep}offset {offset}")?;
            sep = ", ";
        }
        if sep == ", " {
            write!(f, ")")?;
        }
        Ok(())
    }
}

impl std::error::Error for CodecError {}

/// Result of codec operations.
pub type CodecResult<T> = Result<T, CodecError>;
